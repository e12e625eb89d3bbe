"""Paper 16's figures and report tables render on a smoke-sized set of the pipeline's tables (computed here from the
library, about two seconds), and the report template renders with them."""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib import pyplot as plt
from matplotlib.figure import Figure

from conftest import ROOT
from neurips26.common.paper_scale import paper_scale_paths
from neurips26.common.report import RECONSTRUCTION_LINE, render
from neurips26.multistage_training import experiment, plots
from neurips26.multistage_training.summary import claim_numbers, report_tables, simulation_curves

REPORT = ROOT / "workflow/report/multistage_training"

BLOCKS = {
    "complementarity": {"budgets": [1.0e3, 1.0e4], "base_computes": [1.0e2, 1.0e3], "n_grid": 4},
    "plateau": {"chain_lengths": [2, 4], "base_compute": 1.0e3},
    "ceiling": {
        "budget": 1.0e5,
        "budgets": [1.0e4, 1.0e5],
        "base_computes": [10, 100, 1000, 3000],
        "window": [10, 1000],
        "n_grid": 4,
    },
    "allocation": {
        "budget": 1.0e4,
        "base_computes": [1.0e2, 1.0e3],
        "demo_qualities": [0.6, 0.9],
        "reward_noises": [0.0, 0.1],
        "n_grid": 4,
        "rollouts": [1, 4],
    },
    "amplification": {"base_compute": 1.0e3, "rl_updates": 200, "sft_demos": 0},
    "pretraining": {"base_computes": [10, 30, 100, 300]},
    "simulation": {
        "configs": {
            "sft_rl": {"budget": 2.0e3, "base_compute": 1.0e3, "sft_share": 0.5},
            "rl_only": {"budget": 2.0e3, "base_compute": 1.0e3, "sft_share": 0.0},
        },
        "seeds": [0, 1],
        "runs": 2,
        "batch": 8,
        "record_every": 10,
    },
}


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def config() -> dict:
    cfg = yaml.safe_load((ROOT / "config/multistage_training.yaml").read_text())
    model = dict(cfg["smoke"]["model"], n_skills=100)
    return {"model": model, **BLOCKS}


@pytest.fixture(scope="module")
def tables(config, tmp_path_factory) -> dict[str, Path]:
    """The pipeline's tables at a smoke size, written as parquet files as the rules write them."""
    folder = tmp_path_factory.mktemp("multistage_training")
    params = experiment.model_params(config["model"])
    paths = {}
    for name in experiment.PHENOMENA:
        paths[name] = folder / f"{name}.parquet"
        experiment.phenomenon_table(name, params, config[name]).to_parquet(paths[name])
    sim = config["simulation"]
    parts = [
        experiment.simulation_table(params, run, seed, sim["runs"], sim["batch"], sim["record_every"]).assign(
            config=name, seed=seed
        )
        for name, run in sim["configs"].items()
        for seed in sim["seeds"]
    ]
    paths["simulation"] = folder / "simulation.parquet"
    pd.concat(parts, ignore_index=True).to_parquet(paths["simulation"])
    return paths


def _read(tables, name) -> pd.DataFrame:
    return pd.read_parquet(tables[name])


def test_complementarity_figure_has_a_panel_per_pretraining_compute_and_the_plateau(tables):
    fig = plots.complementarity(_read(tables, "complementarity"), _read(tables, "plateau"))
    assert isinstance(fig, Figure)
    assert len(fig.axes) == len(BLOCKS["complementarity"]["base_computes"]) + 1
    assert fig.axes[-1].get_yscale() == "log"


def test_ceiling_figure_is_log_log_with_fit_and_prediction(tables):
    fig = plots.ceiling(_read(tables, "ceiling"), _read(tables, "pretraining"))
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3  # the ceiling at its budget, the budget sweep, the pretraining loss
    for ax in fig.axes:
        assert ax.get_xscale() == ax.get_yscale() == "log"
        assert len(ax.get_lines()) >= 3  # points, fit, predicted slope
    inside = sum(10 <= c <= 1000 for c in BLOCKS["ceiling"]["base_computes"])
    assert len(fig.axes[1].get_lines()) == 2 * inside + 1  # model and null per compute, the predicted slope


def test_allocation_figure_draws_a_line_per_compute_and_noise(tables):
    fig = plots.allocation(_read(tables, "allocation"))
    assert isinstance(fig, Figure)
    block = BLOCKS["allocation"]
    assert len(fig.axes[0].get_lines()) == len(block["base_computes"]) * len(block["reward_noises"])
    # the k sweep: a line per (compute, rho) against k
    assert len(fig.axes[1].get_lines()) == len(block["base_computes"]) * len(block["demo_qualities"])


def test_amplification_figure(tables):
    fig = plots.amplification(_read(tables, "amplification"))
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2
    assert fig.axes[0].get_yscale() == "symlog"
    assert len(fig.axes[1].get_lines()) == 3  # before RL, after RL, after RL without the pretraining gate


def test_agreement_figure_has_two_rows_per_config(tables):
    fig = plots.agreement(_read(tables, "simulation"))
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 2 * len(BLOCKS["simulation"]["configs"])


def test_simulation_curves_pool_the_seeds_standard_errors():
    simulation = pd.DataFrame(
        {
            "config": ["a"] * 4,
            "update": [0, 0, 10, 10],
            "stage": ["sft"] * 4,
            "compute": [0.0, 0.0, 80.0, 80.0],
            "success_sim": [0.1, 0.1, 0.3, 0.5],
            "success_sim_se": [0.0, 0.0, 0.03, 0.04],
            "success_theory": [0.1, 0.1, 0.35, 0.35],
            "seed": [0, 1, 0, 1],
            "runs": [4] * 4,
        }
    )
    curves = simulation_curves(simulation)
    last = curves.iloc[-1]
    assert last["success_sim"] == pytest.approx(0.4)
    assert last["success_sim_se"] == pytest.approx(0.05 / 2)  # sqrt(0.03^2 + 0.04^2) / 2 seeds
    assert last["gap"] == pytest.approx(0.05)


NUMBERS = (
    "max_gain", "max_gain_budget", "max_gain_compute", "max_gain_share", "plateau_ratio", "ceiling_fitted",
    "ceiling_predicted", "ceiling_error", "ceiling_r2", "loss_fitted", "loss_predicted", "loss_r2",
    "allocation_min", "allocation_max", "allocation_span", "allocation_rho_violation", "allocation_c_violation",
    "off_task_max", "amplification_spearman", "success_before_rl", "success_after_rl", "agreement_gap",
    "agreement_z", "budget_predicted", "budget_exponent", "budget_compute_exponent", "null_budget_exponent",
    "budget_first_compute_exponent", "budget_last_compute_exponent", "logit_spearman", "logit_spearman_null",
    "budget_ratio", "null_budget_ratio", "budget_first_gap", "budget_last_gap", "allocation_min_span",
    "allocation_min_span_rho", "allocation_min_span_compute", "agreement_z_star", "agreement_bound",
)  # fmt: skip
TABLES = (
    "complementarity_table", "plateau_table", "ceiling_table", "sweep_table", "pretraining_table", "allocation_table",
    "rollouts_table", "amplification_table", "agreement_table",
)  # fmt: skip


@pytest.fixture(scope="module")
def claims(tables, config) -> pd.DataFrame:
    """The claims decided on the same tables (the report's sentences read their verdicts)."""
    from neurips26.common.claims import decide, load_definitions
    from neurips26.multistage_training.claims import measure_claims

    read = {name: pd.read_parquet(path) for name, path in tables.items()}
    comp = {name: config["model"][name] for name in ("demo_quality", "chain_length")}
    return decide(load_definitions(ROOT / "config/claims/multistage_training.yaml"), measure_claims(read, comp))


@pytest.fixture(scope="module")
def found(tables, config, claims) -> dict:
    inp = SimpleNamespace(**{name: str(path) for name, path in tables.items()})
    return report_tables(inp, SimpleNamespace(**config)) | claim_numbers(claims)


def test_report_tables_give_the_tables_and_finite_key_numbers(found):
    for name in TABLES:
        assert isinstance(found[name], pd.DataFrame) and len(found[name]), name
    for name in NUMBERS:
        assert math.isfinite(found[name]), name
    assert found["ceiling_predicted"] == pytest.approx(2 * 0.5 / (1.5 + 3.0))  # alpha = alpha_t = 1.5
    assert found["loss_predicted"] == pytest.approx(1 / 3)
    assert found["off_task_max"] == 0.0
    assert found["agreement_config"] in BLOCKS["simulation"]["configs"]
    assert len(found["agreement_table"]) == len(BLOCKS["simulation"]["configs"])
    assert np.isclose(found["allocation_span"], found["allocation_max"] - found["allocation_min"])


def test_the_report_template_renders_with_the_tables(found, config):
    params = SimpleNamespace(paper_scale={}, benchmarks="unused", **config)
    text = render(REPORT / "report.md.j2", scale="smoke", params=params, claims="CLAIMS", n_claims=0,
                  closing="CLOSING", reconstruction=RECONSTRUCTION_LINE, **found)  # fmt: skip
    assert text.startswith("# Paper 16: ")
    assert text.splitlines()[2] == RECONSTRUCTION_LINE  # the mark sits right under the title
    assert "**our reconstruction**" in text
    for section in ("## Claims", "## 1. SFT and RL", "## 2. Pretraining", "## 3. The optimal allocation",
                    "## 4. RL selectively", "## Theory against simulation"):  # fmt: skip
        assert section in text
    assert text.rstrip().endswith("CLOSING")


def test_the_reports_conclusions_follow_the_verdicts_and_values(found, config):
    """Each conclusion the report draws (the ceiling's persistence, the derivation in B, the allocation's directions,
    the null's amplification) is conditional on its claim's verdict or value, never stated regardless."""
    params = SimpleNamespace(paper_scale={}, benchmarks="unused", **config)

    def text(**changed) -> str:
        rendered = render(REPORT / "report.md.j2", scale="smoke", params=params, claims="CLAIMS", n_claims=0,
                          closing="CLOSING", reconstruction="", **(found | changed))  # fmt: skip
        return " ".join(rendered.split())

    holds = text(verdicts=dict.fromkeys(found["verdicts"], "holds"))
    fails = text(verdicts=dict.fromkeys(found["verdicts"], "fails"))
    assert "does not vanish as the budget grows (C2 holds)" in holds and "(C2 fails, against 0.5)" in fails
    assert "does not vanish" not in fails and "the ceiling persists" not in holds + fails
    assert "the C^2 B derivation fails in B" in fails and "the C^2 B derivation fails" not in holds
    assert "and so it does at every k up to one grid step (C5 holds)" in holds and "C5 fails" in fails
    assert "not within 25% of it at every budget (K4 fails" in fails
    assert "reported as info (K4), neither a claim nor a check" in holds + fails
    # a null without the pretraining gate that passes too: the report says the verdict is not the gate's doing
    passing = {**found["null_values"], "C5": -0.05, "C7": found["thresholds"]["C7"] + 1.0}
    undecided = text(verdicts=dict.fromkeys(found["verdicts"], "inconclusive"), null_values=passing,
                     claim_values={**found["claim_values"], "C5": -0.05})  # fmt: skip
    assert "but so does the null model without the pretraining gate" in undecided
    assert "not from what pretraining provides, so C7 is inconclusive" in undecided
    failing = {**found["null_values"], "C5": 0.2, "C7": found["thresholds"]["C7"] - 1.0}
    decided = text(null_values=failing, claim_values={**found["claim_values"], "C5": -0.05})
    assert "but so does the null model" not in decided and "not from what pretraining provides" not in decided
    null = found["logit_spearman_null"]
    selective, gated = (
        "RL without the pretraining gate amplifies selectively too",
        "the gate is what makes RL selective",
    )
    above, below = (
        text(thresholds=found["thresholds"] | {"C6": null - 0.01}),
        text(thresholds=found["thresholds"] | {"C6": null + 0.01}),
    )
    assert selective in above and gated not in above and gated in below and selective not in below


def test_the_paper_16_claims_file_marks_a_reconstruction_and_the_report_says_so_at_its_top(tmp_path):
    from neurips26.common.claims import Measured, decide, load_definitions
    from neurips26.common.io import write_parquet
    from neurips26.common.report import write_report

    definitions = load_definitions(ROOT / "config/claims/multistage_training.yaml")
    assert all(d.reconstruction for d in definitions)
    claims = decide(definitions, [Measured(d.claim_id, float("nan"), 0) for d in definitions])
    path = tmp_path / "claims.parquet"
    prov = {"git_commit": "abc", "config_hash": "def", "seed": 0, "packages": {"numpy": "2"}}
    write_parquet(claims, path, prov)
    template = tmp_path / "report.md.j2"
    template.write_text("# Title\n\n{{ reconstruction }}\n\n{{ claims }}\n")
    caption = tmp_path / "caption.rst"
    caption.write_text("caption")
    deviations = tmp_path / "deviations.md"
    deviations.write_text("- none")
    job = SimpleNamespace(
        input=SimpleNamespace(claims=str(path), figures=[], captions=[], deviations=str(deviations),
                              template=str(template), keys=lambda: ["claims"]),
        output=[str(tmp_path / "report.md")], params=SimpleNamespace(benchmarks=str(tmp_path)),
        wildcards=SimpleNamespace(scale="smoke"),
    )  # fmt: skip
    text = write_report(job, provenance_from=None)
    assert text.splitlines()[2] == RECONSTRUCTION_LINE


def test_paper_scale_rows_read_keys_of_the_paper_block():
    cfg = yaml.safe_load((ROOT / "config/multistage_training.yaml").read_text())
    spec = yaml.safe_load((REPORT / "paper_scale.yaml").read_text())
    assert "model.n_skills" in paper_scale_paths(spec, cfg["paper"])
