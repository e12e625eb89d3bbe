"""A small open base model (the source registry's posttrain_voting/qwen2_5_0_5b) scores the four responses of every
CoVal prompt (comparisons.jsonl): log p(response | conversation) summed over the response's tokens, with the token
counts, for the axioms job's base_model reference (neurips26.posttrain_voting.base_model, .references)."""

from pathlib import Path

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.posttrain_voting.base_model import load_base_model, score_responses
from neurips26.posttrain_voting.coval import read_texts

log = start_job(snakemake)
texts = read_texts(snakemake.input.comparisons)
log.info("%d responses of %d prompts", len(texts), texts["prompt_id"].nunique())
logits_fn, tokenize, device = load_base_model(Path(snakemake.input.model[0]).parent)
scores = score_responses(texts, logits_fn, tokenize, device)
log.info(
    "scored %d response tokens (%d pairs truncated), mean log-probability per token %.3f",
    scores["tokens"].sum(),
    scores["truncated"].sum(),
    scores["logprob"].sum() / scores["tokens"].sum(),
)
write_parquet(scores, snakemake.output[0], job_provenance(snakemake))
