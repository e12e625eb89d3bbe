"""Paper 03 (AnaDiffusion): the claims measured on tables made by the evaluation code itself (evaluation.fd_table
with the real-vs-real reference, volume_table, cohen_d_table, edit_table, memorization_table, asset_table,
scaffold_table of a pipeline-layout paste, and artifacts.input_record), not on hand-made tables: a tiny synthetic
pipeline whose methods are built so that the verdicts are known, so a column, region or method name that the
evaluation writes and the claims read differently breaks this test."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from conftest import ROOT
from neurips26.anadiffusion import artifacts, assembly, evaluation
from neurips26.anadiffusion.claims import measure_claims
from neurips26.anadiffusion.template import build_template
from neurips26.common.claims import decide, load_definitions
from neurips26.common.io import save_npz

SEEDS = (0, 1, 2)
N = 6  # held-out reals, samples per seed and method


@pytest.fixture(scope="module")
def template():
    return build_template(12.0, (16, 20, 16))


def _subjects(template, rng, n, noise=0.05, background=-1.0, inside=0.0):
    """Volumes like the template's T1 with a per-subject intensity scale and voxel noise; `inside` adds more noise
    inside the brain, `background` is the value outside it."""
    brain = template.brain
    scale = rng.uniform(0.9, 1.1, (n, 1, 1, 1))
    volumes = template.t1[None] * scale + rng.normal(0, noise, (n, *template.shape))
    volumes = volumes + inside * rng.normal(0, 1, volumes.shape) * brain
    return np.where(brain, volumes, background + rng.normal(0, 0.01, volumes.shape)).clip(-1, 1).astype(np.float32)


def _tables(template, tmp_path, swap=False, cache={}):  # noqa: B006 (one build of the tables but fd per case)
    rng = np.random.default_rng(0)
    real, training = _subjects(template, rng, N), _subjects(template, rng, 2 * N)
    generated = {}
    for s in SEEDS:
        generated[("ana", s)] = _subjects(template, rng, N, noise=0.06)  # like the reals
        generated[("ae_roundtrip", s)] = _subjects(template, rng, N, noise=0.06, inside=0.25)  # blurred/noisy
        generated[("ldm", s)] = _subjects(template, rng, N, noise=0.06, inside=0.35, background=-0.6)  # grey
        generated[("paste", s)] = np.where(template.seam, -1.0, generated[("ana", s)]).astype(np.float32)
        if swap:  # the refinement no better than the round trip
            generated[("ana", s)], generated[("ae_roundtrip", s)] = (
                generated[("ae_roundtrip", s)],
                generated[("ana", s)],
            )
    network = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(int(np.prod(template.shape)), 8))
    torch.manual_seed(0)
    torch.nn.init.normal_(network[1].weight, std=0.05)
    masks = evaluation.regions(template)
    fd = pd.concat([evaluation.fd_table(network, real, generated, masks, 20, 0.9),
                    evaluation.real_reference(network, real, training, masks, 20, 0.9)], ignore_index=True)  # fmt: skip
    if "rest" in cache:  # the other tables do not depend on the swap: built once
        return _decide(fd, *cache["rest"]), fd
    volumes = evaluation.volume_table({("real", 0): real, **generated}, template)
    cohen = evaluation.cohen_d_table(volumes, 20, 0.9)
    memo = evaluation.memorization_table(generated, real, training)
    recipients, donors = np.array([0, 2]), np.array([1, 3])
    edits = []
    for s in SEEDS:
        ana = generated[("ana", s)]
        for part in template.supports:
            target = template.part_mask(part)
            edited = np.where(target, ana[donors], ana[recipients])  # the donor's part, the rest kept
            edits.append(evaluation.edit_table("ana", s, part, ana[recipients], ana[donors], edited, template,
                                               recipients, donors, 1, 3, 1))  # fmt: skip
    assets = {p: rng.uniform(-1.2, 1.2, (len(SEEDS), N, *sp.shape)).astype(np.float32)
              for p, sp in template.supports.items()}  # fmt: skip
    layout = assembly.pipeline_layout(template)
    paste = assembly.assemble_scaffold({p: torch.from_numpy(a)[:, :, None] for p, a in assets.items()}, layout)
    paste = paste[:, :, 0].clamp(-1, 1).numpy()
    asset_rows = (
        evaluation.asset_table(assets, SEEDS, template, -0.5)
        .merge(
            evaluation.scaffold_table(paste, assets, SEEDS, template, assembly.open_voxels(template)),
            on=["seed", "part", "sample"],
        )
        .assign(source="generated")
    )
    grid, network_file = tmp_path / "template.npz", tmp_path / "whole.pt"
    save_npz(grid, **template.as_arrays())
    artifacts.save_network(network_file, "whole", "smoke", [0], [{"w": torch.randn(3, 3)}])
    train = tmp_path / "train.npz"  # a per-subject split with its label maps: what only the Seg. cLDM's job takes
    artifacts.save_split(train, np.zeros((2, *template.shape)), np.ones((2, *template.shape), np.uint8))
    given = {"template": str(grid), "whole": [str(network_file)]}
    records = pd.concat(
        [artifacts.input_record(job, artifacts.job_inputs(inputs), population_files=[str(grid)])
         for job, inputs in (("sample", given), ("edit", given), ("evaluate", {"eval": str(train), **given}),
                             ("seg_cldm", {"train": str(train)}))],
        ignore_index=True,
    )  # fmt: skip
    traces = pd.DataFrame([dict(model=m, seed=s, step=i, loss=1.0 - 0.04 * i) for m in ("ae", "whole")
                           for s in SEEDS for i in range(20)])  # fmt: skip
    subjects = pd.DataFrame({"subject": [f"eval-{i}" for i in range(N)], "ventricles_mm3": np.arange(N) * 10.0,
                             "cerebellum_mm3": np.arange(N) * 10.0, "brainstem_mm3": np.arange(N) * 10.0})  # fmt: skip
    cache["rest"] = (cohen, pd.concat(edits, ignore_index=True), memo, asset_rows, traces, records,
                     [str(train)], volumes, subjects)  # fmt: skip
    return _decide(fd, *cache["rest"]), fd


def _decide(fd, *rest):
    *tables, volumes, subjects = rest
    measured = measure_claims(fd, *tables, "synthbrain", volumes=volumes, eval_subjects=subjects,
                              expected_jobs=("sample", "edit", "evaluate", "seg_cldm"))  # fmt: skip
    return decide(load_definitions(ROOT / "config/claims/anadiffusion.yaml"), measured).set_index("claim_id")


def test_claims_read_the_tables_the_evaluation_code_writes(template, tmp_path):
    table, fd = _tables(template, tmp_path)
    assert {"whole", "brain", "seam"} <= set(fd["region"]) and (fd["method"] == "real").any()
    for claim_id in ("C1", "C3", "K1", "K2"):
        assert table.loc[claim_id, "verdict"] == "holds", (claim_id, table.loc[claim_id, "note"])
    assert "real-vs-real FD" in table.loc["C1", "note"] and "- paste" in table.loc["C3", "note"]
    note = table.loc["K1", "note"]  # the controls' masks, named by the content detector
    assert f"control seg_cldm (takes the subjects' masks by design): {tmp_path / 'train.npz'} holds labels" in note
    assert f"control evaluate (takes the subjects' masks by design): {tmp_path / 'train.npz'} holds labels" in note
    assert table.loc["C1", "runs"] == len(SEEDS) and table.loc["C5", "runs"] == len(SEEDS)
    assert not table.loc[["C2", "C4", "C5", "C6", "C8"], "note"].str.contains("no column|no value|no edits").any()
    # C10 pairs volume_table's real rows with the subjects' true volumes (made up here; this tiny template's proxy
    # ventricles are constant, which C10 says, rather than a pairing or a column it cannot find)
    note = table.loc["C10", "note"]
    assert "proxy against true volumes" in note and "constant proxy" in note, note
    assert not any(x in note for x in ("real scans in the volumes table", "no column", "missing")), note
    swapped, _ = _tables(template, tmp_path, swap=True)  # ana no better than the round trip of its scaffold
    assert swapped.loc["C1", "verdict"] == "fails" and swapped.loc["C3", "verdict"] == "fails"
