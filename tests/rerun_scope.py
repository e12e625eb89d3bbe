"""Which jobs a changed config key reruns, for every leaf key of every paper's config at one scale.

Run as a script in a copy of the workflow (tests/test_rerun_scope.py does): the workflow is parsed once
through Snakemake's API, then for each leaf key of config/<slug>.yaml's block at the scale, the key is
changed in the parsed config (and the changed file validated against its schema), and the params of every
job of the paper's DAG are computed again and compared with the unchanged config's. A job whose params differ
is one Snakemake's params trigger reruns; jobs downstream of it rerun through their inputs; jobs that a
changed config adds (a new seed) are not reruns. The rule of each job whose params differ must carry the key:
one of its params functions declares (config_keys, set by paper_params or @reads in rules/common.smk) a key
path that contains it.

Prints one JSON object: per paper the keys tested, refused (the schema or the DAG rejects the change) and
the violations, plus the declared key paths that no tested key reached (declared for jobs that do not exist
at this scale, e.g. another model's block, or whose changes the schema refuses).
"""

from __future__ import annotations

import copy
import json
import os
import random
import sys
from pathlib import Path

REPO = Path(sys.argv[1]).resolve()
SCALE = sys.argv[2] if len(sys.argv) > 2 else "quick"
ONLY = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None  # papers to test (default: all)
# all leaf keys (NEURIPS26_RERUN_KEYS=all, about 90 s on 2 cores), or a seeded sample: for every key path a rule
# declares, one leaf under it, plus EXTRA further leaves per paper (keys that no rule should carry included)
ALL_KEYS = os.environ.get("NEURIPS26_RERUN_KEYS") == "all"
EXTRA = 6
sys.path.insert(0, str(REPO / "src"))

import jsonschema  # noqa: E402
from snakemake.api import SnakemakeApi  # noqa: E402
from snakemake.settings.types import (  # noqa: E402
    ConfigSettings,
    DAGSettings,
    OutputSettings,
    Quietness,
    ResourceSettings,
)

from neurips26.common.config import load_yaml  # noqa: E402


def leaves(node, path=()):
    """Leaf key paths of a config block; a list of scalars is one leaf, a list of mappings is walked."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
        for i, value in enumerate(node):
            yield from leaves(value, (*path, i))
    else:
        yield path


def get(node, path):
    for key in path:
        node = node[key]
    return node


def put(node, path, value):
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def _resolve(schema, node):
    while isinstance(node, dict) and "$ref" in node:
        target = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def allowed_values(schema, path) -> list:
    """The enum or const values the schema allows at `path` (a key path from the file's top), if any."""
    nodes = [schema]
    for key in path:
        following = []
        for node in nodes:
            node = _resolve(schema, node)
            for branch in [node, *node.get("oneOf", []), *node.get("anyOf", []), *node.get("allOf", [])]:
                branch = _resolve(schema, branch)
                if isinstance(key, int) and "items" in branch:
                    following.append(branch["items"])
                elif key in branch.get("properties", {}):
                    following.append(branch["properties"][key])
                elif isinstance(branch.get("additionalProperties"), dict):
                    following.append(branch["additionalProperties"])
        nodes = following
    values = []
    for node in nodes:
        node = _resolve(schema, node)
        for branch in [node, *node.get("oneOf", []), *node.get("anyOf", [])]:
            branch = _resolve(schema, branch)
            values += list(branch.get("enum", [])) + ([branch["const"]] if "const" in branch else [])
    return values


def changes(value, allowed=()):
    """Candidate new values for a leaf, tried in turn until one passes validation."""
    if isinstance(value, str) and allowed:
        return [v for v in allowed if v != value and isinstance(v, str)] + [f"{value}_changed"]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value * 2, value - 1]
    if isinstance(value, float):
        return [value * 1.5, value * 0.5, value + 1.0] if value else [0.5, 1.0]
    if isinstance(value, str):
        return [f"{value}_changed"]
    if isinstance(value, list) and value:
        last = value[-1]
        if isinstance(last, bool):
            return [value[:-1] + [not last]]
        if isinstance(last, (int, float)):
            return [value[:-1] + [type(last)(last * 2 + 1)], value[:-1] + [type(last)(last / 2)]]
        if len(value) > 1:
            return [value[:-1]]
    if value is None:
        return []
    return []


def carried(rule) -> list[tuple]:
    keys = []
    for function in rule.params:
        keys += list(getattr(function, "config_keys", ()))
    return sorted(set(keys), key=str)


def main() -> None:
    api = SnakemakeApi(OutputSettings(quiet={Quietness.ALL})).__enter__()
    workflow_api = api.workflow(
        resource_settings=ResourceSettings(cores=1),
        config_settings=ConfigSettings(config={"scale": SCALE}),
        snakefile=REPO / "workflow" / "Snakefile",
        workdir=REPO,
    )
    workflow_api.dag(DAGSettings(targets={"all"}, forceall=True))
    workflow = workflow_api._workflow
    papers = workflow.globals["PAPERS"]
    declared = {rule.name: carried(rule) for rule in workflow.rules}

    def dag_jobs(slug):
        workflow.dag_settings.targets = {f"results/{SCALE}/{slug}/report.md"}
        workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
        workflow._build_dag()
        return list(workflow.dag.jobs)

    def job_params(jobs):
        """Each job's params under the config now in `papers` (a job whose params fail is left out: the
        changed config no longer makes it); Snakemake's params trigger compares exactly these."""
        found = {}
        for job in jobs:
            job._params = job._non_derived_params = None
            try:
                found[(job.rule.name, tuple(job.output))] = repr(sorted(job.params.items()))
            except Exception:  # noqa: BLE001
                continue
        return found

    report = {}
    for slug in sorted(papers):
        if ONLY is not None and slug not in ONLY:
            continue
        schema = load_yaml(REPO / "workflow" / "schemas" / f"{slug}.schema.yaml")
        original = papers[slug][SCALE]
        try:
            jobs = dag_jobs(slug)
            base = job_params(jobs)
        except Exception as error:  # noqa: BLE001 - reported as the paper's failure
            report[slug] = {"error": f"{type(error).__name__}: {error}"[:2000]}
            continue
        base_rules = {rule for rule, _ in base}
        tested, refused, violations, reached = [], [], [], set()
        every = [path for path in leaves(original) if path]
        for path in every if ALL_KEYS else sample(every, slug, base_rules, declared):
            reason = "no value to change it to"
            for candidate in changes(get(original, path), allowed_values(schema, (SCALE, *path))):
                variant = copy.deepcopy(original)
                put(variant, path, candidate)
                try:
                    jsonschema.validate({**papers[slug], SCALE: variant}, schema)
                    papers[slug][SCALE] = variant
                    after = job_params(jobs)
                except Exception as error:  # noqa: BLE001 - a change the workflow refuses is reported, not tested
                    reason = f"{type(error).__name__}: {str(error).splitlines()[0][:160]}"
                    continue
                finally:
                    papers[slug][SCALE] = original
                key = (slug, *path)
                changed = sorted({job[0] for job, params in after.items() if job in base and base[job] != params})
                for rule in changed:
                    holders = [d for d in declared[rule] if d == key[: len(d)]]
                    if not holders:
                        violations.append(
                            {
                                "key": list(map(str, path)),
                                "rule": rule,
                                "declared": [list(map(str, d)) for d in declared[rule]],
                            }
                        )
                    reached.update((rule, d) for d in holders)
                tested.append({"key": list(map(str, path)), "rerun": changed})
                break
            else:
                refused.append({"key": list(map(str, path)), "reason": reason})
        uncovered = sorted(
            f"{rule}: {'.'.join(map(str, d[1:]))}"
            for rule in base_rules
            for d in declared[rule]
            if d[0] == slug and (rule, d) not in reached and _exists(original, d[1:])
        )
        report[slug] = {"tested": tested, "refused": refused, "violations": violations, "uncovered": uncovered}
    print(json.dumps(report))


def sample(every: list[tuple], slug: str, rules: set[str], declared: dict) -> list[tuple]:
    """One leaf under each key path the paper's rules declare, then EXTRA more, drawn with a fixed seed."""
    rng = random.Random(f"rerun-scope-{slug}")
    chosen: list[tuple] = []
    for path in sorted({d[1:] for rule in rules for d in declared[rule] if d[0] == slug}, key=str):
        under = [leaf for leaf in every if leaf[: len(path)] == path]
        if under and not any(leaf in chosen for leaf in under):
            chosen.append(rng.choice(under))
    rest = [leaf for leaf in every if leaf not in chosen]
    return chosen + rng.sample(rest, min(EXTRA, len(rest)))


def _exists(block, path) -> bool:
    try:
        get(block, path)
        return True
    except (KeyError, IndexError, TypeError):
        return False


if __name__ == "__main__":
    main()
