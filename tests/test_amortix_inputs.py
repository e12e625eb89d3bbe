"""Paper 19's bad inputs: inconsistent configs stop before any job, naming the key; the paper scale plans the
pinned corpus download; the ZINC250k file format is read as the download delivers it."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT, expect_config_error, planned_jobs
from neurips26.amortix import corpus, experiment

CONFIG = yaml.safe_load((ROOT / "config/amortix.yaml").read_text())


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c["rl"].update(group_size=1), "rl.group_size: .*at least 2"),
        (lambda c: c["baselines"]["per_instance"].update(group_size=1), "baselines.per_instance.group_size"),
        (lambda c: c["baselines"].update(scaffolds=500), "baselines.scaffolds"),
        (lambda c: c["policy"].update(d_model=30, n_heads=4), "not divisible"),
        (lambda c: c["pmo"].update(start="c1ccc"), "pmo.start: invalid scaffold SMILES"),
        (lambda c: c["pmo"].update(start="O=C1C(=O)C1=O"), "pmo.start: .*no attachable atom"),
        (lambda c: c["pmo"].update(start="c1ccc[se]1"), "pmo.start: .*outside the vocabulary"),
        (lambda c: c["env"].update(decoration_vocab=["C", "Xe"]), "env: "),
        (lambda c: c["corpus"].update(scaffold_heavy=[20, 6]), "corpus.scaffold_heavy"),
        (lambda c: c["rl"].update(variants=["drgrpo"], extra_seeds={"grpo": [1]}), r"rl.extra_seeds: .*\['grpo'\]"),
    ],
)
def test_an_inconsistent_config_is_rejected_naming_the_problem(change, message):
    cfg = copy.deepcopy(CONFIG["quick"])
    change(cfg)
    with pytest.raises(ValueError, match=message):
        experiment.check_config(cfg)


def test_extra_seeds_add_runs_of_their_variant_only_and_stay_out_of_the_run_jobs_params():
    cfg = copy.deepcopy(CONFIG["quick"])
    cfg["rl"].update(variants=["drgrpo", "grpo"], seeds=[0], extra_seeds={"drgrpo": [2, 1]})
    assert experiment.policy_names(cfg) == ["drgrpo_s0", "drgrpo_s1", "drgrpo_s2", "grpo_s0"]
    without = copy.deepcopy(cfg)
    del without["rl"]["extra_seeds"]
    without["rl"].update(variants=["none"], seeds=[7])
    # an RL run's params (ax_rl_run) have the same repr whatever the seeds and variants: Snakemake then sees
    # unchanged params and keeps the old runs
    run = experiment.pick(cfg["rl"], experiment.RL_RUN_KEYS)
    assert repr(run) == repr(experiment.pick(without["rl"], experiment.RL_RUN_KEYS))
    assert set(run) == {"steps", "batch_scaffolds", "group_size", "lr", "val_every", "val_scaffolds"}
    assert "extra_seeds" in cfg["rl"]  # the caller's block is not modified
    assert experiment.pick(cfg["rl"], experiment.RL_REPORT_KEYS)["extra_seeds"] == {"drgrpo": [2, 1]}


def test_every_shipped_scale_passes_the_checks():
    for scale in ("smoke", "quick", "paper"):
        experiment.check_config(CONFIG[scale])


@pytest.mark.parametrize(
    "change, pieces",
    [
        (lambda d: d["smoke"]["rl"].update(group_size=1), ("config/amortix.yaml", "smoke", "rl.group_size")),
        (lambda d: d["smoke"]["pmo"].update(start="C1CC"), ("smoke", "pmo.start", "cannot parse")),
    ],
)
def test_a_bad_config_stops_snakemake_before_any_job(workflow_copy, change, pieces):
    path = workflow_copy / "config/amortix.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))
    expect_config_error(workflow_copy, "results/smoke/amortix/report.md", must_contain=pieces)


def test_the_paper_scale_reads_its_corpus_through_the_locked_downloads():
    jobs = planned_jobs(ROOT, "results/paper/amortix/corpus.parquet")
    # ChEMBL 35's chemreps and the release's checksums.txt, checked against each other by amortix_chembl
    assert jobs.get("download") == 2 and jobs.get("amortix_chembl") == 1 and jobs.get("amortix_corpus") == 1
    quick = planned_jobs(ROOT, "--forceall", "results/quick/amortix/corpus.parquet")
    assert "download" not in quick  # quick scale reads the molecules inside the rdkit wheel


def test_zinc250k_smiles_are_read_without_their_trailing_newlines(tmp_path):
    path = tmp_path / "zinc250k.csv"
    path.write_text(
        'smiles,logP,qed,SAS\n"CC(C)(C)c1ccc2occ(CC(=O)Nc3ccccc3F)c2c1\n",5.05,0.70,2.08\n'
        '"C[C@@H]1CC(Nc2cncc(-c3nncn3C)c2)C[C@@H](C)C1\n",3.11,0.91,3.35\n'
    )
    smiles = corpus.read_smiles_file(path)
    assert smiles == ["CC(C)(C)c1ccc2occ(CC(=O)Nc3ccccc3F)c2c1", "C[C@@H]1CC(Nc2cncc(-c3nncn3C)c2)C[C@@H](C)C1"]
    table, counts = corpus.prepare_corpus(smiles)
    assert counts["parse_error"] == 0 and len(table) == 2
