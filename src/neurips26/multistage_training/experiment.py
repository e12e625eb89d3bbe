"""Paper 16's config at one scale, read as the rules need it: the model's parameters, one table per phenomenon of
the abstract (and the two the notes add: the RL plateau and the pretraining loss), the stochastic simulations set
beside the mean-field solution, and the checks the schema cannot express (run when the workflow is parsed).

Tables (one parquet file each, written by the ``phenomenon`` and ``simulate`` jobs):

* ``complementarity``: per (budget, pretraining compute) SFT alone, RL alone, the best SFT share and its success,
  the gain over the better single stage, the SFT-alone limit (:func:`.evaluation.complementarity_table`);
* ``plateau``: RL-alone updates to reach success 1/2 per chain length (:func:`.evaluation.plateau_table`);
* ``ceiling``: the final success at the optimal split per pretraining compute at ``budget`` (the ``main`` rows),
  with the log-log fit of the step failure over the configured window (``fitted_exponent`` = minus its slope,
  ``r2``, ``fit_points``) and the exponent the model predicts; and the sweep over ``budgets`` of the computes in the
  window, in the model and in the null model without the pretraining gate (column ``plasticity``;
  :func:`.evaluation.ceiling_sweep`);
* ``allocation``: the optimal SFT share per (demo quality, reward noise, pretraining compute) (the ``main`` rows),
  and per number of RL rollouts k in ``rollouts`` at the first reward noise (:func:`.evaluation.allocation_shift`);
* ``amplification``: per skill, RL's change of ``u`` from the pretrained model (:func:`.evaluation.rl_amplification`);
* ``pretraining``: the excess pretraining loss per compute with its fit (:func:`.evaluation.pretraining_loss_scaling`);
* ``simulation`` (one per configuration and seed): the stochastic pipeline's success, mean and standard error over
  its independent runs, beside the mean-field solution at the same numbers of updates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["PHENOMENA", "check_config", "model_params", "phenomenon_table", "simulation_table"]

PHENOMENA = ("complementarity", "plateau", "ceiling", "allocation", "amplification", "pretraining")


def model_params(block: dict):
    """The model's parameters from the config's ``model`` block (each checked, the error naming the field)."""
    from .model import ModelParams

    return ModelParams(**block)


def _positive_grid(name: str, values) -> None:
    values = list(values)
    if any(not np.isfinite(v) or v < 0 for v in values):
        raise ValueError(f"{name} must be finite and >= 0, got {values}")
    if len(set(values)) != len(values):
        raise ValueError(f"{name} repeat: {values}")


def check_config(cfg: dict) -> None:
    """What the schema cannot say: a model outside its valid ranges, negative budgets or computes, a fit window
    without three computes in it, a power law asked of task exponents that give none, repeated seeds."""
    params = model_params(cfg["model"])
    comp, ceil, alloc = cfg["complementarity"], cfg["ceiling"], cfg["allocation"]
    for name, values in (("complementarity.budgets", comp["budgets"]),
                         ("complementarity.base_computes", comp["base_computes"]),
                         ("ceiling.base_computes", ceil["base_computes"]),
                         ("ceiling.budgets", ceil["budgets"]),
                         ("allocation.base_computes", alloc["base_computes"]),
                         ("pretraining.base_computes", cfg["pretraining"]["base_computes"])):  # fmt: skip
        _positive_grid(name, values)
    for name, value in (("complementarity.budgets", min(comp["budgets"])), ("ceiling.budget", ceil["budget"]),
                        ("allocation.budget", alloc["budget"])):  # fmt: skip
        if not value > 0:
            raise ValueError(f"{name} must be > 0 (a post-training budget), got {value}")
    for name, value in (("plateau.base_compute", cfg["plateau"]["base_compute"]),
                        ("amplification.base_compute", cfg["amplification"]["base_compute"])):  # fmt: skip
        if not np.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be finite and >= 0, got {value}")
    low, high = ceil["window"]
    inside = [c for c in ceil["base_computes"] if low <= c <= high]
    if len(inside) < 3:
        raise ValueError(f"ceiling.window {ceil['window']} holds {len(inside)} of ceiling.base_computes; a fit needs 3")
    if len(ceil["budgets"]) < 2 or min(ceil["budgets"]) <= 0:
        raise ValueError(f"ceiling.budgets must hold two budgets > 0 (a fit in the budget), got {ceil['budgets']}")
    if any(k < 1 for k in alloc["rollouts"]) or len(set(alloc["rollouts"])) != len(alloc["rollouts"]):
        raise ValueError(f"allocation.rollouts must be distinct and >= 1, got {alloc['rollouts']}")
    if params.alpha_task <= 1:
        raise ValueError(f"model.alpha_task must be > 1 for the ceiling's power law, got {params.alpha_task}")
    if any(c <= 0 for c in cfg["pretraining"]["base_computes"]):
        raise ValueError("pretraining.base_computes must be > 0 (a log-log fit)")
    for name, value in (("allocation.demo_qualities", alloc["demo_qualities"]),):
        if any(not 0 <= v <= 1 for v in value):
            raise ValueError(f"{name} must lie in [0, 1], got {value}")
    if any(not 0 <= v < 0.5 for v in alloc["reward_noises"]):
        raise ValueError(f"allocation.reward_noises must lie in [0, 0.5), got {alloc['reward_noises']}")
    sim = cfg["simulation"]
    if len(set(sim["seeds"])) != len(sim["seeds"]):
        raise ValueError(f"simulation.seeds repeat: {sim['seeds']}")
    for name, run in sim["configs"].items():
        share = run["sft_share"]
        if not 0 <= share <= 1:
            raise ValueError(f"simulation.configs.{name}.sft_share must lie in [0, 1], got {share}")
        for key in ("budget", "base_compute"):
            if not np.isfinite(run[key]) or run[key] < 0:
                raise ValueError(f"simulation.configs.{name}.{key} must be finite and >= 0, got {run[key]}")
        if not run["budget"] > 0:
            raise ValueError(f"simulation.configs.{name}.budget must be > 0, got {run['budget']}")


def phenomenon_table(name: str, params, block: dict) -> pd.DataFrame:
    """The table of one phenomenon (module docstring) from its config block."""
    from . import evaluation

    if name == "complementarity":
        return evaluation.complementarity_table(params, block["budgets"], block["base_computes"], block["n_grid"])
    if name == "plateau":
        table = evaluation.plateau_table(params, block["chain_lengths"], block["base_compute"])
        return table.assign(base_compute=float(block["base_compute"]))
    if name == "ceiling":
        return evaluation.ceiling_sweep(params, block["budget"], block["budgets"], block["base_computes"],
                                        block["n_grid"], tuple(block["window"]))  # fmt: skip
    if name == "allocation":
        table = evaluation.allocation_shift(params, block["budget"], block["base_computes"], block["demo_qualities"],
                                            block["reward_noises"], block["n_grid"], block["rollouts"])  # fmt: skip
        return table.assign(n_grid=int(block["n_grid"]))
    if name == "amplification":
        table = evaluation.rl_amplification(params, block["base_compute"], block["rl_updates"], block["sft_demos"])
        return table.assign(base_compute=float(block["base_compute"]), rl_updates=float(block["rl_updates"]),
                            sft_demos=float(block["sft_demos"]))  # fmt: skip
    if name == "pretraining":
        table, fit, predicted = evaluation.pretraining_loss_scaling(params, block["base_computes"])
        return table.assign(fitted_exponent=-fit.slope, r2=fit.r2, fit_points=fit.n, predicted_exponent=predicted)
    raise ValueError(f"unknown phenomenon {name!r}; known: {list(PHENOMENA)}")


def simulation_table(params, run: dict, seed: int, runs: int, batch: int, record_every: int) -> pd.DataFrame:
    """The stochastic SFT -> RL pipeline of one configuration and seed (``runs`` independent runs), its success
    averaged over runs with the standard error, beside the mean-field solution after as many SFT demonstrations and
    RL updates: rows (stage, update, compute, success_sim, success_sim_se, success_theory, runs)."""
    from .dynamics import post_train
    from .model import Allocation, initial_u, mean_step_success, skill_strength, stage_plan
    from .simulation import simulate_pipeline

    allocation = Allocation.post_training(run["sft_share"])
    trace, _ = simulate_pipeline(params, run["budget"], allocation, seed, run["base_compute"], "sft_rl", runs, batch,
                                 record_every)  # fmt: skip
    plan = stage_plan(params, run["budget"], allocation, run["base_compute"])
    strength = skill_strength(params, plan.pretrain_compute)
    sft_updates = int(plan.sft_demos // batch)
    grouped = trace.groupby(["update", "stage"], sort=True)["success"]
    table = grouped.agg(success_sim="mean", success_sim_sd="std").reset_index()
    table["compute"] = trace.groupby(["update", "stage"], sort=True)["compute"].first().to_numpy()
    table["success_sim_se"] = table.pop("success_sim_sd").fillna(0.0) / np.sqrt(runs)
    theory = []
    for update in table["update"]:
        demos = min(update, sft_updates) * batch
        rl = max(0, update - sft_updates)
        u = post_train(params, strength, initial_u(params), float(demos), float(rl))
        theory.append(float(mean_step_success(params, strength, u)) ** params.chain_length)
    return table.assign(success_theory=theory, runs=runs)
