"""AMORTIX oracles: descriptor values, GuacaMol definitions, the kinase surrogate and its stored state, score checks,
the self-test, the call budget and PMO's top-k AUC."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from rdkit import Chem, rdBase

from neurips26.amortix import artifacts, corpus, oracles, selftest, surrogate
from neurips26.amortix import budget as budgets

ASPIRIN = Chem.MolFromSmiles("CC(=O)Oc1ccccc1C(=O)O")
N_FIT_DECOYS = 1500  # of NCI first_5K: the fixture fits in ~3 s


@pytest.fixture(scope="module")
def nci():
    """Parseable NCI first_5K SMILES (presumed-inactive decoys), file order."""
    with rdBase.BlockLogs():
        return [
            s
            for s in corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))
            if Chem.MolFromSmiles(s) is not None
        ]


@pytest.fixture(scope="module")
def ligands():
    """EGFR and CDK2 ligands split into (fit, held out): every 10th ligand is kept out of the fit."""
    egfr, cdk2 = surrogate.kinase_ligand_smiles()
    split = lambda smiles: ([s for i, s in enumerate(smiles) if i % 10], smiles[::10])  # noqa: E731
    return {"egfr": split(egfr), "cdk2": split(cdk2)}


@pytest.fixture(scope="module")
def kinase(nci, ligands):
    return surrogate.fit_kinase_surrogate(ligands["egfr"][0], ligands["cdk2"][0], nci[:N_FIT_DECOYS], seed=0)


def mol_opt_top_auc(scores, top_n, finish, freq_log, max_oracle_calls):
    """mol_opt's loop (main/optimizer.py) on scores in call order: the reference top_k_auc must match."""
    total, prev, called = 0.0, 0.0, 0
    for idx in range(freq_log, min(len(scores), max_oracle_calls), freq_log):
        now = np.mean(sorted(scores[:idx], reverse=True)[:top_n])
        total += freq_log * (now + prev) / 2
        prev, called = now, idx
    now = np.mean(sorted(scores, reverse=True)[:top_n])
    total += (len(scores) - called) * (now + prev) / 2
    if finish and len(scores) < max_oracle_calls:
        total += (max_oracle_calls - len(scores)) * now
    return total / max_oracle_calls


def test_qed_and_sa_known_values():
    assert oracles.qed(ASPIRIN) == pytest.approx(0.5501, abs=1e-3)  # RDKit's documented QED of aspirin
    assert 1.5 < oracles.sa_score(ASPIRIN) < 1.7
    assert oracles.sa_score(Chem.MolFromSmiles("c1ccccc1")) == pytest.approx(1.0)  # SA is clipped at 1 (easiest)
    assert oracles.sa_score(Chem.MolFromSmiles(selftest.PANEL["imatinib"])) > oracles.sa_score(ASPIRIN)


def test_max_tanimoto_matches_rdkit_and_is_one_for_a_reference_member():
    from rdkit import DataStructs
    from rdkit.Chem import rdFingerprintGenerator

    refs = ["c1ccccc1O", "CCN(CC)CC", "c1ccc2ccccc2c1"]
    matrix = oracles.reference_fingerprints(refs)
    generator = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
    expected = max(
        DataStructs.BulkTanimotoSimilarity(
            generator.GetFingerprint(ASPIRIN), [generator.GetFingerprint(Chem.MolFromSmiles(s)) for s in refs]
        )
    )
    assert oracles.max_tanimoto(ASPIRIN, matrix) == pytest.approx(expected)
    assert oracles.max_tanimoto(Chem.MolFromSmiles("CCN(CC)CC"), matrix) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="C1CC"):
        oracles.reference_fingerprints(["C1CC"])


def test_sdf_smiles_skips_and_counts_unreadable_records(tmp_path):
    good = Chem.MolToMolBlock(ASPIRIN)
    pentavalent = Chem.MolToMolBlock(Chem.MolFromSmiles("C(C)(C)(C)(C)C", sanitize=False))
    path = tmp_path / "mixed.sdf"
    path.write_text(f"{good}$$$$\n{pentavalent}$$$$\n{good}$$$$\n")
    smiles, skipped = surrogate.sdf_smiles(path)
    assert smiles == [Chem.MolToSmiles(ASPIRIN)] and skipped == 1
    egfr, cdk2 = surrogate.kinase_ligand_smiles()
    assert len(egfr) == 365 and len(cdk2) == 47


def test_kinase_surrogate_score_is_the_mean_of_its_components(kinase):
    mols = [ASPIRIN, Chem.MolFromSmiles(selftest.PANEL["erlotinib"]), None]
    parts = kinase.components(mols)
    scores = kinase(mols)
    assert parts.columns.tolist() == ["qed", "sa", "p_egfr", "p_cdk2"]
    for i in range(2):
        row = parts.iloc[i]
        assert scores[i] == pytest.approx(np.mean([row.p_egfr, row.p_cdk2, row.qed, (10 - row.sa) / 9]))
    assert parts.iloc[2].isna().all() and scores[2] == 0.0  # invalid molecule: NaN components, reward 0
    assert not kinase.success(parts).any()


def test_kinase_surrogate_scores_lie_in_the_unit_interval(kinase, nci):
    mols = [Chem.MolFromSmiles(s) for s in [*selftest.PANEL.values(), *nci[N_FIT_DECOYS : N_FIT_DECOYS + 300]]]
    parts = kinase.components(mols)
    scores = kinase(mols)
    assert ((scores >= 0) & (scores <= 1)).all()
    assert parts[["p_egfr", "p_cdk2", "qed"]].stack().between(0, 1).all() and parts["sa"].between(1, 10).all()


def test_kinase_success_uses_the_papers_thresholds(kinase):
    """RationaleRL: both activities >= 0.5, QED >= 0.6 and SA < 4, each boundary tested; NaN rows fail."""
    parts = pd.DataFrame(
        {
            "qed": [0.6, 0.59, 0.7, 0.7, 0.7, 0.7, np.nan],
            "sa": [3.99, 3.0, 4.0, 3.0, 3.0, 3.0, np.nan],
            "p_egfr": [0.5, 0.9, 0.9, 0.49, 0.9, 1.0, np.nan],
            "p_cdk2": [0.5, 0.9, 0.9, 0.9, 0.49, 1.0, np.nan],
        }
    )
    expected = [True, False, False, False, False, True, False]
    assert kinase.activity_threshold == 0.5
    assert kinase.success(parts).tolist() == expected
    assert surrogate.kinase_success(parts).tolist() == expected
    assert surrogate.kinase_success(parts, activity_threshold=0.45).tolist()[3:5] == [True, True]
    assert surrogate.kinase_success(parts, qed_threshold=0.5, sa_threshold=4.5).tolist()[1:3] == [True, True]


def test_kinase_classifiers_are_cross_validated(kinase, ligands):
    assert set(kinase.cv_auc) == {"egfr", "cdk2"}
    assert min(kinase.cv_auc.values()) >= selftest.MIN_CV_AUC
    assert kinase.n_positives == {t: len(ligands[t][0]) for t in ("egfr", "cdk2")}
    assert kinase.n_decoys == N_FIT_DECOYS  # no NCI molecule is one of the ligands


def test_held_out_ligands_score_higher_than_held_out_decoys(kinase, ligands, nci):
    decoys = kinase.components([Chem.MolFromSmiles(s) for s in nci[N_FIT_DECOYS : N_FIT_DECOYS + 500]])
    for target in ("egfr", "cdk2"):
        held_out = kinase.components([Chem.MolFromSmiles(s) for s in ligands[target][1]])
        column = f"p_{target}"
        assert held_out[column].mean() > decoys[column].mean() + 0.3, target
    assert decoys[["p_egfr", "p_cdk2"]].mean().max() < 0.1


def test_stored_kinase_surrogate_is_rebuilt_with_identical_predictions(kinase, nci, tmp_path):
    mols = [Chem.MolFromSmiles(s) for s in [*selftest.PANEL.values(), *nci[:100]]] + [None]
    path = tmp_path / "oracle.npz"
    artifacts.save_oracle(path, kinase)
    with np.load(path, allow_pickle=False) as stored:  # arrays and a JSON string only: no pickled object
        assert "settings" in stored.files and all(stored[k].dtype != object for k in stored.files)
    loaded = artifacts.load_oracle(path)
    assert isinstance(loaded, surrogate.KinaseSurrogate) and loaded.cv_auc == kinase.cv_auc
    assert (loaded.n_positives, loaded.n_decoys, loaded.seed) == (kinase.n_positives, kinase.n_decoys, kinase.seed)
    np.testing.assert_array_equal(loaded(mols), kinase(mols))
    pd.testing.assert_frame_equal(loaded.components(mols), kinase.components(mols))


def test_kinase_fit_is_deterministic_for_a_seed_and_drops_ligands_from_the_decoys(ligands, nci):
    egfr, cdk2 = ligands["egfr"][0][:60], ligands["cdk2"][0][:20]
    # two ligands passed again as decoys, written differently (non-canonical atom order)
    disguised = [Chem.MolToSmiles(Chem.MolFromSmiles(s), doRandom=True) for s in (egfr[0], cdk2[0])]
    decoys = nci[:300] + disguised
    first, second, other = (
        surrogate.fit_kinase_surrogate(egfr, cdk2, decoys, n_estimators=10, seed=seed, folds=3) for seed in (0, 0, 1)
    )
    assert first.n_decoys == 300 and first.n_positives == {"egfr": 60, "cdk2": 20}
    mols = [Chem.MolFromSmiles(s) for s in nci[300:500]]
    np.testing.assert_array_equal(first(mols), second(mols))
    assert first.cv_auc == second.cv_auc
    assert not np.array_equal(first(mols), other(mols))


def test_kinase_fit_rejects_bad_inputs(ligands, nci):
    egfr, cdk2 = ligands["egfr"][0][:20], ligands["cdk2"][0][:20]
    with pytest.raises(ValueError, match="C1CC"):
        surrogate.fit_kinase_surrogate(egfr, cdk2, [*nci[:50], "C1CC"], n_estimators=5)
    with pytest.raises(ValueError, match="cdk2: 3 ligands"):
        surrogate.fit_kinase_surrogate(egfr, cdk2[:3], nci[:50], n_estimators=5, folds=5)
    with pytest.raises(ValueError, match="fitted"):
        from sklearn.ensemble import RandomForestClassifier

        surrogate.KinaseSurrogate.from_classifiers(RandomForestClassifier(), RandomForestClassifier())


def test_osimertinib_mpo_follows_guacamol_on_osimertinib():
    """Osimertinib itself is far from the MPO optimum: FCFP4 sim 1 (clipped to 1), ECFP6 sim 1 > 0.85, TPSA 87.6,
    logP 4.51; GuacaMol's geometric mean of the four modified terms is about 0.133."""
    oracle = oracles.OsimertinibMPO()
    drug = Chem.MolFromSmiles(oracles.OSIMERTINIB)
    terms = np.array(
        [1.0, np.exp(-0.5 * 1.5**2), np.exp(-0.5 * ((87.55 - 100) / 10) ** 2), np.exp(-0.5 * (4.5098 - 1) ** 2)]
    )
    assert oracle([drug])[0] == pytest.approx(terms.prod() ** 0.25, abs=1e-3)
    assert oracle([drug])[0] == pytest.approx(0.1333, abs=1e-3)
    np.testing.assert_allclose(oracle.terms([drug]).to_numpy()[0], terms, atol=1e-4)


def test_guacamol_similarities_use_unfolded_count_fingerprints():
    """Our generators reproduce GuacaMol's AllChem.GetMorganFingerprint similarities (legacy API, if present)."""
    from rdkit import DataStructs
    from rdkit.Chem import AllChem

    if not hasattr(AllChem, "GetMorganFingerprint"):
        pytest.skip("legacy Morgan API removed from this RDKit")
    target = Chem.MolFromSmiles(oracles.OSIMERTINIB)
    mols = [Chem.MolFromSmiles(s) for s in selftest.PANEL.values()]
    with rdBase.BlockLogs():
        reference = AllChem.GetMorganFingerprint(target, 2, useFeatures=True)
        legacy = [
            DataStructs.TanimotoSimilarity(AllChem.GetMorganFingerprint(m, 2, useFeatures=True), reference)
            for m in mols
        ]
    ours = oracles._count_similarity(mols, oracles._FCFP4_COUNTS, target)
    np.testing.assert_allclose(ours, legacy, atol=1e-12)


def test_celecoxib_rediscovery_is_one_on_celecoxib():
    oracle = oracles.CelecoxibRediscovery()
    scores = oracle([Chem.MolFromSmiles("Cc1ccc(-c2cc(C(F)(F)F)nn2-c2ccc(S(N)(=O)=O)cc2)cc1"), ASPIRIN])
    assert scores[0] == pytest.approx(1.0) and scores[1] < 0.3


@pytest.mark.parametrize("name", sorted(oracles.PMO_ORACLES))
def test_pmo_oracles_pass_their_selftest(name):
    table = selftest.selftest(oracles.PMO_ORACLES[name]())
    assert table["passed"].all() and {"check", "value", "expected", "passed"} <= set(table.columns)


def test_kinase_surrogate_passes_its_selftest(kinase):
    table = selftest.selftest(kinase).set_index("check")
    assert table["passed"].all()
    assert table.loc["egfr classifier CV ROC AUC", "value"] == pytest.approx(kinase.cv_auc["egfr"])
    assert table.loc["cdk2 classifier CV ROC AUC", "value"] == pytest.approx(kinase.cv_auc["cdk2"])
    assert any(check.startswith("erlotinib") for check in table.index)


def test_kinase_selftest_fails_on_a_weak_classifier(kinase):
    weak = surrogate.KinaseSurrogate(kinase.forests, cv_auc={"egfr": 0.7, "cdk2": kinase.cv_auc["cdk2"]})
    with pytest.raises(oracles.OracleError, match="egfr classifier CV ROC AUC: 0.7 "):
        selftest.selftest(weak)


@pytest.mark.parametrize("bad", [np.nan, np.inf, 1.5, -0.1])
def test_check_scores_names_the_offending_molecule(bad):
    with pytest.raises(oracles.OracleError, match=rf"'CCO'.*{bad}"):
        oracles.check_scores(np.array([0.5, bad]), ["c1ccccc1", "CCO"], "toy")


def test_every_oracle_call_checks_its_scores():
    class Broken(oracles.Oracle):
        name = "broken"

        def _score(self, mols):
            return np.full(len(mols), np.nan)

    with pytest.raises(oracles.OracleError, match=r"broken scored 'CC\(=O\)Oc1ccccc1C\(=O\)O' nan"):
        Broken()([ASPIRIN])


def test_selftest_raises_on_a_failing_expectation():
    class WrongQED(oracles.QEDOracle):
        def _score(self, mols):
            return 0.9 * super()._score(mols)

    with pytest.raises(oracles.OracleError, match="qed\\(aspirin\\)"):
        selftest.selftest(WrongQED())


def test_budget_stops_before_it_is_exceeded():
    budget = budgets.OracleBudget(10)
    budget.spend(8)
    with pytest.raises(budgets.BudgetExceeded, match="limit 10, 8 calls so far, 3 more requested"):
        budget.spend(3)
    assert budget.calls == 8 and budget.remaining == 2
    budget.spend(2)
    assert budget.remaining == 0
    with pytest.raises(budgets.BudgetExceeded):
        budget.spend(1)


def test_top_k_auc_hand_computed_case():
    # readings at 2 calls (top-1 = 0.6) and 4 calls (top-1 = 1.0): trapezoids (0 + 0.6)/2*2 + (0.6 + 1.0)/2*2 = 2.2
    scores = [0.2, 0.6, 0.4, 1.0]
    assert budgets.top_k_auc(scores, budget=4, k=1, freq=2) == pytest.approx(2.2 / 4)
    # budget 6 with 4 calls made: the last top-1 is held for the 2 missing calls
    assert budgets.top_k_auc(scores, budget=6, k=1, freq=2) == pytest.approx((2.2 + 2 * 1.0) / 6)
    assert budgets.top_k_auc(scores, budget=6, k=1, freq=2, finish=False) == pytest.approx(2.2 / 6)


def test_top_k_auc_of_constant_scores_loses_half_the_first_interval():
    assert budgets.top_k_auc(np.full(1000, 0.8), budget=1000) == pytest.approx(0.8 * (1 - 100 / 2000))


def test_top_k_auc_matches_mol_opt_loop_and_rewards_finding_good_molecules_early():
    rng = np.random.default_rng(0)
    for n, budget, k, freq in [(1000, 1000, 10, 100), (537, 1000, 10, 100), (250, 300, 100, 50), (7, 50, 10, 5)]:
        scores = rng.uniform(size=n)
        expected = mol_opt_top_auc(list(scores), k, True, freq, budget)
        assert budgets.top_k_auc(scores, budget, k, freq) == pytest.approx(expected)
    scores = rng.uniform(size=500)
    assert budgets.top_k_auc(np.sort(scores)[::-1], 500) > budgets.top_k_auc(np.sort(scores), 500)


def test_the_numpy_forest_predicts_exactly_what_scikit_learn_predicts():
    from sklearn.ensemble import RandomForestClassifier

    from neurips26.amortix.forest import ForestArrays

    rng = np.random.default_rng(0)
    x = (rng.random((300, 64)) < 0.2).astype(np.float32)
    y = (x[:, :5].sum(axis=1) + rng.random(300) > 1.5).astype(int)
    forest = RandomForestClassifier(n_estimators=20, class_weight="balanced", random_state=0).fit(x, y)
    fresh = (rng.random((200, 64)) < 0.2).astype(np.float32)
    expected = forest.predict_proba(fresh)[:, 1]
    assert np.allclose(ForestArrays.from_sklearn(forest).predict_positive(fresh), expected, atol=1e-12)
    assert 0 < expected.mean() < 1
