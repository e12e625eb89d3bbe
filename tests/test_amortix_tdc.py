"""TDC's GSK3B/JNK3 oracles as arrays (neurips26.amortix.tdc): a random forest converted by the same function the
conversion job uses scores exactly as scikit-learn's predict_proba, the published self-test scores are enforced,
and TDC's featurization equals the fingerprints the oracle is scored on. The real pickles are downloads (paper
scale), so the forests here are fitted in the test with the installed scikit-learn."""

from __future__ import annotations

import logging
import pickle
import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from rdkit import Chem
from sklearn.ensemble import RandomForestClassifier

from neurips26.amortix import oracles, tdc
from neurips26.amortix.selftest import PANEL


def fitted_forest(
    n_features: int, seed: int, continuous: bool, **settings
) -> tuple[RandomForestClassifier, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(400, n_features)) if continuous else (rng.random((400, n_features)) < 0.05).astype(float)
    y = (x[:, :5].sum(axis=1) + rng.normal(scale=0.5, size=len(x)) > (0 if continuous else 0.3)).astype(int)
    forest = RandomForestClassifier(n_estimators=25, random_state=seed, **settings).fit(x, y)
    test = rng.normal(size=(300, n_features)) if continuous else (rng.random((300, n_features)) < 0.05).astype(float)
    return forest, test


@pytest.mark.parametrize(
    ("n_features", "continuous", "settings"),
    [
        (2048, False, {}),  # fingerprint bits, as TDC's forests see them
        (20, True, {"max_depth": 6, "min_samples_leaf": 3}),  # thresholds between real values, impure leaves
        (20, True, {"class_weight": "balanced", "bootstrap": False, "max_features": 0.5}),
    ],
)
def test_converted_forest_scores_exactly_as_sklearn_predict_proba(tmp_path, n_features, continuous, settings):
    forest, test = fitted_forest(n_features, 0, continuous, **settings)
    path = tmp_path / "forest.npz"
    tdc.save_forest(path, tdc.forest_arrays(forest))
    loaded = tdc.load_forest(path)
    expected = forest.predict_proba(test)
    assert 0.0 < expected[:, 1].std()  # the test data reach leaves of both kinds
    np.testing.assert_allclose(loaded.predict_proba(test), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(loaded.predict_active(test), expected[:, 1], rtol=0, atol=1e-12)
    assert loaded.n_trees == 25 and loaded.n_features == n_features and loaded.classes.tolist() == [0, 1]


def test_leaf_counts_and_leaf_fractions_give_the_same_probabilities():
    """scikit-learn < 1.4 (the version that loads TDC's pickles) stores class counts in tree_.value, later
    versions class fractions: the conversion keeps what it finds and the scorer normalises either."""
    forest, test = fitted_forest(20, 1, True, max_depth=5)
    arrays = tdc.forest_arrays(forest)
    counts = dict(
        arrays, value=arrays["value"] * np.random.default_rng(0).uniform(1, 50, size=(len(arrays["value"]), 1))
    )
    np.testing.assert_allclose(
        tdc.TreeForest(counts).predict_proba(test), forest.predict_proba(test), rtol=0, atol=1e-12
    )


def test_converted_arrays_are_plain_and_per_tree():
    forest, _ = fitted_forest(20, 2, True, max_depth=4)
    arrays = tdc.forest_arrays(forest)
    offsets = arrays["tree_offsets"]
    assert len(offsets) == 26 and offsets[0] == 0
    for t, estimator in enumerate(forest.estimators_):
        rows = slice(offsets[t], offsets[t + 1])
        np.testing.assert_array_equal(arrays["children_left"][rows], estimator.tree_.children_left)
        np.testing.assert_array_equal(arrays["threshold"][rows], estimator.tree_.threshold)
        np.testing.assert_array_equal(arrays["value"][rows], estimator.tree_.value[:, 0, :])
    assert all(a.dtype != object for a in arrays.values())


def test_forest_without_class_one_and_wrong_width_are_refused():
    forest, test = fitted_forest(20, 3, True, max_depth=3)
    arrays = tdc.forest_arrays(forest)
    with pytest.raises(tdc.ConversionError, match="no class 1"):
        tdc.TreeForest(dict(arrays, classes=np.array([2, 3]))).predict_active(test)
    with pytest.raises(ValueError, match="rows of 20 features"):
        tdc.TreeForest(arrays).predict_active(test[:, :10])
    with pytest.raises(tdc.ConversionError, match="lacks"):
        tdc.TreeForest({k: v for k, v in arrays.items() if k != "threshold"})


def test_published_scores_pass_within_the_tolerance_and_fail_beyond_it():
    published = {"gsk3b": [0.03, 0.0, 0.0], "jnk3": [0.01, 0.5, 0.5]}  # jnk3 publishes the first molecule only
    for target, scores in published.items():
        near = np.asarray(scores) + tdc.TOLERANCE * 0.9
        assert all(ok for *_, ok in tdc.check_published(target, near))
    assert len(tdc.check_published("jnk3", [0.01, 0.9, 0.9])) == 1
    off = np.array([0.03 + 1.5 * tdc.TOLERANCE, 0.0, 0.0])
    with pytest.raises(tdc.ConversionError, match="published 0.03") as error:
        tdc.check_published("gsk3b", off)
    assert tdc.SELFTEST_SMILES[0] in str(error.value) and str(tdc.TOLERANCE) in str(error.value)


def test_tdc_featurization_equals_the_fingerprints_the_oracle_is_scored_on():
    """TDC computes AllChem.GetMorganFingerprintAsBitVect(mol, 2, nBits=2048); the kinase oracles score
    oracles.ecfp4_bits (RDKit's Morgan generator, radius 2, 2048 bits). Same bits on every molecule tried."""
    smiles = [*tdc.SELFTEST_SMILES, *PANEL.values()]
    ours = oracles.ecfp4_bits([Chem.MolFromSmiles(s) for s in smiles])
    theirs = tdc.tdc_fingerprints(smiles)
    assert theirs.dtype == np.float64 and theirs.shape == (len(smiles), 2048)
    np.testing.assert_array_equal(theirs, ours.astype(np.float64))
    with pytest.raises(tdc.ConversionError, match="cannot parse"):
        tdc.tdc_fingerprints(["C1CC"])


def test_third_party_agreement_says_whether_size_and_hash_match(tmp_path):
    path = tmp_path / "gsk3b_current.pkl"
    path.write_bytes(b"\x80\x04not a forest")
    size, sha256 = tdc.file_digest(path)
    assert size == 14 and len(sha256) == 64
    assert "as the third-party measurement states" not in tdc.third_party_agreement(path.name, size, sha256)
    stated = tdc.THIRD_PARTY["jnk3_current.pkl"]
    assert "as the third-party measurement states" in tdc.third_party_agreement("jnk3_current.pkl", *stated)


# ---------------------------------------------------------------- the conversion job (scripts/amortix/tdc_convert.py)

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "amortix" / "tdc_convert.py"


def run_conversion(tmp_path, pickle_path) -> Path:
    out = tmp_path / "gsk3b.npz"
    job = SimpleNamespace(
        log=[str(tmp_path / "convert.log")],
        wildcards=SimpleNamespace(target="gsk3b"),
        input=SimpleNamespace(pickle=str(pickle_path)),
        output=[str(out)],
    )
    try:
        runpy.run_path(str(SCRIPT), init_globals={"snakemake": job})
    finally:
        for handler in list(logging.getLogger("neurips26.amortix_tdc_convert").handlers):
            handler.close()
    return out


@pytest.fixture
def pickled_forest(tmp_path):
    """A forest on TDC's fingerprints of NCI molecules, pickled as TDC's files are (plain pickle)."""
    from neurips26.amortix import corpus

    smiles = corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))[:300]
    x = tdc.tdc_fingerprints([s for s in smiles if Chem.MolFromSmiles(s) is not None])
    y = (x[:, :1024].sum(axis=1) > np.median(x[:, :1024].sum(axis=1))).astype(int)
    forest = RandomForestClassifier(n_estimators=20, random_state=0).fit(x, y)
    path = tmp_path / "gsk3b_current.pkl"
    path.write_bytes(pickle.dumps(forest))
    return forest, x, path


def test_conversion_job_writes_arrays_that_score_as_the_pickled_forest(tmp_path, pickled_forest, monkeypatch):
    forest, x, path = pickled_forest
    own = forest.predict_proba(tdc.tdc_fingerprints(tdc.SELFTEST_SMILES))[:, 1]
    monkeypatch.setitem(tdc.PUBLISHED, "gsk3b", tuple(float(v) for v in own))  # its own scores stand in for TDC's
    out = run_conversion(tmp_path, path)
    np.testing.assert_allclose(tdc.load_forest(out).predict_proba(x), forest.predict_proba(x), rtol=0, atol=1e-12)
    log = (tmp_path / "convert.log").read_text()
    assert "max |sklearn - numpy| = 0" in log and "TDC published" in log and "third-party measurement" in log


def test_conversion_job_refuses_a_forest_off_tdcs_published_scores(tmp_path, pickled_forest):
    _, _, path = pickled_forest
    with pytest.raises(tdc.ConversionError, match="does not reproduce TDC's published scores"):
        run_conversion(tmp_path, path)
    assert not (tmp_path / "gsk3b.npz").exists()


def test_conversion_job_refuses_an_html_page(tmp_path):
    path = tmp_path / "gsk3b_current.pkl"
    path.write_text("<!DOCTYPE html><html><body>Dataverse</body></html>")
    with pytest.raises(tdc.ConversionError, match="is not a pickle"):
        run_conversion(tmp_path, path)


def test_conversion_job_refuses_an_unfitted_forest(tmp_path):
    path = tmp_path / "gsk3b_current.pkl"
    path.write_bytes(pickle.dumps(RandomForestClassifier()))
    with pytest.raises(tdc.ConversionError, match="without fitted trees"):
        run_conversion(tmp_path, path)
