"""Import time of every script's module graph, measured with `python -X importtime`.

    python tools/profile_imports.py [--scale smoke] [--out FILE] [SCRIPT ...]      (make profile-imports)

Each script's module-level import statements run in a fresh interpreter under `-X importtime`, after the imports
of Snakemake's script preamble (which every job pays too, measured once and not counted per script). Nothing of the
script itself runs. The table gives each script's import seconds (the sum of its modules' own times: the
interpreter's own start is not counted), the third-party packages it loads with their cumulative seconds (a
package's time includes what it imports itself), and with --scale the number of jobs of that scale's whole DAG
that run the script and their import seconds together, so the top of the table is where a run's start-up goes.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what Snakemake's preamble (snakemake.script.PythonScript) imports before a script's first line runs
PREAMBLE = "import pickle\nfrom snakemake import script\nfrom snakemake.logging import logger\nimport snakemake.io\n"
MARK = "--script-imports--"
LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)$")
OWN = {"neurips26", "snakemake", "__main__"}
SHOWN = 0.05  # packages loading faster than this are left out of a row


@dataclass
class Profile:
    script: str
    seconds: float  # the script's modules' own import times, summed
    packages: dict[str, float] = field(default_factory=dict)  # third-party package -> cumulative seconds
    jobs: int = 0

    @property
    def job_seconds(self) -> float:
        return self.seconds * self.jobs


def module_level_imports(path: Path) -> str:
    """The import statements a script runs when it starts: those at module level, also inside a module-level
    `if` or `try` block, but not those inside functions (imported where used)."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    found: list[ast.stmt] = []

    def visit(body):
        for node in body:
            if isinstance(node, ast.Import) or (isinstance(node, ast.ImportFrom) and node.module != "__future__"):
                found.append(node)
            elif isinstance(node, ast.If):
                visit(node.body)
                visit(node.orelse)
            elif isinstance(node, ast.Try):
                visit(node.body)

    visit(tree.body)
    return "\n".join(ast.unparse(node) for node in found)


def parse_importtime(stderr: str) -> tuple[float, dict[str, float]]:
    """(own import times summed, in seconds; {third-party package: cumulative seconds}) from the output of
    `python -X importtime`. A package counts when the script itself or a module of neurips26 imports it (or one of
    its modules), with the cumulative times of those imports, which cover everything they loaded that was not
    loaded before (a package that only another package pulls in is part of that package's time)."""
    entries = []
    for line in stderr.splitlines():
        match = LINE.match(line)
        if match:
            entries.append((int(match[1]), int(match[2]), len(match[3]), match[4]))
    total, packages, stack = 0, {}, []  # children are printed before their parent: walk backwards
    for own, cumulative, indent, name in reversed(entries):
        total += own
        while stack and stack[-1][0] >= indent:
            stack.pop()
        parent = stack[-1][1] if stack else None
        stack.append((indent, name))
        root = name.split(".")[0]
        third_party = root not in OWN and root not in sys.stdlib_module_names and not root.startswith("_")
        if third_party and (parent is None or parent.split(".")[0] in OWN):
            packages[root] = packages.get(root, 0) + cumulative / 1e6
    ranked = dict(sorted(packages.items(), key=lambda item: -item[1]))
    return total / 1e6, ranked


def profile(path: Path, src: Path = ROOT / "src", python: str = sys.executable) -> Profile:
    """The import time of `path`'s module-level imports, after Snakemake's preamble in the same interpreter."""
    code = f"{PREAMBLE}import sys\nsys.stderr.write({MARK!r} + '\\n')\n{module_level_imports(path)}\n"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])))
    run = subprocess.run(
        [python, "-X", "importtime", "-c", code], capture_output=True, text=True, cwd=path.parent, env=env, timeout=300
    )
    if run.returncode != 0:
        raise RuntimeError(f"importing the modules of {path} failed:\n{run.stderr[-2000:]}")
    seconds, packages = parse_importtime(run.stderr.split(MARK + "\n", 1)[1])
    return Profile(_name(path), seconds, packages)


def _name(path: Path) -> str:
    path = Path(path).resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def rule_scripts(rules: Path = ROOT / "rules") -> dict[str, str]:
    """{rule name: its script, relative to the checkout} from the rule files."""
    found = {}
    for smk in sorted(rules.glob("*.smk")):
        for block in re.split(r"^(?=(?:rule|checkpoint) )", smk.read_text(), flags=re.M)[1:]:
            name = re.match(r"(?:rule|checkpoint) (\w+):", block)
            script = re.search(r"^\s+script:\s*\n\s+\"([^\"]+)\"", block, re.M)
            if name and script:
                found[name[1]] = _name(smk.parent / script[1])
    return found


def jobs_per_script(scale: str, snakemake: str) -> dict[str, int]:
    """{script: number of jobs running it} in a dry run of the whole DAG of `scale` (every job forced)."""
    run = subprocess.run(
        [snakemake, "-n", "--forceall", "--config", f"scale={scale}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if run.returncode != 0 or "Job stats:" not in run.stdout:
        raise RuntimeError(f"the dry run of scale {scale} failed:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")
    table = run.stdout.split("Job stats:")[1].split("total")[0]
    counts = {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)}
    scripts = rule_scripts()
    jobs: dict[str, int] = {}
    for rule, count in counts.items():
        if rule in scripts:
            jobs[scripts[rule]] = jobs.get(scripts[rule], 0) + count
    return jobs


def render(profiles: list[Profile], preamble: Profile, scale: str | None) -> str:
    by_jobs = scale is not None
    rows = sorted(profiles, key=lambda p: -(p.job_seconds if by_jobs else p.seconds))
    head = (
        "| script | import s | "
        + ("jobs | import s x jobs | " if by_jobs else "")
        + "third-party packages loaded (s) |"
    )
    lines = [
        "Import time of each script's module graph (python -X importtime)"
        + (f", jobs of the {scale} DAG." if by_jobs else "."),
        f"Every job also pays Snakemake's preamble: {preamble.seconds:.2f} s; not counted below.",
        "",
        head,
        "|" + "---|" * (head.count("|") - 1),
    ]
    for p in rows:
        shown = ", ".join(f"{name} {s:.2f}" for name, s in p.packages.items() if s >= SHOWN) or "-"
        jobs = f"{p.jobs} | {p.job_seconds:.1f} | " if by_jobs else ""
        lines.append(f"| {p.script} | {p.seconds:.2f} | {jobs}{shown} |")
    if by_jobs:
        total = sum(p.job_seconds for p in profiles)
        count = sum(p.jobs for p in profiles)
        lines += [
            "",
            f"{count} jobs of scale {scale}: {total:.0f} s of imports in all, {total / max(count, 1):.2f} s per job.",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", type=Path, help="scripts to profile (default: every script)")
    parser.add_argument("--scale", help="weight each script by its jobs in this scale's DAG (a dry run)")
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args(argv)
    scripts = args.scripts or sorted(p for p in (ROOT / "scripts").rglob("*.py") if "__pycache__" not in p.parts)
    preamble = Profile("preamble", _preamble_seconds())
    jobs = jobs_per_script(args.scale, str(Path(sys.executable).with_name("snakemake"))) if args.scale else {}
    profiles = []
    for number, script in enumerate(scripts, 1):
        print(f"[{number}/{len(scripts)}] {_name(script)}", file=sys.stderr, flush=True)
        result = profile(script)
        result.jobs = jobs.get(result.script, 0)
        profiles.append(result)
    text = render(profiles, preamble, args.scale)
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)


def _preamble_seconds() -> float:
    run = subprocess.run([sys.executable, "-X", "importtime", "-c", PREAMBLE], capture_output=True, text=True)
    return parse_importtime(run.stderr)[0]


if __name__ == "__main__":
    main()
