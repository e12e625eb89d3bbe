"""Reading a rehearsal back (tools/rehearse.py): one row per job of the rehearsal DAG, beside what the paper-scale
job of its rule requests, and REHEARSAL.md.

Per job: its status (ok; failed, with the last error line of its log; not run, when a job it needs failed), its
seconds and peak host memory (the benchmark's max_rss), the tensor memory its training loop counted at the
rehearsal's micro-batch and at twice it (neurips26.common.tensor_memory), and the paper-scale job's requests (the
SLURM profile's set-resources applied). The predictions:

- device memory at the configured batch: the count is linear in the micro-batch, `m(b) = r + a b`, so two points
  give `m(B) = m(b) + (m(2b) - m(b)) (B / b - 1)` with B / b the ratio of the paper's micro-batch to the
  rehearsal's (the rule's own key); where only one point exists, m(b) scaled by B / b (an upper bound);
- time: CPU jobs, the rehearsal's seconds times the rule's work ratio (its plan's work function at the paper
  block over the same at the rehearsal's: neurips26.common.rehearsal.work_ratio; none where the rule has no work
  function but carries a cut budget); GPU jobs that train in the loop, the rehearsal's counted FLOPs times the
  work ratio at a stated throughput (`GPU_TFLOPS`), otherwise as CPU jobs (an upper bound).
"""

from __future__ import annotations

import json
import math
import os
import platform
from pathlib import Path

import pandas as pd

from neurips26.common.report import markdown_table

__all__ = ["GPU_MEMORY_GB", "GPU_TFLOPS", "collect", "predict", "problems", "render"]

GPU_MEMORY_GB = 80.0  # the GPU a paper-scale job is planned against (an 80 GB A100/H100)
# the matrix-product throughput a GPU job is assumed to reach: an H100's fp32 peak (67 TFLOP/s without tensor
# cores; the jobs train in fp32 but paper 09, which uses bf16), so the estimate counts only the loop's matrix
# products at peak: a lower bound on time (no start-up, evaluation, data loading or small-kernel overhead)
GPU_TFLOPS = 67.0


def _benchmark(path: Path) -> dict:
    if not path.exists():
        return {}
    lines = path.read_text().splitlines()
    if len(lines) < 2:
        return {}
    row = dict(zip(lines[0].split("\t"), lines[1].split("\t"), strict=False))
    out = {}
    for key, name in (("s", "seconds"), ("max_rss", "host_peak_mb"), ("cpu_time", "cpu_seconds")):
        try:
            out[name] = float(row[key])
        except (KeyError, ValueError):
            pass
    return out


def _loop_counts(folder: Path, log: str | None) -> dict:
    if log is None:
        return {}
    path = folder / (log.replace("/", "__") + ".json")
    if not path.exists():
        return {}
    loops = json.loads(path.read_text())["loops"]
    return {
        "tensor_peak_mb": max(loop["peak_bytes"] for loop in loops) / 1e6,
        "parameter_mb": max(loop["parameter_bytes"] for loop in loops) / 1e6,
        "flops_per_step": max(loop["flops_per_step"] for loop in loops),
        "loop_steps": sum(loop["steps"] for loop in loops),  # a job of several loops (one per class) runs them all
    }


def _last_error(log: Path) -> str:
    if not log.exists():
        return ""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or "error" in line.split(":")[0]]
    return (errors[-1] if errors else (lines[-1] if lines else ""))[:300]


def _resources(job, profile: dict) -> dict:
    defaults, overrides = profile.get("default-resources", {}), profile.get("set-resources", {})
    res = {**defaults, **dict(job.resources.items()), **overrides.get(job.rule.name, {})}
    return {
        "request_mem_mb": float(res.get("mem_mb", 0) or 0),
        "request_min": float(res.get("runtime", 60) or 60),
        "gpus": int(res.get("gpu", res.get("gpus", 0)) or 0),
        "threads": int(job.threads),
    }


def _carried(rule) -> list[str]:
    keys = []
    for function in rule.params:
        keys += [".".join(key[1:]) for key in getattr(function, "config_keys", ())]
    return sorted(set(keys))


def _dag(workflow, targets: set[str]):
    workflow.dag_settings.targets = targets
    workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
    workflow._build_dag()
    return list(workflow.dag.jobs)


def _paper_of(rule: str, slugs: list[str]) -> str:
    matches = [slug for slug in slugs if rule.startswith(slug + "_")]
    return max(matches, key=len) if matches else "workflow"


def collect(work: Path, slugs: list[str], memory: Path) -> pd.DataFrame:
    """One row per job of the rehearsal DAG of `slugs` in the workflow copy `work` (after its run)."""
    import yaml
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, DAGSettings, OutputSettings, Quietness, ResourceSettings

    from neurips26.common.config import rehearsal_plan
    from neurips26.common.rehearsal import batch_ratio, work_ratio

    profile = yaml.safe_load((work / "profiles/slurm/config.yaml").read_text())
    api = SnakemakeApi(OutputSettings(quiet={Quietness.ALL})).__enter__()
    workflow_api = api.workflow(
        resource_settings=ResourceSettings(cores=1024, nodes=1024),
        config_settings=ConfigSettings(config={"scale": "rehearsal"}),
        snakefile=work / "workflow" / "Snakefile",
        workdir=work,
    )
    workflow_api.dag(DAGSettings(targets={f"results/rehearsal/{slugs[0]}/report.md"}, forceall=True))
    workflow = workflow_api._workflow
    papers_cfg = workflow.globals["PAPERS"]
    paper_jobs = _dag(workflow, {f"results/paper/{slug}/report.md" for slug in slugs})
    by_rule: dict[str, list] = {}
    for job in paper_jobs:
        by_rule.setdefault(job.rule.name, []).append(job)
    rehearsal_jobs = _dag(workflow, {f"results/rehearsal/{slug}/report.md" for slug in slugs})
    rows = []
    rehearsed = {job.rule.name for job in rehearsal_jobs}
    for rule in sorted(set(by_rule) - rehearsed):  # paper-scale rules the rehearsal's DAG does not reach
        paper = _paper_of(rule, slugs)
        plan = rehearsal_plan(paper) if paper in papers_cfg else None
        reason = plan.not_rehearsed.get(rule, "") if plan is not None else ""
        rows.append(
            {
                "paper": paper,
                "rule": rule,
                "wildcards": "",
                "status": "not rehearsed",
                "error": reason or "no reason given: the rehearsal's DAG does not reach this paper-scale rule",
                "paper_jobs": len(by_rule[rule]),
                **max((_resources(j, profile) for j in by_rule[rule]), key=lambda r: r["request_mem_mb"]),
            }
        )
    for job in rehearsal_jobs:
        rule = job.rule.name
        wildcards = {k: v for k, v in job.wildcards_dict.items() if k != "scale"}
        paper = _paper_of(rule, slugs)
        log = str(job.log[0]) if job.log else None
        outputs_exist = all((work / str(f)).exists() for f in job.output)
        status = "ok" if outputs_exist else ("failed" if log and (work / log).exists() else "not run")
        twins = by_rule.get(rule, [])
        same = [j for j in twins if {k: v for k, v in j.wildcards_dict.items() if k != "scale"} == wildcards]
        requests = [_resources(j, profile) for j in (same or twins)]
        request = max(requests, key=lambda r: (r["request_mem_mb"], r["request_min"])) if requests else {}
        plan = rehearsal_plan(paper) if paper in papers_cfg else None
        ratio, batch, model = math.nan, 1.0, "no plan"
        if plan is not None:
            paper_block, rehearsal_block = papers_cfg[paper]["paper"], papers_cfg[paper]["rehearsal"]
            keys = _carried(job.rule)
            found = work_ratio(plan, rule, paper_block, rehearsal_block, wildcards)
            batch = batch_ratio(plan, paper_block, rehearsal_block, keys)
            if found is not None:
                ratio, model = found, "work function"
            elif any(b == k or b.startswith(k + ".") for b in plan.budgets for k in keys):
                model = "none, carries a cut budget"
            else:
                ratio, model = 1.0, "none needed"
        row = {
            "paper": paper,
            "rule": rule,
            "wildcards": ",".join(f"{k}={v}" for k, v in sorted(wildcards.items())),
            "status": status,
            "error": "" if status != "failed" else _last_error(work / log),
            "paper_jobs": len(twins),
            "work_ratio": ratio,
            "work_model": model,
            "shape_cut": bool(plan is not None and plan.shapes),
            "batch_ratio": batch,
            "benchmark": str(job.benchmark) if job.benchmark else "",
            **(_benchmark(work / str(job.benchmark)) if job.benchmark else {}),
            **request,
        }
        x1, x2 = _loop_counts(memory / "x1", log), _loop_counts(memory / "x2", log)
        row.update(x1)
        if x2:
            row["tensor_peak_2x_mb"] = x2["tensor_peak_mb"]
        rows.append(row)
    return predict(pd.DataFrame(rows))


def _growth_of(job, growth: dict[str, tuple[int, int]]) -> tuple[int, int] | None:
    """The (fixture, real) record counts of a job: its rule's entry, or an entry `rule:key=value,...` whose
    wildcards the job has."""
    wildcards = set(str(job.get("wildcards") or "").split(","))
    for key, spec in growth.items():
        rule, _, only = key.partition(":")
        if rule == job["rule"] and (not only or set(only.split(",")) <= wildcards):
            return spec
    return None


def extrapolate_growth(jobs: pd.DataFrame, doubled: Path, growth: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """The time of the rules whose cost grows with the data, from the rehearsal at two fixture sizes: with t1 and
    t2 the seconds at n and 2n records and s the paper's start-up (its fastest job), the exponent
    p = log2((t2 - s) / (t1 - s)) (at least 1: reading the data is linear), and the paper-scale time
    s + (t1 - s) (N / n)^p for the real source's N records (`growth`: rule -> (n, N))."""
    jobs = jobs.copy()
    startup = jobs.groupby("paper")["seconds"].min()
    for column in ("seconds_2x_data", "growth_exponent"):
        jobs[column] = math.nan
    for index, job in jobs.iterrows():
        spec = _growth_of(job, growth)
        if spec is None or not job.get("benchmark"):
            continue
        t2 = _benchmark(doubled / job["benchmark"]).get("seconds")
        t1 = job.get("seconds")
        if not t2 or not t1 or not math.isfinite(t1) or t1 <= 0:
            jobs.loc[index, "work_ratio"] = math.nan
            jobs.loc[index, "work_model"] = "data growth: no second size measured, time not estimated"
            continue
        n, real = spec
        s0 = min(float(startup.get(job["paper"], 0.0)), t1) * 0.999
        exponent = max(1.0, math.log2(max(t2 - s0, 1e-9) / (t1 - s0)))
        jobs.loc[index, ["seconds_2x_data", "growth_exponent"]] = t2, exponent
        jobs.loc[index, "work_ratio"] = (real / n) ** exponent
        jobs.loc[index, "work_model"] = f"data growth: {n} -> {real} records, exponent {exponent:.2f}"
    return predict(jobs)


def predict(jobs: pd.DataFrame) -> pd.DataFrame:
    """Add the predictions at paper scale: device memory (GB), host memory (MB) and minutes per job."""
    jobs = jobs.copy()
    for column in ("tensor_peak_mb", "tensor_peak_2x_mb", "seconds", "host_peak_mb", "flops_per_step", "loop_steps"):
        if column not in jobs:
            jobs[column] = math.nan
    one, two, ratio = jobs["tensor_peak_mb"], jobs["tensor_peak_2x_mb"], jobs["batch_ratio"]
    slope = (two - one).clip(lower=0)
    linear = one + slope * (ratio - 1)
    jobs["device_gb"] = linear.where(two.notna(), one * ratio) / 1e3
    if "shape_cut" in jobs:  # counted at a cut shape: says nothing of the real one (the plan's reason gives its count)
        jobs.loc[jobs["shape_cut"].fillna(False).astype(bool), "device_gb"] = math.nan
    # host memory: the measured peak, plus the growth of the tensors with the batch where the job trains on the CPU
    growth = (jobs["device_gb"] * 1e3 - one).fillna(0).clip(lower=0)
    jobs["host_mb"] = jobs["host_peak_mb"] + growth.where(jobs.get("gpus", 0) == 0, 0)
    # start-up (interpreter, imports, reading inputs) does not grow with the work: the fastest job of the paper is
    # taken as its start-up and only the rest is scaled (torch jobs import more: still an upper bound)
    startup = jobs.groupby("paper")["seconds"].transform("min").fillna(0) if "paper" in jobs else 0.0
    startup = pd.concat([startup, jobs["seconds"]], axis=1).min(axis=1) if "paper" in jobs else startup
    jobs["startup_s"] = startup
    cpu_min = (startup + (jobs["seconds"] - startup) * jobs["work_ratio"]) / 60
    # the rehearsal's FLOPs (per counted step x its steps) times the work ratio, at the stated throughput
    gpu_min = jobs["flops_per_step"] * jobs["loop_steps"] * jobs["work_ratio"] / (GPU_TFLOPS * 1e12) / 60
    jobs["estimate_min"] = cpu_min.where(~((jobs.get("gpus", 0) > 0) & gpu_min.notna()), gpu_min)
    # a job whose rehearsal time is all start-up measured no work to scale: its estimate would be its start-up
    within_startup = ((jobs["seconds"] - startup) < 0.5) & (jobs["work_ratio"] > 10)
    jobs.loc[within_startup, "estimate_min"] = math.nan
    jobs["time_note"] = within_startup.map({True: "work within start-up: time not estimated", False: ""})
    return jobs


def problems(jobs: pd.DataFrame) -> pd.DataFrame:
    """The jobs that failed, did not run, or are predicted over their request or the GPU."""
    reasons = []
    for _, job in jobs.iterrows():
        why = []
        stated = job["status"] == "not rehearsed" and not str(job.get("error", "")).startswith("no reason given")
        if job["status"] != "ok" and not stated:
            error = job.get("error")
            why.append(job["status"] + (f": {error}" if isinstance(error, str) and error else ""))
        one_point = not math.isfinite(job.get("tensor_peak_2x_mb", math.nan))
        if job.get("gpus", 0) and job["device_gb"] > GPU_MEMORY_GB:
            bound = " (one memory point, scaled with the batch: an upper bound)" if one_point else ""
            why.append(f"device {job['device_gb']:.1f} GB > {GPU_MEMORY_GB:.0f} GB GPU{bound}")
        if not job.get("gpus", 0) and job["device_gb"] > 1:
            why.append(f"trains on the CPU: {job['device_gb']:.1f} GB of tensors (no GPU requested)")
        if job.get("time_note"):
            why.append(job["time_note"])
        if job.get("gpus", 0) and job["status"] == "ok" and not math.isfinite(job["device_gb"]):
            why.append(
                "GPU job at a cut shape: device memory from the paper's own count (REHEARSAL.md's shapes)"
                if job.get("shape_cut")
                else "GPU job whose device memory the rehearsal does not count (not in the training loop)"
            )
        two = job.get("tensor_peak_2x_mb", math.nan)
        if math.isfinite(two) and two <= job["tensor_peak_mb"] and job.get("batch_ratio", 1) > 1:
            why.append("tensor memory did not grow with the doubled micro-batch: the prediction assumes no growth")
        if str(job.get("work_model", "")).startswith("data growth: no second"):
            why.append(job["work_model"])
        if job["host_mb"] > job.get("request_mem_mb", math.inf):
            why.append(f"host {job['host_mb']:.0f} MB > request {job['request_mem_mb']:.0f} MB")
        if job.get("work_model") == "none, carries a cut budget":
            why.append("no work function: its paper-scale time is not estimated")
        if job["estimate_min"] > job.get("request_min", math.inf):
            why.append(f"estimate {job['estimate_min']:.0f} min > request {job['request_min']:.0f} min")
        reasons.append("; ".join(why))
    out = jobs.assign(problem=reasons)
    return out[out["problem"] != ""]


def _fmt(value, digits=1) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value:,.{digits}f}"


def render(jobs: pd.DataFrame, slugs: list[str], seconds: float, work: Path) -> str:
    from neurips26.common.config import rehearsal_plan
    from neurips26.common.provenance import git_commit

    ok = jobs[jobs["status"] == "ok"]
    rules_all = sorted(set(jobs["rule"]))
    rules_ok = sorted(set(ok["rule"]))
    lines = [
        "# Rehearsal of paper scale",
        "",
        f"Commit {git_commit()}, {platform.node()} ({platform.machine()}, {os.cpu_count()} cores), {len(slugs)} papers:"
        f" this run of the driver {seconds / 60:.1f} min wall (jobs it did not rerun kept their earlier measurements);"
        f" the jobs' own times sum to {jobs['seconds'].sum() / 60:.1f} min. {len(jobs)} jobs of {len(rules_all)} rules;"
        f" {len(rules_ok)} rules ran every job, {(jobs['status'] == 'failed').sum()} jobs failed,"
        f" {(jobs['status'] == 'not run').sum()} did not run.",
        "",
        "Every paper-scale rule at its real shapes and code paths, with the budgets its paper's rehearsal plan cuts"
        " (`src/neurips26/<slug>/rehearsal.py`), on fixture files in the sources' formats served from 127.0.0.1"
        f" (copy of the workflow: `{work.name}`). Memory per job: `host MB` is the benchmark's peak resident set;"
        " `tensor MB` the peak of tensor storage its training loop counted at the rehearsal's micro-batch (and at"
        " twice it); `device GB` the count extrapolated to the configured batch; `estimate min` the paper-scale"
        f" job's predicted time (CPU: seconds x work ratio; GPU: counted FLOPs at {GPU_TFLOPS:.0f} TFLOP/s).",
        "",
        "## Will not fit or will not run",
        "",
    ]
    found = problems(jobs)
    if found.empty:
        lines.append("None found.")
    else:
        lines.append(
            markdown_table(
                found[["paper", "rule", "wildcards", "problem"]].rename(columns={"wildcards": "job"}),
            )
        )
    skipped = jobs[jobs["status"] == "not rehearsed"]
    lines += ["", "## Paper-scale rules the rehearsal does not run", ""]
    lines.append(
        markdown_table(skipped[["paper", "rule", "error"]].rename(columns={"error": "reason"}))
        if not skipped.empty
        else "None: every paper-scale rule ran at least once."
    )
    lines += ["", "## Shapes the rehearsal could not run here", ""]
    cut_shapes = []
    for slug in slugs:
        plan = rehearsal_plan(slug)
        for path, (_, reason) in plan.shapes.items() if plan else []:
            cut_shapes.append({"paper": slug, "key": path, "reason": reason})
    lines.append(markdown_table(pd.DataFrame(cut_shapes)) if cut_shapes else "None: every job ran at its real shapes.")
    lines += ["", "## Jobs", ""]
    table = jobs.assign(
        job=jobs["wildcards"],
        **{
            "s": jobs["seconds"].map(_fmt),
            "host MB": jobs["host_peak_mb"].map(lambda v: _fmt(v, 0)),
            "tensor MB": jobs["tensor_peak_mb"].map(_fmt),
            "tensor 2x MB": jobs["tensor_peak_2x_mb"].map(_fmt),
            "device GB": jobs["device_gb"].map(lambda v: _fmt(v, 2)),
            "request MB": jobs.get("request_mem_mb", pd.Series(dtype=float)).map(lambda v: _fmt(v, 0)),
            "GPU": jobs.get("gpus", pd.Series(dtype=float)).map(lambda v: "yes" if v else ""),
            "estimate min": jobs["estimate_min"].map(_fmt),
            "request min": jobs.get("request_min", pd.Series(dtype=float)).map(lambda v: _fmt(v, 0)),
        },
    )
    columns = ["paper", "rule", "job", "status", "s", "host MB", "tensor MB", "tensor 2x MB", "device GB"]
    columns += ["GPU", "request MB", "estimate min", "request min"]
    lines.append(markdown_table(table.sort_values(["paper", "rule", "job"])[columns]))
    return "\n".join(lines) + "\n"
