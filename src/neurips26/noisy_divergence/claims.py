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
the stream's tokens as noise, overwrite at the same alpha and d 1/4) and, where such a setting was trained, at the
same alpha (the share of noise in a noised document: overwrite at alpha 0.5 in 2/3 of the documents); other
equal-share overwrite settings are sensitivity rows in the notes. Model scale (D13) is the difference in differences
of the rates (noisy minus clean) between the largest and the smallest size, folded at 0. Missing arms give NaN
(inconclusive), never a value that passes.

A claim that reads runs at the raised learning rate (D6, D8, and D12 through its LR-induced class) is inconclusive
(NaN, with the measured value and the count in the note) when any of those runs failed to learn (``failed_to_learn``
of runs.parquet, the pilot's rule): issue 40's second review found the quick runs at x100 collapsed to the unigram
level, and a collapsed model's divergence rate says nothing of learning-rate-induced divergence. The proxies' notes
(D9-D11) give the attention-logit level of the raised-rate clean runs that learned without diverging, leaving the
collapsed ones out.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, measured_from_spread, rate_difference, t_interval, wilson

from .noise import CLEAN, NoiseSetting, parse_setting, stream_noise_share
from .pilot import UNIGRAM_MARGIN

__all__ = ["PAPER_NOISY_RATE", "SHARE_TOLERANCE", "did_interval", "equal_share_overwrite", "measure_claims"]

SHARE_TOLERANCE = 0.005  # nominal stream noise shares this close count as equal (rounding of alpha in names)
# the paper's noisy-run divergence rate, set beside ours in D1's note (D1 measures a rate difference): a 1.3B model with
# 15% noisy data diverged in 2 of 4 seeds (Fig. 1, as the public summary gives it; the clean rate is not given there)
PAPER_NOISY_RATE = (2, 4)


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


def _noisy_rate_note(noisy: pd.DataFrame) -> str:
    """Our noisy-run divergence rate beside the paper's (D1 itself is a difference of rates, which the paper does not
    give)."""
    k, n = int(noisy["diverged"].sum()), len(noisy)
    ours = f"{k}/{n} = {k / n:.3g}" if n else "no runs"
    paper_k, paper_n = PAPER_NOISY_RATE
    return (
        f"noisy-run divergence rate: ours {ours} (every noise setting pooled), the paper's {paper_k}/{paper_n} = "
        f"{paper_k / paper_n:g} (a 1.3B model with 15% noisy data, Fig. 1 per the public summary; no clean rate given)"
    )


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
    """The overwrite settings of the reference's vocabulary whose stream noise share equals the reference's (within
    :data:`SHARE_TOLERANCE`), those also at the reference's alpha (the share of noise in a noised document) first:
    they differ from the reference in the kind of noise only."""
    target = stream_noise_share(ref)
    matched = [
        name
        for name in _variant(settings, kind="overwrite", vocab=ref.vocab)
        if abs(stream_noise_share(_setting(name)) - target) < SHARE_TOLERANCE
    ]
    return sorted(matched, key=lambda name: _setting(name).alpha != ref.alpha)


def _measured_shares(stats: pd.DataFrame, names: list[str]) -> str:
    """The measured stream noise shares of settings (mean, and range over placement seeds), for a note."""
    if not len(stats) or "noise_share" not in stats:
        return "measured shares unavailable"
    shares = stats.groupby("setting")["noise_share"].agg(["mean", "min", "max", "count"])
    return ", ".join(
        f"{n} {shares.at[n, 'mean']:.4f} ({shares.at[n, 'min']:.3f}-{shares.at[n, 'max']:.3f} over "
        f"{shares.at[n, 'count']} placement seeds)"
        if n in shares.index
        else f"{n} n/a"
        for n in names
    )


def _collapsed(m: Measured, raised: pd.DataFrame, what: str) -> Measured:
    """``m`` made inconclusive (NaN, the measured value kept in the note) when any of the raised-rate runs it reads
    failed to learn; unchanged otherwise."""
    k, n = int(raised["failed_to_learn"].sum()), len(raised)
    if not k:
        return m
    interval = f" [{m.low:.3g}, {m.high:.3g}]" if m.low is not None else ""
    return replace(
        m,
        value=math.nan,
        low=None,
        high=None,
        note=f"inconclusive: {k} of {n} {what} failed to learn (final smoothed training loss within "
        f"{UNIGRAM_MARGIN:g} nats of the clean stream's unigram entropy, the pilot's rule): a collapsed model's "
        f"divergence says nothing of learning-rate-induced divergence; measured {m.value:.3g}{interval}; {m.note}",
    )


def did_interval(counts: list[tuple[int, int]], signs: list[int], level: float = 0.95) -> tuple[float, float, float]:
    """(estimate, low, high) of sum_i sign_i k_i / n_i by the MOVER method with Wilson limits (Zou and Donner 2008;
    Newcombe's difference interval is its two-rate case): each rate's distance to its own Wilson limit, added in
    quadrature, on the side its sign sends it."""
    estimate, down, up = 0.0, 0.0, 0.0
    for (k, n), sign in zip(counts, signs):
        p = k / n
        low, high = wilson(k, n, level)
        estimate += sign * p
        down += (p - low) ** 2 if sign > 0 else (high - p) ** 2
        up += (high - p) ** 2 if sign > 0 else (p - low) ** 2
    return estimate, estimate - math.sqrt(down), estimate + math.sqrt(up)


def _scale_claim(claim_id: str, runs: pd.DataFrame, shapes: list[str], ref: str, base: float) -> Measured:
    """The difference in differences (p_noisy,L - p_clean,L) - (p_noisy,S - p_clean,S) between the largest (L) and
    smallest (S) size, reference noise, no QK-norm, base rate: the size effect on divergence beyond the clean runs'
    (their gap is subtracted: the null is inside the measurement), folded at 0 with its MOVER interval. No evidence
    (NaN) when no noisy run of either size diverged: 0 of n against 0 of n says nothing of a size effect."""
    if len(shapes) < 2:
        return Measured(claim_id, math.nan, 0, note="fewer than two model sizes configured")
    small, large = shapes[0], shapes[-1]
    arms = {
        (size, setting): _arm(runs, size, False, base, setting) for size in (large, small) for setting in (ref, CLEAN)
    }
    counts = {key: (int(a["diverged"].sum()), len(a)) for key, a in arms.items()}
    note = (
        f"{ref}: {large} {counts[large, ref][0]}/{counts[large, ref][1]} vs {small} "
        f"{counts[small, ref][0]}/{counts[small, ref][1]}; clean: {large} {counts[large, CLEAN][0]}/"
        f"{counts[large, CLEAN][1]} vs {small} {counts[small, CLEAN][0]}/{counts[small, CLEAN][1]}"
    )
    n_min = min(n for _, n in counts.values())
    if n_min == 0:
        return Measured(claim_id, math.nan, 0, note=note + ": an arm has no runs")
    if counts[large, ref][0] == 0 and counts[small, ref][0] == 0:
        return Measured(claim_id, math.nan, n_min, note=note + ": no noisy run of either size diverged")
    order = [(large, ref), (large, CLEAN), (small, ref), (small, CLEAN)]
    did, low, high = did_interval([counts[key] for key in order], [1, -1, -1, 1])
    folded = (0.0, max(abs(low), abs(high))) if low <= 0 <= high else tuple(sorted((abs(low), abs(high))))
    return Measured(
        claim_id,
        abs(did),
        n_min,
        note=f"{note}; difference in differences {did:+.3g}, 95% MOVER-Wilson interval [{low:.3g}, {high:.3g}] folded "
        "at 0, runs taken as independent",
        low=folded[0],
        high=folded[1],
    )


D12_FEATURES_NOTE = (
    "features: the attention and output logits' growth, its depth and concentration, residual RMS and gradient norm "
    "growth; the update norm's, noise mass's and noise-id embedding's growth are left out (issue 40's second review): "
    "they read the run's cell (the learning rate, whether it trained on noise) with no divergence, and the null scored "
    "1.000 with them"
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

    raised = arm(CLEAN, lr=high) if high > base else arm([])
    raised_qk = arm(CLEAN, qk=True, lr=high) if high > base else arm([])
    learned = raised[~raised["diverged"] & ~raised["failed_to_learn"]]["max_attn_logit"]
    collapsed = int(raised["failed_to_learn"].sum())
    level_note = (
        f"the attention-logit level beside divergence: clean runs at LR x{high:g} that learned reach a max attention "
        f"logit of {learned.max():.3g} (median {learned.median():.3g}) without diverging"
        if len(learned)
        else "no clean run at a raised learning rate learned without diverging: no logit level to set beside divergence"
    )
    if collapsed:
        level_note += f" ({collapsed} of {len(raised)} clean runs at LR x{high:g} failed to learn and are left out)"

    def overwrite_sensitivity(claim: Callable[[list[str]], Measured]) -> str:
        rows = [(name, claim([name])) for name in overwrite[1:]]
        return "; ".join(
            f"sensitivity, {name} (equal stream share, alpha {_setting(name).alpha:g}): {m.value:+.3g} "
            f"[{m.low if m.low is not None else math.nan:.3g}, {m.high if m.high is not None else math.nan:.3g}]"
            for name, m in rows
        )

    measured = [
        _noted(
            _rate_claim("D1", arm(noisy), arm(CLEAN), "noisy runs (all settings)", "clean runs"),
            _noisy_rate_note(arm(noisy)),
        ),
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
            "; ".join(
                x
                for x in (
                    f"equal stream noise share: {shares}",
                    overwrite_sensitivity(lambda o: _rate_claim("D4", arm(ref.name), arm(o), "", "")),
                )
                if x
            ),
        ),
        _rate_claim("D5", arm(ref.name), arm(ref.name, shape=wide), f"{deep}", f"{wide}"),
        _collapsed(
            _rate_claim(
                "D8",
                arm(CLEAN, qk=True, lr=high),
                arm(CLEAN, lr=high),
                f"QK-norm at LR x{high:g}",
                f"no QK-norm at LR x{high:g}",
            ),
            pd.concat([raised_qk, raised]),
            f"clean runs at LR x{high:g} (with and without QK-norm)",
        )
        if high > base
        else Measured("D8", math.nan, 0, note="no raised learning rate trained"),
        _rate_claim("D7", arm(ref.name, qk=True), arm(ref.name), f"QK-norm under {ref.name}", "no QK-norm"),
        _noted(
            _paired_log_ratio("D9", arm(hi_alpha[:1]), arm(CLEAN), f"{hi_alpha[0] if hi_alpha else 'n/a'} vs clean"),
            level_note,
        ),
        _noted(_paired_log_ratio("D10", arm(ref.name), arm(full[:1]), f"{ref.name} vs full vocabulary"), level_note),
        _noted(
            _paired_log_ratio(
                "D11", arm(ref.name), arm(overwrite[:1]), f"{ref.name} vs {overwrite[0] if overwrite else 'overwrite'}"
            ),
            "; ".join(
                x
                for x in (
                    f"equal stream noise share: {shares}",
                    overwrite_sensitivity(lambda o: _paired_log_ratio("D11", arm(ref.name), arm(o), "")),
                    level_note,
                )
                if x
            ),
        ),
        _collapsed(
            _noted(_accuracy_claim("D12", clf, "onset", "null"), D12_FEATURES_NOTE),
            raised,
            f"clean runs at LR x{high:g} (the LR-induced class)",
        ),
        _scale_claim("D13", runs, list(comparisons.get("scale_shapes", [])), ref.name, base),
    ]
    k, n = int(raised["diverged"].sum()), len(raised)
    low, hi = wilson(k, n)
    measured.append(
        _collapsed(
            Measured(
                "D6",
                k / n,
                n,
                note=f"{k}/{n} clean runs at LR x{high:g} diverged; 95% Wilson interval",
                low=low,
                high=hi,
            ),
            raised,
            f"clean runs at LR x{high:g}",
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
            f"chosen documents with a positive count| over {n} (setting, placement seed) streams",
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
