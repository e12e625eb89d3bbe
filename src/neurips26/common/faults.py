"""A test-only switch that makes one rule's job misbehave, so that the cluster tests exercise retries,
cancellation and resource limits on the workflow's real jobs. Unset (always, outside tests) it does
nothing.

    NEURIPS26_TEST_FAULT="<rule>:fail_once:<marker dir>"   the first job of <rule> fails, later ones run
    NEURIPS26_TEST_FAULT="<rule>:sleep:<seconds>"           every job of <rule> sleeps before its work
    NEURIPS26_TEST_FAULT="<rule>:allocate:<MB>"             every job of <rule> holds <MB> of memory for
                                                            a minute before its work
    NEURIPS26_TEST_FAULT="<rule>[,<rule>...]:kill_after_checkpoint:<marker dir>"
                                                            a job of <rule> is killed (SIGKILL) right
                                                            after its first checkpoint, once per rule (a job
                                                            that trains several runs in turn, each with its
                                                            own checkpoint, is killed once); the rerun resumes
    NEURIPS26_TEST_FAULT="<rule>:slow_steps:<seconds>"      each training step of <rule> sleeps this long and
                                                            checkpoints are written only on SIGTERM (a job
                                                            that reaches its time limit resumes only if it
                                                            answered the signal)
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
from pathlib import Path

ENV = "NEURIPS26_TEST_FAULT"
MODES = ("fail_once", "sleep", "allocate", "kill_after_checkpoint", "slow_steps")
HOLD_SECONDS = 60
LOOP_MODES = ("kill_after_checkpoint", "slow_steps")  # acted on by common.loop, not at the job's start
CURRENT_RULE: str | None = None  # the rule of this job, set by inject_fault (runtime.start_job)


class InjectedFault(RuntimeError):
    """The failure asked for by NEURIPS26_TEST_FAULT."""


def parse_fault(spec: str) -> tuple[str, str, str]:
    parts = spec.split(":", 2)
    if len(parts) != 3 or parts[1] not in MODES or not parts[0] or not parts[2]:
        raise ValueError(f"{ENV}={spec!r}: expected '<rule>:<mode>:<argument>' with mode one of {MODES}")
    return parts[0], parts[1], parts[2]


def inject_fault(rule: str, spec: str | None = None) -> None:
    """Misbehave as NEURIPS26_TEST_FAULT asks when it names `rule`; otherwise return at once."""
    spec = os.environ.get(ENV) if spec is None else spec
    if not spec:
        return
    target, mode, argument = parse_fault(spec)
    global CURRENT_RULE
    CURRENT_RULE = rule
    if target != rule or mode in LOOP_MODES:
        return
    if mode == "sleep":
        time.sleep(float(argument))
        return
    if mode == "allocate":
        block = b"\x01" * int(float(argument) * 2**20)  # filled, so every page is resident
        time.sleep(HOLD_SECONDS)
        del block
        return
    marker = Path(argument) / f"{rule}.failed"
    marker.parent.mkdir(parents=True, exist_ok=True)
    try:  # O_EXCL: of jobs racing for the marker, exactly one fails
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    raise InjectedFault(f"{ENV}: injected failure of rule {rule} (marker {marker})")


def _loop_fault(mode: str) -> str | None:
    """The argument of a training-loop fault aimed at this job's rule, or None."""
    spec = os.environ.get(ENV)
    if not spec or CURRENT_RULE is None:
        return None
    target, kind, argument = parse_fault(spec)
    return argument if kind == mode and CURRENT_RULE in target.split(",") else None


def checkpoint_written(path: str | Path) -> None:
    """kill_after_checkpoint: SIGKILL this process after its first checkpoint, once per rule: the marker is named by
    the job's rule, so a job that writes several checkpoints in turn (one per run it trains) is killed once and its
    rerun, resuming, completes (the test retries once)."""
    argument = _loop_fault("kill_after_checkpoint")
    if argument is None:
        return
    key = CURRENT_RULE or str(Path(path).resolve())  # the rule, set by inject_fault at the job's start
    marker = Path(argument) / (hashlib.sha256(key.encode()).hexdigest()[:16] + ".killed")
    marker.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return
    os.kill(os.getpid(), signal.SIGKILL)


def slow_steps() -> bool:
    """Whether slow_steps is aimed at this job (the loop then checkpoints only on SIGTERM)."""
    return _loop_fault("slow_steps") is not None


def step_done() -> None:
    """slow_steps: sleep after each training step, so that a job runs into its time limit."""
    argument = _loop_fault("slow_steps")
    if argument is not None:
        time.sleep(float(argument))
