"""Gather every paper's claims and runtimes into results/{scale}/REPORT.md."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import read_provenance, write_text
from neurips26.common.provenance import provenance_line
from neurips26.common.report import claims_markdown, markdown_table, read_benchmarks
from neurips26.common.runtime import start_job

log = start_job(snakemake)
scale = snakemake.wildcards.scale
lines = [f"# Scoreboard, scale `{scale}`", ""]
summary = []
sections = []
for slug, path in zip(snakemake.params.papers, snakemake.input.claims):
    claims = pd.read_parquet(path)
    bench = read_benchmarks(Path(path).parent / "benchmarks")
    hard = claims[claims["kind"] == "hard"]
    summary.append({
        "paper": f"[{slug}]({slug}/report.md)",
        "claims holding": f"{int(claims['holds'].sum())}/{len(claims)}",
        "hard claims holding": f"{int(hard['holds'].sum())}/{len(hard)}",
        "jobs": len(bench),
        "job time (s)": bench["seconds"].sum(),
        "slowest job": bench.sort_values("seconds").iloc[-1]["job"] if len(bench) else "n/a",
    })
    sections += [f"## {slug}", "", claims_markdown(claims), "", provenance_line(read_provenance(path)), ""]
lines += [markdown_table(pd.DataFrame(summary)), "",
          "Job time is the sum of the `benchmark:` wall times of the paper's jobs (CPU-seconds of work; "
          "with several cores the elapsed time is shorter).", "", *sections]
write_text(snakemake.output[0], "\n".join(lines))
log.info("scoreboard for %d papers", len(summary))
