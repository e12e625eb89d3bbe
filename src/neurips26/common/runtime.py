"""What every Snakemake script does first: log to its log file, seed, set threads, know its provenance."""

from __future__ import annotations

import logging
import os
import random
import sys

import numpy as np

from neurips26.common.faults import InjectedFault, inject_fault
from neurips26.common.provenance import provenance

# the library's modules log under this name (neurips26.download, neurips26.loop, neurips26.<slug>, ...)
LIBRARY_LOGGER = "neurips26"


def cap_threads(threads: int) -> None:
    """Cap the BLAS and OpenMP pools loaded so far to `threads`. Without it numpy's OpenBLAS starts a thread per
    core in every job, so two one-thread jobs on two cores run four threads whose spin-waits cost CPU time (a bird
    quick job measured 13.5 CPU-s beside one job and 42 beside another)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads)


def start_job(smk, seed: int | None = None) -> logging.Logger:
    """Log to the rule's log file and stderr, seed numpy/random/torch, and cap torch's threads and the BLAS and
    OpenMP thread pools (numpy's OpenBLAS, scikit-learn's OpenMP) to the rule's threads."""
    logger = logging.getLogger(f"neurips26.{smk.rule}")
    logger.setLevel(logging.INFO)
    logger.handlers.clear()
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(message)s")
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if smk.log:
        handlers.append(logging.FileHandler(smk.log[0], mode="w"))
        os.environ["NEURIPS26_JOB_LOG"] = str(smk.log[0])  # names the job's tensor-memory record (rehearsal only)
    for handler in handlers:
        handler.setFormatter(fmt)
        logger.addHandler(handler)
    logger.propagate = False  # its records reach the handlers once, not again through the library's logger
    library = logging.getLogger(LIBRARY_LOGGER)  # progress reported by any library module goes to the job's log too
    library.handlers = handlers
    library.setLevel(logging.INFO)
    if seed is not None:
        random.seed(seed)
        np.random.seed(seed)
    cap_threads(max(1, int(smk.threads)))
    torch = sys.modules.get("torch")  # only jobs that already imported torch pay for it
    if torch is not None:
        torch.set_num_threads(max(1, int(smk.threads)))
        if seed is not None:
            torch.manual_seed(seed)
    _log_uncaught(logger)
    logger.info("rule %s, wildcards %s, threads %s", smk.rule, dict(smk.wildcards), smk.threads)
    try:
        inject_fault(smk.rule)  # a test-only switch (NEURIPS26_TEST_FAULT); does nothing when unset
    except InjectedFault as fault:
        logger.error("%s", fault)
        raise
    return logger


def job_provenance(smk, seed: int | None = None) -> dict:
    """Provenance of a job's tables: the config hash covers exactly the params this job depends on."""
    params = {key: value for key, value in smk.params.items()}
    return provenance(params, seed)


def _log_uncaught(logger: logging.Logger) -> None:
    """An uncaught exception is written, with its traceback, to the rule's log (which Snakemake's
    --show-failed-logs prints), not only to stderr."""
    previous = sys.excepthook

    def hook(kind, value, traceback):
        if not issubclass(kind, KeyboardInterrupt):
            record = logger.makeRecord(
                logger.name,
                logging.ERROR,
                __file__,
                0,
                "uncaught %s: %s",
                (kind.__name__, value),
                (kind, value, traceback),
            )
            for handler in logger.handlers:  # stderr gets the traceback from the default hook below
                if isinstance(handler, logging.FileHandler):
                    handler.handle(record)
        previous(kind, value, traceback)

    sys.excepthook = hook
