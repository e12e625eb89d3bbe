"""Paper 09's measured values for the claims and checks of ``config/claims/noisy_divergence.yaml``.

Divergence claims compare rates of two arms of runs (same shape, QK-norm choice and learning rate, differing in one
factor) by the difference ``p_a - p_b`` with Newcombe's interval: 0 of n against 0 of n gives an interval around 0,
so the verdict is inconclusive, with the runs in the note; the intervals take runs as independent, although the runs
of one seed share their initialisation across settings (the notes say so). Mechanism proxies compare the largest
attention logit (on the clean probe batch) of two arms seed by seed (same initialisation and window seed), over the
seeds where neither run diverged: the mean over seeds of ``log(a / b)`` with its t interval. The classifier claim
reads the leave-one-seed-out balanced accuracy with its bootstrap interval over seeds, NaN when the classifier was
skipped, with the same classifier's balanced accuracy on the runs that did not diverge as its null. Checks read the
injection statistics of every noise setting.

Arms are found from the config's ``comparisons``: the deep and wide shapes, the reference noise setting (e.g.
insert-k5-a0.5-d0.5), the base learning-rate multiplier and the model sizes (``scale_shapes``, smallest to
largest); the raised learning rate is the largest multiplier trained. Insert and overwrite are compared at equal
shares of noise in the training stream (``noise.stream_noise_share``; insert at alpha 0.5 and d 0.5 puts 1/3 of
the stream's tokens as noise, overwrite at the same alpha 1/4, so the overwrite arm is the setting whose nominal
share matches the reference's within ``SHARE_TOLERANCE``), not at equal alpha. Model scale (D13) is the rate gap
between the largest and the smallest size, as an absolute value with Newcombe's interval folded at 0, and its null
is the same gap of the clean runs. Missing arms give NaN (inconclusive), never a value that passes.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, rate_difference, t_interval, wilson

from .noise import CLEAN, NoiseSetting, parse_setting, stream_noise_share

__all__ = ["SHARE_TOLERANCE", "equal_share_overwrite", "measure_claims"]

SHARE_TOLERANCE = 0.005  # nominal stream noise shares this close count as equal (rounding of alpha in names)


def _arm(runs: pd.DataFrame, shape: str, qk: bool, lr: float, settings) -> pd.DataFrame:
    settings = [settings] if isinstance(settings, str) else list(settings)
    return runs[
        (runs["shape"] == shape)
        & (runs["qk_norm"] == qk)
        & (runs["lr_multiplier"] == lr)
        & runs["setting"].isin(settings)
    ]


def _rate_claim(claim_id: str, a: pd.DataFrame, b: pd.DataFrame, what_a: str, what_b: str) -> Measured:
    ka, na, kb, nb = int(a["diverged"].sum()), len(a), int(b["diverged"].sum()), len(b)
    spread = rate_difference(ka, na, kb, nb)
    note = f"{what_a} {ka}/{na} vs {what_b} {kb}/{nb}"
    if na == 0 or nb == 0:
        return Measured(claim_id, math.nan, min(na, nb), note=note + ": an arm has no runs")
    return Measured(
        claim_id,
        spread.mean,
        spread.runs,
        note=f"{note}; {spread.method}, runs taken as independent",
        low=spread.low,
        high=spread.high,
    )


def _paired_log_ratio(claim_id: str, a: pd.DataFrame, b: pd.DataFrame, what: str) -> Measured:
    """Mean over seeds of log(max_attn_logit of a / of b), t interval; runs = seeds where both runs exist, have a
    finite proxy and neither diverged (a diverged run's proxy is read at its onset, the other's at the end)."""
    x = a[~a["diverged"]].set_index("seed")["max_attn_logit"].astype(float)
    y = b[~b["diverged"]].set_index("seed")["max_attn_logit"].astype(float)
    ratio = np.log(x / y).replace([np.inf, -np.inf], np.nan).dropna()
    dropped = len(set(a["seed"]) & set(b["seed"])) - len(ratio)
    spread = t_interval(ratio.tolist())
    note = f"{what}: mean log ratio of the max attention logit over {spread.runs} seeds"
    if dropped > 0:
        note += f" ({dropped} seed(s) left out: a run diverged or has no proxy)"
    if spread.runs:
        per_seed = ", ".join(f"{seed}: {math.exp(r):.3g}" for seed, r in ratio.items())
        note += f" (geometric-mean ratio {math.exp(spread.mean):.3g}; per seed {per_seed})"
    return measured_from_spread(claim_id, spread, note)


def _noted(m: Measured, extra: str) -> Measured:
    return replace(m, note=f"{m.note}; {extra}" if m.note else extra)


def _setting(name: str) -> NoiseSetting:
    return parse_setting(name)


def _variant(settings: list[str], **changes) -> list[str]:
    """The settings that differ from the reference only in the given fields (by name)."""
    out = []
    for name in settings:
        if name == CLEAN:
            continue
        s = _setting(name)
        if all(getattr(s, k) == v for k, v in changes.items()):
            out.append(name)
    return out


def equal_share_overwrite(settings: list[str], ref: NoiseSetting) -> list[str]:
    """The overwrite settings of the reference's vocabulary and document share whose stream noise share equals the
    reference's (within :data:`SHARE_TOLERANCE`)."""
    target = stream_noise_share(ref)
    return [
        name
        for name in _variant(settings, kind="overwrite", vocab=ref.vocab, doc_fraction=ref.doc_fraction)
        if abs(stream_noise_share(_setting(name)) - target) < SHARE_TOLERANCE
    ]


def _measured_shares(stats: pd.DataFrame, names: list[str]) -> str:
    """The measured stream noise shares of settings (mean over placement seeds), for a note."""
    if not len(stats) or "noise_share" not in stats:
        return "measured shares unavailable"
    shares = stats.groupby("setting")["noise_share"].mean()
    return ", ".join(f"{n} {shares[n]:.4f}" if n in shares else f"{n} n/a" for n in names)


def _scale_claim(claim_id: str, runs: pd.DataFrame, shapes: list[str], ref: str, base: float) -> Measured:
    """|p(largest size) - p(smallest size)| under the reference noise (no QK-norm, base rate), Newcombe's interval
    folded at 0; null: the same gap of the clean runs."""
    if len(shapes) < 2:
        return Measured(claim_id, math.nan, 0, note="fewer than two model sizes configured")
    small, large = shapes[0], shapes[-1]

    def arm(shape, setting):
        return _arm(runs, shape, False, base, setting)

    a, b = arm(large, ref), arm(small, ref)
    ka, na, kb, nb = int(a["diverged"].sum()), len(a), int(b["diverged"].sum()), len(b)
    ca, cb = arm(large, CLEAN), arm(small, CLEAN)
    note = f"{ref}: {large} {ka}/{na} vs {small} {kb}/{nb}; clean (null): {large} {int(ca['diverged'].sum())}/{len(ca)}"
    note += f" vs {small} {int(cb['diverged'].sum())}/{len(cb)}"
    if not (na and nb):
        return Measured(claim_id, math.nan, min(na, nb), note=note + ": an arm has no runs")
    spread = rate_difference(ka, na, kb, nb)
    low, high = (
        (0.0, max(abs(spread.low), abs(spread.high)))
        if spread.low <= 0 <= spread.high
        else tuple(sorted((abs(spread.low), abs(spread.high))))
    )
    null = (
        abs(ca["diverged"].mean() - cb["diverged"].mean()) if len(ca) and len(cb) else math.nan
    )  # nothing to beat without clean runs at both sizes
    return Measured(
        claim_id,
        abs(spread.mean),
        spread.runs,
        note=f"{note}; signed gap {spread.mean:+.3g}, {spread.method} [{spread.low:.3g}, {spread.high:.3g}] "
        "folded at 0, runs taken as independent",
        low=low,
        high=high,
        null=float(null),
    )


def _accuracy_claim(claim_id: str, clf: pd.DataFrame, task: str, null_task: str) -> Measured:
    """The ``task`` classifier's balanced accuracy; null: the ``null_task`` classifier's (the same features told apart
    on runs without a divergence), NaN when it was skipped, so that a holds with no null to beat is inconclusive."""
    row, null_row = clf[clf["task"] == task], clf[clf["task"] == null_task]
    null_ok = len(null_row) and null_row["status"].iloc[0] == "ok"
    null = float(null_row["balanced_accuracy"].iloc[0]) if null_ok else math.nan
    null_note = (
        f"null ({null_task}: the same classifier on runs that did not diverge, {int(null_row['n_class0'].iloc[0])} "
        f"noise-trained vs {int(null_row['n_class1'].iloc[0])} raised-LR): balanced accuracy {null:.3f} "
        f"[{float(null_row['low'].iloc[0]):.3f}, {float(null_row['high'].iloc[0]):.3f}]"
        if null_ok
        else f"null ({null_task}) skipped: "
        + (null_row["reason"].iloc[0] if len(null_row) else f"no {null_task} classifier row")
    )
    if row.empty or row["status"].iloc[0] != "ok":
        reason = row["reason"].iloc[0] if len(row) else f"no {task} classifier row"
        return Measured(
            claim_id,
            math.nan,
            0 if row.empty else int(row["n"].iloc[0]),
            note=f"classifier skipped: {reason}; {null_note}",
            null=null,
        )
    r = row.iloc[0]
    return Measured(
        claim_id,
        float(r["balanced_accuracy"]),
        int(min(r["n_class0"], r["n_class1"])),
        note=f"leave-one-seed-out balanced accuracy over {int(r['folds'])} seeds ({int(r['n_class0'])} noise-induced, "
        f"{int(r['n_class1'])} LR-induced); plain accuracy {r['accuracy']:.3f}; 95% bootstrap over seeds; {null_note}",
        low=float(r["low"]),
        high=float(r["high"]),
        null=null,
    )


def measure_claims(
    runs: pd.DataFrame, stats: pd.DataFrame, clf: pd.DataFrame, throughput: pd.DataFrame, comparisons: dict
) -> list[Measured]:
    deep, wide = comparisons["deep_shape"], comparisons["wide_shape"]
    base = float(comparisons["base_lr_multiplier"])
    ref = _setting(comparisons["reference_setting"])
    high = float(runs["lr_multiplier"].max()) if len(runs) else math.nan
    trained = list(dict.fromkeys(runs["setting"]))
    base_deep = runs[(runs["shape"] == deep) & (~runs["qk_norm"]) & (runs["lr_multiplier"] == base)]
    noisy = [s for s in dict.fromkeys(base_deep["setting"]) if s != CLEAN]
    same_kind = _variant(trained, kind=ref.kind, vocab=ref.vocab, doc_fraction=ref.doc_fraction)
    alphas = sorted({_setting(s).alpha for s in same_kind if s in noisy})
    lo_alpha = [s for s in same_kind if _setting(s).alpha == alphas[0]] if alphas else []
    hi_alpha = [s for s in same_kind if _setting(s).alpha == alphas[-1]] if alphas else []
    full = _variant(trained, kind=ref.kind, vocab="full", alpha=ref.alpha, doc_fraction=ref.doc_fraction)
    overwrite = equal_share_overwrite(trained, ref)
    shares = _measured_shares(stats, [ref.name, *overwrite[:1]])

    def arm(settings, shape=deep, qk=False, lr=base):
        return _arm(runs, shape, qk, lr, settings)

    measured = [
        _rate_claim("D1", arm(noisy), arm(CLEAN), "noisy runs (all settings)", "clean runs"),
        _rate_claim(
            "D2",
            arm(hi_alpha),
            arm(lo_alpha),
            f"alpha {alphas[-1] if alphas else 'n/a'}",
            f"alpha {alphas[0] if alphas else 'n/a'}",
        )
        if len(alphas) > 1
        else Measured("D2", math.nan, 0, note="fewer than two noise ratios trained"),
        _rate_claim("D3", arm(ref.name), arm(full), ref.name, "full vocabulary"),
        _noted(
            _rate_claim("D4", arm(ref.name), arm(overwrite[:1]), ref.name, overwrite[0] if overwrite else "overwrite"),
            f"equal stream noise share: {shares}",
        ),
        _rate_claim("D5", arm(ref.name), arm(ref.name, shape=wide), f"{deep}", f"{wide}"),
        _rate_claim(
            "D8",
            arm(CLEAN, qk=True, lr=high),
            arm(CLEAN, lr=high),
            f"QK-norm at LR x{high:g}",
            f"no QK-norm at LR x{high:g}",
        )
        if high > base
        else Measured("D8", math.nan, 0, note="no raised learning rate trained"),
        _rate_claim("D7", arm(ref.name, qk=True), arm(ref.name), f"QK-norm under {ref.name}", "no QK-norm"),
        _paired_log_ratio("D9", arm(hi_alpha[:1]), arm(CLEAN), f"{hi_alpha[0] if hi_alpha else 'n/a'} vs clean"),
        _paired_log_ratio("D10", arm(ref.name), arm(full[:1]), f"{ref.name} vs full vocabulary"),
        _noted(
            _paired_log_ratio(
                "D11", arm(ref.name), arm(overwrite[:1]), f"{ref.name} vs {overwrite[0] if overwrite else 'overwrite'}"
            ),
            f"equal stream noise share: {shares}",
        ),
        _accuracy_claim("D12", clf, "onset", "null"),
        _scale_claim("D13", runs, list(comparisons.get("scale_shapes", [])), ref.name, base),
    ]
    lr_runs = arm(CLEAN, lr=high) if high > base else arm([])
    k, n = int(lr_runs["diverged"].sum()), len(lr_runs)
    low, hi = wilson(k, n)
    measured.append(
        Measured(
            "D6", k / n, n, note=f"{k}/{n} clean runs at LR x{high:g} diverged; 95% Wilson interval", low=low, high=hi
        )
        if n
        else Measured("D6", math.nan, 0, note="no clean runs at a raised learning rate")
    )
    if len(throughput) and "gemm_model_flops_per_s" in throughput:
        share = throughput["model_flops_per_s"] / throughput["gemm_model_flops_per_s"]
        spread = float(share.std(ddof=1)) if len(share) > 1 else None  # over jobs: a margin within it decides nothing
        measured.append(
            Measured(
                "T1",
                float(share.median()),
                len(share),
                note="median over training jobs of model FLOP/s over the GEMM rate at the model's "
                f"matrix sizes (jobs: {', '.join(f'{s:.3f}' for s in share)}); noise: their standard deviation",
                noise=spread,
            )
        )
    else:
        measured.append(Measured("T1", math.nan, 0, note="no throughput measured"))
    measured += _checks(stats)
    return measured


def _checks(stats: pd.DataFrame) -> list[Measured]:
    n = len(stats)
    if not n:
        return [Measured(c, math.nan, 0, note="no noise setting injected") for c in ("C1", "C2", "C3", "C4", "C5")]
    docs_off = np.maximum(
        (stats["docs_noised"] - stats["docs_expected"]).abs(), (stats["docs_with_noise"] - stats["docs_positive"]).abs()
    )
    testable = stats["uniform_p"].dropna()
    return [
        Measured(
            "C1",
            float(stats["count_error_max"].max(skipna=False)),
            n,
            note=f"largest |noise tokens - expected| per document (round(alpha n/(1-alpha)) inserted or round(alpha n) "
            f"overwritten in a chosen document, 0 elsewhere) over {n} (setting, placement seed) streams",
        ),
        Measured(
            "C2",
            float(docs_off.max()),
            n,
            note="largest of |documents chosen - round(doc_fraction N)| and |documents with noise in the mask - "
            "chosen documents with a positive count| over settings",
        ),
        Measured(
            "C3",
            float(stats["recovered_mismatches"].sum()),
            n,
            note="tokens where the clean stream is not recovered from the noised stream and its mask",
        ),
        Measured(
            "C4",
            float((stats["outside_vocab"] + stats["eot_moved"]).sum()),
            n,
            note="noise tokens outside the noise vocabulary or on an end-of-text, plus end-of-text ids moved",
        ),
        Measured(
            "C5",
            min(1.0, len(testable) * float(testable.min())) if len(testable) else math.nan,
            len(testable),
            note=f"smallest chi-square p value of the noise ids against the uniform law on the noise vocabulary, "
            f"Bonferroni-adjusted over the {len(testable)} of {n} (setting, placement seed) streams with at least 5 "
            f"noise tokens per id (unadjusted {float(testable.min()) if len(testable) else math.nan:.3g})",
        ),
    ]
