"""Inject one noise setting ({setting}: type, vocabulary, ratio, share of documents) into the clean training stream;
write the noised tokens, the noise mask, one row per document and the statistics re-derived from the output.
Streamed: the clean shards are memory-mapped and read, noised and written ``chunk_tokens`` at a time into memory
maps of the outputs (the same bytes as noising the whole stream at once), and the statistics are counted on the
written files in the same pieces."""

import numpy as np
import pandas as pd
from numpy.lib.format import open_memmap

from neurips26.common.io import atomic_path, write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.common.token_files import read_tokens
from neurips26.noisy_divergence.artifacts import TokenStream, open_token_file
from neurips26.noisy_divergence.noise import (
    inject_chunks,
    injection_stats_chunked,
    noise_vocabulary,
    parse_setting,
    plan_injection,
)

p = snakemake.params.noise
chunk = p["chunk_tokens"]
log = start_job(snakemake, seed=p["seed"])
setting = parse_setting(snakemake.wildcards.setting)
vocab = noise_vocabulary(p["vocab_size"], setting.vocab, tuple(p["special_ids"]), p["allow_special"])
clean = TokenStream([read_tokens(path) for path in snakemake.input.clean])
plan = plan_injection(clean, setting, p["seed"], eot=p["eot_id"], chunk_tokens=chunk)
out = snakemake.output
rows = []
with atomic_path(out.train) as train_tmp, atomic_path(out.mask) as mask_tmp:
    tokens = open_token_file(train_tmp, plan.length, clean.dtype, p["eot_id"])
    mask = open_memmap(mask_tmp, mode="w+", dtype=bool, shape=(plan.length,))
    if not len(plan.starts):  # a stream without documents is copied unchanged
        tokens[:] = clean[:]
    for d0, _, chunk_tokens, chunk_mask, chunk_rows in inject_chunks(
        clean, setting, vocab, plan, eot=p["eot_id"], chunk_tokens=chunk
    ):
        at = int(plan.out_starts[d0])
        tokens[at : at + len(chunk_tokens)] = chunk_tokens
        mask[at : at + len(chunk_mask)] = chunk_mask
        rows += chunk_rows
    for array in (tokens, mask):
        if isinstance(array, np.memmap):
            array.flush()
    del tokens, mask
documents = pd.DataFrame(rows)
# the statistics are counted on the files as written, read back, against the clean stream
stats = injection_stats_chunked(
    clean,
    read_tokens(out.train),
    np.load(out.mask, mmap_mode="r"),
    setting,
    vocab,
    documents["noised"].to_numpy() if len(documents) else np.zeros(0, dtype=bool),
    eot=p["eot_id"],
    chunk_tokens=chunk,
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
