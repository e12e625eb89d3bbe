"""Paper 03 (AnaDiffusion): what the jobs write and read back (splits, networks, the record of a generation job's
inputs that the "no segmentation at inference" check reads) and the evaluation tables built from them."""

import numpy as np
import pandas as pd
import pytest
import torch

from neurips26.anadiffusion import artifacts, editing, evaluation
from neurips26.anadiffusion.claims import masks_at_inference
from neurips26.anadiffusion.template import build_template
from neurips26.common.io import save_npz


@pytest.fixture(scope="module")
def template():
    return build_template(12.0, (16, 20, 16))


def test_input_record_names_per_subject_masks_and_the_check_flags_only_those(tmp_path, template):
    split, grid = tmp_path / "train.npz", tmp_path / "template.npz"
    volumes = np.full((3, *template.shape), -1.0, np.float32)
    artifacts.save_split(split, volumes, np.repeat(template.parts[None], 3, axis=0))
    save_npz(grid, **template.as_arrays())
    network = tmp_path / "whole.pt"
    artifacts.save_network(network, "whole", "smoke", [0], [{"w": torch.zeros(2)}])
    assert artifacts.npz_arrays(split) == {"volumes": ("<f4", (3, 16, 20, 16)), "labels": ("|u1", (3, 16, 20, 16))}
    assert artifacts.npz_arrays(grid)["parts"] == ("|u1", (16, 20, 16))  # read from the headers, as np.load has it
    record = artifacts.input_record("sample", {"template": str(grid), "networks": [str(network)]},
                                    population_files=[str(grid)])  # fmt: skip
    assert record["path"].tolist() == [str(grid), str(network)] and (record["subject_masks"] == "").all()
    # the exemption goes by the file, not the name the job gives it: the template under another name is exempt,
    # a split named "template" is not
    renamed = artifacts.input_record("sample", {"atlas": str(grid)}, population_files=[f"{tmp_path}/./template.npz"])
    assert (renamed["subject_masks"] == "").all()
    assert artifacts.input_record("sample", {"template": str(split)}, population_files=[str(grid)]).loc[
        0, "subject_masks"] == "labels"  # fmt: skip
    assert "parts" in artifacts.input_record("sample", {"template": str(grid)}).loc[0, "subject_masks"]
    assert masks_at_inference(record, []) == []  # the template's population masks (X, Y, Z) pass
    leaky = pd.concat([record, artifacts.input_record("sample", {"data": str(split)})], ignore_index=True)
    assert leaky["subject_masks"].tolist()[-1] == "labels"
    assert len(masks_at_inference(leaky, [])) == 1 and str(split) in masks_at_inference(leaky, [])[0]


def test_job_inputs_record_every_input_and_path_param_and_masks_of_any_dtype_and_dimension(tmp_path, template):
    """The record is automatic (every input, named or not, and path-like params) and flags label maps stored as
    float, flattened 2-D, in torch files and parquet columns; the template's 3-D masks and affine pass."""
    grid, float_masks, flat, net, table, other = (tmp_path / n for n in (
        "template.npz", "masks.npz", "flat.npz", "net.pt", "subjects.parquet", "extra.npz"))  # fmt: skip
    save_npz(grid, **template.as_arrays())
    save_npz(float_masks, volumes=np.random.default_rng(0).uniform(-1, 1, (2, 4, 4, 4)).astype(np.float32),
             masks=np.repeat(template.brain[None], 2, axis=0).astype(np.float32))  # fmt: skip
    save_npz(flat, labels=template.parts.reshape(1, -1).astype(np.int16))
    save_npz(other, seeds=np.arange(3))
    artifacts.save_network(net, "whole", "smoke", [0], [{"w": torch.randn(4, 4), "seg": torch.ones(2, 3, 3) > 0}])
    pd.DataFrame({"subject": [0], "label_path": ["x"]}).to_parquet(table)

    class Named(list):  # what snakemake.input offers: a list with named entries
        def items(self):
            return [("template", str(grid)), ("networks", [str(net)])]

    given = artifacts.job_inputs(Named([str(grid), str(net), str(other)]), {"steps": 3, "extra": {"file": str(flat)},
                                                                           "names": ["cb", "whole"]})  # fmt: skip
    assert given == {"template": [str(grid)], "networks": [str(net)], "input2": [str(other)],
                     "params.extra.file": [str(flat)]}  # fmt: skip
    record = artifacts.input_record("sample", {**given, "data": [str(float_masks), str(table)]},
                                    population_files=[str(grid)]).set_index("path")  # fmt: skip
    masks = record["subject_masks"].to_dict()
    assert masks == {str(grid): "", str(net): "states[0].seg", str(other): "", str(flat): "labels",
                     str(float_masks): "masks", str(table): "label_path"}  # fmt: skip
    assert "parts" in artifacts.subject_mask_arrays(grid)  # outside the template's own input, a 3-D map is flagged


def test_network_files_round_trip_and_refuse_another_network_or_seeds(tmp_path):
    path = tmp_path / "cb.pt"
    states = [{"w": torch.full((2,), float(s))} for s in (0, 1, 2)]
    artifacts.save_network(path, "cb", "quick", [0, 1, 2], states, {"latent_channels": 3, "sides": None})
    stored = artifacts.load_network(path, "cb", [0, 1, 2])
    assert stored["settings"] == {"latent_channels": 3, "sides": None}
    assert torch.equal(stored["states"][2]["w"], torch.full((2,), 2.0))
    with pytest.raises(ValueError, match="holds the network 'cb', not 'whole'"):
        artifacts.load_network(path, "whole")
    with pytest.raises(ValueError, match=r"holds the seeds \[0, 1, 2\], not \[0, 1\]"):
        artifacts.load_network(path, "cb", [0, 1])
    with pytest.raises(ValueError, match="state dicts"):
        artifacts.save_network(path, "cb", "quick", [0, 1], states)


def test_asset_mass_inside_its_part_by_hand(template):
    seeds = [0, 1]
    assets = {p: np.full((2, 3, *s.shape), -1.0, np.float32) for p, s in template.supports.items()}
    inside = template.supports["LH"].crop(template.part_mask("LH"))
    assets["LH"][1, 2][inside] = 1.0  # seed 1, sample 2: mass 1 on every voxel of its part
    assets["LH"][1, 2][~inside] = 0.0  # and 0.5 on every other voxel of the support
    table = evaluation.asset_table(assets, seeds, template, threshold=0.5).set_index(["seed", "part", "sample"])
    row = table.loc[(1, "LH", 2)]
    assert (row["foreground_voxels"], row["inside_voxels"]) == (inside.sum(), inside.sum())  # 1 > 0.5, 0 is not
    assert row["mass_inside"] == pytest.approx(inside.sum())
    assert row["mass"] == pytest.approx(inside.sum() + 0.5 * (~inside).sum())
    assert table.loc[(0, "CB", 0), "mass"] == 0.0 and table.loc[(0, "CB", 0), "foreground_voxels"] == 0
    assert len(table) == 2 * 3 * 3


def test_scaffold_table_reads_the_assembly_guarantee_back_and_names_each_breach(template):
    """The paste of assembly.assemble_scaffold passes (0 mismatched, 0 open filled, non-empty assets); a voxel of a
    part mask changed, an open voxel filled, or an asset at background each shows in its own column."""
    from neurips26.anadiffusion import assembly

    rng = np.random.default_rng(1)
    seeds = [0, 1]
    assets = {p: rng.uniform(-1.3, 1.3, (2, 3, *s.shape)).astype(np.float32) for p, s in template.supports.items()}
    layout = assembly.TemplateLayout.from_template(template)
    paste = assembly.assemble_scaffold({p: torch.from_numpy(a)[:, :, None] for p, a in assets.items()}, layout)
    paste = paste[:, :, 0].clamp(-1, 1).numpy()
    # the pipeline's layout leaves the seam band and CSF open: the table reads that paste back with its open voxels
    open_ = assembly.open_voxels(template)
    piped = assembly.assemble_scaffold({p: torch.from_numpy(a)[:, :, None] for p, a in assets.items()},
                                       assembly.pipeline_layout(template))[:, :, 0].clamp(-1, 1).numpy()  # fmt: skip
    opened = evaluation.scaffold_table(piped, assets, seeds, template, open_)
    assert (opened[["mismatched_voxels", "open_filled"]] == 0).all().all()
    assert (opened["open_voxels"] == (~(template.parts > 0) | open_).sum()).all()
    assert (evaluation.scaffold_table(piped, assets, seeds, template)["mismatched_voxels"] > 0).all()
    table = evaluation.scaffold_table(paste, assets, seeds, template).set_index(["seed", "part", "sample"])
    assert (table[["mismatched_voxels", "open_filled"]] == 0).all().all() and (table["asset_voxels"] > 0).all()
    assert table.loc[(0, "RH", 0), "placed_voxels"] == template.part_mask("RH").sum()
    broken = paste.copy()
    assets["CB"][1, 2] = -1.0  # seed 1, sample 2: an empty CB asset (and no longer the one pasted)
    rh = np.argwhere(template.part_mask("RH"))[0]
    broken[0, 1][tuple(rh)] += 0.5  # seed 0, sample 1: the paste is not the RH asset on one voxel
    hole = np.argwhere(template.parts == 0)[0]
    broken[1, 0][tuple(hole)] = 0.0  # seed 1, sample 0: an open voxel filled
    table = evaluation.scaffold_table(broken, assets, seeds, template).set_index(["seed", "part", "sample"])
    mismatched = table["mismatched_voxels"]
    assert set(mismatched[mismatched > 0].index) == {(0, "RH", 1), (1, "CB", 2)} and mismatched[(0, "RH", 1)] == 1
    assert table.loc[(1, "CB", 2), "asset_voxels"] == 0 and (table["asset_voxels"] > 0).sum() == len(table) - 1
    assert table["open_filled"].groupby(level=["seed", "sample"]).max().to_dict() == {
        (s, n): int((s, n) == (1, 0)) for s in seeds for n in range(3)}  # fmt: skip
    with pytest.raises(ValueError, match="paste of shape"):
        evaluation.scaffold_table(paste[:1], assets, seeds, template)


def test_training_crops_are_the_part_models_training_crops(template):
    from neurips26.anadiffusion import assembly

    rng = np.random.default_rng(2)
    volumes = rng.uniform(-1, 1, (2, *template.shape)).astype(np.float32)
    labels = np.repeat(template.parts[None], 2, axis=0)
    crops = evaluation.training_crops(volumes, labels, template)
    for part, support in template.supports.items():
        masks = torch.from_numpy(labels == {"LH": 1, "RH": 2, "CB": 3}[part])[:, None]
        expected = assembly.part_training_crops(torch.from_numpy(volumes)[:, None], masks, support)[:, 0].numpy()
        assert crops[part].shape == (1, 2, *support.shape) and np.array_equal(crops[part][0], expected)
    share = evaluation.asset_table(crops, [-1], template, -0.5)
    assert (share["inside_voxels"] == share["foreground_voxels"]).all()  # the template's own parts lie inside


def test_fd_compares_equal_counts_and_cohen_d_says_why_it_is_undefined(template):
    rng = np.random.default_rng(0)
    real = rng.uniform(-1, 1, (4, *template.shape)).astype(np.float32)
    generated = {("ana", 0): rng.uniform(-1, 1, (6, *template.shape)).astype(np.float32)}
    network = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16 * 20 * 16, 3))
    fd = evaluation.fd_table(network, real, generated, evaluation.regions(template), replicates=20, confidence=0.9)
    assert set(fd["region"]) == {"whole", "brain", "LH", "RH", "CB", "seam"}
    assert (fd["n_generated"] == 4).all() and (fd["low"] <= fd["high"]).all()
    # brain: the same FD inside the template brain only (background outside it set aside)
    outside = real.copy()
    outside[:, ~template.brain] = 1.0
    moved = evaluation.fd_table(network, real, {("ana", 0): outside}, evaluation.regions(template), 20, 0.9)
    moved = moved.set_index("region")["value"]
    assert moved["brain"] == pytest.approx(0.0, abs=1e-6) and moved["whole"] > 1e-3
    # the real-vs-real reference: disjoint training subsets as large as the held-out set, method real
    training = rng.uniform(-1, 1, (9, *template.shape)).astype(np.float32)
    subsets = evaluation.real_subsets(training, 4)
    assert list(subsets) == [("real", 0), ("real", 1)] and np.array_equal(subsets[("real", 1)], training[4:8])
    reference = evaluation.real_reference(network, real, training, evaluation.regions(template), 20, 0.9)
    assert set(reference["method"]) == {"real"} and set(reference["seed"]) == {0, 1} and len(reference) == 12
    with pytest.raises(ValueError, match="no subset of 4"):
        evaluation.real_subsets(training[:3], 4)
    with pytest.raises(ValueError, match="fewer than the 4 real"):
        evaluation.fd_table(network, real, {("ana", 0): real[:3]}, evaluation.regions(template), 20, 0.9)
    cerebellum = [1.0, 2.0, 3.0, 2.0, 3.0, 4.0]  # d = (3 - 2) / 1
    volumes = pd.DataFrame({"source": ["real"] * 3 + ["ana"] * 3, "seed": 0, "sample": [0, 1, 2] * 2,
                            "ventricles": 5.0, "cerebellum": cerebellum, "brainstem": 1.0})  # fmt: skip
    d = evaluation.cohen_d_table(volumes, replicates=20, confidence=0.9).set_index("structure")
    assert d.loc["cerebellum", "d"] == pytest.approx(1.0) and d.loc["cerebellum", "note"] == ""
    assert np.isnan(d.loc["ventricles", "abs_d"]) and "pooled SD 0" in d.loc["ventricles", "note"]


def test_edit_rows_carry_the_two_brain_off_target_baseline(template):
    rng = np.random.default_rng(1)
    original, donor = (rng.uniform(-1, 1, (2, *template.shape)).astype(np.float32) for _ in range(2))
    edited = np.where(template.part_mask("CB"), donor, original)
    table = evaluation.edit_table("ana", 3, "CB", original, donor, edited, template, [0, 2], [1, 3], 1, 5, 1)
    off = editing.off_target_mask(template.brain, template.part_mask("CB"), 1)
    np.testing.assert_allclose(table["off_target_baseline"], editing.masked_ms_ssim(original, donor, off, 1, 5))
    assert table[["seed", "part", "recipient", "donor"]].values.tolist() == [[3, "CB", 0, 1], [3, "CB", 2, 3]]
    np.testing.assert_allclose(table["off_target_preservation"], 1.0)  # the edit left the off-target voxels alone
