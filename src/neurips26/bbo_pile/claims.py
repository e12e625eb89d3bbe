"""Paper 05's claims and checks (B1-B5: the scaling figure, imitation, the benchmark of the model as an optimizer,
valid decodes, the held-out largest run), measured from the scaling fit, the imitation likelihoods of each
held-out trajectory, the normalised regret on held-out black boxes (over model seeds) and the validity of decoded
trials. The definitions (statements, thresholds, minimum evidence) are in config/claims/bbo_pile.yaml; this module
computes only the measured values.

- B1a (check): the exponent of the power law fitted on the compute-optimal frontier. The frontier is a running
  minimum (strictly falling loss at rising compute), so a least-squares line through it always falls: a check of
  the frontier and the fit, not a finding.
- B1b (info): Spearman(FLOPs, final validation loss) over the training runs, with the exact one-sided permutation
  p-value of a correlation this low over the n! orderings of the runs in the note (spearman_permutation_p).
- B2: per true optimizer and model seed (the seeds of the run named in `model_seeds`), the margin (mean NLL under
  the other tokens minus the NLL under its own token) of each held-out trajectory; the optimizer is imitated when
  the union of the 95% t intervals over the seeds' mean margins and over the seed-averaged trajectories lies above
  0, not imitated when it lies below 0, undecided otherwise. The value is the share imitated by the mean margin,
  bounded by the share decided imitated and the share not decided against. Its null permutes the tokens: the same
  share when each optimizer's trajectories are scored against another optimizer's token (mean over derangements).
- B3: normalised regret at the last horizon of the model conditioned on one optimizer (constrained decoding) minus
  random search's, paired over (box, seed), for every model seed of the run named in the config's `model_seeds`.
  Decided by the union of two 95% t intervals: over the model seeds (each seed's mean difference) and over the
  pairs (each pair's difference averaged over seeds).
- B4a (check) / B4b (info): the share of valid decoded trials with and without constrained decoding.
- B5: relative error of the law fitted without the largest-compute run on that run's final loss, with the seed
  spread (relative standard deviation) of the final loss of B3's run over its model seeds as noise.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from neurips26.bbo_pile.regret import SEED_METHOD
from neurips26.common.claims import Measured, t_interval

NAN = float("nan")


def _seed_margins(part: pd.DataFrame, own: str, others: list[str]) -> pd.DataFrame:
    """Margins (mean NLL under `others` minus NLL under `own`) of one true optimizer's trajectories: one row per
    trajectory, one column per model seed (NaN where a seed lacks a token's NLL)."""
    wide = part.pivot_table(index=["model_seed", "trajectory"], columns="cond_algo", values="nll")
    return (wide[others].mean(axis=1) - wide[own]).unstack("model_seed")


def _state(low: float, high: float) -> str:
    if np.isfinite(low) and low > 0:
        return "imitated"
    if np.isfinite(high) and high < 0:
        return "not imitated"
    return "undecided"


def imitation_margins(trajectories: pd.DataFrame, labels: dict | None = None) -> pd.DataFrame:
    """One row per true optimizer that is also a conditioning token, with at least one other token: `seeds` (model
    seeds), `trajectories` (scored by every seed), the mean margin (mean NLL under the other tokens minus the NLL
    under its own, nats per value token, averaged over seeds and trajectories), its 95% t intervals over the model
    seeds (each seed's mean margin; NaN with one seed) and over the trajectories (each one's margin averaged over
    the seeds), `low`/`high` their union (the trajectories' interval alone with one seed) and `state` (imitated /
    not imitated / undecided by the union; two seeds or more are needed where the table has several).

    `trajectories` has one row per (true_algo, cond_algo, trajectory) with `nll` (sampling.imitation_nll), and a
    `model_seed` column where several models scored them. `labels` (the permutation null): the token read as each
    true optimizer's own (`{true: token}`), the true optimizer's own token where absent."""
    columns = ["true_algo", "own", "seeds", "trajectories", "margin", "seed_low", "seed_high", "low", "high", "state"]
    if trajectories.empty:
        return pd.DataFrame(columns=columns)
    if "model_seed" not in trajectories.columns:
        trajectories = trajectories.assign(model_seed=0)
    conditions = set(trajectories["cond_algo"])
    several = trajectories["model_seed"].nunique() > 1
    rows = []
    for algo, part in trajectories.groupby("true_algo", sort=True):
        own = (labels or {}).get(algo, algo)
        others = sorted(conditions - {own})
        if own not in conditions or not others:
            continue
        by_seed = _seed_margins(part, own, others).dropna()
        over_seeds = t_interval(by_seed.mean(axis=0).to_numpy())
        over_trajectories = t_interval(by_seed.mean(axis=1).to_numpy())
        if several:
            ends = [over_seeds.low, over_seeds.high, over_trajectories.low, over_trajectories.high]
            low, high = (min(ends), max(ends)) if np.isfinite(ends).all() else (NAN, NAN)
        else:
            low, high = over_trajectories.low, over_trajectories.high
        rows.append(
            {
                "true_algo": algo,
                "own": own,
                "seeds": by_seed.shape[1],
                "trajectories": len(by_seed),
                "margin": float(by_seed.to_numpy().mean()) if by_seed.size else NAN,
                "seed_low": over_seeds.low,
                "seed_high": over_seeds.high,
                "low": low,
                "high": high,
                "state": _state(low, high),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def derangements(items) -> list[dict]:
    """Every permutation of `items` that moves every item (as {item: image})."""
    items = list(items)
    return [dict(zip(items, p)) for p in itertools.permutations(items) if all(a != b for a, b in zip(items, p))]


def imitation_null(trajectories: pd.DataFrame) -> float:
    """B2's null, the tokens permuted: the share of optimizers whose margin is positive (as B2's value) when each
    true optimizer's trajectories are scored against another optimizer's token as if it were their own, averaged
    over every derangement of the optimizers that are both true optimizers and tokens. A model that ignores the
    token gives margins of 0 in expectation (a share near 0.5); one that imitates gives negative margins under a
    wrong token. NaN with fewer than two such optimizers."""
    if trajectories.empty:
        return NAN
    algos = sorted(set(trajectories["true_algo"]) & set(trajectories["cond_algo"]))
    shares = []
    for labels in derangements(algos) if len(algos) >= 2 else []:
        margins = imitation_margins(trajectories[trajectories["true_algo"].isin(algos)], labels)
        if len(margins):
            shares.append(float((margins["margin"] > 0).mean()))
    return float(np.mean(shares)) if shares else NAN


MIN_OPTIMIZERS = 3  # B2 compares at least three optimizers (smoke has two)


def measure_imitation(trajectories: pd.DataFrame) -> Measured:
    """B2: the share of optimizers imitated (see the module docstring) beside its null, the tokens permuted
    (imitation_null); runs = model seeds (every optimizer's margins need each of them)."""
    margins = imitation_margins(trajectories)
    n = len(margins)
    seeds = int(margins["seeds"].min()) if n else 0
    if n < MIN_OPTIMIZERS:
        return Measured(
            "B2",
            NAN,
            seeds,
            note=(
                f"{n} optimizer(s) both a true optimizer and a conditioning token with another token to compare "
                f"with; B2 needs at least {MIN_OPTIMIZERS}"
            ),
        )
    imitated = int((margins["state"] == "imitated").sum())
    against = int((margins["state"] == "not imitated").sum())
    by_mean = int((margins["margin"] > 0).sum())
    null = imitation_null(trajectories)
    text = ", ".join(
        f"{r.true_algo} {r.margin:+.4f} [{r.low:+.4f}, {r.high:+.4f}] (over seeds [{r.seed_low:+.4f}, "
        f"{r.seed_high:+.4f}]; {r.state}, {r.trajectories} traj.)"
        for r in margins.itertuples()
    )
    return Measured(
        "B2",
        by_mean / n,
        seeds,
        low=imitated / n,
        high=(n - against) / n,
        null=null,
        note=(
            f"{imitated} of {n} optimizers imitated, {against} not, {n - imitated - against} undecided over "
            f"{seeds} model seed(s); low/high: shares decided imitated and not decided against; margins (others - "
            f"own, nats per value token, mean over seeds and trajectories; 95% interval: union of the t intervals "
            f"over the seeds' means and over the seed-averaged trajectories): {text}; null (tokens permuted, mean "
            f"over the derangements): share {null:.3f}"
        ),
    )


def seed_methods(regret: pd.DataFrame, condition: str) -> list[str]:
    """Claim B3's methods: the model seeds of its run conditioned on `condition` with constrained decoding
    (`model:{condition}:constrained@{run}:seed{k}`, regret.seed_method), by seed."""
    found = [(m, SEED_METHOD.match(m)) for m in set(regret["method"])]
    seeded = [(int(match["seed"]), m) for m, match in found if match and match["condition"] == condition]
    return [m for _, m in sorted(seeded)]


def seed_differences(regret: pd.DataFrame, condition: str, baseline: str = "RS") -> pd.DataFrame:
    """Normalised regret at the last horizon, model (each of claim B3's model seeds, constrained decoding,
    conditioned on `condition`) minus `baseline`, on the (box, seed) pairs where every model seed and the baseline
    have a value (boxes whose scale is not positive are left out): one row per pair, one column per model method."""
    methods = seed_methods(regret, condition)
    if not methods or baseline not in set(regret["method"]):
        return pd.DataFrame(columns=methods)
    at = regret[(regret["T"] == regret["T"].max()) & (regret["scale"] > 0)]
    wide = at.pivot_table(index=["bb_id", "seed"], columns="method", values="norm_regret")
    if baseline not in wide.columns or not set(methods) <= set(wide.columns):
        return pd.DataFrame(columns=methods)
    wide = wide[methods + [baseline]].dropna()
    return wide[methods].sub(wide[baseline], axis=0)


def measure_optimization(regret: pd.DataFrame, condition: str, baseline: str = "RS") -> Measured:
    """B3: mean regret difference (model - baseline) over model seeds and pairs; runs = model seeds; the interval
    is the union of the t intervals over the seeds' means and over the seed-averaged pairs."""
    differences = seed_differences(regret, condition, baseline)
    seeds, pairs = differences.shape[1], len(differences)
    if seeds == 0 or pairs == 0:
        return Measured(
            "B3",
            NAN,
            seeds,
            note=f"no (box, seed) pair with a regret for every model seed of {condition} and for {baseline}",
        )
    over_seeds = t_interval(differences.mean(axis=0).to_numpy())
    over_pairs = t_interval(differences.mean(axis=1).to_numpy())
    averaged = differences.mean(axis=1)
    p = float(wilcoxon(averaged, alternative="less").pvalue) if (averaged != 0).any() and pairs > 1 else NAN
    T = int(regret["T"].max())
    per_seed = ", ".join(f"seed {SEED_METHOD.match(m)['seed']} {d:+.3f}" for m, d in differences.mean(axis=0).items())
    run = SEED_METHOD.match(differences.columns[0])["run"]
    note = (
        f"run {run}, T = {T}, {seeds} model seed(s) x {pairs} (box, seed) pairs; mean difference per seed: "
        f"{per_seed}; 95% t interval over the seeds [{over_seeds.low:+.3f}, {over_seeds.high:+.3f}], over the "
        f"seed-averaged pairs [{over_pairs.low:+.3f}, {over_pairs.high:+.3f}] (decided on their union); model "
        f"lower in {(averaged < 0).mean():.0%} of the pairs, one-sided Wilcoxon p {p:.3g}"
    )
    ends = [over_seeds.low, over_pairs.low, over_seeds.high, over_pairs.high]
    # either interval missing (one seed, one pair): no union, so no verdict (min/max would drop a NaN by position)
    low, high = (min(ends), max(ends)) if np.isfinite(ends).all() else (NAN, NAN)
    return Measured("B3", float(differences.to_numpy().mean()), seeds, note=note, low=low, high=high)


def validity_share(validity: pd.DataFrame, decoding: str) -> tuple[float, int]:
    """Share of valid decoded trials with `decoding` over every model run, and the number of trials (NaN, 0 when
    there are none)."""
    rows = validity[validity["decoding"] == decoding]
    trials = int(rows["trials"].sum())
    return (float(rows["valid"].sum()) / trials if trials else NAN), trials


def spearman_permutation_p(rho: float, n: int, exact_up_to: int = 8, draws: int = 100_000) -> float:
    """One-sided p-value of a Spearman correlation at most `rho` over `n` untied points when the order is random:
    the share of the n! orderings of the ranks whose correlation is <= rho (exact up to `exact_up_to` points, else
    over `draws` random orderings, fixed seed); NaN for a non-finite rho or fewer than 2 points. Without ties the
    null distribution depends only on n: 4 points give at least 1/24 = 0.042, 5 points 1/120."""
    if not np.isfinite(rho) or n < 2:
        return NAN
    ranks = np.arange(n, dtype=float)
    if n <= exact_up_to:
        orders = np.array(list(itertools.permutations(range(n))), dtype=float)
    else:
        orders = np.argsort(np.random.default_rng(0).random((draws, n)), axis=1).astype(float)
    rhos = 1 - 6 * ((orders - ranks) ** 2).sum(axis=1) / (n * (n**2 - 1))
    return float(np.mean(rhos <= rho + 1e-12))


def seed_noise(losses) -> float:
    """Relative standard deviation (ddof 1) of a run's final validation loss over its model seeds; NaN with
    fewer than two seeds."""
    x = np.asarray([v for v in losses if np.isfinite(v)], dtype=float)
    return float(x.std(ddof=1) / x.mean()) if len(x) >= 2 else NAN


def measure_claims(
    scaling: pd.DataFrame,
    imitation_trajectories: pd.DataFrame,
    regret: pd.DataFrame,
    validity: pd.DataFrame,
    seed_losses,
    condition: str = "CMA",
    baseline: str = "RS",
) -> list[Measured]:
    """`scaling`: one row (scaling.scaling_summary); `imitation_trajectories`: (true_algo, cond_algo, trajectory,
    nll); `regret`: regret.normalized_regret rows, the model's methods named `model:{cond}:{decoding}`
    (evaluation run) and `model:{cond}:constrained@{run}:seed{k}` (B3's model seeds); `validity`: (method,
    decoding, trials, valid); `seed_losses`: the final validation loss of B3's run per model seed (B5's noise)."""
    fit = scaling.iloc[0] if len(scaling) else pd.Series(dtype=object)
    seed_losses = list(seed_losses)

    def number(key):
        value = fit.get(key, NAN)
        return float(value) if value is not None and value == value else NAN

    runs = int(number("runs")) if np.isfinite(number("runs")) else 0
    frontier = int(number("frontier")) if np.isfinite(number("frontier")) else 0
    constrained, n_constrained = validity_share(validity, "constrained")
    free, n_free = validity_share(validity, "free")
    noise = seed_noise(seed_losses)
    held_out = fit.get("holdout_run", "") or ""
    return [
        Measured(
            "B1a",
            number("b"),
            frontier,
            note=f"a {number('a'):.3g}, R^2 {number('r2'):.3f}, {frontier} frontier points of {runs} runs",
        ),
        Measured(
            "B1b",
            number("spearman"),
            runs,
            note=(
                f"{runs} runs, one training seed each; exact one-sided permutation p of a Spearman this low over the "
                f"{runs}! orderings: {spearman_permutation_p(number('spearman'), runs):.3g}"
            ),
        ),
        measure_imitation(imitation_trajectories),
        measure_optimization(regret, condition, baseline),
        Measured(
            "B4a",
            constrained,
            n_constrained,
            note=f"{n_constrained} decoded trials (evaluation run and B3's model seeds)",
        ),
        Measured("B4b", free, n_free, note=f"{n_free} decoded trials; invalid ones fall back to a random trial"),
        Measured(
            "B5",
            number("holdout_rel_error"),
            max(runs - 1, 0),
            noise=noise,
            note=(
                f"held out: {held_out or 'none'}, fitted on the other {max(runs - 1, 0)} runs; predicted "
                f"{number('holdout_predicted'):.4f}, actual {number('holdout_actual'):.4f}; noise: relative "
                f"spread of the final loss of B3's run over {len(seed_losses)} model seed(s)"
            ),
        ),
    ]
