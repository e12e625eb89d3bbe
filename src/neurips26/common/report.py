"""Markdown pieces shared by every paper's report and the scoreboard."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def markdown_table(frame: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table; floats to `digits` significant digits."""

    def cell(value) -> str:
        if isinstance(value, (float, np.floating)):
            return "n/a" if not np.isfinite(value) else f"{value:.{digits}g}"
        return str(value).replace("|", "\\|")

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def read_benchmarks(folder: str | Path) -> pd.DataFrame:
    """Every Snakemake benchmark file under `folder`: job (path stem), seconds, max RSS (MB)."""
    rows = []
    for path in sorted(Path(folder).rglob("*.tsv")):
        table = pd.read_csv(path, sep="\t")
        rows.append(
            {
                "job": str(path.relative_to(folder).with_suffix("")),
                "seconds": float(table["s"].mean()),
                "max_rss_mb": float(pd.to_numeric(table["max_rss"], errors="coerce").max()),
            }
        )
    return pd.DataFrame(rows, columns=["job", "seconds", "max_rss_mb"])


VERDICT_CELLS = {"holds": "holds", "fails": "**fails**", "inconclusive": "*inconclusive*"}


RECONSTRUCTION_LINE = (
    "**Reconstruction: the paper was not found.** Its model is our reconstruction, so these claims test our model, "
    "not the paper's; the scoreboard counts them apart from the reproduced claims of found papers."
)


def is_reconstruction(claims: pd.DataFrame) -> bool:
    """Whether a claims table carries the claims file's `reconstruction` mark (older tables lack the column)."""
    return "reconstruction" in claims.columns and bool(claims["reconstruction"].fillna(False).astype(bool).any())


def claims_markdown(claims: pd.DataFrame) -> str:
    """Every claim and check: value, threshold, the evidence it rests on and its verdict (checks last); a `null`
    column (the same measurement without the paper's mechanism) when some claim was measured beside its null."""
    order = {"hard": 0, "soft": 1, "info": 2, "check": 3}
    claims = claims.assign(_order=claims["kind"].map(order)).sort_values("_order", kind="stable")

    def interval(row) -> str:
        return "" if not np.isfinite(row.low) else f"[{row.low:.4g}, {row.high:.4g}]"

    shown = pd.DataFrame(
        {
            "claim_id": claims["claim_id"],
            "kind": claims["kind"],
            "statement": claims["statement"],
            "metric": claims["metric"],
            "value": claims["value"],
            "interval": [interval(r) for r in claims.itertuples()],
            **({"null": claims["null_value"]} if _has_null(claims) else {}),
            "check": claims["comparison"] + " " + claims["threshold"].map(lambda t: f"{t:g}"),
            "runs": [f"{r.runs} (min {r.min_runs})" for r in claims.itertuples()],
            "verdict": claims["verdict"].map(VERDICT_CELLS),
            "paper_value": claims["paper_value"],
            "evidence": claims["evidence"],
            "note": claims["note"],
        }
    )
    mark = f"{RECONSTRUCTION_LINE}\n\n" if is_reconstruction(claims) else ""
    return f"{mark}{verdict_line(claims)}\n\n{markdown_table(shown)}"


def _has_null(claims: pd.DataFrame) -> bool:
    """Whether some claim was measured beside its null (older tables lack the column)."""
    return "null_value" in claims.columns and bool(np.isfinite(claims["null_value"].to_numpy(dtype=float)).any())


def verdict_line(claims: pd.DataFrame) -> str:
    """One sentence: holds/fails/inconclusive per kind of claim, and checks passed."""
    counts = verdict_summary(claims)
    parts = [f"{kind} claims {counts[kind]}" for kind in ("hard", "soft", "info") if (claims["kind"] == kind).any()]
    return (
        "Claims (holds/fails/inconclusive): "
        + ("; ".join(parts) or "none")
        + f". Implementation checks passed: {counts['checks']}."
    )


def verdict_summary(claims: pd.DataFrame) -> dict[str, str]:
    """holds/fails/inconclusive of the hard, soft and info claims, and checks passed/total."""
    out = {}
    for kind in ("hard", "soft", "info"):
        rows = claims[claims["kind"] == kind]["verdict"]
        out[kind] = "/".join(str(int((rows == v).sum())) for v in ("holds", "fails", "inconclusive"))
    checks = claims[claims["kind"] == "check"]["verdict"]
    out["checks"] = f"{int((checks == 'holds').sum())}/{len(checks)}"
    return out


def runtimes_markdown(folder: str | Path) -> str:
    """Job time per step (the first folder level under the benchmarks folder) and in total."""
    bench = read_benchmarks(folder)
    bench["step"] = bench["job"].str.split("/").str[0]
    steps = (
        bench.groupby("step")["seconds"]
        .agg(["count", "sum", "max"])
        .reset_index()
        .rename(columns={"count": "jobs", "sum": "total s", "max": "slowest job s"})
    )
    return f"{markdown_table(steps)}\n\nTotal job time {bench['seconds'].sum():.1f} s over {len(bench)} jobs."


def figures_markdown(figures: list[str], report_path: str | Path, captions: list[str]) -> str:
    """Each figure as an image link relative to the report, followed by its caption (.rst, same stem)."""
    out = Path(report_path).parent
    text = {Path(p).stem: " ".join(Path(p).read_text().split()) for p in captions}
    return "\n\n".join(
        f"![{Path(p).stem}]({Path(p).relative_to(out)})\n\n{text.get(Path(p).stem, '')}" for p in figures
    )


def paper_scale_markdown(spec_path: str | Path, values: dict) -> str:
    """The paper's settings beside our paper-scale config (workflow/report/<slug>/paper_scale.yaml, our values as
    the report rule's params read them from the config)."""
    import yaml

    from neurips26.common.paper_scale import paper_scale_rows

    spec = yaml.safe_load(Path(spec_path).read_text())
    table = pd.DataFrame(paper_scale_rows(spec, values))
    return (
        "### Paper scale: the paper's settings beside ours\n\n"
        f"What the paper and its code were read from: {spec['cite']}\n\n{markdown_table(table)}"
    )


def closing_sections(
    figures: list[str],
    report_path: str | Path,
    captions: list[str],
    benchmarks: str | Path,
    deviations: str | Path,
    provenance: str,
    paper_scale: str = "",
) -> str:
    """The sections every paper's report ends with: figures, runtimes, deviations (with the table of the paper's
    settings beside ours, `paper_scale`, when given), provenance."""
    paper_scale_section = f"\n{paper_scale}\n" if paper_scale else ""
    return f"""## Figures

{figures_markdown(figures, report_path, captions)}

## Runtimes (from the rules' benchmark files)

{runtimes_markdown(benchmarks)}

## Deviations from the paper

{Path(deviations).read_text()}
{paper_scale_section}
{provenance}
"""


def render(template: str | Path, **context) -> str:
    """Render a Jinja2 Markdown template; `| table` turns a DataFrame into a Markdown table
    (`| table(digits=3)` for other precision). An undefined name is an error, not an empty string."""
    import jinja2

    template = Path(template)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template.parent),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    env.filters["table"] = markdown_table
    return env.get_template(template.name).render(**context)


def write_report(job, provenance_from: str | Path | None = None, **tables) -> str:
    """The one entry point of every paper's report rule.

    Renders the rule's input `template` (workflow/report/<slug>/report.md.j2) with the names `scale`,
    `params` (the rule's params), `claims` (the claims table as Markdown), `n_claims`, `reconstruction` (the line
    that marks a paper whose model is our reconstruction, for the report's top; empty otherwise), `closing` (figures,
    runtimes, deviations, provenance) and `tables` (DataFrames or text built by the paper's library), and
    writes the rule's first output. Provenance is read from `provenance_from` (default: input `claims`)."""
    import pandas as pd

    from neurips26.common.io import read_provenance, write_text
    from neurips26.common.provenance import provenance_line

    inp = job.input
    claims = pd.read_parquet(inp.claims)
    closing = closing_sections(
        inp.figures,
        job.output[0],
        inp.captions,
        job.params.benchmarks,
        inp.deviations,
        provenance_line(read_provenance(provenance_from or inp.claims)),
        paper_scale_markdown(inp.paper_scale, job.params.paper_scale) if "paper_scale" in inp.keys() else "",
    )
    text = render(
        inp.template,
        scale=job.wildcards.scale,
        params=job.params,
        claims=claims_markdown(claims),
        n_claims=len(claims),
        reconstruction=RECONSTRUCTION_LINE if is_reconstruction(claims) else "",
        closing=closing,
        **tables,
    )
    write_text(job.output[0], text)
    return text
