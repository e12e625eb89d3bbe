"""Paper 02's measured values for the claims and checks of ``config/claims/analogtobi.yaml``.

Rates pool the samples of every seed of an arm (counts from the ablation table) and are decided by an interval that
is the union of the pooled Wilson interval (one rate) or Newcombe interval (a difference of two rates, arms taken as
independent) and the range of the per-seed values, so that seeds disagreeing in direction leave the verdict
inconclusive. The realism claim compares MMD^2 values pooled over seeds; it needs at least ``REALISM_MIN_VALID`` valid
samples per arm and seed, and its interval joins a bootstrap over the valid samples (each arm resampled) with the
per-seed differences. The type-accuracy null (C10) scores the main configuration's own valid samples against its
requested types permuted at random within each seed (same circuits, type conditioning removed). C9 passes only when
the classifier reading ports verbatim and the one reading them by class both pass. Runs count the seeds with evidence
(a seed that wrote no valid walk is no run for a rate over valid walks). A missing arm, or an arm without samples,
gives NaN (inconclusive), never a value that passes.

Nulls (issue 41: the same measurement without the paper's mechanism, beside the value; a holds whose null passes
too is inconclusive): C4's null is what single-token damage passes, no model: the data's circuits (first walk of
each) with one token replaced by another token of its kind, drawn per seed (:func:`corrupted_walks`), the damaged
walks that pass their representation's check, per circuit bipartite minus device-pin. It counts both a check's
leniency and the representation's robustness to damage (a damaged walk that passes may describe another valid
circuit). C4 subtracts it (issue 41, :func:`beyond_leniency`): the difference minus max(null, 0), not paired (the null
is no run of the model). For one issue-41 review the null counted only damaged walks that pass while their decoded
circuit fails the common netlist check (:func:`.erc.netlist_fault`); that is 0 by construction unless a check is lax,
so it is the check K4 now (:func:`leniency_check`), and the null is again every damaged walk that passes.
C1's and C2's null is the random-logits baseline under the grammar (validity, and the DC convergence of its valid
circuits); C9's is C10's permuted-request accuracy of the same valid samples.

Checks read the data and the samples: every terminated grammar-decoded walk passes the ERC; every training
circuit's bipartite walk is accepted by the grammar and decodes back to an isomorphic circuit; the same round trip for
device-pin walks; no damaged data walk passes its representation's check while its decoded circuit fails the common
netlist check (K4).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, rate_difference, t_interval, wilson

from . import devpin, erc, experiment, serialize
from .evaluation import FEATURES, decode_checked
from .generate import graph_of, isomorphic
from .grammar import accepts
from .metrics import median_bandwidth, mmd2, walk_ends, without_indices
from .netlist import parse
from .tokens import kind_of

__all__ = [
    "REALISM_MIN_VALID",
    "beyond_leniency",
    "corrupted_validity",
    "corrupted_walks",
    "leniency_by_circuit",
    "measure_claims",
    "welch_interval",
]

_F = [f"f_{f}" for f in FEATURES]
REALISM_MIN_VALID = 10  # valid samples per arm and seed below which the realism claim is inconclusive
_BOOTSTRAP = 200


def _arm(ablation: pd.DataFrame, config: str, decoding: str) -> pd.DataFrame:
    return ablation[(ablation["config"] == config) & (ablation["decoding"] == decoding)]


def _rate(claim_id: str, arm: pd.DataFrame, events: str, trials: str, what: str) -> Measured:
    k, n = int(arm[events].sum()), int(arm[trials].sum())
    if n == 0:
        return Measured(claim_id, math.nan, 0, note=f"{what}: no samples")
    low, high = wilson(k, n)
    per_seed = (arm[events] / arm[trials].where(arm[trials] > 0)).dropna()
    low, high = min(low, per_seed.min()), max(high, per_seed.max())
    seeds = ", ".join(f"{s}: {e}/{t}" for s, e, t in zip(arm["seed"], arm[events], arm[trials]))
    # runs: the seeds with evidence (a seed without a trial, e.g. no valid walk, is no run)
    return Measured(claim_id, k / n, int(per_seed.count()), low=low, high=high,
                    note=f"{what}: {k}/{n} pooled over {len(arm)} seed(s) (per seed {seeds}); interval: 95% Wilson "
                         f"joined with the per-seed range")  # fmt: skip


def _difference(claim_id: str, a: pd.DataFrame, b: pd.DataFrame, events: str, trials: str, what: str) -> Measured:
    ka, na, kb, nb = (int(a[events].sum()), int(a[trials].sum()), int(b[events].sum()), int(b[trials].sum()))
    if na == 0 or nb == 0:
        return Measured(claim_id, math.nan, 0, note=f"{what}: an arm has no samples ({ka}/{na} vs {kb}/{nb})")
    spread = rate_difference(ka, na, kb, nb)
    rate_a = a.set_index("seed")[events] / a.set_index("seed")[trials].where(lambda t: t > 0)
    rate_b = b.set_index("seed")[events] / b.set_index("seed")[trials].where(lambda t: t > 0)
    paired = (rate_a - rate_b).dropna()  # seeds where both arms have evidence
    low = min(spread.low, paired.min()) if len(paired) else spread.low
    high = max(spread.high, paired.max()) if len(paired) else spread.high
    per_seed = ", ".join(f"{s}: {v:+.3f}" for s, v in paired.items())
    return Measured(claim_id, spread.mean, len(paired), low=low, high=high,
                    note=f"{what}: {ka}/{na} vs {kb}/{nb}, difference {spread.mean:+.3f} (per seed {per_seed}); "
                         f"interval: 95% Newcombe joined with the per-seed differences")  # fmt: skip


def _mmd_difference(claim_id: str, worse: pd.DataFrame, better: pd.DataFrame, reference: pd.DataFrame,
                    what: str, seeds: list[int]) -> Measured:  # fmt: skip
    """MMD^2(worse) - MMD^2(better) against the held-out circuits (one bandwidth, the median distance within them),
    pooled over ``seeds``; NaN unless every seed has ``REALISM_MIN_VALID`` valid samples in both arms. Interval: a
    95% percentile bootstrap over the valid samples (each arm resampled with replacement, seeded) joined with the
    per-seed differences."""
    ref = reference[_F].to_numpy(float)
    counts = {s: (int((worse["seed"] == s).sum()), int((better["seed"] == s).sum())) for s in seeds}
    listed = ", ".join(f"{s}: {a} and {b}" for s, (a, b) in counts.items())
    if not seeds or len(ref) < 2 or min(min(c) for c in counts.values()) < REALISM_MIN_VALID:
        return Measured(claim_id, math.nan, 0,
                        note=f"{what}: needs {REALISM_MIN_VALID} valid samples per arm and seed, has "
                             f"{listed or 'none'} ({len(ref)} held-out circuits)")  # fmt: skip
    x, y = worse[_F].to_numpy(float), better[_F].to_numpy(float)
    h = median_bandwidth(ref)
    value = mmd2(x, ref, h) - mmd2(y, ref, h)
    per_seed = {}
    for seed in seeds:
        xs, ys = worse[worse["seed"] == seed][_F].to_numpy(float), better[better["seed"] == seed][_F].to_numpy(float)
        per_seed[seed] = mmd2(xs, ref, h) - mmd2(ys, ref, h)
    rng = np.random.default_rng(0)
    boot = [mmd2(x[rng.integers(0, len(x), len(x))], ref, h) - mmd2(y[rng.integers(0, len(y), len(y))], ref, h)
            for _ in range(_BOOTSTRAP)]  # fmt: skip
    b_low, b_high = np.percentile(boot, [2.5, 97.5])
    low, high = min(b_low, *per_seed.values()), max(b_high, *per_seed.values())
    listed = ", ".join(f"{s}: {d:+.4f}" for s, d in per_seed.items())
    return Measured(claim_id, value, len(per_seed), low=float(low), high=float(high),
                    note=f"{what}: MMD^2 {mmd2(x, ref, h):.4f} vs {mmd2(y, ref, h):.4f} ({len(x)} and {len(y)} valid "
                         f"samples, {len(ref)} held-out circuits); per seed {listed}; interval: 95% bootstrap over "
                         f"the valid samples [{b_low:+.4f}, {b_high:+.4f}] joined with the per-seed "
                         f"differences")  # fmt: skip


def _both_settings(verbatim: Measured, canonical: Measured) -> Measured:
    """A ">=" claim that passes only when both port settings pass: the smaller value, lower and upper bound (holds
    iff both intervals clear the threshold, fails iff either lies below it), the smaller run count."""
    if not (math.isfinite(verbatim.value) and math.isfinite(canonical.value)):
        return replace(verbatim, value=math.nan, note=f"{verbatim.note}; with ports by class: {canonical.note}")
    return replace(verbatim, value=min(verbatim.value, canonical.value), runs=min(verbatim.runs, canonical.runs),
                   low=min(verbatim.low, canonical.low), high=min(verbatim.high, canonical.high),
                   note=f"ports verbatim {verbatim.value:.3f} ({verbatim.note}); ports by class {canonical.value:.3f} "
                        f"({canonical.note}); the smaller decides, with the smaller bounds")  # fmt: skip


def _with_classifier_accuracy(measured: Measured, reference: pd.DataFrame) -> Measured:
    """C9's note extended by the classifier's own accuracy on the held-out real circuits (how far its types can be
    trusted)."""
    settings = [(c, label) for c, label in (("predicted", "verbatim"), ("predicted_canonical", "by class"))
                if c in reference]  # fmt: skip
    if not len(reference) or not settings:
        return replace(measured, note=f"{measured.note}; the classifier on held-out circuits: not measured")
    accuracy = ", ".join(f"{(reference[c] == reference['type']).mean():.3f} {label}" for c, label in settings)
    return replace(measured, note=f"{measured.note}; the classifier on the {len(reference)} held-out real circuits: "
                                  f"{accuracy}")  # fmt: skip


def _permuted_types(valid: pd.DataFrame) -> pd.DataFrame:
    """Per seed (rows of the ablation table's shape): the number of the valid samples whose predicted type would
    match their requested type if the requests were randomly permuted within the seed, in expectation over every
    permutation (sum over types of n_requested(t) * n_predicted(t) / n), rounded to a count: the same circuits
    scored against shuffled requests. Treated as an independent arm by the difference's interval, which only
    widens it (the expectation has no sampling error of its own)."""
    rows = []
    for s, group in valid.groupby("seed", sort=True):
        requested = group["type"].value_counts()
        predicted = group["predicted"].value_counts()
        expected = float((requested * predicted.reindex(requested.index, fill_value=0)).sum()) / len(group)
        rows.append({"seed": s, "type_ok": round(expected), "valid": len(group)})
    return pd.DataFrame(rows, columns=["seed", "type_ok", "valid"])


def corrupted_walks(walks: pd.DataFrame, rep: str, seed: int) -> pd.DataFrame:
    """The data's circuits' first walks (``walk == 0``, every split) of representation ``rep``, each with one token
    replaced by another token of its kind (bipartite: net, edge or device; device-pin: net, device or pin; never the
    type token or ``TRUNCATE``), position and token drawn from a generator seeded by ``[seed, 41]``. One row per
    circuit (``id``): ``valid``, the damaged walk passes :func:`.evaluation.decode_checked` (the samples' test: levels
    1-4 of the representation's check, then the designer rule); ``lenient``, it passes while its decoded circuit fails
    the common netlist check :func:`.erc.netlist_fault` (the check let a faulty circuit through; the check K4). C4's
    null counts ``valid``: a valid damaged walk whose circuit passes the common check describes another valid circuit
    (the representation's robustness), one that fails it is the check's leniency."""
    vocab = experiment.vocabulary(rep)
    kind = kind_of if rep == "bipart" else devpin.devpin_kind
    kinds = {t: kind(t) for t in vocab.tokens}
    pools = {k: [t for t in vocab.tokens if kinds[t] == k] for k in set(kinds.values())}
    rng = np.random.default_rng([seed, 41])
    first = walks[walks["walk"] == 0].sort_values("id")
    rows = []
    for ident, text in zip(first["id"], first["tokens"]):
        tokens = text.split()
        spots = [i for i, t in enumerate(tokens) if kinds.get(t) not in (None, "end", "type")]
        i = spots[int(rng.integers(len(spots)))]
        pool = [t for t in pools[kinds[tokens[i]]] if t != tokens[i]]
        tokens[i] = pool[int(rng.integers(len(pool)))]
        level, circuit = decode_checked(tokens, rep)
        valid = level == 0
        rows.append({"id": ident, "valid": valid, "lenient": bool(valid and erc.netlist_fault(circuit))})
    return pd.DataFrame(rows, columns=["id", "valid", "lenient"])


def corrupted_validity(walks: pd.DataFrame, rep: str, seed: int) -> tuple[int, int]:
    """(valid, walks) of :func:`corrupted_walks`: the damaged data walks that pass the representation's check."""
    damaged = corrupted_walks(walks, rep, seed)
    return int(damaged["valid"].sum()), len(damaged)


def _leniency_counts(walks: dict[str, pd.DataFrame], seeds: list[int]) -> dict[str, list[pd.DataFrame]] | None:
    """C4's null and K4, no model: per representation, :func:`corrupted_walks` for each of ``seeds``; None without
    seeds or walks."""
    if not seeds or any(not len(walks[r]) for r in ("bipart", "devpin")):
        return None
    return {r: [corrupted_walks(walks[r], r, s) for s in seeds] for r in ("bipart", "devpin")}


def leniency_by_circuit(null: dict[str, list[pd.DataFrame]], column: str = "lenient") -> pd.Series:
    """Per circuit (the ids both representations have): the share of its damaged bipartite walks (one per draw)
    flagged ``column`` minus that of its damaged device-pin walks. The draws damage the same circuits, so the circuit
    is the unit: the mean of this series is the null, and its t interval over circuits the null's interval (a cluster
    interval by circuit; pooling the draws as independent walks made it too narrow)."""
    shares = {
        r: pd.concat(frames).groupby("id")[column].mean() for r, frames in null.items() if frames and len(frames[0])
    }
    if set(shares) != {"bipart", "devpin"}:
        return pd.Series(dtype=float)
    ids = shares["bipart"].index.intersection(shares["devpin"].index)
    return (shares["bipart"].loc[ids].astype(float) - shares["devpin"].loc[ids].astype(float)).sort_index()


def welch_interval(a, b, confidence: float = 0.95) -> tuple[float, float, float]:
    """mean(a) - mean(b) with Welch's t interval (unequal variances, Welch-Satterthwaite degrees of freedom), for
    two samples that are not paired; NaN bounds when a side has fewer than 2 values, the point itself when both
    sides have no spread."""
    from scipy import stats

    x, y = (np.asarray([v for v in side if np.isfinite(v)], dtype=float) for side in (a, b))
    if not len(x) or not len(y):
        return math.nan, math.nan, math.nan
    d = float(x.mean() - y.mean())
    if len(x) < 2 or len(y) < 2:
        return d, math.nan, math.nan
    vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    if vx + vy == 0:
        return d, d, d
    df = (vx + vy) ** 2 / (vx**2 / (len(x) - 1) + vy**2 / (len(y) - 1))
    half = float(stats.t.ppf(0.5 + confidence / 2, df) * math.sqrt(vx + vy))
    return d, d - half, d + half


def beyond_leniency(claim_id: str, a: pd.DataFrame, b: pd.DataFrame, null: dict[str, list[pd.DataFrame]] | None,
                    what: str) -> Measured:  # fmt: skip
    """C4 (issue 41): the validity difference of arms ``a`` - ``b`` (pooled over seeds) minus the harder bar of its
    null and 0: D - max(N, 0). The null is what single-token damage passes, with no model (:func:`corrupted_walks`,
    one draw per seed): per circuit, the share of its damaged bipartite walks that pass their representation's check,
    minus the same for its device-pin walks (:func:`leniency_by_circuit` of ``valid``); its interval is a t interval
    over circuits (the draws damage the same circuits). It counts a check's leniency and the representation's
    robustness to damage alike (a damaged walk that passes may describe another valid circuit); that a check lets no
    faulty circuit through is the check K4 (:func:`leniency_check`). The null is no run of the model, so nothing
    pairs the two: the interval is the union of the MOVER interval built from D's Newcombe interval (arms
    independent) and the null's interval (clipped at 0 like its value), and Welch's t interval of the per-seed
    differences against the per-seed bars max(n_s, 0). Runs: the seeds with evidence on the model's side. The note
    keeps the difference alone with its interval and the per-draw counts."""
    former = _difference(claim_id, a, b, "valid", "samples", what)
    if null is None:
        return Measured(claim_id, math.nan, 0, note=f"{former.note}; the damaged-walk null: no walks")
    if not math.isfinite(former.value):
        return replace(former, note=f"{former.note}; the damaged-walk null not compared")
    passing = leniency_by_circuit(null, "valid")
    if not len(passing):
        return Measured(claim_id, math.nan, 0, note=f"{former.note}; the damaged-walk null: no common circuits")
    d1 = rate_difference(int(a["valid"].sum()), int(a["samples"].sum()), int(b["valid"].sum()), int(b["samples"].sum()))
    d2 = t_interval(passing.tolist())
    d2_low, d2_high = (d2.low, d2.high) if math.isfinite(d2.low) else (d2.mean, d2.mean)
    bar, bar_low, bar_high = max(d2.mean, 0.0), max(d2_low, 0.0), max(d2_high, 0.0)
    value = d1.mean - bar
    low = value - math.sqrt((d1.mean - d1.low) ** 2 + (bar_high - bar) ** 2)
    high = value + math.sqrt((d1.high - d1.mean) ** 2 + (bar - bar_low) ** 2)
    rate_a = a.set_index("seed")["valid"] / a.set_index("seed")["samples"].where(lambda t: t > 0)
    rate_b = b.set_index("seed")["valid"] / b.set_index("seed")["samples"].where(lambda t: t > 0)
    per_seed = (rate_a - rate_b).dropna()
    draws = list(zip(null["bipart"], null["devpin"]))
    bars = [max(float(fb["valid"].mean()) - float(fd["valid"].mean()), 0.0) for fb, fd in draws]
    _, w_low, w_high = welch_interval(per_seed.tolist(), bars)
    if math.isfinite(w_low):
        low, high = min(low, w_low), max(high, w_high)
    listed = "; ".join(
        f"{r} " + ", ".join(f"{int(f['valid'].sum())} valid/{len(f)} ({int(f['lenient'].sum())} lenient)" for f in c)
        for r, c in null.items()
    )
    return Measured(claim_id, value, int(per_seed.count()), low=low, high=high,
                    note=f"difference minus max(null, 0): {d1.mean:+.3f} - max({d2.mean:+.3f}, 0) = {value:+.3f}; "
                         f"interval: the MOVER interval of D's Newcombe interval [{d1.low:+.3f}, {d1.high:+.3f}] and "
                         f"the null's t interval over {len(passing)} circuits [{d2_low:+.3f}, {d2_high:+.3f}] joined "
                         f"with Welch's t interval of the per-seed differences against the per-seed bars max(null, 0) "
                         f"{[round(x, 3) for x in bars]} (not paired: the null is no run of the model); the difference "
                         f"alone {former.value:+.3f} [{former.low:+.3f}, {former.high:+.3f}] ({former.note}); null "
                         f"(what single-token damage passes, no model: the data's circuits with one token replaced by "
                         f"another of its kind, the damaged walks that pass their representation's check, bipart - "
                         f"devpin per circuit; per draw {listed}): {d2.mean:+.3f}; of those, passing while the decoded "
                         f"circuit fails the common netlist check (the check K4): "
                         f"{leniency_by_circuit(null).mean():+.3f} bipart - devpin per circuit")  # fmt: skip


def leniency_check(null: dict[str, list[pd.DataFrame]] | None) -> Measured:
    """K4: each representation's check implies the common netlist check on the data: the largest share, over the
    representations and draws of :func:`corrupted_walks`, of the damaged data walks that pass their representation's
    check while their decoded circuit fails :func:`.erc.netlist_fault` (0 unless a check is lax)."""
    if null is None or any(not frames or not len(frames[0]) for frames in null.values()):
        return Measured("K4", math.nan, 0, note="no damaged data walks")
    shares = {r: [float(f["lenient"].mean()) for f in frames] for r, frames in null.items()}
    listed = "; ".join(
        f"{r} " + ", ".join(f"{int(f['lenient'].sum())} of {int(f['valid'].sum())} passing/{len(f)}" for f in frames)
        for r, frames in null.items()
    )
    return Measured("K4", max(max(v) for v in shares.values()), sum(len(v) for v in shares.values()),
                    note=f"damaged data walks that pass their check while the decoded circuit fails the common netlist "
                         f"check (ERC levels 2-4 on the netlist, the designer rule), per draw: {listed}")  # fmt: skip


def _with_null(measured: Measured, null: float, what: str) -> Measured:
    return replace(measured, null=null, note=f"{measured.note}; {what}")


def _held_out_match(walks: pd.DataFrame, n: int) -> str:
    """The index-free n-gram test of held-out walks against the training walks (how often it matches a circuit the
    model never saw)."""
    train = walks[walks["split"] == "train"]["tokens"]
    held = walks[walks["split"] != "train"]["tokens"]
    if not len(train) or not len(held):
        return "held-out walks against training walks: no walks"
    ends = {walk_ends(without_indices(w.split()), n) for w in train}
    hits = sum(walk_ends(without_indices(w.split()), n) in ends for w in held)
    return (
        f"held-out walks matched against the training walks by the same test: {hits}/{len(held)} = "
        f"{hits / len(held):.3f}"
    )


def _with_canonical(verbatim: Measured, canonical: Measured) -> Measured:
    """The verbatim-port measurement (the reference's setting, which decides), its note extended by the same
    measurement with ports read by class."""
    return replace(verbatim, note=f"{verbatim.note}; with ports by class: {canonical.value:.3f} ({canonical.note})")


def _checks(metrics: pd.DataFrame, circuits: pd.DataFrame, walks: dict[str, pd.DataFrame]) -> list[Measured]:
    out = []
    grammar = metrics[(metrics["decoding"] == "grammar") & metrics["terminated"]]
    ok = int((~grammar["erc"].between(1, 4)).sum())  # the grammar guarantees levels 1-4, not the designer rule
    out.append(Measured("K1", ok / len(grammar) if len(grammar) else math.nan, len(grammar),
                        note=f"{ok}/{len(grammar)} terminated grammar-decoded walks pass ERC levels 1-4"))  # fmt: skip
    train = circuits[circuits["split"] == "train"].set_index("id")
    for claim_id, rep in (("K2", "bipart"), ("K3", "devpin")):
        first = walks[rep][(walks[rep]["split"] == "train") & (walks[rep]["walk"] == 0)].set_index("id")["tokens"]
        good = 0
        for ident in train.index.intersection(first.index):  # a circuit whose walks were all too long counts as failed
            tokens = first[ident].split()
            c = train.loc[ident]
            original = parse(c.netlist, c.path, duplicate_names="renumber")
            if rep == "bipart":
                back = serialize.circuit_of(tokens) if accepts(tokens)[0] else None
            else:
                back = devpin.decode(tokens) if devpin.erc_level(tokens) == 0 else None
            good += back is not None and isomorphic(graph_of(back), graph_of(original))
        what = "accepted by the grammar and decoded" if rep == "bipart" else "decoded"
        n = len(train) if len(first) else 0
        out.append(Measured(claim_id, good / n if n else math.nan, n,
                            note=f"{good}/{n} training circuits' first {rep} walks {what} back to an isomorphic "
                                 f"circuit ({n - len(train.index.intersection(first.index))} without a walk within "
                                 f"the context)"))  # fmt: skip
    return out


def measure_claims(
    ablation: pd.DataFrame,
    metrics: pd.DataFrame,
    reference: pd.DataFrame,
    circuits: pd.DataFrame,
    walks: dict[str, pd.DataFrame],
    main: dict,
) -> list[Measured]:
    cfg, dec = main["config"], main["decoding"]
    plain = cfg.replace("-rename", "-norename") if cfg.endswith("-rename") else cfg
    devpin_arm = _arm(ablation, "devpin-type-norename", "free")
    main_arm = _arm(ablation, cfg, dec)
    norename = _arm(ablation, plain, dec)
    random_arm = _arm(ablation, "random", "grammar")
    if not len(reference) or (reference["spice"] == "unavailable").any():
        real = "unavailable"
    else:
        real = f"{(reference['spice'] == 'converged').mean():.3f} converge"
    electrical = _rate("C2", main_arm, "spice_converged", "spice_simulated", f"simulated valid circuits of {cfg} {dec}")
    random_sims = int(random_arm["spice_simulated"].sum()) if len(random_arm) else 0
    random_rate = (f"{int(random_arm['spice_converged'].sum())}/{random_sims}" if random_sims
                   else "none simulated")  # fmt: skip
    random_converged = (int(random_arm["spice_converged"].sum()) / random_sims) if random_sims else math.nan
    electrical = replace(electrical, null=random_converged,
                         note=f"{electrical.note}; held-out real circuits under the same models and bias: {real}; "
                              f"null (the random baseline's valid circuits): {random_rate}")  # fmt: skip
    if "unavailable" in set(metrics["spice"]):
        electrical = Measured("C2", math.nan, 0, note="ngspice is not installed: electrical validity not measured")
    main_valid = metrics[(metrics["config"] == cfg) & (metrics["decoding"] == dec) & metrics["valid"]]
    random_valid = metrics[(metrics["config"] == "random") & metrics["valid"]]
    realism_seeds = sorted(set(main_arm["seed"]) | set(random_arm["seed"]))
    validity = _rate("C1", main_arm, "valid", "samples", f"validity of {cfg} {dec} (ERC levels 1-4 and level 5)")
    structural = main_arm.assign(structural=main_arm["valid"] + main_arm["erc5"])
    paper = _rate("C1", structural, "structural", "samples", "levels 1-4 only")
    random_validity = _rate("C1", random_arm, "valid", "samples", "random logits + grammar")
    validity = replace(validity, null=random_validity.value,
                       note=f"{validity.note}; the paper's definition (levels 1-4 only, the designer rule left out): "
                            f"{paper.value:.3f} (paper 0.978; {paper.note}); null (random logits under the grammar): "
                            f"{random_validity.value:.3f} ({random_validity.note})")  # fmt: skip
    permuted = _permuted_types(main_valid)
    permuted_accuracy = (permuted["type_ok"].sum() / permuted["valid"].sum()) if permuted["valid"].sum() else math.nan
    seeds = sorted(set(ablation["seed"]))
    damage = _leniency_counts(walks, seeds)
    free_arm = _arm(ablation, cfg, "free")
    grammar_vs_free = _difference("C3", main_arm, free_arm, "valid", "samples", f"validity of {cfg} grammar vs free")
    shares = ", ".join(f"{name} {int(a['terminated'].sum())}/{int(a['samples'].sum())}"
                       for name, a in (("grammar", main_arm), ("free", free_arm)))  # fmt: skip
    grammar_vs_free = replace(grammar_vs_free, note=f"{grammar_vs_free.note}; terminated: {shares}")
    memorisation = _difference("C8", main_arm, norename, "memorised_topology_valid", "valid",
                               f"index-free 10-gram memorisation among valid walks, {cfg} vs {plain} "
                               f"({dec})")  # fmt: skip
    memorisation = replace(memorisation, note=f"{memorisation.note}; {_held_out_match(walks['bipart'], 10)}")
    return [
        *_checks(metrics, circuits, walks),
        leniency_check(damage),
        validity,
        electrical,
        grammar_vs_free,
        beyond_leniency(
            "C4",
            _arm(ablation, "bipart-type-norename", "free"),
            devpin_arm,
            damage,
            "validity of bipart-type-norename free vs devpin-type-norename free (both without a grammar)",
        ),  # fmt: skip
        _difference(
            "C5",
            _arm(ablation, "bipart-type-norename", "grammar"),
            devpin_arm,
            "valid",
            "samples",
            "validity of bipart-type-norename grammar vs devpin-type-norename free (representation and grammar)",
        ),  # fmt: skip
        _difference(
            "C6", main_arm, devpin_arm, "novel", "samples", f"valid and novel of {cfg} {dec} vs devpin-type-norename"
        ),  # fmt: skip
        _with_canonical(
            _difference("C7", main_arm, norename, "novel", "valid", f"novel among valid, {cfg} vs {plain} ({dec})"),
            _difference("C7", main_arm, norename, "novel_canonical", "valid", "ports by class"),
        ),
        memorisation,
        _with_null(
            _with_classifier_accuracy(
                _both_settings(
                    _rate("C9", main_arm, "type_ok", "valid", f"type accuracy of {cfg} {dec}"),
                    _rate("C9", main_arm, "type_ok_canonical", "valid", "classifier reading ports by class"),
                ),
                reference,
            ),
            permuted_accuracy,
            f"null (the same valid samples against their requested types permuted per seed, C10's null): "
            f"{permuted_accuracy:.3f}",
        ),
        _difference(
            "C10",
            main_arm,
            permuted,
            "type_ok",
            "valid",
            f"type accuracy of {cfg} {dec} vs the same valid samples scored against permuted requested types",
        ),  # fmt: skip
        _mmd_difference(
            "C11", random_valid, main_valid, reference, f"realism: random logits vs {cfg} {dec}", realism_seeds
        ),  # fmt: skip
    ]
