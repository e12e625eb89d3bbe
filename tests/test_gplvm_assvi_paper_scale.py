"""Paper 17's paper-scale block runs (issue 38): its oil setting (the reference's 12 latent dimensions on 12 columns)
gets a PCA baseline, every job's library checks pass at the block's values (the objects the scripts build, on arrays
of the datasets' shapes), and a value a job would refuse is refused when the workflow is parsed, naming the key."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import yaml

from conftest import ROOT
from neurips26.gplvm_assvi import experiment
from neurips26.gplvm_assvi.data import OIL_SHAPE, _missing_mask, build_dataset, check_observations
from neurips26.gplvm_assvi.models import fit
from neurips26.gplvm_assvi.pca import ppca_components, ppca_predictive

PAPER = yaml.safe_load((ROOT / "config/gplvm_assvi.yaml").read_text())["paper"]


def oil_shaped(points: int, missing: float, seed: int = 0) -> dict[str, np.ndarray]:
    """A standardised (points, 12) array with correlated columns and ``missing`` of its entries hidden, as the oil
    reader returns (the archive itself is a paper-scale download)."""
    rng = np.random.default_rng(seed)
    full = rng.normal(size=(points, 3)) @ rng.normal(size=(3, OIL_SHAPE[1])) + 0.1 * rng.normal(size=(points, 12))
    full = (full - full.mean(0)) / full.std(0)
    mask = _missing_mask(full.shape, missing, np.random.default_rng([seed, 2]))
    return {"y": np.where(mask, full, np.nan), "mask": mask, "y_full": full}


def test_the_paper_oil_setting_gets_a_pca_baseline_of_one_component_less_than_its_columns():
    oil = PAPER["datasets"]["oil"]
    assert oil["latent_dim"] == OIL_SHAPE[1]  # the reference's Q = D
    data = oil_shaped(120, oil["missing"])
    means, variances, reconstruction = ppca_predictive(data["y"], data["mask"], oil["latent_dim"], iterations=5)
    hidden = ~data["mask"]
    assert ppca_components(oil["latent_dim"], OIL_SHAPE[1]) == OIL_SHAPE[1] - 1
    assert means.shape == variances.shape == (1, 120, 12) and reconstruction.shape == (120, 12)
    assert np.isfinite(means).all() and np.isfinite(reconstruction).all()
    assert (variances[0][hidden] > 0).all() and (variances[0][~hidden] == 0).all()


def test_the_pca_components_follow_the_latent_dimension_below_the_columns():
    assert ppca_components(2, 12) == 2 and ppca_components(11, 12) == 11 and ppca_components(40, 3) == 2
    with pytest.raises(ValueError, match="latent_dim >= 1"):
        ppca_components(0, 12)


def paper_arrays(name: str, dataset: dict) -> dict[str, np.ndarray]:
    if dataset["source"] == "oil_flow":
        return oil_shaped(OIL_SHAPE[0], dataset["missing"])
    return build_dataset(dataset["kind"], dataset["n"], dataset["data_seed"], dataset["dim"], dataset["noise"],
                         dataset["missing"], dataset["lift"])  # fmt: skip


@pytest.mark.parametrize("name", sorted(PAPER["datasets"]))
def test_the_paper_block_passes_what_its_jobs_check(name):
    """What the data, train and pca jobs build from the paper block, on arrays of the dataset's shape: every model
    of the dataset with the block's sizes and one minibatch step at its batch, and the PCA baseline."""
    experiment.check_config(PAPER)
    dataset = PAPER["datasets"][name]
    data = paper_arrays(name, dataset)
    assert data["y"].shape == experiment.data_shape(dataset)
    check_observations(data["y"], data["mask"])
    y, mask = torch.as_tensor(data["y"]), torch.as_tensor(data["mask"])
    for method in experiment.methods_of(PAPER, name):
        model = experiment.build_model(method, y, mask, dataset, PAPER["model"], seed=0)
        trace = fit(model, y, mask, 1, PAPER["train"]["lr"], batch=PAPER["train"]["batch"], seed=0)
        assert len(trace) == 1 and np.isfinite(trace[0])
    means, _, _ = ppca_predictive(data["y"], data["mask"], dataset["latent_dim"], iterations=2)
    assert np.isfinite(means).all()


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (lambda c: c["datasets"]["oil"].update(latent_dim=13), "dataset oil: latent_dim 13 exceeds the data's 12"),
        (lambda c: c["datasets"]["swiss_roll"].update(latent_dim=4), "dataset swiss_roll: latent_dim 4 exceeds"),
        (lambda c: c["datasets"]["oil"].update(inducing=1001), "dataset oil: 1001 inducing points for 1000"),
        (lambda c: c["train"].update(batch=1001), "train.batch 1001 exceeds dataset oil's 1000 points"),
    ],
)
def test_a_paper_block_a_job_would_refuse_is_refused_at_parse_time_naming_the_key(edit, match):
    cfg = copy.deepcopy(PAPER)
    edit(cfg)
    with pytest.raises(ValueError, match=match):
        experiment.check_config(cfg)
