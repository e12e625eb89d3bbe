"""The rehearsal of paper scale (`make rehearse`): every paper-scale rule run once at its real shapes and code paths,
with budgets cut to a couple of steps, on fixture files served from 127.0.0.1; writes results/rehearsal/REHEARSAL.md
and results/rehearsal/jobs.csv (what results/paper/PLAN.md reads).

In a copy of the workflow (.rehearsal/work: results, resources and Snakemake's records kept between runs, the code
copied afresh), with its own registry (the fixtures' hashes) and its own lock, so config/sources.lock.yaml and
resources/ of the checkout are never touched:
1. every paper's `neurips26.<slug>.rehearsal.fixtures()` builds its sources' files, served as the registry's mirrors;
2. the training rules run once with the micro-batches doubled (`rehearsal: {factor: 2}`), their loops counting
   tensor memory and FLOPs (neurips26.common.tensor_memory), then every paper's report runs at factor 1, so the
   training jobs run again at the rehearsal's micro-batch and every other job once;
3. each job of the rehearsal DAG is read back (benchmark: seconds and peak host memory; the loop's counts; its log
   for failures) beside what the paper-scale job requests, and REHEARSAL.md is written.

    .venv/bin/python tools/rehearse.py [--papers bird,ecfr] [--cores 2] [--keep]
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import profile_imports  # tools/, beside this script
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from neurips26.common.config import load_yaml  # noqa: E402
from neurips26.common.fixtures import FixtureServer, fixture_registry  # noqa: E402
from neurips26.common.io import write_text  # noqa: E402
from neurips26.common.rehearsal_report import collect, extrapolate_growth, render  # noqa: E402

COPIED = ("workflow", "rules", "scripts", "config", "src", "profiles", "envs")
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
NOT_PAPERS = {"common", "corpus", "download", "plan", "scoreboard", "rehearsal"}


def papers() -> list[str]:
    return sorted(p.stem for p in (ROOT / "rules").glob("*.smk") if p.stem not in NOT_PAPERS)


def rule_scripts() -> dict[str, Path]:
    """rule name -> its script, read from rules/*.smk."""
    return {rule: ROOT / script for rule, script in profile_imports.rule_scripts().items()}


def training_rules() -> list[str]:
    """Rules whose script sets up the common training loop (where tensor memory is counted): the targets of the
    first pass, which `--until` runs with what they need and nothing downstream."""
    scripts = rule_scripts()
    return sorted(rule for rule, script in scripts.items() if "LoopSettings(" in script.read_text())


def host_memory(out: Path, slugs: list[str]) -> list[str]:
    """`--set-resources` of every rule's host memory when run on this CPU, so that Snakemake does not start two jobs
    that together pass the machine's memory (`--resources mem_mb`): the peak of the previous rehearsal
    (results/rehearsal/jobs.csv), else what the paper's plan declares (`Plan.host_mb`, for a fresh clone)."""
    mb = {rule: need for slug in slugs for rule, (need, _) in plan_of(slug).host_mb.items()}
    path = out / "jobs.csv"
    if path.exists():
        peaks = pd.read_csv(path).groupby("rule")["host_peak_mb"].max().dropna()
        mb.update({rule: int(peak * 1.2) + 200 for rule, peak in peaks.items()})
    return [f"{rule}:mem_mb={need}" for rule, need in sorted(mb.items())]


def plan_of(slug: str):
    return importlib.import_module(f"neurips26.{slug}.rehearsal").PLAN


def prepare_copy(work: Path) -> None:
    """The checkout's code in `work`, the copy's results, resources, records and lock kept."""
    work.mkdir(parents=True, exist_ok=True)
    lock = work / "config/sources.lock.yaml"
    kept = lock.read_bytes() if lock.exists() else b"revisions: {}\nfiles: {}\n"
    for name in COPIED:
        shutil.rmtree(work / name, ignore_errors=True)
        shutil.copytree(ROOT / name, work / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    lock.write_bytes(kept)  # the rehearsal's own lock: fixtures locked on first fetch, never the project's


def forget_changed(work: Path, payloads: dict[str, bytes]) -> None:
    """Delete a fixture the copy fetched earlier whose bytes have changed since, and its entry in the copy's lock,
    so that the download rule fetches (and locks) it again."""
    from neurips26.common.locking import read_lock

    lock_path = work / "config/sources.lock.yaml"
    lock = read_lock(lock_path)
    stale = [path for path, payload in payloads.items() if (work / "resources" / path).exists()
             and (work / "resources" / path).read_bytes() != payload]  # fmt: skip
    for path in stale:
        (work / "resources" / path).unlink()
        lock["files"].pop(path, None)
    if stale:
        lock_path.write_text(yaml.safe_dump(lock, sort_keys=False))


def fixtures(slugs: list[str], work: Path, items: int = 1) -> dict[str, bytes]:
    """Every paper's fixture sources (registry path -> bytes) at `items` times their base size; local fixture files
    written into the copy."""
    payloads: dict[str, bytes] = {}
    for slug in slugs:
        module = importlib.import_module(f"neurips26.{slug}.rehearsal")
        for path, payload in module.fixtures(items).items():
            if path in payloads and payloads[path] != payload:
                raise ValueError(f"{slug}: fixture {path} differs from another paper's fixture of the same source")
            payloads[path] = payload
        for path, payload in getattr(module, "local_files", dict)().items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_bytes(payload)
    return payloads


def data_growth(slugs: list[str]) -> dict[str, tuple[int, int]]:
    """rule (or `rule:wildcard=value,...` for some of its jobs) -> (records of its fixture at size 1, records of the
    real source): the jobs whose cost grows with the data (`DATA_GROWTH` of each paper's rehearsal module)."""
    found = {}
    for slug in slugs:
        for rule, spec in getattr(importlib.import_module(f"neurips26.{slug}.rehearsal"), "DATA_GROWTH", {}).items():
            if not (isinstance(spec, tuple) and len(spec) == 2 and 0 < spec[0] < spec[1]):
                raise ValueError(f"{slug}: DATA_GROWTH[{rule!r}] must be (fixture records, real records), got {spec!r}")
            found[rule] = spec
    return found


def growth_pass(work: Path, slugs: list[str], growth: dict, registry: dict, cores: int, env: dict, log: Path) -> Path:
    """The rules whose cost grows with the data, run again in a second copy on fixtures twice the size."""
    owners = [slug for slug in slugs if any(key.startswith(slug + "_") for key in growth)]
    doubled = work.with_name(work.name + "-data2x")
    prepare_copy(doubled)
    payloads = fixtures(owners, doubled, items=2)
    forget_changed(doubled, payloads)
    (doubled / "config/sources.yaml").write_text(yaml.safe_dump(fixture_registry(registry, payloads), sort_keys=False))
    with FixtureServer(payloads, registry) as server:
        write_config(doubled, owners, 1, server.mirrors())
        targets = [f"results/rehearsal/{slug}/report.md" for slug in owners]
        run(
            doubled,
            [*targets, f"-c{cores}", "--keep-going", "--until", *{r.partition(":")[0] for r in growth}],
            env,
            log,
        )
    return doubled


def write_config(work: Path, slugs: list[str], factor: int, mirrors: dict[str, str]) -> None:
    config = load_yaml(ROOT / "config/config.yaml")
    config.update(scale="rehearsal", papers=slugs, rehearsal={"factor": factor}, mirrors=mirrors)
    (work / "config/config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def run(work: Path, args: list[str], env: dict, log: Path) -> int:
    with open(log, "a") as out:
        out.write(f"\n$ snakemake {' '.join(args)}\n")
        out.flush()
        return subprocess.run([SNAKEMAKE, *args], cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT).returncode


def claims_tables(work: Path, slugs: list[str]) -> pd.DataFrame:
    """The rehearsal's claims of every paper (paper, claim_id, kind, runs, verdict): how many runs each claim
    rested on, which the plan scales to the paper-scale seeds."""
    frames = []
    for slug in slugs:
        path = work / f"results/rehearsal/{slug}/claims.parquet"
        if path.exists():
            table = pd.read_parquet(path)
            frames.append(table.assign(paper=slug)[["paper", "claim_id", "kind", "runs", "verdict"]])
    return pd.concat(frames) if frames else pd.DataFrame(columns=["paper", "claim_id", "kind", "runs", "verdict"])


def rehearse(work: Path, slugs: list[str], memory: Path, args) -> tuple[Path | None, dict, int]:
    """Run the rehearsal in the copy `work`: the training rules at doubled micro-batches, every report, and the
    jobs whose cost grows with the data on fixtures twice the size; returns that copy, the growth specs and the
    exit code of the main run."""
    prepare_copy(work)
    payloads = fixtures(slugs, work)
    forget_changed(work, payloads)
    registry = load_yaml(ROOT / "config/sources.yaml")
    (work / "config/sources.yaml").write_text(yaml.safe_dump(fixture_registry(registry, payloads), sort_keys=False))
    log = work / "rehearsal.log"
    log.write_text("")
    targets = [f"results/rehearsal/{slug}/report.md" for slug in slugs]
    env = dict(os.environ, PYTHONPATH=str(work / "src"))
    env.pop("NEURIPS26_DEVICE", None)
    available = int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.85)
    common = [f"-c{args.cores}", "--keep-going", "--resources", f"mem_mb={available}"]
    known = host_memory(args.out, slugs)
    if known:
        common += ["--set-resources", *known]
    with FixtureServer(payloads, registry) as server:
        print(f"rehearsal of {len(slugs)} papers in {work} (fixtures: {len(payloads)} files at {server.url})")
        write_config(work, slugs, 2, server.mirrors())
        counted_x2 = {**env, "NEURIPS26_TENSOR_MEMORY": str(memory / "x2")}
        run(work, [*targets, *common, "--until", *training_rules()], counted_x2, log)
        write_config(work, slugs, 1, server.mirrors())
        code = run(work, [*targets, *common], {**env, "NEURIPS26_TENSOR_MEMORY": str(memory / "x1")}, log)
        growth = data_growth(slugs)
        doubled = growth_pass(work, slugs, growth, registry, args.cores, env, log) if growth else None
    return doubled, growth, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", default=",".join(papers()))
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--work", type=Path, default=ROOT / ".rehearsal/work")
    parser.add_argument("--out", type=Path, default=ROOT / "results/rehearsal")
    parser.add_argument("--report-only", action="store_true", help="read the copy's jobs back without running any")
    args = parser.parse_args()
    slugs = [s for s in args.papers.split(",") if s]
    unknown = sorted(set(slugs) - set(papers()))
    if unknown:
        sys.exit(f"unknown papers {unknown} (allowed: {', '.join(papers())})")
    work = args.work.resolve()
    began = time.time()
    memory = work / "memory"  # kept: a job that does not rerun keeps its counts; one that reruns replaces them
    doubled, growth, code = None, {}, 0
    if not args.report_only:
        doubled, growth, code = rehearse(work, slugs, memory, args)
    elif work.with_name(work.name + "-data2x").exists():
        doubled, growth = work.with_name(work.name + "-data2x"), data_growth(slugs)
    print(f"snakemake finished with exit code {code} after {time.time() - began:.0f} s; reading the jobs back")
    jobs = collect(work, slugs, memory)
    if doubled is not None:
        jobs = extrapolate_growth(jobs, doubled, growth)
    args.out.mkdir(parents=True, exist_ok=True)
    jobs.to_csv(args.out / "jobs.csv", index=False)
    claims_tables(work, slugs).to_csv(args.out / "claims.csv", index=False)
    write_text(args.out / "REHEARSAL.md", render(jobs, slugs, seconds=time.time() - began, work=work))
    failed = jobs[jobs["status"] != "ok"]
    print(f"wrote {args.out / 'REHEARSAL.md'}: {len(jobs)} jobs, {len(failed)} not ok")


if __name__ == "__main__":
    main()
