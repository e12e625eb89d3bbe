"""Gather every paper's claims, checks and runtimes into results/{scale}/REPORT.md and scoreboard.csv."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import atomic_path, read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, read_benchmarks
from neurips26.common.runtime import start_job
from neurips26.common.scoreboard import board_csv, board_markdown, board_rst, paper_row, totals_sentence

log = start_job(snakemake)
scale = snakemake.wildcards.scale
rows, sections = [], []
for slug, path in zip(snakemake.params.papers, snakemake.input.claims):
    claims = pd.read_parquet(path)
    bench = read_benchmarks(Path(path).parent / "benchmarks")
    rows.append(paper_row(slug, claims, bench))
    title = f"## {slug}" + (" (reconstruction: the paper was not found)" if rows[-1]["reconstruction"] else "")
    sections += [title, "", claims_markdown(claims), "", provenance_line(read_provenance(path)), ""]
rows = pd.DataFrame(rows)
lines = [
    f"# Scoreboard, scale `{scale}`",
    "",
    board_markdown(rows),
    "Claims are sentences of the papers decided from our experiments' outputs: holds / fails / inconclusive "
    "(missing evidence, fewer runs than the claim needs, an interval over seeds that contains the threshold, "
    "a margin inside the seed noise, or its null passes too: the same measurement without the paper's mechanism, "
    "in the column `null`, meets the threshold as well). Checks are properties our own code guarantees or "
    "verifies; they are "
    "counted apart and never as reproduced claims. `decided` is the share of a paper's hard and soft claims "
    "that hold or fail (the rest are inconclusive: too little evidence, or a null that passes too). "
    "`runs per claim` is the range of the evidence counts of "
    "the hard and soft claims: seeds, runs, cells or pairs, as each claim's metric says (the paper's report "
    "lists them). Job time is the sum of the `benchmark:` wall times of "
    "the paper's jobs (with several cores the elapsed time is shorter).",
    "",
    *sections,
]
write_text(snakemake.output.report, "\n".join(lines))
with atomic_path(snakemake.output.table) as tmp:
    board_csv(rows).to_csv(tmp, index=False)
log.info("scoreboard for %d papers: %s", len(rows), totals_sentence(rows))
write_text(snakemake.output.landing, board_rst(rows, scale))
