"""Train every member of the small model (per seed: one outcome member and one process member per held-out flaw) as
one batched ensemble on the synthetic train split, in the common loop (checkpoints beside the model, resumed after a
kill or preemption). Writes the ensemble (training.pack), the per-step trace and, per member, the training items its
grade examples are drawn from."""

import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.items import items_from_frame, render
from neurips26.vair.model import Decoder, config_for, n_parameters
from neurips26.vair.small_model import member_draws, vocabulary_and_context
from neurips26.vair.training import Member, TrainSettings, pack, train_members

members = [Member(**m) for m in snakemake.params.members]
log = start_job(snakemake)  # each member draws from its own generator, seeded by its seed
items = items_from_frame(pd.read_parquet(snakemake.input.item_table))
texts = [render(item) for item in items]
vocab, context = vocabulary_and_context(texts)
config = config_for(snakemake.params.model["size"], len(vocab), context)
train = snakemake.params.train
settings = TrainSettings(**{**train, "betas": tuple(train["betas"])})
log.info(
    "%d members on %d training items: vocabulary %d words, context %d, %d parameters each",
    len(members),
    sum(item.split == "train" for item in items),
    len(vocab),
    context,
    n_parameters(Decoder(config)),
)
loop_settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output.model),
    fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
    name="vair_train",
)
result = train_members(
    config, vocab, items, texts, members, settings, loop_settings, device=loop.job_device(), log=log.info
)
prov = job_provenance(snakemake)
with atomic_path(snakemake.output.model) as tmp:
    torch.save(pack(result, vocab), tmp)
write_parquet(result.trace, snakemake.output.trace, prov)
write_parquet(member_draws(items, members), snakemake.output.members, prov)
loop.finish(loop_settings)
