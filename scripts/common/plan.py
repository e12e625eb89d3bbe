"""Plan a scale before submitting it: results/{scale}/PLAN.md and one PLAN.md per paper, from Snakemake's DAG.

The DAG of every paper's report at the job's scale is built without running anything (as `snakemake -n
--forceall` would), each job's resources taken with the SLURM profile's set-resources applied, and the DAG of
quick scale read beside it for measured rates (quick benchmark files that exist; none are made here).
"""

from pathlib import Path

import pandas as pd
import yaml
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

from neurips26.common.claims import load_definitions
from neurips26.common.config import rehearsal_plan
from neurips26.common.io import write_text
from neurips26.common.locking import read_lock
from neurips26.common.plan import JobRecord, rates, render_plan
from neurips26.common.plan_checks import attach_rehearsal, claims_table, memory_table, not_fitting, planned_seeds
from neurips26.common.rehearsal import rehearsal_block
from neurips26.common.report import markdown_table
from neurips26.common.runtime import start_job
from neurips26.common.sources import lookup

log = start_job(snakemake)
p = snakemake.params
root = Path.cwd()
profile = yaml.safe_load(Path(snakemake.input.profile).read_text())
defaults, overrides = profile.get("default-resources", {}), profile.get("set-resources", {})
locked = read_lock(snakemake.input.lock)["files"]


def measured_seconds(path) -> float | None:
    """A benchmark file's CPU seconds (its wall seconds where it has none): the quick jobs ran one thread, often
    beside others, so their CPU time is the cleaner measure of their work."""
    path = Path(path)
    if not path.exists():
        return None
    lines = path.read_text().splitlines()
    if len(lines) < 2:
        return None
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t"), strict=False))
    cpu = float(row.get("cpu_time", "nan") or "nan")
    return cpu if cpu > 0 else float(row["s"])


def records(workflow, scale: str, papers: list[str], work_fns: dict) -> list[JobRecord]:
    """Every job of the papers' reports at `scale`, as the SLURM profile would submit it."""
    workflow.dag_settings.targets = {f"results/{scale}/{slug}/report.md" for slug in papers}
    workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
    workflow._build_dag()
    dag = workflow.dag
    ids = {job: i for i, job in enumerate(dag.jobs)}
    out = []
    for job, jobid in ids.items():
        rule = job.rule.name
        resources = {**defaults, **{k: v for k, v in job.resources.items()}, **overrides.get(rule, {})}
        source = job.wildcards_dict.get("source") if rule == "download" else None
        size = None
        if source is not None:
            size = lookup(source, snakemake.input.registry).size or locked.get(source, {}).get("size")
        users = [d.rule.name for d in dag.depending[job]] if source is not None else [rule]
        readers = sorted({slug for name in users for slug in papers if name.startswith(slug + "_")})
        paper = readers[0] if readers else ""
        work = work_fns[rule](job.wildcards, scale) if rule in work_fns else None
        out.append(
            JobRecord(
                jobid=jobid,
                rule=rule,
                paper=paper or "workflow",
                threads=int(job.threads),
                runtime_min=float(resources.get("runtime", 60)),
                mem_mb=float(resources.get("mem_mb", 0)),
                gpus=int(resources.get("gpu", resources.get("gpus", 0)) or 0),
                deps=tuple(ids[d] for d in dag.dependencies[job] if d in ids),
                work=work,
                download=source,
                size=size,
                seconds=measured_seconds(job.benchmark) if job.benchmark else None,
                extra={"papers": readers},  # a download counts for every paper that reads it
            )
        )
    return out


api = SnakemakeApi(OutputSettings(quiet={Quietness.ALL})).__enter__()
workflow_api = api.workflow(
    resource_settings=ResourceSettings(cores=1024, nodes=1024),
    config_settings=ConfigSettings(config={"scale": p.scale}),
    snakefile=root / "workflow" / "Snakefile",
    workdir=root,
)
workflow_api.dag(DAGSettings(targets={"all"}, forceall=True))
workflow = workflow_api._workflow
work_fns = workflow.globals.get("PLAN_WORK", {})
jobs = records(workflow, p.scale, p.papers, work_fns)
quick = records(workflow, "quick", p.papers, work_fns) if p.scale != "quick" else jobs
rate = rates(quick)
log.info("%d jobs at %s scale; measured rates for %d rules", len(jobs), p.scale, len(rate))
note = (
    f"Planned from the workflow's DAG at {p.scale} scale (every job, as with `--forceall`); nothing was run. "
    "Regenerate after changing rules, configs or the profile: `snakemake results/"
    f"{p.scale}/PLAN.md --forcerun plan`."
)


def rehearsal_sections(jobs: list[JobRecord], papers: list[str]) -> tuple[list[JobRecord], list[str]]:
    """The rehearsal's checks of this scale (paper scale, when `make rehearse` has run): memory per job, what will
    not fit or run, the claims the planned seeds cannot decide."""
    if p.scale != "paper":
        return jobs, []
    found = snakemake.input.get("rehearsal")
    if not found:
        return jobs, [
            "## Memory, fit and claims",
            "",
            "Not checked: no rehearsal (`make rehearse` writes results/rehearsal/jobs.csv; then rerun the plan).",
            "",
        ]
    measured = pd.read_csv(found)
    measured = measured[measured["paper"].isin([*papers, "workflow"])]
    jobs = attach_rehearsal(jobs, measured)
    claims = pd.read_csv(snakemake.input.rehearsal_claims)
    definitions = {slug: load_definitions(f"config/claims/{slug}.yaml") for slug in papers}
    seeds = {slug: seed_counts(slug) for slug in papers}
    table = claims_table(definitions, claims, seeds)
    unfit = not_fitting(measured)
    undecided = table[~table["decidable"].str.contains("can decide")] if not table.empty else table
    return jobs, [
        "## Memory per job",
        "",
        "From the rehearsal (results/rehearsal/REHEARSAL.md): the predicted peak host memory of each rule's largest"
        " job beside its request, and for jobs that train in the shared loop the tensor memory on the job's device"
        " at the configured batch beside the GPU's 80 GB. Host memory is the rehearsal's peak at its fixture sizes"
        " (plus the tensors' growth with the batch for jobs training on the CPU): a job whose memory grows with the"
        " data is not extrapolated here (its request is counted in its rule's comment). A device count from one"
        " memory point is scaled with the batch, an upper bound (REHEARSAL.md says which).",
        "",
        markdown_table(memory_table(jobs), digits=3),
        "",
        "## Will not fit or will not run",
        "",
        markdown_table(unfit[["paper", "rule", "wildcards", "problem"]]) if not unfit.empty else "None found.",
        "",
        "## Claims the paper-scale design cannot decide",
        "",
        "Each hard or soft claim's minimum runs against the runs the paper-scale design gives it (the rehearsal's"
        " runs scaled by paper / rehearsal seeds), with the width of a 95% interval over that many seeds in standard"
        " errors and the fewest events out of that many runs that a one-sided Fisher test separates from none.",
        "",
        markdown_table(undecided, digits=3) if not undecided.empty else "Every claim has its minimum runs.",
        "",
        f"All {len(table)} claims:" if not table.empty else "",
        "",
        markdown_table(table, digits=3) if not table.empty else "",
        "",
    ]


def seed_counts(slug: str) -> tuple[int, int]:
    """The most seeds the paper-scale design runs, and the rehearsal's (derived from the paper block)."""
    paper = workflow.globals["PAPERS"][slug]["paper"]
    plan = rehearsal_plan(slug)
    return planned_seeds(paper), planned_seeds(rehearsal_block(paper, plan)) if plan else 0


jobs, sections = rehearsal_sections(jobs, p.papers)
title = f"Plan of the {p.scale} scale"
write_text(snakemake.output.plan, render_plan(f"{title}: all papers", jobs, rate, note, sections=tuple(sections)))
for slug, path in zip(p.papers, snakemake.output.papers, strict=True):
    own = [j for j in jobs if j.paper == slug or slug in j.extra["papers"]]
    _, own_sections = rehearsal_sections(own, [slug])
    write_text(path, render_plan(f"{title}: {slug}", own, rate, note, sections=tuple(own_sections)))
