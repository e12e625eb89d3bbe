"""Inject one noise setting ({setting}: type, vocabulary, ratio, share of documents) into the clean training stream;
write the noised tokens, the noise mask, one row per document and the statistics re-derived from the output."""

import numpy as np
import pandas as pd

from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens, write_tokens
from neurips26.noisy_divergence.noise import inject_stream, injection_stats, noise_vocabulary, parse_setting

p = snakemake.params.noise
log = start_job(snakemake, seed=p["seed"])
setting = parse_setting(snakemake.wildcards.setting)
vocab = noise_vocabulary(p["vocab_size"], setting.vocab, tuple(p["special_ids"]), p["allow_special"])
clean = np.concatenate([read_tokens(path) for path in snakemake.input.clean])
tokens, mask, documents = inject_stream(clean, setting, vocab, p["seed"], eot=p["eot_id"])
out = snakemake.output
write_tokens(out.train, tokens.astype(clean.dtype), delimiter_id=p["eot_id"])
with atomic_path(out.mask) as tmp, open(tmp, "wb") as handle:
    np.save(handle, mask)
# the statistics are counted on the files as written, read back, against the clean stream
stats = injection_stats(
    clean, read_tokens(out.train), np.load(out.mask), setting, vocab, documents["noised"].to_numpy(), eot=p["eot_id"]
)
log.info(
    "%s: %d of %d documents noised, %d noise tokens (%.1f%% of the stream), noise vocabulary of %d ids; "
    "largest count error %s, clean-stream mismatches %d, uniformity p %.3g",
    setting.name,
    stats["docs_noised"],
    stats["docs"],
    stats["tokens_noise"],
    100 * stats["noise_share"],
    len(vocab),
    stats["count_error_max"],
    stats["recovered_mismatches"],
    stats["uniform_p"],
)
prov = job_provenance(snakemake, p["seed"])
write_parquet(documents, out.documents, prov)
write_parquet(pd.DataFrame([stats]), out.stats, prov)
