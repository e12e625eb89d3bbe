"""Convert one of TDC's oracle pickles (a scikit-learn 0.23 RandomForestClassifier) into plain arrays.

Runs in envs/tdc_sklearn.yaml (scikit-learn 1.2.2, the last release that unpickles these files; ours cannot).
Checks before writing: the arrays scored in numpy (neurips26.amortix.tdc.TreeForest) equal the unpickled forest's
predict_proba on the self-test molecules and on random bit vectors, and the self-test molecules get TDC's
published scores (tdc.TOLERANCE); it fails naming the molecules otherwise. Logs whether the file's size and
sha256 agree with the third-party measurement (the registry of sources, folder amortix/tdc). Plain logging: this
environment has neither pandas nor the workflow's runtime helpers.
"""

import logging
import pickle
import warnings
from pathlib import Path

import numpy as np
import sklearn

from neurips26.amortix import tdc

log = logging.getLogger("neurips26.amortix_tdc_convert")
log.setLevel(logging.INFO)
for _old in list(log.handlers):  # a previous run in this process (tests)
    _old.close()
    log.removeHandler(_old)
_handler = logging.FileHandler(snakemake.log[0])
_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
log.addHandler(_handler)
target = snakemake.wildcards.target
path = Path(snakemake.input.pickle)
size, sha256 = tdc.file_digest(path)
agreement = tdc.third_party_agreement(path.name, size, sha256)
(log.info if "as the third-party measurement states" in agreement else log.warning)(agreement)
with open(path, "rb") as handle:
    head = handle.read(64)
if not head.startswith(b"\x80"):  # every protocol >= 2 pickle starts with PROTO; Dataverse has served HTML here
    raise tdc.ConversionError(
        f"{path} ({size} bytes) is not a pickle; it starts with {head[:40]!r}. Delete the file and its entry in"
        " config/sources.lock.yaml to fetch it again"
    )
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with open(path, "rb") as handle:
        forest = pickle.load(handle)  # a file locked in config/sources.lock.yaml, from TDC's Dataverse address
for warning in caught:
    log.info("while unpickling: %s", warning.message)
if type(forest).__name__ != "RandomForestClassifier" or not hasattr(forest, "estimators_"):
    raise tdc.ConversionError(
        f"{path} ({size} bytes) holds {type(forest).__name__}"
        f"{'' if hasattr(forest, 'estimators_') else ' without fitted trees'}, not TDC's fitted random forest (TDC"
        " issue 372 reports a 675-byte file at this address). Delete the file and its entry in"
        " config/sources.lock.yaml to fetch it again"
    )
log.info(
    "%s: %s with %d trees, scikit-learn %s",
    path.name,
    type(forest).__name__,
    len(forest.estimators_),
    sklearn.__version__,
)
arrays = tdc.forest_arrays(forest)
forest_np = tdc.TreeForest(arrays)
rng = np.random.default_rng(0)
random_bits = (rng.random((256, forest_np.n_features)) < 0.02).astype(np.float64)
selftest = tdc.tdc_fingerprints(tdc.SELFTEST_SMILES)
for name, x in (("self-test molecules", selftest), ("random bit vectors", random_bits)):
    reference = forest.predict_proba(x)
    ours = forest_np.predict_proba(x)
    gap = float(np.abs(reference - ours).max())
    log.info("%s: max |sklearn - numpy| = %.3g", name, gap)
    if not np.allclose(ours, reference, rtol=0.0, atol=1e-12):
        raise tdc.ConversionError(f"{target}: numpy scores differ from scikit-learn's on {name} by {gap:.3g}")
scores = forest_np.predict_active(selftest)
for smiles, value, expected, _ in tdc.check_published(target, scores):
    log.info("%s(%s) = %.4f, TDC published %s (tolerance %s): ok", target, smiles, value, expected, tdc.TOLERANCE)
tdc.save_forest(snakemake.output[0], arrays)
log.info("wrote %s: %d trees, %d nodes", snakemake.output[0], forest_np.n_trees, len(forest_np.left))
