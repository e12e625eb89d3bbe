"""Paper 03's measured values for the claims and checks of ``config/claims/anadiffusion.yaml`` (AnaDiffusion, arXiv
2608.23014; the project page's Tables 1, 2 and Fig. 4a).

Methods (the ``method`` column of every evaluation table): ``ldm`` the monolithic whole-brain LDM (alpha = 0, the
same run), ``paste`` the naive composite of the part assets (no refinement), ``ae_roundtrip`` that composite encoded
and decoded by the autoencoder without diffusion (the refinement's null), ``ana`` AnaDiffusion (alpha 1, r_inj 10),
``ana_r7`` and ``ana_r15`` its r_inj ablation; in fd also ``real`` (disjoint training subsets against the held-out
set: the real-vs-real reference, shown in notes, never compared). A seed is a training seed of the generative
models; the methods of one seed share its models and its noise draw (with alpha = 1 an injected method starts from
the injection noise, not ldm's z_T: the pairing with ldm is by the whole-brain denoiser's weights), so comparisons
are differences paired by seed, decided by their 95% t interval over seeds (``common.claims.t_interval``). A claim
over several items (regions, structures, parts, feature networks) takes the worst item's mean and the worst of each
end of the items' intervals: it holds only when every item's interval is on the passing side and fails when some
item's whole interval is on the failing side.
The subject-cluster bootstrap intervals of the evaluation tables (``low``, ``high``) are shown in the report, never
used here. Evidence must be complete: a missing seed, a duplicated row or a non-finite value leaves the claim
inconclusive with the reason in the note, never a comparison of the rest.

Tables read (one row per):
* fd: (method, seed, region in whole/brain/LH/RH/CB/seam, features), ``value`` the raw Frechet distance;
* cohen_d: (method, seed, structure), ``abs_d``;
* volumes: (source, seed, sample), a column per structure (the proxy segmenter's volume in mm^3); its ``real`` rows
  are the held-out real scans in the order of the eval subjects table;
* eval_subjects: one row per held-out real scan, in the eval volumes' order; where the cohort is synthetic its true
  volumes ``<structure>_mm3`` (C10: does the proxy segmenter measure each structure?); ADNI's table has none;
* edits: one edit (method, seed, part, edit), the editing columns of ``editing.EditScores`` (target_transfer,
  off_target_preservation, transfer_gain, locality_contrast, baseline_transfer, off_target_drift) and
  ``off_target_baseline`` = S(original, donor | off target), C6's null;
* memorization: (method, seed), ``ratio``;
* assets: one part asset (seed, part, sample, source: ``generated``, or ``train_crop`` for a real training crop, the
  reference, seed -1), ``foreground_voxels`` (its voxels above the evaluation's threshold) and ``inside_voxels``
  (those inside its part's template mask, in the support's frame), and for the generated ones the scaffold counts of
  ``evaluation.scaffold_table`` (K2);
* conditioning: one Seg. cLDM pair (seed, pair), ``response`` (evaluation.conditioning_table: own minus other
  map agreement from the same noise; empty where the baseline is not run), C13 and C11's gate;
* traces: (model, seed, step), ``loss``;
* input records: one row per input of the sampling, editing and evaluation jobs and of the Seg. cLDM's job where it
  runs (job, input, path, subject_masks), the paths of the cohort's per-subject files and the jobs the config runs
  (K1: :data:`MASK_FREE_JOBS` may hold no per-subject mask, the controls :data:`MASK_JOBS` must show theirs).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np
import pandas as pd

from neurips26.common.claims import Measured, Spread, beyond_null, measured_from_spread, t_interval

from .published import EDIT_COLUMNS, EDITING, FD_HEADERS, FD_REGIONS, PAPER_INTERVALS, PARTS, STRUCTURES, TABLE2
from .published import mean_over_parts as mean_over_parts

__all__ = ["FID_TABLE_SCALE", "MASK_FREE_JOBS", "MASK_JOBS", "PRESERVATION_LEVEL", "PROXY_AGREEMENT",
           "PUBLISHED_TOLERANCE", "RECORD_COLUMNS", "Incomplete", "conditioning_response", "detected_masks",
           "distance_from_interval", "edit_means", "masks_at_inference", "measure_claims", "per_seed",
           "proxy_agreement", "responds", "worst"]  # fmt: skip

PROPOSED, MONOLITHIC, PASTE, ROUNDTRIP, REAL = "ana", "ldm", "paste", "ae_roundtrip", "real"
SEG_CLDM, SEPARATE = "seg_cldm", "ana_separate"  # the paper-scale baseline (Fig. 4a) and ablation (Table 2)
ABLATION = ("ana_r7", "ana_r15")
FID_TABLE_SCALE = 1e4  # the page's tables print FID x 1e4 (metrics.FID_TABLE_SCALE)
PRESERVATION_LEVEL = 0.9  # C6: the page's 0.936-0.950, rounded down
PUBLISHED_TOLERANCE = 0.03  # P3, P4: on either side of the page's mean over parts
PROXY_AGREEMENT = 0.5  # C10 (ours): the correlation of proxy and true volumes a structure needs to count in C4
TRUE_VOLUME = "{}_mm3"  # the eval subjects table's true volume of a structure (the synthetic cohort only)
REAL_DATASET = "adni"
MEDICALNET = "medicalnet"  # the prefix of the paper-scale feature networks' names (medicalnet10/18/50)


class Incomplete(ValueError):
    """A compared run lacks a seed, is duplicated or has a non-finite value: the claim cannot be decided."""


def per_seed(table: pd.DataFrame, column: str, **where) -> pd.Series:
    """``column`` of the rows matching ``where`` (column=value), indexed by seed; Incomplete when none match or a
    seed has more than one row (the where clause does not name one run)."""
    rows = table
    for key, value in where.items():
        if key not in rows.columns:
            raise Incomplete(f"the table has no column {key!r}")
        rows = rows[rows[key] == value]
    what = ", ".join(f"{k}={v}" for k, v in where.items())
    if rows.empty or column not in rows.columns:
        raise Incomplete(f"no {column} of {what}")
    duplicated = sorted(rows["seed"][rows["seed"].duplicated()].unique().tolist())
    if duplicated:
        raise Incomplete(f"{what}: several rows for seeds {duplicated}")
    values = rows.set_index("seed")[column].astype(float).sort_index()
    bad = [f"seed {s}: {v}" for s, v in values.items() if not np.isfinite(v)]
    if bad:
        raise Incomplete(f"{what}: non-finite {column} ({'; '.join(bad)})")
    return values


def _same_seeds(a: pd.Series, b: pd.Series, what_a: str, what_b: str) -> None:
    if set(a.index) != set(b.index):
        raise Incomplete(f"seeds {sorted(a.index)} of {what_a} against {sorted(b.index)} of {what_b}")


def _paired(a: pd.Series, b: pd.Series, what_a: str, what_b: str) -> pd.Series:
    _same_seeds(a, b, what_a, what_b)
    return a - b.reindex(a.index)


def worst(claim_id: str, spreads: Mapping[str, Spread], comparison: str, note: str) -> Measured:
    """The claim over several items: the worst item's mean over seeds (the largest for '<' claims, the smallest for
    '>'), its interval the worst of each end of the items' intervals; no interval where an item rests on one run."""
    if not spreads:
        return Measured(claim_id, math.nan, 0, note=f"no items to compare; {note}")
    pick = max if comparison in ("<", "<=") else min
    name = pick(spreads, key=lambda k: spreads[k].mean)
    runs = min(s.runs for s in spreads.values())
    parts = "; ".join(f"{k}: {s.text()}" for k, s in spreads.items())
    text = f"{note}; worst {name}; {parts}"
    if runs < 2:
        return Measured(claim_id, spreads[name].mean, runs, note=text)
    low, high = pick(s.low for s in spreads.values()), pick(s.high for s in spreads.values())
    return Measured(claim_id, spreads[name].mean, runs, low=low, high=high, note=text)


def _features(fd: pd.DataFrame) -> list[str]:
    return sorted(fd["features"].unique().tolist()) if "features" in fd.columns else []


def _fd(fd: pd.DataFrame, method: str, region: str, features: str) -> pd.Series:
    return per_seed(fd, "value", method=method, region=region, features=features)


def _fd_claim(claim_id: str, fd: pd.DataFrame, regions: Sequence[str], baselines: Sequence[str], what: str,
              reported: Sequence[str] = ()) -> Measured:  # fmt: skip
    """Per region and feature network, FD(ana) minus the smallest FD of `baselines` on the same seed ('<' 0: ana
    beats every baseline on every seed's pairing); the worst (region, network) decides. The note gives, per
    baseline and per `reported` method (a second null shown, not deciding), the mean paired difference, and the
    real-vs-real reference (method ``real``) where the table has it."""
    spreads, parts = {}, []
    try:
        for f in _features(fd):
            for region in regions:
                ours = _fd(fd, PROPOSED, region, f)
                nulls = {b: _paired(ours, _fd(fd, b, region, f), f"{PROPOSED} {region}", f"{b} {region}")
                         for b in baselines}  # fmt: skip
                spreads[f"{region} ({f})"] = t_interval(pd.concat(list(nulls.values()), axis=1).max(axis=1))
                for m in reported:
                    nulls[m] = _paired(ours, _fd(fd, m, region, f), f"{PROPOSED} {region}", f"{m} {region}")
                text = ", ".join(f"- {m} {t_interval(d).text()}" for m, d in nulls.items())
                real = fd[(fd["method"] == REAL) & (fd["region"] == region) & (fd["features"] == f)]["value"]
                ref = f"; real-vs-real FD {real.mean():.4g} ({len(real)} subsets)" if len(real) else ""
                parts.append(f"{region} ({f}): {PROPOSED} {ours.mean():.4g} {text}{ref}")
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"fd: {error}")
    found = worst(claim_id, spreads, "<", f"raw FD of {PROPOSED} minus {what}, paired by seed")
    return replace(found, note=f"{found.note} | {' | '.join(parts)}")


def _injection_point(fd: pd.DataFrame) -> Measured:
    """C7: whole-brain FD at r_inj 10 minus the smaller of r_inj 7 and 15, paired by seed, per feature network."""
    spreads = {}
    try:
        for f in _features(fd):
            ours = _fd(fd, PROPOSED, "whole", f)
            others = [_fd(fd, m, "whole", f) for m in ABLATION]
            for m, series in zip(ABLATION, others):
                _same_seeds(ours, series, PROPOSED, m)
            best = pd.concat(others, axis=1).min(axis=1)
            spreads[f"whole ({f})"] = t_interval(ours - best.reindex(ours.index))
    except Incomplete as error:
        return Measured("C7", math.nan, 0, note=f"fd: {error}")
    return worst("C7", spreads, "<", f"raw whole-brain FD of {PROPOSED} (r_inj 10) minus min({', '.join(ABLATION)})")


def proxy_agreement(volumes: pd.DataFrame, eval_subjects: pd.DataFrame) -> dict[str, float] | None:
    """Per structure, the Pearson correlation over the held-out real scans of the proxy segmenter's volume (the
    ``real`` rows of ``volumes``, by sample) with the scan's true volume (``eval_subjects``' ``<structure>_mm3``, row
    i = sample i); None where the subjects table has no true volumes (ADNI: SynthSeg is the segmenter and there is
    no ground truth). Incomplete where the scans do not pair up or a correlation is undefined."""
    columns = [TRUE_VOLUME.format(s) for s in STRUCTURES]
    if not any(c in eval_subjects.columns for c in columns):
        return None
    missing = [c for c in columns if c not in eval_subjects.columns]
    if missing:
        raise Incomplete(f"eval subjects: true volumes {missing} missing beside the others")
    real = volumes[volumes["source"] == REAL].sort_values("sample") if "source" in volumes.columns else volumes[:0]
    if len(real) != len(eval_subjects) or not np.array_equal(real["sample"].to_numpy(), np.arange(len(real))):
        raise Incomplete(f"{len(real)} real scans in the volumes table (samples "
                         f"{real['sample'].tolist()[:5]}...) against {len(eval_subjects)} eval subjects")  # fmt: skip
    if len(real) < 3:
        raise Incomplete(f"{len(real)} real scans: too few for a correlation")
    found = {}
    for s, column in zip(STRUCTURES, columns):
        if s not in real.columns:
            raise Incomplete(f"the volumes table has no column {s!r}")
        proxy, true = real[s].to_numpy(float), eval_subjects[column].to_numpy(float)
        if not (np.isfinite(proxy).all() and np.isfinite(true).all()):
            raise Incomplete(f"{s}: non-finite proxy or true volumes")
        if proxy.std() == 0 or true.std() == 0:
            raise Incomplete(f"{s}: constant {'proxy' if proxy.std() == 0 else 'true'} volumes, no correlation")
        found[s] = float(np.corrcoef(proxy, true)[0, 1])
    return found


def _agreement(volumes: pd.DataFrame, eval_subjects: pd.DataFrame) -> tuple[Measured, list[str] | None, str]:
    """C10 (info): the smallest over structures of the proxy-true correlation on the real eval scans; also the
    structures C4 reads (those at PROXY_AGREEMENT or above; every one where true volumes are unknown; None where the
    agreement could not be measured) and the note C4 carries."""
    try:
        found = proxy_agreement(volumes, eval_subjects)
    except Incomplete as error:
        note = f"proxy against true volumes: {error}"
        return Measured("C10", math.nan, 0, note=note), None, note
    if found is None:
        note = "no true volumes of the eval scans (ADNI: SynthSeg, no ground truth): C4 reads every structure"
        return Measured("C10", math.nan, 0, note=note), list(STRUCTURES), note
    kept = [s for s, r in found.items() if r >= PROXY_AGREEMENT]
    text = ", ".join(f"{s} {r:.3f}" for s, r in found.items())
    note = (f"Pearson r of proxy and true volumes on the {len(eval_subjects)} real eval scans: {text}; C4 reads the "
            f"structures at r >= {PROXY_AGREEMENT} (ours): {', '.join(kept) if kept else 'none'}")  # fmt: skip
    return Measured("C10", min(found.values()), len(eval_subjects), note=note), kept, note


def _morphometry(cohen_d: pd.DataFrame, structures: Sequence[str] | None, agreement: str) -> Measured:
    """C4: per structure the proxy segmenter measures (C10), |d|(ana) - |d|(ldm) paired by seed; the worst of them
    decides; inconclusive where none is measured."""
    if not structures:
        return Measured("C4", math.nan, 0, note=f"no structure the proxy segmenter measures decides; {agreement}")
    spreads = {}
    try:
        for s in structures:
            ours = per_seed(cohen_d, "abs_d", method=PROPOSED, structure=s)
            theirs = per_seed(cohen_d, "abs_d", method=MONOLITHIC, structure=s)
            spreads[s] = t_interval(_paired(ours, theirs, f"{PROPOSED} {s}", f"{MONOLITHIC} {s}"))
    except Incomplete as error:
        return Measured("C4", math.nan, 0, note=f"cohen_d: {error}")
    left_out = [s for s in STRUCTURES if s not in structures]
    what = f"Cohen's |d| of {PROPOSED} minus {MONOLITHIC}, paired by seed, over {', '.join(structures)}"
    if left_out:
        what += f" ({', '.join(left_out)} left out: the proxy does not measure it; {agreement})"
    return worst("C4", spreads, "<", what)


def edit_means(edits: pd.DataFrame, column: str, part: str, method: str = PROPOSED) -> pd.Series:
    """Per seed, the mean over the edits of ``part`` by ``method`` of ``column`` (Incomplete where a value is
    missing or non-finite)."""
    rows = edits[(edits["method"] == method) & (edits["part"] == part)] if len(edits) else edits
    if rows.empty:
        raise Incomplete(f"no edits of {part} by {method}")
    if column not in rows.columns:
        raise Incomplete(f"edit.parquet has no column {column!r}")
    values = rows[column].astype(float)
    if not np.isfinite(values).all():
        raise Incomplete(f"{method} {part}: non-finite {column} in {int((~np.isfinite(values)).sum())} edit(s)")
    return values.groupby(rows["seed"]).mean().sort_index()


def _drift(edits: pd.DataFrame, part: str) -> pd.Series:
    """Off-target drift per seed: the column where written, else transfer gain - locality contrast (its definition)."""
    if "off_target_drift" in edits.columns:
        return edit_means(edits, "off_target_drift", part)
    return edit_means(edits, "transfer_gain", part) - edit_means(edits, "locality_contrast", part)


def _beyond(claim_id: str, edits: pd.DataFrame, column: str, null: str, threshold: float, what: str) -> Measured:
    """Per part, ``column`` minus max(null, threshold) per seed (``beyond_null``) over the seeds' mean edits, '>' 0;
    the worst part decides. The note says on how many (part, seed) means the null is above the threshold: on none,
    the threshold alone decides and the null never does."""
    spreads, above, total = {}, 0, 0
    try:
        for part in PARTS:
            values = edit_means(edits, column, part)
            nulls = _drift(edits, part) if null == "off_target_drift" else edit_means(edits, null, part)
            _same_seeds(values, nulls, f"{column} {part}", f"{null} {part}")
            above, total = above + int((nulls > threshold).sum()), total + len(nulls)
            beyond = beyond_null(values.to_dict(), nulls.to_dict(), threshold)
            label = f"{part} ({column} {values.mean():.4g}, null {nulls.mean():.4g}"
            if len(edits) and (edits["method"] == ROUNDTRIP).any():  # the round trip's own edits, reported
                label += f", {ROUNDTRIP}'s {column} {edit_means(edits, column, part, ROUNDTRIP).mean():.4g}"
            label += ")"
            spreads[label] = t_interval(list(beyond.values()))
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"edit: {error}")
    what += f"; the null is above {threshold:g} on {above} of {total} (part, seed) means"
    if not above:
        what += f": the level {threshold:g} decides, never the null"
    return worst(claim_id, spreads, ">", what)


def distance_from_interval(claim_id: str, spread: Spread, low: float, high: float, note: str) -> Measured:
    """|distance| of our mean from the published interval [low, high] (0 inside), with the interval of that distance
    implied by ours: 0 at its low end where the two intervals overlap, else the gap; at its high end the farther of
    our ends' distances. '<=' 0 then holds only when our whole interval lies inside the published one."""

    def distance(x: float) -> float:
        return max(low - x, x - high, 0.0)

    text = f"ours {spread.text()} beside the published [{low:.4g}, {high:.4g}]; {note}"
    if spread.runs < 2 or not (math.isfinite(spread.low) and math.isfinite(spread.high)):
        return Measured(claim_id, distance(spread.mean), spread.runs, note=text)
    overlap = spread.low <= high and spread.high >= low
    lower = 0.0 if overlap else min(distance(spread.low), distance(spread.high))
    upper = max(distance(spread.low), distance(spread.high))
    return Measured(claim_id, distance(spread.mean), spread.runs, low=lower, high=upper, note=text)


def _published_fd(claim_id: str, fd: pd.DataFrame, region: str, dataset: str) -> Measured:
    """P1, P2: ana's regional MedicalNet FID x 1e4 on ADNI against the page's interval."""
    medicalnet = [f for f in _features(fd) if str(f).startswith(MEDICALNET)]
    if dataset != REAL_DATASET or not medicalnet:
        return Measured(claim_id, math.nan, 0, note=(
            f"not comparable at this scale: data {dataset!r}, features {_features(fd)} (the paper's numbers are "
            f"MedicalNet FID on ADNI)"))  # fmt: skip
    try:
        values = _fd(fd, PROPOSED, region, medicalnet[0]) * FID_TABLE_SCALE
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"fd: {error}")
    low, high = PAPER_INTERVALS[("AnaDiffusion", region)]
    return distance_from_interval(claim_id, t_interval(values), low, high,
                                  f"{PROPOSED} {region} FID x 1e4 ({medicalnet[0]}, {dataset})")  # fmt: skip


def _published_edit(claim_id: str, edits: pd.DataFrame, column: str, dataset: str) -> Measured:
    """P3, P4: ana's mean over parts of an editing column on ADNI within PUBLISHED_TOLERANCE of the page's mean."""
    if dataset != REAL_DATASET:
        return Measured(claim_id, math.nan, 0, note=f"not comparable at this scale: data {dataset!r}, not ADNI")
    try:
        means = [edit_means(edits, column, part) for part in PARTS]
        for part, series in zip(PARTS[1:], means[1:]):
            _same_seeds(means[0], series, f"{column} {PARTS[0]}", f"{column} {part}")
    except Incomplete as error:
        return Measured(claim_id, math.nan, 0, note=f"edit: {error}")
    paper = mean_over_parts(column)
    return distance_from_interval(claim_id, t_interval(pd.concat(means, axis=1).mean(axis=1)),
                                  paper - PUBLISHED_TOLERANCE, paper + PUBLISHED_TOLERANCE,
                                  f"{PROPOSED} {column}, mean over {', '.join(PARTS)} ({dataset})")  # fmt: skip


def _memorization(memorization: pd.DataFrame) -> Measured:
    """C8: ana's median nearest-training distance ratio (samples / held-out reals), t interval over seeds, with the
    monolithic LDM's mean ratio as its null (the same measurement without the paper's mechanism: where it passes
    too, the measure does not tell ana's samples from the baseline's, and C8 cannot hold)."""
    try:
        ratio = per_seed(memorization, "ratio", method=PROPOSED)
    except Incomplete as error:
        return Measured("C8", math.nan, 0, note=f"memorization: {error}")
    try:
        null = float(per_seed(memorization, "ratio", method=MONOLITHIC).mean())
    except Incomplete:
        null = math.nan  # no null measured: a holds turns inconclusive
    others = []
    for method in sorted(set(memorization["method"]) - {PROPOSED}):
        try:
            others.append(f"{method} {t_interval(per_seed(memorization, 'ratio', method=method)).text()}")
        except Incomplete:
            continue
    note = f"median nearest-training distance of {PROPOSED}'s samples / of held-out reals; null {MONOLITHIC}" + (
        f"; the same for {', '.join(others)}" if others else "")  # fmt: skip
    return replace(measured_from_spread("C8", t_interval(ratio), note), null=null)


def conditioning_response(conditioning: pd.DataFrame) -> Spread:
    """The Seg. cLDM's response to its conditioning: per seed the mean over its pairs of ``response`` (pairs whose
    maps' brains do not differ, NaN, left out), t interval over seeds; Incomplete where the table is empty (the
    baseline not run), lacks the column, or a seed has no pair with a response."""
    if conditioning.empty or "response" not in conditioning.columns:
        raise Incomplete("no conditioning check of the Seg. cLDM (not run at this scale)")
    per_seed_mean = conditioning.groupby("seed")["response"].mean()
    if not np.isfinite(per_seed_mean.to_numpy(float)).all():
        empty = per_seed_mean[per_seed_mean.isna()].index.tolist()
        raise Incomplete(f"seeds without a pair whose maps differ: {empty}")
    return t_interval(per_seed_mean.tolist())


def responds(conditioning: pd.DataFrame) -> bool | None:
    """Whether the Seg. cLDM follows its conditioning (the lower end of :func:`conditioning_response` above 0); None
    where the check is not run or incomplete."""
    try:
        spread = conditioning_response(conditioning)
    except Incomplete:
        return None
    return bool(spread.runs >= 2 and math.isfinite(spread.low) and spread.low > 0)


def _conditioning(conditioning: pd.DataFrame) -> Measured:
    """C13 (info): does the Seg. cLDM use its conditioning? The mean over seeds of its response (own minus other
    map agreement from the same noise), t interval; the note gives the agreements and the mean image change."""
    try:
        spread = conditioning_response(conditioning)
    except Incomplete as error:
        return Measured("C13", math.nan, 0, note=str(error))
    note = (f"{len(conditioning)} (seed, pair) rows; agreement of a sample's brain with its own map "
            f"{conditioning['own'].mean():.4g}, with the other subject's {conditioning['other'].mean():.4g}; mean "
            f"|swapped - original| {conditioning['change'].mean():.4g} (0: the map is ignored)")  # fmt: skip
    return measured_from_spread("C13", spread, note)


def _transfer_vs_seg_cldm(edits: pd.DataFrame, conditioning: pd.DataFrame) -> Measured:
    """C11: per part, the transfer gain of ana minus the Seg. cLDM's, each the per-seed mean over that seed's edits,
    paired by seed; the worst part decides ('>' 0). Inconclusive where the baseline is not run, or where it does not
    follow its conditioning (C13: an untrained baseline loses by default). Fig. 4a's numbers in the note."""
    if not len(edits) or not (edits["method"] == SEG_CLDM).any():
        return Measured("C11", math.nan, 0, note=f"{SEG_CLDM} not run at this scale (paper scale only)")
    if not responds(conditioning):
        return Measured("C11", math.nan, 0, note=(
            f"{SEG_CLDM} does not follow its conditioning (C13: the response's interval is not above 0, or the "
            "check is missing): an untrained baseline, against which a win means nothing"))  # fmt: skip
    spreads, parts = {}, []
    column = EDIT_COLUMNS.index("transfer_gain")
    try:
        for part in PARTS:
            ours = edit_means(edits, "transfer_gain", part)
            theirs = edit_means(edits, "transfer_gain", part, SEG_CLDM)
            spreads[part] = t_interval(_paired(ours, theirs, f"{PROPOSED} {part}", f"{SEG_CLDM} {part}"))
            paper_ours, paper_theirs = EDITING[(part, "Ours")][column], EDITING[(part, "Seg. cLDM")][column]
            parts.append(f"{part}: ours {ours.mean():.4g} vs {theirs.mean():.4g} (paper {paper_ours:.4f} vs "
                         f"{paper_theirs:.4f}, {paper_ours - paper_theirs:+.4f})")  # fmt: skip
    except Incomplete as error:
        return Measured("C11", math.nan, 0, note=f"edit: {error}")
    found = worst("C11", spreads, ">", f"transfer gain of {PROPOSED} minus {SEG_CLDM}'s, paired by seed")
    return replace(found, note=f"{found.note} | {' | '.join(parts)} (Fig. 4a)")


def _separate_models(fd: pd.DataFrame) -> Measured:
    """C12 (info): whole-brain FD of ana minus that of ana_separate (separate hemisphere models, otherwise the same
    run), paired by seed, per feature network (the worst decides); the seam difference and Table 2 in the note."""
    if not (fd["method"] == SEPARATE).any():
        return Measured("C12", math.nan, 0, note=f"{SEPARATE} not run at this scale (paper scale only)")
    paper = {ours: values for ours, values in TABLE2.values()}
    spreads, parts = {}, []
    try:
        for f in _features(fd):
            texts = []
            for region in ("whole", "seam"):
                ours, theirs = _fd(fd, PROPOSED, region, f), _fd(fd, SEPARATE, region, f)
                spread = t_interval(_paired(ours, theirs, f"{PROPOSED} {region}", f"{SEPARATE} {region}"))
                if region == "whole":
                    spreads[f"whole ({f})"] = spread
                i = FD_REGIONS.index(region)
                a, b = paper[PROPOSED][i], paper[SEPARATE][i]
                texts.append(f"{FD_HEADERS[region]} {spread.text()} (Table 2: {a} - {b} = {a - b:+.2f} x 1e-4)")
            parts.append(f"{f}: {'; '.join(texts)}")
    except Incomplete as error:
        return Measured("C12", math.nan, 0, note=f"fd: {error}")
    found = worst("C12", spreads, "<", f"raw FD of {PROPOSED} minus {SEPARATE} (separate hemisphere models)")
    return replace(found, note=f"{found.note} | {' | '.join(parts)}")


RECORD_COLUMNS = ("job", "input", "path", "subject_masks")
# K1's jobs, by the name each records (artifacts.input_record): ours, whose inputs may hold no per-subject mask (the
# sampling and editing jobs), and the positive controls, jobs that take the subjects' masks by design, whose records
# must show them through the CONTENT detector (a mask array named in ``subject_masks``; a path among the subject
# files does not count): the evaluation job (data/eval.npz and data/train.npz with their labels, at every scale) and
# the Seg. cLDM's sampling-and-editing job where the scale runs it. A detector that names nothing there is broken.
# Which jobs must have a record comes from the config (experiment.record_jobs): a configured job without one, or a
# record of a job not configured, makes K1 inconclusive: no job is silently exempt or trusted.
MASK_FREE_JOBS = ("sample", "edit")
MASK_JOBS = ("evaluate", "seg_cldm")


def masks_at_inference(records: pd.DataFrame, subject_files: Sequence[str]) -> list[str]:
    """What the sampling and editing jobs were given that is per-subject segmentation. ``records``: one row per input
    file of those jobs as each job recorded it, every input and path-like param (job, input, path, subject_masks:
    the ``;``-joined names of the mask or label arrays of any dtype and dimension from two up that the file holds,
    empty where none; ``artifacts.input_record``); an input is flagged when it holds such arrays or is one of
    ``subject_files`` (the cohort's or ADNI's per-subject files and the training latents, whatever they hold). The
    template's population masks (X, Y, Z) are not flagged (the record exempts the template rule's output file)."""
    missing = [c for c in RECORD_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(f"the input records lack the columns {missing}")
    subjects = {os.path.normpath(p) for p in subject_files}
    found = []
    for row in records.itertuples(index=False):
        if os.path.normpath(str(row.path)) in subjects:
            found.append(f"{row.job}: {row.path} (per-subject data)")
        if _masks(row.subject_masks):
            found.append(f"{row.job}: {row.path} holds {row.subject_masks}")
    return found


def _masks(value) -> str:
    return value if isinstance(value, str) else ""  # None or NaN: none


def detected_masks(records: pd.DataFrame) -> list[str]:
    """The mask arrays the content detector named in ``records`` (``path holds names`` per input that holds any);
    a path among the subject files is not a detection."""
    if "subject_masks" not in records.columns:
        raise ValueError("the input records lack the column 'subject_masks'")
    return [f"{row.path} holds {_masks(row.subject_masks)}" for row in records.itertuples(index=False)
            if _masks(row.subject_masks)]  # fmt: skip


def _no_masks(records: pd.DataFrame, subject_files: Sequence[str], expected_jobs: Sequence[str]) -> Measured:
    """K1 over the jobs the config runs (`expected_jobs`, experiment.record_jobs): the per-subject inputs of
    :data:`MASK_FREE_JOBS`, plus one for each positive control of :data:`MASK_JOBS` whose record names no mask array
    (the content detector missed the masks it takes by design). Inconclusive where a configured job has no record,
    a record is of a job not configured, the config names a job K1 does not know, or no job of either kind runs."""
    if "job" not in records.columns:
        return Measured("K1", math.nan, 0, note="the input records lack the column 'job'")
    jobs, expected = records["job"].astype(str), [str(j) for j in expected_jobs]
    problems = []
    unknown = [j for j in expected if j not in MASK_FREE_JOBS + MASK_JOBS]
    if unknown:
        problems.append(f"configured jobs {unknown} that K1 does not name (mask-free {list(MASK_FREE_JOBS)}, "
                        f"controls {list(MASK_JOBS)})")  # fmt: skip
    missing = [j for j in expected if j not in set(jobs)]
    if missing:
        problems.append(f"no record of the configured jobs {missing}")
    unexpected = sorted(set(jobs) - set(expected))
    if unexpected:
        problems.append(f"records of jobs {unexpected} that the config does not run")
    ours = [j for j in expected if j in MASK_FREE_JOBS]
    controls = [j for j in expected if j in MASK_JOBS]
    if not ours:
        problems.append("no mask-free job (sample, edit) configured: nothing to check")
    if not controls:
        problems.append("no positive control configured: a broken detector would pass")
    if problems:
        return Measured("K1", math.nan, 0, note="; ".join(problems))
    mine = records[jobs.isin(ours)]
    try:
        found = masks_at_inference(mine, subject_files)
        detected = {job: detected_masks(records[jobs == job]) for job in controls}
    except ValueError as error:
        return Measured("K1", math.nan, 0, note=str(error))
    counts = mine.groupby("job").size()
    note = (f"no per-subject mask allowed in {', '.join(f'{job} ({counts[job]} inputs)' for job in ours)}, "
            f"checked against {len(subject_files)} per-subject files"
            + (f"; found: {'; '.join(found)}" if found else ": none found"))  # fmt: skip
    undetected = [job for job, hits in detected.items() if not hits]
    for job, hits in detected.items():
        note += (f"; control {job} (takes the subjects' masks by design): {'; '.join(hits)}" if hits else
                 f"; control {job} takes the subjects' masks by design but the detector named no mask array in "
                 "its record (broken detector)")  # fmt: skip
    not_run = [j for j in MASK_JOBS if j not in controls]
    if not_run:
        note += f"; not run at this scale: {', '.join(not_run)}"
    return Measured("K1", float(len(found) + len(undetected)), len(mine), note=note)


GENERATED, REFERENCE = "generated", "train_crop"  # the asset table's sources: the part assets, real training crops
SCAFFOLD_COLUMNS = ("placed_voxels", "mismatched_voxels", "asset_voxels", "open_filled")


def _source(assets: pd.DataFrame, source: str) -> pd.DataFrame:
    """The asset table's rows of one source (every row is generated where the table has no ``source`` column)."""
    if "source" not in assets.columns:
        return assets if source == GENERATED else assets.iloc[0:0]
    return assets[assets["source"] == source]


def _inside_share(assets: pd.DataFrame) -> np.ndarray:
    """Per asset, its foreground voxels inside its part's template mask / its foreground voxels (0 if none)."""
    total, inside = assets["foreground_voxels"].to_numpy(float), assets["inside_voxels"].to_numpy(float)
    return np.where(total > 0, inside / np.where(total > 0, total, 1.0), 0.0)


def _asset_share(assets: pd.DataFrame) -> Measured:
    """C9 (info, the part models' quality): the smallest share of a generated asset's foreground voxels inside its
    part's template mask (0 for an empty asset); the same of the real training crops in the note, its reference."""
    needed = {"seed", "part", "foreground_voxels", "inside_voxels"}
    generated = _source(assets, GENERATED)
    if generated.empty or not needed <= set(assets.columns):
        return Measured("C9", math.nan, 0, note=f"assets: no rows or missing {sorted(needed - set(assets.columns))}")
    share = _inside_share(generated)
    if not np.isfinite(share).all():
        return Measured("C9", math.nan, 0, note="assets: non-finite voxel counts")

    def per_part(rows: pd.DataFrame, values: np.ndarray) -> str:
        by_part = pd.Series(values, index=rows.index).groupby(rows["part"])
        return ", ".join(f"{p} {low:.3f} / {mean:.3f}" for p, (low, mean) in by_part.agg(["min", "mean"]).iterrows())

    empty = int((generated["foreground_voxels"] <= 0).sum())
    note = f"{len(share)} generated assets, share (min / mean) per part: {per_part(generated, share)}"
    note += f"; {empty} empty asset(s)" if empty else ""
    reference = _source(assets, REFERENCE)
    note += (f"; reference, the real training crops ({len(reference)}): {per_part(reference, _inside_share(reference))}"
             if len(reference) else "; no real training crops in the table for reference")  # fmt: skip
    return Measured("C9", float(share.min()), len(share), note=note)


def _scaffold(assets: pd.DataFrame) -> Measured:
    """K2: what the assembly guarantees, read back from the sampling job's outputs (``evaluation.scaffold_table``):
    voxels of a part's template mask where the paste is not its asset, open voxels (outside every part mask) of the
    paste that are not background -1 (counted once per sample), and empty assets (no voxel above background in its
    mask); the count of all of these."""
    generated = _source(assets, GENERATED)
    missing = sorted(set(SCAFFOLD_COLUMNS) - set(assets.columns))
    if generated.empty or missing:
        return Measured("K2", math.nan, 0, note=f"assets: no generated rows or missing {missing}")
    counts = generated[list(SCAFFOLD_COLUMNS)].to_numpy(float)
    if not np.isfinite(counts).all():
        return Measured("K2", math.nan, 0, note="assets: non-finite scaffold counts")
    if (generated["placed_voxels"] <= 0).any():
        return Measured("K2", math.nan, 0, note="assets: a part's template mask is empty; nothing to check")
    mismatched = int(generated["mismatched_voxels"].sum())
    open_filled = int(generated.groupby(["seed", "sample"])["open_filled"].max().sum())
    empty = generated[generated["asset_voxels"] <= 0]
    note = (f"{len(generated)} assets ({generated.groupby(['seed', 'sample']).ngroups} pastes): {mismatched} voxels "
            f"of a part mask differ from its asset, {open_filled} open voxels are not background, {len(empty)} "
            "empty asset(s)")  # fmt: skip
    if len(empty):
        note += f" ({', '.join(f'{r.part} seed {r.seed} sample {r.sample}' for r in empty.head(5).itertuples())})"
    return Measured("K2", float(mismatched + open_filled + len(empty)), len(generated), note=note)


def _training(traces: pd.DataFrame) -> Measured:
    """K3: over every (model, seed), 1 - mean loss of the last tenth of its logged steps / that of the first tenth."""
    if traces.empty:
        return Measured("K3", math.nan, 0, note="no training traces")
    broken = traces[~np.isfinite(traces["loss"].to_numpy(float))]
    if len(broken):
        where = sorted({(str(m), int(s)) for m, s in zip(broken["model"], broken["seed"])})
        return Measured("K3", math.nan, 0, note=f"non-finite loss in (model, seed) {where}")
    ordered = traces.sort_values("step")
    rank = ordered.groupby(["model", "seed"]).cumcount()
    size = ordered.groupby(["model", "seed"])["step"].transform("size")
    tenth = np.maximum(1, size // 10)
    first = ordered[rank < tenth].groupby(["model", "seed"])["loss"].mean()
    last = ordered[rank >= size - tenth].groupby(["model", "seed"])["loss"].mean()
    fall = 1 - last / first
    bad = fall[~(first > 0)]
    if len(bad):
        return Measured("K3", math.nan, 0, note=f"non-positive loss in (model, seed) {list(bad.index)}")
    weakest = fall.idxmin()
    note = f"{len(fall)} (model, seed) traces; weakest {weakest[0]} seed {weakest[1]}; median fall {fall.median():.3g}"
    return Measured("K3", float(fall.min()), len(fall), note=note)


def measure_claims(fd: pd.DataFrame, cohen_d: pd.DataFrame, edits: pd.DataFrame, memorization: pd.DataFrame,
                   assets: pd.DataFrame, traces: pd.DataFrame, input_records: pd.DataFrame,
                   subject_files: Sequence[str], dataset: str, *, volumes: pd.DataFrame,
                   eval_subjects: pd.DataFrame, expected_jobs: Sequence[str],
                   conditioning: pd.DataFrame | None = None) -> list[Measured]:  # fmt: skip
    """Every claim and check of the claims file; ``dataset`` names the data the models were trained and scored on
    (``adni`` at paper scale: only then are the published numbers comparable); ``volumes`` and ``eval_subjects``
    decide which structures C4 reads (C10); ``expected_jobs`` the jobs whose input records K1 needs
    (experiment.record_jobs of the config); ``conditioning`` the Seg. cLDM's conditioning check (empty or None where
    the baseline is not run)."""
    others = [r for r in FD_REGIONS if r != "whole"]
    preservation = ("off-target preservation minus max(S(original, donor | off target), "
                    f"{PRESERVATION_LEVEL}) per seed")  # fmt: skip
    agreement, structures, agreement_note = _agreement(volumes, eval_subjects)
    conditioning = pd.DataFrame() if conditioning is None else conditioning
    return [
        _fd_claim("C1", fd, ["whole", "brain"], [MONOLITHIC, ROUNDTRIP],
                  f"min({MONOLITHIC} (alpha 0), {ROUNDTRIP} (no diffusion)), whole volume and brain only"),
        _fd_claim("C2", fd, others, [MONOLITHIC, ROUNDTRIP],
                  f"min({MONOLITHIC} (alpha 0), {ROUNDTRIP} (no diffusion)) per region"),
        _fd_claim("C3", fd, ["seam"], [ROUNDTRIP], f"{ROUNDTRIP} (the scaffold encoded and decoded), seam band",
                  reported=[PASTE]),
        _morphometry(cohen_d, structures, agreement_note),
        _beyond("C5", edits, "transfer_gain", "off_target_drift", 0.0,
                "transfer gain minus max(off-target drift, 0) per seed"),
        _beyond("C6", edits, "off_target_preservation", "off_target_baseline", PRESERVATION_LEVEL, preservation),
        _injection_point(fd),
        _memorization(memorization),
        _asset_share(assets),
        agreement,
        _transfer_vs_seg_cldm(edits, conditioning),
        _separate_models(fd),
        _conditioning(conditioning),
        _published_fd("P1", fd, "whole", dataset),
        _published_fd("P2", fd, "seam", dataset),
        _published_edit("P3", edits, "off_target_preservation", dataset),
        _published_edit("P4", edits, "target_transfer", dataset),
        _no_masks(input_records, subject_files, expected_jobs),
        _scaffold(assets),
        _training(traces),
    ]  # fmt: skip
