"""Plan a scale before submitting it: results/{scale}/PLAN.md and one PLAN.md per paper, from Snakemake's DAG.

The DAG of every paper's report at the job's scale is built without running anything (as `snakemake -n
--forceall` would), each job's resources taken with the SLURM profile's set-resources applied, and the DAG of
quick scale read beside it for measured rates (quick benchmark files that exist; none are made here).
"""

from pathlib import Path

import yaml
from snakemake.api import SnakemakeApi
from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

from neurips26.common.io import write_text
from neurips26.common.locking import read_lock
from neurips26.common.plan import JobRecord, rates, render_plan
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
write_text(snakemake.output.plan, render_plan(f"Plan of the {p.scale} scale: all papers", jobs, rate, note))
for slug, path in zip(p.papers, snakemake.output.papers, strict=True):
    own = [j for j in jobs if j.paper == slug or slug in j.extra["papers"]]
    write_text(path, render_plan(f"Plan of the {p.scale} scale: {slug}", own, rate, note))
