"""The instance-optimisation jobs that train: per-instance RL on each baseline test scaffold, and PMO-lite's three
methods (random sampling, amortized RL, the constrained graph GA) on one oracle, for each of its seeds.

Both run in the common training loop with one whole instance run per loop step (a scaffold, or a PMO method), so
a job stopped by SIGTERM or killed resumes after the last finished run; the runs inside (training.optimise_instance)
end on their oracle budget rather than after a number of steps. Each run starts from the saved pretrained policy,
placed on the job's device, with its own seed, so it does not depend on the runs before it (except PMO's graph GA,
which starts from the random method's first samples, kept in the loop state).
"""

from __future__ import annotations

import logging
import time

import pandas as pd

from neurips26.amortix import environment as env
from neurips26.amortix import graph_ga, objectives
from neurips26.amortix.experiment import EnvConfig, element_index
from neurips26.amortix.policy import policy_from_state
from neurips26.amortix.training import optimise_instance
from neurips26.common import loop

log = logging.getLogger("neurips26.amortix")
CALL_COLUMNS = ["call", "smiles", "score", "round"]
PMO_METHODS = ("random", "amortized", "graph_ga")


def per_instance_rl(
    saved: dict,
    scaffolds: list[str],
    oracle,
    spec: dict,
    config: EnvConfig,
    seed: int,
    loop_settings: loop.LoopSettings | None = None,
) -> pd.DataFrame:
    """Dr. GRPO on each scaffold alone from the pretrained policy, `spec` = baselines.per_instance (budget,
    group_size, lr); repeated molecules are not scored twice. One row per oracle call."""
    device, elements = loop.job_device(), element_index(config)
    results: list[dict] = []  # one table per scaffold as {column: values}: a checkpoint holds builtins only

    def step_fn(index: int) -> None:
        scaffold = scaffolds[index]
        scorer = objectives.Scorer(oracle, budget=spec["budget"], cache=True)
        start = time.perf_counter()
        rows = optimise_instance(
            policy_from_state(saved, device),
            env.make_scaffold(scaffold, config),
            scorer,
            spec["group_size"],
            spec["budget"],
            spec["lr"],
            config,
            elements,
            seed=seed + index,
        )
        seconds = time.perf_counter() - start
        calls = pd.DataFrame(rows, columns=CALL_COLUMNS)
        results.append(calls.assign(scaffold=scaffold, calls_per_second=len(calls) / seconds).to_dict("list"))
        log.info("%s: %d calls in %.1f s, best %.3f", scaffold, len(calls), seconds, calls["score"].max())

    loop.run_loop(
        step_fn, len(scaffolds), {"results": results}, loop_settings or loop.LoopSettings(name="per-instance RL")
    )
    return pd.concat([pd.DataFrame(table) for table in results], ignore_index=True)


def pmo_lite(
    saved: dict,
    oracle_name: str,
    spec: dict,
    config: EnvConfig,
    seeds: list[int],
    loop_settings: loop.LoopSettings | None = None,
) -> pd.DataFrame:
    """From `spec["start"]`, with `spec["budget"]` oracle calls each, for each of `seeds`: (a) sampling the
    pretrained policy (random), (b) amortized RL fine-tuning with Dr. GRPO, (c) the constrained graph GA started
    from (a)'s first group of that seed. Every method's oracle calls in order (unique molecules only, as in
    mol_opt), with a `seed` column; a seed's runs are what a job with that seed alone writes (each run seeds its
    own sampling stream, the GA its own generator)."""
    device, elements = loop.job_device(), element_index(config)
    oracle = objectives.make_oracle(oracle_name)
    start_scaffold = env.make_scaffold(spec["start"], config)
    results: list[dict] = []  # one table per (seed, method) as {column: values}: a checkpoint holds builtins only
    carry: dict[str, list[str]] = {}  # per seed, the GA's starting population: the random method's first samples
    runs = [(int(seed), method) for seed in seeds for method in PMO_METHODS]

    def step_fn(index: int) -> None:
        seed, method = runs[index]
        start = time.perf_counter()
        if method == "graph_ga":
            calls = graph_ga.run_constrained_ga(
                spec["start"],
                carry[str(seed)],
                oracle,
                spec["budget"],
                population_size=spec["group_size"],
                offspring_size=spec["group_size"],
                vocab=config.decoration_vocab,
                max_heavy=config.max_atoms,
                seed=seed,
            )
        else:
            scorer = objectives.Scorer(oracle, budget=spec["budget"], cache=True)
            rows = optimise_instance(
                policy_from_state(saved, device),
                start_scaffold,
                scorer,
                spec["group_size"],
                spec["budget"],
                spec["lr"],
                config,
                elements,
                seed=seed,
                learn=method == "amortized",
            )
            calls = pd.DataFrame(rows, columns=CALL_COLUMNS)
            if method == "random":
                carry[str(seed)] = calls["smiles"].head(spec["group_size"]).tolist()
        seconds = time.perf_counter() - start
        table = calls[["call", "smiles", "score"]].assign(method=method, oracle=oracle_name, seed=seed, seconds=seconds)
        results.append(table.to_dict("list"))
        log.info(
            "%s on %s, seed %d: %d calls in %.1f s, best %.3f",
            method,
            oracle_name,
            seed,
            len(calls),
            seconds,
            calls["score"].max(),
        )

    loop.run_loop(
        step_fn,
        len(runs),
        {"results": results, "carry": carry},
        loop_settings or loop.LoopSettings(name=f"PMO-lite {oracle_name}"),
    )
    return pd.concat([pd.DataFrame(table) for table in results], ignore_index=True)
