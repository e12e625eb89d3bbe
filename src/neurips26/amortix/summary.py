"""The tables of the report, from the steps' outputs: scaffold decoration (all methods, on the test scaffolds and
on the baselines' subset), best-of-K curves with the break-even K, RL training summaries, PMO-lite AUCs, and the
inference-vs-instance-optimisation throughput."""

from __future__ import annotations

import numpy as np
import pandas as pd

from neurips26.amortix.budget import top_k_auc
from neurips26.amortix.evaluation import best_of_k_curve, break_even_k, method_row


def instance_candidates(calls: pd.DataFrame, method: str) -> pd.DataFrame:
    """An instance optimiser's scored molecules as candidates (all valid and scaffold-retaining by construction)."""
    return pd.DataFrame(
        {
            "method": method,
            "scaffold": calls["scaffold"],
            "sample": calls["call"],
            "smiles": calls["smiles"],
            "valid": True,
            "retained": True,
            "score": calls["score"],
            "success": False,
        }
    )


def policy_label(name: str) -> str:
    return "pretrained" if name == "pretrained" else f"amortized {name.replace('_s', ' seed ')}"


def decoration_table(
    samples: dict[str, pd.DataFrame],
    rl_calls: dict[str, float],
    instance: dict[str, pd.DataFrame],
    instance_success: dict[str, pd.DataFrame],
    k_values: list[int],
    train_smiles: set[str],
) -> pd.DataFrame:
    """One row per (scaffold set, method). `samples`: per policy, its scored greedy and sampled candidates;
    `instance`: per baseline, its oracle calls; `instance_success`: the best molecule per scaffold re-scored with
    the success criterion. Best-of-K draws the first K samples of the pretrained policy."""
    rows = []
    subset = set(next(iter(instance.values()))["scaffold"]) if instance else set()
    for scaffold_set in ("test", "baseline subset"):
        keep = (lambda f: f) if scaffold_set == "test" else (lambda f: f[f["scaffold"].isin(subset)])
        for name, frame in samples.items():
            greedy = keep(frame[frame["mode"] == "greedy"]).assign(method=f"{policy_label(name)} (single shot)")
            rows.append(
                {"scaffold_set": scaffold_set, **method_row(greedy, train_smiles, 0.0, rl_calls.get(name, 0.0))}
            )
        sampled = keep(samples["pretrained"][samples["pretrained"]["mode"] == "sample"])
        for k in k_values:
            first = sampled[sampled["sample"] < k].assign(method=f"pretrained best-of-{k}")
            calls = (first["valid"] & first["retained"]).groupby(first["scaffold"]).sum().mean()
            rows.append({"scaffold_set": scaffold_set, **method_row(first, train_smiles, calls, 0.0)})
        if scaffold_set == "baseline subset":
            for method, calls in instance.items():
                candidates = instance_candidates(calls, method)
                best = instance_success[method].set_index("smiles")["success"]
                candidates["success"] = candidates["smiles"].map(best).fillna(False).astype(bool)
                per_scaffold = calls.groupby("scaffold").size().mean()
                rows.append({"scaffold_set": scaffold_set, **method_row(candidates, train_smiles, per_scaffold, 0.0)})
    return pd.DataFrame(rows)


def best_of_k_table(samples: dict[str, pd.DataFrame], k_values: list[int]) -> pd.DataFrame:
    """Best-of-K score of each policy's samples, and each amortized policy's single-shot score with the break-even
    K against the pretrained policy's best-of-K."""
    curves = []
    for name, frame in samples.items():
        curve = best_of_k_curve(frame[frame["mode"] == "sample"], k_values).assign(policy=name)
        greedy = frame[frame["mode"] == "greedy"]
        curves.append(curve.assign(single_shot=float(greedy["score"].where(greedy["valid"], 0.0).mean())))
    table = pd.concat(curves, ignore_index=True)
    pretrained = table[table["policy"] == "pretrained"]
    table["break_even_k"] = table["single_shot"].map(lambda s: break_even_k(pretrained, s))
    return table


def training_table(logs: pd.DataFrame, tail: int = 10) -> pd.DataFrame:
    """Per (variant, seed): final and best greedy validation score, mean and spread of the training reward over the
    last `tail` steps, training oracle calls (RL samples plus validation)."""
    rows = []
    for (variant, seed), log in logs.groupby(["variant", "seed"]):
        val = log.dropna(subset=["val_score"])
        last = log.tail(tail)
        rows.append(
            {
                "variant": variant,
                "seed": int(seed),
                "final_val_score": float(val["val_score"].iloc[-1]),
                "best_val_score": float(val["val_score"].max()),
                "best_step": int(log["best_step"].iloc[-1]),
                "reward_last": float(last["reward_mean"].mean()),
                "reward_first": float(log.head(tail)["reward_mean"].mean()),
                "reward_step_std": float(log["reward_mean"].diff().std()),
                "oracle_calls": float(log["oracle_calls"].iloc[-1] + log["val_oracle_calls"].iloc[-1]),
            }
        )
    return pd.DataFrame(rows)


def pmo_table(calls: pd.DataFrame, budget: int, top_k: int, freq: int) -> pd.DataFrame:
    """One row per (oracle, method, seed) run of PMO-lite: its calls, top-k AUC, best and top-k mean scores."""
    calls = calls if "seed" in calls.columns else calls.assign(seed=0)
    rows = []
    for (oracle, method, seed), run in calls.groupby(["oracle", "method", "seed"]):
        scores = run.sort_values("call")["score"].to_numpy()
        rows.append(
            {
                "oracle": oracle,
                "method": method,
                "seed": int(seed),
                "calls": len(scores),
                f"auc_top{top_k}": top_k_auc(scores, budget, k=top_k, freq=freq),
                "top1": float(scores.max()) if len(scores) else np.nan,
                f"top{top_k}_mean": float(np.sort(scores)[-top_k:].mean()) if len(scores) else np.nan,
                "seconds": float(run["seconds"].iloc[0]),
            }
        )
    return pd.DataFrame(rows)


def throughput_table(samples: dict[str, pd.DataFrame], instance: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Molecules per second of single-shot inference against oracle calls per second of the instance optimisers."""
    rows = [
        {
            "method": f"{policy_label(name)} (single shot)",
            "unit": "molecules per second",
            "per_second": float(frame.loc[frame["mode"] == "greedy", "molecules_per_second"].iloc[0]),
            "oracle_calls_per_molecule": 0.0,
        }
        for name, frame in samples.items()
    ]
    for method, calls in instance.items():
        per_scaffold = calls.groupby("scaffold").size()
        rows.append(
            {
                "method": method,
                "unit": "oracle calls per second",
                "per_second": float(calls.groupby("scaffold")["calls_per_second"].first().mean()),
                "oracle_calls_per_molecule": float(per_scaffold.mean()),
            }
        )
    return pd.DataFrame(rows)


DECORATION_COLUMNS = [
    "method",
    "score",
    "success_rate",
    "validity",
    "retention",
    "uniqueness",
    "novelty",
    "oracle_calls_inference",
    "oracle_calls_training",
]
PROVENANCE_COLUMNS = ["git_commit", "config_hash", "seed"]


def split_sizes(demos: pd.DataFrame, split: pd.DataFrame) -> pd.DataFrame:
    """Molecules, scaffolds, decisions and Butina clusters per split (molecules with a demonstration)."""
    demos = demos.merge(split, on="scaffold")
    sizes = (
        demos.groupby("split")
        .agg(molecules=("smiles", "size"), scaffolds=("scaffold", "nunique"), decisions=("n_actions", "sum"))
        .reset_index()
    )
    clusters = split.groupby("split")["cluster"].nunique().rename("clusters").reset_index()
    return sizes.merge(clusters, on="split")


def report_tables(inp, params) -> dict:
    """Every table and value of the report (report.md.j2), from the steps' outputs (provenance columns dropped)."""
    import json

    from neurips26.amortix.seeds import variant_seeds

    def read(path) -> pd.DataFrame:
        return pd.read_parquet(path).drop(columns=PROVENANCE_COLUMNS, errors="ignore")

    decoration, best_of_k, split = read(inp.decoration), read(inp.best_of_k), read(inp.split)
    rl = params.rl
    run_seeds = {v: variant_seeds({"rl": rl}, v) for v in rl["variants"]}
    return {
        "rl": rl,
        "run_seeds": "; ".join(f"{v} {seeds}" for v, seeds in run_seeds.items()),
        "oracle": json.loads(open(inp.oracle).read()),
        "decoration_test": decoration[decoration["scaffold_set"] == "test"][DECORATION_COLUMNS],
        "decoration_baseline": decoration[decoration["scaffold_set"] == "baseline subset"][DECORATION_COLUMNS],
        "training": read(inp.training),
        "curve": best_of_k.pivot_table(index="k", columns="policy", values="score").reset_index(),
        "singles": best_of_k.groupby("policy", as_index=False)[["single_shot", "break_even_k"]].first(),
        "pmo": read(inp.pmo),
        "throughput": read(inp.throughput),
        "counts": read(inp.counts),
        "split_sizes": split_sizes(read(inp.demonstrations), split),
        "selftest": read(inp.selftest),
        "pretrain": read(inp.pretrain),
    }
