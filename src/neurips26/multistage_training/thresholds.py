"""Paper 16's claims-file thresholds against the config's ``comparisons`` block, checked when the workflow is parsed.

Kept apart from :mod:`.claims` (which reads tables with pandas and scipy) so that parsing the workflow, which runs
this check for every scale, imports neither.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["THRESHOLD_KEYS", "threshold_mismatches"]

# the comparisons block's key of each claim's threshold (C5 compares with 0, the grid step being read from the
# table; K3's 1e-9 is a float64 zero and K2b's 1 the Bonferroni quantile itself, in the claims file only)
THRESHOLD_KEYS = {
    "C1": "complementarity_gain",
    "C2": "ceiling_persistence",
    "C3": "ceiling_r2",
    "C4": "shift_span",
    "C6": "amplification_spearman",
    "C7": "plateau_ratio",
    "C8": "loss_tolerance",
    "C9": "ceiling_tolerance",
    "K1": "sft_ceiling_tolerance",
    "K2": "agreement_margin",
    "K4": "ceiling_tolerance",
    "K5": "amplification_spearman",
    "C10": "ceiling_tolerance",
}


def threshold_mismatches(definitions: Sequence, comp: dict) -> list[str]:
    """Claims whose threshold in the claims file differs from the config's ``comparisons`` value (or whose key the
    block lacks): the claims file decides, so a mismatch means one of the two files was edited alone."""
    found = []
    for d in definitions:
        key = THRESHOLD_KEYS.get(d.claim_id)
        if key is None:
            continue
        if key not in comp:
            found.append(f"{d.claim_id}: comparisons has no {key}")
        elif not math.isclose(float(comp[key]), d.threshold, rel_tol=1e-12, abs_tol=0.0):
            found.append(f"{d.claim_id}: claims file threshold {d.threshold:g}, comparisons.{key} {comp[key]}")
    return found
