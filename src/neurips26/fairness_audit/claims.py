r"""Paper 06's claims as checks that can fail (notes 2.7, C1-C6), from the analysis tables of :mod:`.validation`
and the axiom table of :mod:`.axioms`.

Kinds. ``hard`` where a theorem guarantees the outcome up to estimation error: the data-processing bound (C1), the
axioms that follow from a measure's definition (C2) and the symmetry of a player and its exact copy (C3a).
``soft`` where the abstract claims an empirical regularity: the split of Shapley credit between copies (C3b, C3c;
not exact in general: for ``v(S) = 1[k in S and (i in S or j in S)]`` the copies get 1/6 each where i alone had
1/2), the alignment of measures with their notion (C4), the relevance-aware measure beating the baseline (C5) and
the feature-selection experiment (C6).

C2's required outcomes (our reading, the paper's list is not recovered; notes 2.2 "Axiom table"):

* B_SP fails P2 (``I(X; A) > 0`` for a proxy that does not predict Y);
* every relevance-aware SP measure (family ``ours-assumed`` or ``pid``, notion SP) passes P1 and P2, except
  the two pairs that the I_min redundancy does not guarantee (:data:`CONDITIONAL_AXIOMS`): ``red_SP`` under P1
  (I_min gives independent sources X and A a positive redundancy about Y when both inform it) and ``redA_SP`` under
  P2 (likewise X and Y both informing A while X ⟂ Y); their outcomes are reported in the note;
* every EO measure passes Q1 (each is 0 under the Markov chain A - Y - X by data processing);
* the conflict witness (X = Y): every SP measure above 0.05 nats and every EO measure below 0.01.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from neurips26.common.claims import Claim

from .axioms import axiom_summary

__all__ = [
    "CONDITIONAL_AXIOMS",
    "check_claims",
    "relevance_aware",
]

NONPREDICTIVE = "nonpredictive_proxy"
RELEVANCE_FAMILIES = ("ours-assumed", "pid")
CONDITIONAL_AXIOMS = {
    ("red_SP", "P1"): "I_min redundancy Red(Y: X, A) > 0 for independent X and A that both inform Y",
    ("redA_SP", "P2"): "I_min redundancy Red(A: X, Y) > 0 for X ⟂ Y that both depend on A",
}


def relevance_aware(table: pd.DataFrame, notion: str) -> pd.DataFrame:
    """The rows of measures of ``notion`` whose family is relevance-aware (not a baseline)."""
    return table[(table["notion"] == notion) & table["family"].isin(RELEVANCE_FAMILIES)]


def _axiom_count(outcomes: pd.DataFrame, required: list[tuple[str, str, str]]) -> tuple[int, int, str]:
    """How many required (measure, property, expected outcome) triples hold, how many there are, the failures."""
    index = outcomes.set_index(["measure", "property"])["outcome"]
    failures = []
    for measure, prop, expected in required:
        got = index.get((measure, prop), "missing")
        if got != expected:
            failures.append(f"{measure} {prop}: {got} (expected {expected})")
    return len(required) - len(failures), len(required), "; ".join(failures) or "none"


def _c2_claims(axioms: pd.DataFrame) -> list[Claim]:
    outcomes = axiom_summary(axioms)
    sp_aware = relevance_aware(outcomes, "SP")["measure"].unique().tolist()
    required_sp = [("B_SP", "P2", "fail")] + [(m, p, "pass") for m in sp_aware for p in ("P1", "P2")
                                                if (m, p) not in CONDITIONAL_AXIOMS]
    triples = outcomes[["measure", "property", "outcome"]].itertuples(index=False)
    conditional = "; ".join(f"{m} {p}: {o}" for m, p, o in triples if (m, p) in CONDITIONAL_AXIOMS) or "none computed"
    eo = outcomes[outcomes["notion"] == "EO"]["measure"].unique().tolist()
    required_eo = [(m, "Q1", "pass") for m in eo]
    aligned = outcomes[outcomes["notion"].isin(["SP", "EO"])]["measure"].unique().tolist()
    required_w = [(m, "W", "pass") for m in aligned]
    sp = outcomes[outcomes["notion"] == "SP"]["measure"].unique().tolist()
    undesired = [(m, "U_SP", "pass") for m in sp]
    claims = []
    for claim_id, kind, statement, required, extra in (
        ("C2a", "hard", "Axioms: the baseline B_SP fails P2 (X ⟂ Y => mu = 0) while the relevance-aware SP measures "
         "pass P1 (X ⟂ A => 0) and P2", required_sp,
         f"relevance-aware SP measures: {sp_aware}; not required (I_min, see module docstring): {conditional}"),
        ("C2b", "hard", "Axioms: the EO measures pass Q1 (X ⟂ A | Y => mu = 0)", required_eo, f"EO measures: {eo}"),
        ("C2c", "hard", "SP- and EO-aligned properties conflict: on the witness X = Y every SP measure exceeds "
         "0.05 nats and every EO measure stays below 0.01", required_w, ""),
        ("C2d", "info", "Undesired property: X ⟂ A | Y does not force the SP measures to 0 (U_SP)", undesired,
         "informative only: the notes list it in the axiom table, not in claim C2"),
    ):
        held, total, failures = _axiom_count(outcomes, required)
        claims.append(Claim(claim_id, statement, kind, "required (measure, property) outcomes that hold",
                            float(held), float(total), ">=", note=f"failures: {failures}. {extra}".strip()))
    return claims


def _c1_claims(dpi: pd.DataFrame, scenario_of: Mapping[str, str], share: float) -> list[Claim]:
    rows = dpi[dpi["size"] > 0]
    claims = []
    for claim_id, notion, column, excess, info in (
        ("C1a", "SP", "holds_sp", "excess_sp", "I(Yhat; A) <= B_SP(S) = I(X_S; A)"),
        ("C1b", "EO", "holds_eo", "excess_eo", "I(Yhat; A | Y) <= B_EO(S) = I(X_S; A | Y)"),
    ):
        value = float(rows[column].mean()) if len(rows) else np.nan
        failed = rows[~rows[column].astype(bool)]
        by_scenario = failed["dataset"].map(lambda d: scenario_of.get(d, "?")).value_counts().to_dict()
        worst = failed.nlargest(3, excess)
        listed = ", ".join(f"{d}/{c or '{}'} +{e:.4f}" for d, c, e in zip(worst["dataset"], worst["coalition"],
                                                                        worst[excess]))
        claims.append(Claim(
            claim_id, f"The baseline bounds the bias of any restricted predictor ({notion}, data processing): {info}",
            "hard", f"share of tuned predictors (non-empty S) within the bound + 2 bootstrap SE ({column})",
            value, share, ">=",
            note=f"{len(rows)} predictors, estimator {rows['estimator'].iat[0] if len(rows) else '?'}; "
                 f"failures by scenario {by_scenario}; largest excess (nats): {listed or 'none'}"))
    return claims


def _c3_claims(redundancy: pd.DataFrame, tol: float, symmetry_tol: float) -> list[Claim]:
    by = redundancy.set_index("measure")
    estimator = str(redundancy["estimator"].iat[0]) if "estimator" in redundancy else "?"
    per_measure = ", ".join(f"{m} {r:.3f}" for m, r in by["rel_err"].items())
    relative_asym = by["asym"] / by["phi_orig"].abs().replace(0.0, np.nan)
    claims = [Claim(
        "C3a", "Shapley values treat a feature and its exact copy alike (phi_i = phi_copy)", "hard",
        "max over measures of |phi_i - phi_copy| / |phi_orig|", float(relative_asym.max(skipna=False)),
        symmetry_tol, "<", note=f"{len(by)} measures, {estimator} estimator, player {by['player'].iat[0]}")]
    for claim_id, measure in (("C3b", "B_SP"), ("C3c", "B_EO")):
        value = float(by.loc[measure, "rel_err"]) if measure in by.index else np.nan
        claims.append(Claim(
            claim_id, f"Shapley moderates redundancy for {measure}: a feature and its exact copy share the "
            "feature's original credit (not exact in general: module docstring)", "soft",
            f"|phi_i + phi_copy - phi_orig| / |phi_orig|, {measure}", value, tol, "<",
            note=f"rel_err per measure ({estimator}): {per_measure}"))
    return claims


def _best(table: pd.DataFrame, notion: str, gap: str) -> tuple[float, str]:
    rows = relevance_aware(table, notion)
    rows = rows[(rows["gap"] == gap) & rows["spearman"].notna()]
    if rows.empty:
        return np.nan, "none"
    best = rows.loc[rows["spearman"].idxmax()]
    text = f"{best['measure']} {best['spearman']:.3f} [{best['ci_low']:.3f}, {best['ci_high']:.3f}]"
    return float(best["spearman"]), text


def _c4_claims(validation: pd.DataFrame) -> list[Claim]:
    claims = []
    for claim_id, gap, own, other in (("C4a", "sp_gap", "SP", "EO"), ("C4b", "eo_gap", "EO", "SP")):
        own_rho, own_text = _best(validation, own, gap)
        other_rho, other_text = _best(validation, other, gap)
        claims.append(Claim(
            claim_id, f"Alignment: the best relevance-aware {own} measure tracks the true {own} gap better than the "
            f"best {other} measure", "soft",
            f"Spearman(best {own} measure, {gap}) - Spearman(best {other} measure, {gap}) over (dataset, S)",
            own_rho - other_rho, 0.0, ">", note=f"{own}: {own_text}; {other}: {other_text}"))
    return claims


def _spearman_of(table: pd.DataFrame, measure: str, gap: str) -> tuple[float, int]:
    rows = table[(table["measure"] == measure) & (table["gap"] == gap)]
    if rows.empty:
        return np.nan, 0
    return float(rows["spearman"].iat[0]), int(rows["n_pairs"].iat[0])


def _c5_claim(validation_nonpredictive: pd.DataFrame | None, scenario_of: Mapping[str, str],
              measure: str) -> Claim:
    datasets = sorted(d for d, s in scenario_of.items() if s == NONPREDICTIVE)
    statement = (f"On data with non-predictive proxies the relevance-aware {measure} tracks the SP gap at least "
                 "as well as the baseline B_SP")
    metric = f"Spearman({measure}, sp_gap) - Spearman(B_SP, sp_gap), {NONPREDICTIVE} datasets only"
    if not datasets or validation_nonpredictive is None or validation_nonpredictive.empty:
        return Claim("C5", statement + f" (not testable: no {NONPREDICTIVE} dataset in this run)", "info", metric,
                     np.nan, 0.0, ">=")
    ours, n_pairs = _spearman_of(validation_nonpredictive, measure, "sp_gap")
    base, _ = _spearman_of(validation_nonpredictive, "B_SP", "sp_gap")
    others = relevance_aware(validation_nonpredictive[validation_nonpredictive["gap"] == "sp_gap"], "SP")
    listed = ", ".join(f"{m} {r:.3f}" for m, r in zip(others["measure"], others["spearman"]))
    return Claim("C5", statement, "soft", metric, ours - base, 0.0, ">=",
                 note=f"{measure} {ours:.3f} vs B_SP {base:.3f} over {n_pairs} pairs of {len(datasets)} datasets "
                      f"{datasets}; all relevance-aware SP measures: {listed}")


def _c6_claims(selection: pd.DataFrame, random_removal: pd.DataFrame, scenario_of: Mapping[str, str],
               selection_measures: Mapping[str, str]) -> list[Claim]:
    claims = []
    # random_removal_table has a k column; one expected_random_removal(k=1) row per dataset has none
    random = random_removal[random_removal["k"] == 1] if "k" in random_removal else random_removal
    random = random.set_index("dataset")
    for claim_id, notion, gap in (("C6a", "SP", "sp_gap"), ("C6b", "EO", "eo_gap")):
        measure = selection_measures[notion]
        label = f"shapley_{measure}"
        top = selection[(selection["ranking"] == label) & (selection["k"] == 1)].set_index("dataset")
        missing = sorted(set(top.index) - set(random.index))
        if missing:
            raise ValueError(f"C6: no expected random removal (k=1) for dataset(s) {missing}")
        diff = top[f"delta_{gap}"] - random.loc[top.index, f"delta_{gap}"]
        by_scenario = diff.groupby(diff.index.map(lambda d: scenario_of.get(d, "?"))).mean()
        claims.append(Claim(
            claim_id, f"Feature selection: removing the top-phi feature of {measure} lowers the true {notion} gap more "
            "than removing a random feature, on average over datasets", "soft",
            f"mean over datasets of delta {gap} (top-phi {measure} removed) - E[delta {gap}] (random removal, exact)",
            float(diff.mean()) if len(diff) else np.nan, 0.0, "<",
            note=f"{len(diff)} datasets; by scenario: " + ", ".join(f"{s} {v:+.4f}" for s, v in by_scenario.items())))
    return claims


def check_claims(validation: pd.DataFrame, dpi: pd.DataFrame, axioms: pd.DataFrame, redundancy: pd.DataFrame,
                 selection: pd.DataFrame, scenario_of: Mapping[str, str], selection_measures: Mapping[str, str], *,
                 validation_nonpredictive: pd.DataFrame | None, random_removal: pd.DataFrame,
                 estimator: str = "ce", c5_measure: str = "bayes_SP", dpi_share: float = 0.95,
                 redundancy_tol: float = 0.1, symmetry_tol: float = 0.01) -> list[Claim]:
    """Claims C1a-C6b (notes 2.7). Inputs:

    - ``validation``: :func:`~.validation.validation_table` over all datasets (C4 reads rows of ``estimator``);
    - ``dpi``: :func:`~.validation.dpi_table` (C1);
    - ``axioms``: :func:`~.axioms.axiom_table` (C2);
    - ``redundancy``: :func:`~.validation.redundancy_check` (C3; needs B_SP and B_EO);
    - ``selection``: :func:`~.validation.selection_from_true_bias` with rankings ``shapley_<measure>`` for the
      measures of ``selection_measures`` (``{"SP": measure, "EO": measure}``), k up to at least 1 (C6);
    - ``scenario_of``: ``{dataset: scenario name or "real"}`` (C5 testability, per-scenario breakdowns in notes);
    - ``validation_nonpredictive``: ``validation_table(..., datasets=<the nonpredictive_proxy datasets>)`` (C5; None
      or empty when the run has none, and C5 becomes ``info``);
    - ``random_removal``: :func:`~.validation.random_removal_table` (C6: the exact random-removal expectation; rows
      with k = 1 are read), or one :func:`~.validation.expected_random_removal` row (k = 1) per dataset with a
      ``dataset`` column and no ``k``."""
    chosen = validation[validation["estimator"] == estimator]
    chosen_np = (validation_nonpredictive[validation_nonpredictive["estimator"] == estimator]
                 if validation_nonpredictive is not None else None)
    return [
        *_c1_claims(dpi, scenario_of, dpi_share),
        *_c2_claims(axioms),
        *_c3_claims(redundancy, redundancy_tol, symmetry_tol),
        *_c4_claims(chosen),
        _c5_claim(chosen_np, scenario_of, c5_measure),
        *_c6_claims(selection, random_removal, scenario_of, selection_measures),
    ]
