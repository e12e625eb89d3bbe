"""Paper 07's report tables (summary.report_tables and its parts) and the rendered report template, its run tables
(artifacts) and the refusals of its settings."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from neurips26.common.report import render
from neurips26.common.token_files import write_tokens
from neurips26.symm_optim import artifacts, summary
from neurips26.symm_optim.settings import LMConfig, TrainSettings, check_group, check_optimizer_spec

ROOT = Path(__file__).resolve().parents[1]
QUICK = yaml.safe_load((ROOT / "config/symm_optim.yaml").read_text())["quick"]
META = {
    "corpus": "cpython_docs",
    "sources": ["pydoc_topics", "stdlib_docstrings"],
    "characters": 1234567,
    "documents": {"train": 300, "val": 15},
    "vocab_size": 2048,
    "tokenizers_version": "0.0.1",
    "tokens": {"train": 400000, "val": 20000},
    "text_sha256": "0123456789abcdef" * 4,
}


def _result(diverged: bool = False):
    steps = [{"step": 1, "train_loss": 5.0, "val_loss": math.nan, "spike": False}]
    steps.append({"step": 2, "train_loss": 9.0, "val_loss": 4.5, "spike": True})
    return SimpleNamespace(
        steps=steps,
        spectra=[{"step": 2, "kind": "embedding", "matrix": "gradient", "index": 0, "sigma": 1.5}],
        final_val_loss=math.nan if diverged else 4.5,
        diverged=diverged,
        diverged_step=2 if diverged else None,
        diverged_kind="lm_head" if diverged else None,
        diverged_detail="",
        optimizer_seconds=0.5,
        train_seconds=2.0,
        epochs=0.1,
    )


RUN = {"arch": "dense", "method": "row_norm", "lr_index": 1, "multiplier": 1.0, "seed": 2, "name": "x"}
ASSIGNMENT = {"embedding": {"name": "row_norm", "lr": 5.0}, "lm_head": {"name": "row_norm", "lr": 0.05}}
COUNTS = {"total": 1000, "embedding": 300, "lm_head": 200}


def test_a_runs_tables_carry_its_keys_and_one_summary_row():
    tables = artifacts.run_tables(RUN, _result(), ASSIGNMENT, COUNTS)
    assert set(tables) == {"steps", "spectra", "summary"}
    for name in ("steps", "spectra"):
        assert list(tables[name].columns[-4:]) == ["arch", "method", "lr_index", "seed"]
        assert (tables[name]["seed"] == 2).all()
    assert list(tables["spectra"].columns[:5]) == ["step", "kind", "matrix", "index", "sigma"]
    row = tables["summary"].iloc[0]
    assert row["lr_embedding"] == 5.0 and row["lr_lm_head"] == 0.05 and "lr_router" not in row
    assert row["spikes"] == 1 and row["steps_done"] == 2 and row["diverged_step"] == -1
    assert row["parameters"] == 1000 and row["parameters_vocab"] == 500
    assert "1 spikes" in artifacts.outcome_line("x", _result())


def test_a_diverged_run_keeps_its_step_and_role_and_an_empty_spectrum_keeps_its_columns():
    result = _result(diverged=True)
    result.spectra = []
    tables = artifacts.run_tables({**RUN, "arch": "moe"}, result, {"router": {"lr": 0.1}}, COUNTS)
    row = tables["summary"].iloc[0]
    assert row["diverged"] and row["diverged_step"] == 2 and row["diverged_kind"] == "lm_head"
    assert row["lr_router"] == 0.1 and np.isnan(row["final_val_loss"])
    assert tables["spectra"].empty and "sigma" in tables["spectra"].columns


def test_token_streams_are_read_and_concatenated_in_order(tmp_path):
    for i, tokens in enumerate(([1, 2, 3], [4, 5])):
        write_tokens(tmp_path / f"{i}.bin", np.asarray(tokens, dtype=np.uint16))
    stream = artifacts.read_stream([tmp_path / "0.bin", tmp_path / "1.bin"])
    assert stream.tolist() == [1, 2, 3, 4, 5]


def test_the_corpus_sentence_names_the_shared_build_or_the_shards():
    text = summary.corpus_sentence(META, QUICK["corpus"])
    assert "`cpython_docs` (pydoc_topics, stdlib_docstrings: 1,234,567 characters" in text
    assert "400,000 training and 20,000 validation tokens; text sha256 0123456789abcdef" in text
    shards = summary.corpus_sentence(None, {"name": "fineweb_edu_qwen3", "train_shards": 9})
    assert shards == "`fineweb_edu_qwen3`, 9 training shards of 100M tokens and the validation shard"


def _equivariance() -> pd.DataFrame:
    rows = [("row_norm", "left_perm", 1e-16, True), ("row_norm", "left_orth", 0.4, False)]
    rows += [("adam", "right_orth", 0.9, False), ("adam", "left_perm", 2e-16, True), ("adam", "right_perm", 0, True)]
    return pd.DataFrame(rows, columns=["optimizer", "group", "rel_err", "expected"])


def test_symmetry_tables_take_the_worst_expected_and_the_smallest_broken_errors():
    identities = pd.DataFrame({"identity": ["diagonal_lifting", "adam_sign_limit"], "value": [0.0, 3e-31]})
    tables = summary.symmetry_tables(_equivariance(), identities, shown=1)
    assert tables["expected"].set_index("optimizer")["rel_err"].to_dict() == {"adam": 2e-16, "row_norm": 1e-16}
    assert tables["broken"][["optimizer", "rel_err"]].values.tolist() == [["row_norm", 0.4]]
    assert tables["identities"] == "diagonal_lifting 0.0e+00, adam_sign_limit 3.0e-31"


def _inputs(tmp_path) -> SimpleNamespace:
    runs = pd.DataFrame(
        {
            "arch": ["dense", "dense", "moe"],
            "method": ["adamw", "row_norm", "adamw"],
            "multiplier": [1.0, 3.0, 1.0],
            "seed": [0, 0, 0],
            "diverged": [False, True, False],
            "diverged_step": [-1, 7, -1],
            "diverged_kind": ["", "embedding", ""],
            "parameters": [10, 10, 12],
            "parameters_vocab": [6, 6, 6],
            "git_commit": "abc",
        }
    )
    best = pd.DataFrame(
        {"arch": ["dense"], "method": ["adamw"], "val_loss_mean": [4.5], "best_lr_index": [1], "lr_embedding": [1.0]}
    )
    step_time = pd.DataFrame({"arch": ["dense"], "method": ["adamw"], "part": ["step"], "median_s": [0.01]})
    identities = pd.DataFrame({"identity": ["diagonal_lifting"], "value": [0.0]})
    paths = {}
    for name, frame in {
        "runs": runs,
        "best": best,
        "step_time": step_time,
        "equivariance": _equivariance(),
        "identities": identities,
    }.items():
        paths[name] = str(tmp_path / f"{name}.parquet")
        frame.to_parquet(paths[name])
    (tmp_path / "meta.json").write_text(json.dumps(META))
    return SimpleNamespace(corpus_meta=str(tmp_path / "meta.json"), **paths)


def _params() -> SimpleNamespace:
    keys = ("corpus", "model", "train", "base", "methods", "routers", "lr_multipliers", "seeds", "moe_seeds")
    keys += ("baseline", "router_baseline", "step_time_repeats")
    return SimpleNamespace(**{k: QUICK[k] for k in keys})


def test_report_tables_hold_what_the_template_shows(tmp_path):
    tables = summary.report_tables(_inputs(tmp_path), _params())
    assert list(tables["best"].columns) == ["arch", "method", "lr_embedding", "val_loss_mean"]
    assert tables["diverged"].values.tolist() == [["dense", "row_norm", 3.0, 0, 7, "embedding"]]
    assert "git_commit" not in tables["step_time"].columns and tables["constant_share"] == "60%"
    assert tables["models"][["arch", "parameters", "vocabulary-indexed"]].values.tolist() == [
        ["dense", 10, 6],
        ["moe", 12, 6],
    ]
    assert list(tables["roles"]["role"]) == list(QUICK["base"]) and list(tables["routers"]["router"]) == list(
        QUICK["routers"]
    )
    assert tables["corpus"].startswith("the shared corpus `cpython_docs`")


def _render(tables: dict, closing: str = "CLOSING\n") -> str:
    return render(
        ROOT / "workflow/report/symm_optim/report.md.j2",
        scale="quick",
        params=_params(),
        claims="CLAIMS",
        n_claims=0,
        closing=closing,
        **tables,
    )


def test_the_report_template_renders_every_section(tmp_path):
    tables = summary.report_tables(_inputs(tmp_path), _params())
    text = _render(tables)
    assert text.startswith("# Paper 07: symmetry-compatible optimizers") and text.endswith("CLOSING\n")
    assert "top 2 of\n4 experts" in text and "120 steps of 16 x 64 tokens" in text and "first 60% of" in text
    assert "multipliers [0.333, 1.0, 3.0]" in text and "(seeds [0, 1, 2])" in text
    assert "| dense | row_norm | 3 | 0 | 7 | embedding |" in text
    for heading in ("## Claims", "## Best learning rate", "## Optimizer step time", "## Symmetry checks", "## Setup"):
        assert heading in text
    text = _render({**tables, "diverged": tables["diverged"].iloc[:0]})
    assert "and its role):\nnone\n" in text


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(d_model=0), r"LMConfig.d_model must be an integer >= 1, got 0"),
        (dict(n_experts=-1), r"LMConfig.n_experts must be an integer >= 0"),
        (dict(seed=True), r"LMConfig.seed must be an integer"),
        (dict(norm_eps=0.0), r"LMConfig.norm_eps must be a finite number > 0"),
        (dict(n_heads=3, n_kv_heads=2), "n_heads=3 is not a multiple of n_kv_heads=2"),
    ],
)
def test_model_sizes_out_of_range_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LMConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(steps=0), r"TrainSettings.steps must be an integer >= 1"),
        (dict(cooldown_frac=1.5), r"TrainSettings.cooldown_frac must be a finite number in \[0, 1\]"),
        (dict(spike_factor=1.0), r"TrainSettings.spike_factor must be a finite number > 1"),
        (dict(spike_ema=1.0), r"TrainSettings.spike_ema must be a finite number in \(0, 1\)"),
        (dict(vector_warmup=-1), r"TrainSettings.vector_warmup must be an integer >= 0"),
    ],
)
def test_training_settings_out_of_range_are_refused_naming_the_field(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TrainSettings(**kwargs)


def test_optimizer_arguments_are_checked_without_torch():
    group = {"lr": 0.1, "weight_decay": 0.0, "eps": 1e-8, "beta": 0.95}
    check_group("RowNorm", group)
    with pytest.raises(ValueError, match=r"RowNorm.beta must be a finite number in \[0, 1\), got 1.0"):
        check_group("RowNorm", {**group, "beta": 1.0})
    with pytest.raises(ValueError, match=r"Muon.ns_steps must be an integer >= 1, got 0"):
        check_group("Muon", {**group, "ns_steps": 0})
    with pytest.raises(ValueError, match=r"AdamW.betas must be a pair"):
        check_group("AdamW", {**group, "betas": (0.9,)})
    with pytest.raises(ValueError, match=r"HybridPolarGrad.order must be one of"):
        check_optimizer_spec({"name": "hybrid", "lr": 0.1, "order": "sideways"}, "embedding")
    with pytest.raises(TypeError, match="unexpected keyword argument 'center'"):
        check_optimizer_spec({"name": "muon", "lr": 0.1, "center": True}, "hidden")
