"""Count the statistics of one noise setting ({setting}: type, vocabulary, ratio, share of documents) in the noised
stream of every training seed, as the training jobs read it: the placement is drawn per seed
(``noise.placement_seed``) and per document as the stream is read (``noise.NoisedStream``), so that no noised
stream is stored. One row per seed, re-derived from the read stream against the clean one, in groups of whole
documents of at most ``chunk_tokens`` clean tokens."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence.artifacts import TokenStream
from neurips26.noisy_divergence.noise import NoisedStream, noise_vocabulary, parse_setting, placement_seed

p = snakemake.params.noise
chunk = p["chunk_tokens"]
log = start_job(snakemake, seed=p["seed"])
setting = parse_setting(snakemake.wildcards.setting)
vocab = noise_vocabulary(p["vocab_size"], setting.vocab, tuple(p["special_ids"]), p["allow_special"])
clean = TokenStream([read_tokens(path) for path in snakemake.input.clean])
rows = []
for seed in p["seeds"]:
    stream = NoisedStream(clean, setting, vocab, placement_seed(p["seed"], seed), eot=p["eot_id"], chunk_tokens=chunk)
    stats = {"seed": seed, **stream.statistics(chunk)}
    log.info(
        "%s seed %d: %d of %d documents noised, %d noise tokens (%.1f%% of the stream), noise vocabulary of %d ids; "
        "largest count error %s, clean-stream mismatches %d, uniformity p %.3g",
        setting.name,
        seed,
        stats["docs_noised"],
        stats["docs"],
        stats["tokens_noise"],
        100 * stats["noise_share"],
        len(vocab),
        stats["count_error_max"],
        stats["recovered_mismatches"],
        stats["uniform_p"],
    )
    rows.append(stats)
write_parquet(pd.DataFrame(rows), snakemake.output.stats, job_provenance(snakemake, p["seed"]))
