"""Static checks of the rules: lint, format, directives, environments, profiles, config errors."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, expect_config_error, snakemake
from neurips26.common.imports import reached

RULE_FILES = sorted((ROOT / "rules").rglob("*.smk"))
IMPORT_TO_PACKAGE = {
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "ot": "pot",
    "yaml": "pyyaml",
    "PIL": "pillow",
    "cocoex": "coco-experiment",
}


def rule_blocks() -> dict[str, str]:
    """rule name -> its text, from every rules/*.smk file."""
    blocks = {}
    for path in RULE_FILES:
        text = path.read_text()
        for match in re.finditer(r"^rule (\w+):\n((?:[ \t]+.*\n|\n)*)", text, re.M):
            blocks[match.group(1)] = match.group(2)
    return blocks


def directive(block: str, name: str) -> str | None:
    match = re.search(rf"^    {name}:\s*\n?\s*\"?([^\"\n]*)", block, re.M)
    return match.group(1) if match else None


def test_snakemake_lint_has_no_findings():
    out = snakemake(ROOT, "--lint")
    text = out.stdout + out.stderr
    assert "Congratulations, your workflow is in a good condition!" in text, text


def test_snakefmt_leaves_every_file_unchanged():
    import subprocess

    proc = subprocess.run(
        [str(Path(sys.executable).with_name("snakefmt")), "--check", "workflow", "rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("rule", sorted(rule_blocks()))
def test_every_rule_declares_log_benchmark_conda_resources(rule):
    block = rule_blocks()[rule]
    if rule == "all":
        return
    assert directive(block, "log"), f"{rule} has no log:"
    assert directive(block, "conda"), f"{rule} has no conda:"
    assert re.search(r"^        mem_mb=", block, re.M) and re.search(r"^        runtime=", block, re.M), (
        f"{rule} lacks mem_mb/runtime"
    )
    cached = re.search(r"^    cache: True", block, re.M)
    # Snakemake forbids benchmark: on rules cached between workflows (downloads)
    assert bool(directive(block, "benchmark")) != bool(cached), f"{rule}: benchmark xor cache"


def third_party_imports(path: Path) -> set[str]:
    """Top-level third-party modules imported by `path` and every neurips26 module it reaches (the import
    graph that also makes rules depend on the library files, neurips26.common.imports)."""
    return reached(path, (ROOT / "src").resolve())[1]


def env_packages(env: Path) -> set[str]:
    spec = yaml.safe_load(env.read_text())
    names = set()
    for dep in spec["dependencies"]:
        items = dep["pip"] if isinstance(dep, dict) else [dep]
        names |= {re.split(r"[=<>~ ]", item)[0].lower() for item in items}
    return names


@pytest.mark.parametrize("rule", sorted(r for r in rule_blocks() if r != "all"))
def test_rule_environment_provides_every_import_of_its_script(rule):
    block = rule_blocks()[rule]
    rule_dir = ROOT / "rules"
    script = (rule_dir / directive(block, "script")).resolve()
    env = (rule_dir / directive(block, "conda")).resolve()
    assert script.exists() and env.exists(), (script, env)
    needed = {IMPORT_TO_PACKAGE.get(name, name).lower() for name in third_party_imports(script)}
    missing = needed - env_packages(env)
    assert not missing, f"{rule}: {env.name} lacks {sorted(missing)} imported by {script.name} or the library"


def test_every_env_pins_every_package():
    for env in (ROOT / "envs").glob("*.yaml"):
        spec = yaml.safe_load(env.read_text())
        pip = next(dep["pip"] for dep in spec["dependencies"] if isinstance(dep, dict))
        assert all("==" in item for item in pip), f"{env.name} has unpinned packages"


def test_slurm_profile_dry_runs_the_paper_scale_dag_within_seconds():
    # conda (the profile's software deployment) is not installed here: env-modules stands in, so
    # that the dry run exercises the executor, resources and the DAG without creating environments
    start = time.perf_counter()
    out = snakemake(
        ROOT,
        "--profile",
        "profiles/slurm",
        "--sdm",
        "env-modules",
        "-n",
        "results/paper/amortized_ot/report.md",
        "--quiet",
        "rules",
    )
    seconds = time.perf_counter() - start
    text = out.stdout + out.stderr
    for rule in ("download", "amortized_ot_fit_metaot", "amortized_ot_report"):
        assert re.search(rf"^{rule}\s+\d+$", text, re.M), f"{rule} missing from the paper-scale DAG"
    assert seconds < 30, f"paper-scale dry run took {seconds:.1f} s"


def test_slurm_profile_sets_resources_only_for_existing_rules():
    profile = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    assert profile["executor"] == "slurm"
    assert profile["software-deployment-method"] == "conda"
    assert set(profile["set-resources"]) <= set(rule_blocks())
    assert all(res.get("gpu", 0) >= 1 for res in profile["set-resources"].values())
    # set-resources apply at every scale: the cluster test's one-node cluster (24 GB) must be able to grant them
    too_big = {rule: res["mem_mb"] for rule, res in profile["set-resources"].items() if res.get("mem_mb", 0) > 16000}
    assert not too_big, f"set-resources asking for more than 16 GB: {too_big}"


def test_the_local_cluster_profile_only_adds_what_the_local_cluster_needs():
    users = yaml.safe_load((ROOT / "profiles/slurm/config.yaml").read_text())
    local = yaml.safe_load((ROOT / "profiles/slurm-local/config.yaml").read_text())
    assert set(local) <= {
        "default-resources",
        "jobs",
        "latency-wait",
        "software-deployment-method",
        "slurm-init-seconds-before-status-checks",
    }
    # a key in the second profile replaces the first's: the defaults are restated, and only the account added
    defaults = dict(local["default-resources"])
    assert defaults.pop("slurm_account") == "local"
    assert defaults == users["default-resources"]
    assert users["slurm-keep-successful-logs"] is True and users["retries"] >= 1


def edit_paper_config(repo: Path, change) -> None:
    path = repo / "config/amortized_ot.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data))


def test_unknown_key_stops_the_run_naming_the_key_and_the_allowed_keys(workflow_copy):
    edit_paper_config(workflow_copy, lambda d: d["quick"]["digits"].update(epsilon=0.1))
    expect_config_error(workflow_copy, must_contain=("quick.digits.epsilon", "unknown key", "allowed keys", "eps"))


def test_wrong_type_stops_the_run(workflow_copy):
    edit_paper_config(workflow_copy, lambda d: d["smoke"].update(main_projections="many"))
    expect_config_error(workflow_copy, must_contain=("smoke.main_projections", "not of type 'integer'"))


def test_out_of_range_value_stops_the_run(workflow_copy):
    edit_paper_config(workflow_copy, lambda d: d["paper"]["sphere"].update(eps=0))
    expect_config_error(workflow_copy, must_contain=("paper.sphere.eps", "> 0"))


def test_value_outside_enum_stops_the_run(workflow_copy):
    edit_paper_config(workflow_copy, lambda d: d["quick"]["cfm"].update(plans=["exact", "sinkhorn"]))
    expect_config_error(workflow_copy, must_contain=("quick.cfm.plans.1", "allowed values: exact, ra, oa, indep"))


def test_unknown_paper_stops_the_run(workflow_copy):
    path = workflow_copy / "config/config.yaml"
    path.write_text(path.read_text().replace("- amortized_ot", "- amortized_ot\n  - not_a_paper"))
    expect_config_error(workflow_copy, must_contain=("not_a_paper", "allowed values: amortix, amortized_ot"))


def test_unknown_default_scale_stops_the_run(workflow_copy):
    path = workflow_copy / "config/config.yaml"
    path.write_text(path.read_text().replace("scale: quick", "scale: huge"))
    expect_config_error(workflow_copy, must_contain=("scale", "huge", "smoke, quick, paper"))


def test_unknown_scale_in_a_target_path_names_the_allowed_scales(workflow_copy):
    expect_config_error(
        workflow_copy,
        "results/huge/amortized_ot/report.md",
        must_contain=("unknown scale 'huge'", "smoke, quick, paper"),
    )


def test_gpw_without_a_file_explains_how_to_obtain_it(workflow_copy):
    edit_paper_config(workflow_copy, lambda d: d["paper"]["sphere"].update(source="gpw", gpw_path="/nowhere/gpw.tif"))
    expect_config_error(
        workflow_copy,
        "results/paper/amortized_ot/pairs/sphere.npz",
        must_contain=("sphere.gpw_path is '/nowhere/gpw.tif'", "Earthdata", "SEDAC"),
    )


def test_gpw_population_becomes_the_sphere_supply(workflow_copy, tmp_path):
    import numpy as np
    import tifffile

    from neurips26.amortized_ot.experiment import unpack
    from neurips26.common.io import load_npz

    grid = np.zeros((18, 36), dtype=np.float32)
    grid[:9] = 50.0
    tifffile.imwrite(tmp_path / "gpw.tif", grid)
    edit_paper_config(
        workflow_copy, lambda d: d["smoke"]["sphere"].update(source="gpw", gpw_path=str(tmp_path / "gpw.tif"))
    )
    snakemake(workflow_copy, "-c1", "results/smoke/amortized_ot/pairs/sphere.npz")
    train = unpack(load_npz(workflow_copy / "results/smoke/amortized_ot/pairs/sphere.npz"), "train")
    np.testing.assert_allclose(train["a"], np.broadcast_to(train["a"][0], train["a"].shape))  # one supply
    north = train["x"][0][:, 2] > 0.05
    assert train["a"][0][north].sum() > 0.9
