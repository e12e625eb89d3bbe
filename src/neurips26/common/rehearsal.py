"""The rehearsal scale: paper scale's DAG, shapes and code paths with budgets cut to a couple of steps.

A paper's module `neurips26.<slug>.rehearsal` declares a `Plan` of what the rehearsal may cut from the paper
block (config/<slug>.yaml `paper:`), and nothing else:

- `budgets`: per-job work (steps, epochs, evaluations, items drawn, a data subsample), dotted key path -> the
  rehearsal's value or a function of the paper's value. The time of a job is extrapolated from the rehearsal to
  paper scale by the ratio of these values (`work_ratio`).
- `sweeps`: the lists that make a rule's jobs (seeds, grids, methods of one kind): reduced to one representative
  per rule and wildcard family, the largest (a function of the paper's list); they change how many jobs a rule
  has, never a job's shapes or work.
- `micro_batch`: the budget keys that are a micro-batch (examples per forward): the rehearsal runs them at their
  value and at `factor` times it, so tensor memory can be extrapolated to the configured batch.
- `shapes`: only where a real shape cannot run on a 24 GB, 2-core machine (a model whose fp32 weights, gradients
  and AdamW state alone exceed it), or not within the rehearsal's time: the key path -> the shape that runs, with
  the reason. Such a job's memory at the real shape is counted, not measured (the reason gives the count), and
  REHEARSAL.md predicts none for it.
- `fixture_paths`: key paths that point at user-supplied files (data behind a login), replaced by the path of a
  fixture the rehearsal writes.
- `host_mb`: rule -> (host memory in MB that one of its jobs holds when the rehearsal runs it on a CPU, the
  reason: where it was measured): the first rehearsal on a fresh clone asks Snakemake for this much, so that two
  such jobs are not started side by side on a machine they do not fit together (a rule's own request is its GPU
  job's host memory, much less than a CPU-run job's). A later rehearsal asks for the peak it measured.
- `not_rehearsed`: rule -> the reason a paper-scale rule cannot run in the rehearsal (REHEARSAL.md lists it; a
  paper-scale rule missing from the rehearsal without a reason is reported as a defect).
- `work`: rule -> a function (config block, the job's wildcards) -> the work of one job in a unit of the rule's
  choosing (steps x examples, items, pairs, evaluations); the job's time is extrapolated from the rehearsal to
  paper scale by work(paper block) / work(rehearsal block) (`work_ratio`). A rule whose cost depends on a cut
  budget needs one; a rule without one is taken to cost at paper scale what it cost in the rehearsal, and the
  plan says so.

`rehearsal_block` is the one function that derives the rehearsal's configuration from the paper block: every
cut names a key the paper block has (a renamed key fails here, not silently), numbers only shrink, lists only
lose members, and everything not cut is the paper's value, so the rehearsal cannot drift from what a user submits.
Plain Python: called while the workflow is parsed.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from numbers import Real

from neurips26.common.paper_scale import config_value

__all__ = ["Plan", "batch_ratio", "largest", "rehearsal_block", "set_value", "work_ratio"]

Cut = object  # a value, or a function of the paper's value returning the rehearsal's


@dataclass(frozen=True)
class Plan:
    """What the rehearsal cuts from a paper block (see the module docstring)."""

    budgets: Mapping[str, Cut] = field(default_factory=dict)
    sweeps: Mapping[str, Callable] = field(default_factory=dict)
    micro_batch: tuple[str, ...] = ()
    shapes: Mapping[str, tuple[Cut, str]] = field(default_factory=dict)
    fixture_paths: Mapping[str, str] = field(default_factory=dict)
    work: Mapping[str, Callable[[dict, dict], float]] = field(default_factory=dict)
    host_mb: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    not_rehearsed: Mapping[str, str] = field(default_factory=dict)
    note: str = ""

    def __post_init__(self):
        unknown = [key for key in self.micro_batch if key not in self.budgets]
        if unknown:
            raise ValueError(f"micro_batch keys {unknown} are not budgets")
        both = sorted(set(self.budgets) & set(self.sweeps))
        if both:
            raise ValueError(f"keys both a budget and a sweep: {both}")
        for key, (_, reason) in self.shapes.items():
            if not str(reason).strip():
                raise ValueError(f"shapes.{key}: a shape cut needs its reason")
        for rule, (mb, reason) in self.host_mb.items():
            if not (isinstance(mb, int) and mb > 0 and str(reason).strip()):
                raise ValueError(f"host_mb.{rule}: needs a positive number of MB and where it was measured")
        for rule, reason in self.not_rehearsed.items():
            if not str(reason).strip():
                raise ValueError(f"not_rehearsed.{rule}: a rule left out needs its reason")


def largest(values: list, key: Callable | None = None) -> list:
    """A sweep's representative: the list's largest member (by `key`), as a one-member list."""
    return [max(values, key=key)] if key else [max(values)]


def set_value(block: dict, path: str, value) -> None:
    """Set dotted key `path` of `block` in place (the key must exist)."""
    *parents, last = path.split(".")
    node = config_value(block, ".".join(parents)) if parents else block
    if last not in node:
        raise KeyError(f"{path}: no key {last!r}")
    node[last] = value


def _apply(cut: Cut, value):
    return cut(value) if callable(cut) else copy.deepcopy(cut)


def _shrinks(new, old) -> bool:
    if isinstance(old, bool) or isinstance(new, bool):
        return new == old or (old is True and new is False)
    if isinstance(old, Real) and isinstance(new, Real):
        return new <= old
    if isinstance(old, list) and isinstance(new, list):
        return 0 < len(new) <= len(old)
    if isinstance(old, dict) and isinstance(new, dict):
        return set(new) <= set(old) and bool(new)
    return False


def rehearsal_block(paper: dict, plan: Plan, factor: int = 1, slug: str = "") -> dict:
    """The rehearsal's config block derived from the paper block `paper` by `plan`; micro-batch keys times
    `factor` (1, or 2 for the second memory point). ValueError naming the key for a cut of a missing key, a budget
    or sweep that grows, or a micro-batch that `factor` would push past the paper's value."""
    where = f"{slug}: " if slug else ""
    block = copy.deepcopy(paper)
    # sweeps first: a budget nested under a swept mapping then cuts what the sweep kept
    cuts = [*((k, c, "sweep") for k, c in plan.sweeps.items()), *((k, c, "budget") for k, c in plan.budgets.items())]
    for path, cut, kind in cuts:
        try:
            old = config_value(block if kind == "budget" else paper, path)
        except KeyError as error:
            raise ValueError(f"{where}rehearsal {kind} {error.args[0]}") from None
        new = _apply(cut, old)
        if not _shrinks(new, old):
            raise ValueError(f"{where}rehearsal {kind} {path}: {new!r} is not a cut of the paper's {old!r}")
        if path in plan.micro_batch and factor != 1:
            if not isinstance(new, int) or new * factor > old:
                raise ValueError(f"{where}rehearsal micro-batch {path}: {new!r} x {factor} passes the paper's {old!r}")
            new = new * factor
        set_value(block, path, new)
    for path, (cut, _) in plan.shapes.items():
        try:
            set_value(block, path, _apply(cut, config_value(paper, path)))
        except KeyError as error:
            raise ValueError(f"{where}rehearsal shape {error.args[0]}") from None
    for path, fixture in plan.fixture_paths.items():
        try:
            set_value(block, path, fixture)
        except KeyError as error:
            raise ValueError(f"{where}rehearsal fixture path {error.args[0]}") from None
    return block


def work_ratio(plan: Plan, rule: str, paper: dict, rehearsal: dict, wildcards: dict) -> float | None:
    """How many times more work a job of `rule` does at paper scale than in the rehearsal: the rule's work
    function at the paper block over the same at the rehearsal block, for the job's wildcards; None where the plan
    gives the rule no work function. ValueError naming the rule where the rehearsal's work is not positive."""
    function = plan.work.get(rule)
    if function is None:
        return None
    small, large = float(function(rehearsal, wildcards)), float(function(paper, wildcards))
    if not (small > 0 and math.isfinite(small) and math.isfinite(large)):
        raise ValueError(f"{rule}: work {small!r} in the rehearsal, {large!r} at paper scale")
    return large / small


def batch_ratio(plan: Plan, paper: dict, rehearsal: dict, carried: list[str]) -> float:
    """The configured micro-batch over the rehearsal's, for the micro-batch keys under the key paths a rule
    carries (`carried`, dotted); 1.0 where it carries none (its tensors do not grow with a batch the plan cuts)."""
    ratio = 1.0
    for path in plan.micro_batch:
        if any(path == c or path.startswith(c + ".") for c in carried):
            ratio = max(ratio, float(config_value(paper, path)) / float(config_value(rehearsal, path)))
    return ratio
