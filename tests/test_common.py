"""Shared pieces: atomic I/O with provenance, long-form tables, Markdown, config validation."""

import math
import os
import stat
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neurips26.common import config, io, provenance, report, tables

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- io and provenance


def test_write_parquet_round_trips_frame_and_provenance(tmp_path):
    frame = pd.DataFrame({"metric": ["a", "b"], "value": [1.0, 2.5]})
    # built by hand like provenance.provenance() does, without asking git for the commit
    prov = {
        "git_commit": "0123abc-dirty",
        "config_hash": provenance.config_hash({"eps": 0.1, "pairs": 4}),
        "seed": 7,
        "packages": provenance.package_versions(),
    }
    path = tmp_path / "sub" / "table.parquet"
    io.write_parquet(frame, path, prov)
    back = io.read_provenance(path)
    assert back["git_commit"] == "0123abc-dirty"
    assert back["config_hash"] == provenance.config_hash({"pairs": 4, "eps": 0.1})
    assert back["seed"] == 7
    assert {"python", "snakemake", "numpy", "pandas", "pyarrow"} <= set(back["packages"])  # what this test imported
    table = pd.read_parquet(path)
    assert table["value"].tolist() == [1.0, 2.5]
    assert set(table["git_commit"]) == {prov["git_commit"]}
    assert set(table["config_hash"]) == {prov["config_hash"]}


def test_write_parquet_keeps_provenance_columns_already_present(tmp_path):
    frame = pd.DataFrame({"value": [1.0], "git_commit": ["abc"], "config_hash": ["old"]})
    io.write_parquet(
        frame, tmp_path / "t.parquet", {"git_commit": "new", "config_hash": "new", "seed": 0, "packages": {}}
    )
    table = pd.read_parquet(tmp_path / "t.parquet")
    assert table["git_commit"].tolist() == ["abc"] and table["config_hash"].tolist() == ["old"]


def test_read_provenance_refuses_a_table_without_it(tmp_path):
    path = tmp_path / "plain.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(path)
    with pytest.raises(ValueError, match="carries no provenance metadata"):
        io.read_provenance(path)


def test_atomic_path_leaves_no_file_when_the_block_raises(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("job failed")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_keeps_the_old_file_when_the_block_raises(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with io.atomic_path(target) as tmp:
            tmp.write_text("new")
            raise RuntimeError
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]


def test_atomic_path_leaves_a_world_readable_file_on_success(tmp_path):
    target = tmp_path / "nested" / "out.txt"
    with io.atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp != target
        tmp.write_text("done")
    assert target.read_text() == "done"
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o644
    assert list(target.parent.iterdir()) == [target]


def test_write_text_is_atomic_and_readable(tmp_path):
    io.write_text(tmp_path / "r.md", "# report\n")
    assert (tmp_path / "r.md").read_text() == "# report\n"


def test_save_npz_load_npz_round_trip(tmp_path):
    arrays = {"f": np.linspace(0, 1, 5), "ids": np.arange(6).reshape(3, 2), "flag": np.array(True)}
    io.save_npz(tmp_path / "a.npz", **arrays)
    back = io.load_npz(tmp_path / "a.npz")
    assert set(back) == set(arrays)
    for key, value in arrays.items():
        np.testing.assert_array_equal(back[key], value)
        assert back[key].dtype == value.dtype


def test_config_hash_is_order_independent():
    first = provenance.config_hash({"a": 1, "b": {"x": [1, 2], "y": 0.5}})
    second = provenance.config_hash({"b": {"y": 0.5, "x": [1, 2]}, "a": 1})
    assert first == second and len(first) == 12
    assert provenance.config_hash({"a": 2, "b": {"x": [1, 2], "y": 0.5}}) != first
    assert provenance.config_hash({"a": 1, "b": {"x": [2, 1], "y": 0.5}}) != first


def test_provenance_line_names_commit_hash_seed_and_packages():
    line = provenance.provenance_line(
        {"git_commit": "abc", "config_hash": "123", "seed": 3, "packages": {"numpy": "2.0"}}
    )
    assert "`abc`" in line and "`123`" in line and "seed 3" in line and "numpy==2.0" in line


# --------------------------------------------------------------------------- tables


def test_long_form_rows_per_item_and_batch_level():
    frame = tables.long_form(
        {"rmse": np.array([0.1, 0.2, 0.3]), "iters": [4, 5, 6]},
        {"t_ms": 1.5, "total": 9.0},
        task="digits",
        method="ra",
        seed=0,
    )
    assert len(frame) == 3 + 3 + 2
    assert list(frame.columns) == ["task", "method", "seed", "pair", "metric", "value"]
    assert frame["pair"].tolist() == [0, 1, 2, 0, 1, 2, tables.BATCH_LEVEL, tables.BATCH_LEVEL]
    batch = frame[frame["pair"] == -1]
    assert batch["metric"].tolist() == ["t_ms", "total"] and batch["value"].tolist() == [1.5, 9.0]
    assert (frame["task"] == "digits").all() and frame["value"].dtype == np.float64


def test_long_form_uses_a_custom_item_index():
    frame = tables.long_form({"rmse": np.array([0.1, 0.2])}, {}, item_index=np.array([3, 7]), method="ra")
    assert frame["pair"].tolist() == [3, 7]
    assert len(frame) == 2


# --------------------------------------------------------------------------- report


def test_markdown_table_formats_floats_and_escapes_pipes():
    frame = pd.DataFrame({"name": ["a|b", "c"], "value": [1.234567, float("nan")], "n": [3, 4]})
    text = report.markdown_table(frame, digits=3)
    lines = text.splitlines()
    assert lines[0] == "| name | value | n |"
    assert lines[1] == "|---|---|---|"
    assert lines[2] == "| a\\|b | 1.23 | 3 |"
    assert lines[3] == "| c | n/a | 4 |"


def test_read_benchmarks_reads_snakemake_benchmark_files(tmp_path):
    header = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    (tmp_path / "fit").mkdir()
    (tmp_path / "fit" / "digits_ra.tsv").write_text(header + "2.5\t0:00:02\t120.5\t300\t100\t110\t0\t1\t90\t2.2\n")
    (tmp_path / "pairs.tsv").write_text(
        header + "1.0\t0:00:01\t-\t-\t-\t-\t-\t-\t-\t-\n3.0\t0:00:03\t50\t1\t1\t1\t0\t0\t0\t0\n"
    )
    frame = report.read_benchmarks(tmp_path)
    assert list(frame.columns) == ["job", "seconds", "max_rss_mb"]
    rows = frame.set_index("job")
    assert set(rows.index) == {"fit/digits_ra", "pairs"}
    assert rows.loc["fit/digits_ra", "seconds"] == 2.5 and rows.loc["fit/digits_ra", "max_rss_mb"] == 120.5
    assert rows.loc["pairs", "seconds"] == 2.0 and rows.loc["pairs", "max_rss_mb"] == 50.0


def test_read_benchmarks_of_an_empty_folder_is_an_empty_table(tmp_path):
    frame = report.read_benchmarks(tmp_path)
    assert frame.empty and list(frame.columns) == ["job", "seconds", "max_rss_mb"]


# --------------------------------------------------------------------------- config

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "n": {"type": "integer", "minimum": 1},
        "mode": {"enum": ["fast", "slow"]},
        "sub": {
            "type": "object",
            "additionalProperties": False,
            "properties": {"eps": {"type": "number", "exclusiveMinimum": 0}},
        },
    },
}


def test_validate_accepts_a_valid_config():
    config.validate({"n": 2, "mode": "fast", "sub": {"eps": 0.1}}, SCHEMA, "cfg.yaml")


def test_validate_names_an_unknown_key_and_the_allowed_keys():
    with pytest.raises(config.ConfigError, match=r"cfg\.yaml:\n  bogus: unknown key \(allowed keys: mode, n, sub\)"):
        config.validate({"bogus": 1}, SCHEMA, "cfg.yaml")


def test_validate_names_a_nested_unknown_key():
    with pytest.raises(config.ConfigError, match=r"sub\.tol: unknown key \(allowed keys: eps\)"):
        config.validate({"sub": {"tol": 1}}, SCHEMA, "cfg.yaml")


def test_validate_names_a_wrong_type_and_the_allowed_type():
    with pytest.raises(config.ConfigError, match=r"n: 'x' is not of type 'integer' \(allowed: type integer, >= 1\)"):
        config.validate({"n": "x"}, SCHEMA, "cfg.yaml")


def test_validate_names_an_out_of_range_value_and_the_bound():
    with pytest.raises(config.ConfigError, match=r"n: 0 is less than the minimum of 1 \(allowed: type integer, >= 1\)"):
        config.validate({"n": 0}, SCHEMA, "cfg.yaml")
    with pytest.raises(config.ConfigError, match=r"sub\.eps: .*\(allowed: type number, > 0\)"):
        config.validate({"sub": {"eps": 0}}, SCHEMA, "cfg.yaml")


def test_validate_names_a_value_outside_the_enum_and_the_allowed_values():
    with pytest.raises(config.ConfigError, match=r"mode: 'medium' is not one of .*\(allowed values: fast, slow\)"):
        config.validate({"mode": "medium"}, SCHEMA, "cfg.yaml")


def test_validate_lists_every_violation():
    with pytest.raises(config.ConfigError) as info:
        config.validate({"n": 0, "mode": "x", "bogus": 1}, SCHEMA, "cfg.yaml")
    lines = str(info.value).splitlines()
    assert lines[0] == "invalid config in cfg.yaml:"
    assert len(lines) == 4


def test_scale_block_rejects_unknown_scale_and_paper():
    papers = {"amortized_ot": {"smoke": {"seed": 0}}, "other": {}}
    assert config.scale_block(papers, "amortized_ot", "smoke") == {"seed": 0}
    with pytest.raises(
        config.ConfigError, match=r"unknown scale 'huge' \(allowed values: smoke, quick, paper, rehearsal\)"
    ):
        config.scale_block(papers, "amortized_ot", "huge")
    with pytest.raises(config.ConfigError, match=r"unknown paper 'nope' \(allowed values: amortized_ot, other\)"):
        config.scale_block(papers, "nope", "smoke")


def test_load_yaml_rejects_a_non_mapping(tmp_path):
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(config.ConfigError, match="top level must be a mapping, got list"):
        config.load_yaml(tmp_path / "list.yaml")
    (tmp_path / "empty.yaml").write_text("")
    assert config.load_yaml(tmp_path / "empty.yaml") == {}


def test_the_real_paper_config_matches_its_schema():
    data = config.load_yaml(ROOT / "config" / "amortized_ot.yaml")
    schema = config.load_yaml(ROOT / "workflow" / "schemas" / "amortized_ot.schema.yaml")
    config.validate(data, schema, "config/amortized_ot.yaml")
    for scale in config.FILE_SCALES:
        block = data[scale]
        assert block["main_projections"] in block["projections"]
        assert block["digits"]["train_res"] in block["digits"]["test_res"]


def test_the_real_paper_schema_catches_a_bad_value():
    data = config.load_yaml(ROOT / "config" / "amortized_ot.yaml")
    schema = config.load_yaml(ROOT / "workflow" / "schemas" / "amortized_ot.schema.yaml")
    data["smoke"]["digits"]["eps"] = 0
    with pytest.raises(config.ConfigError, match=r"smoke\.digits\.eps"):
        config.validate(data, schema, "config/amortized_ot.yaml")


def test_the_real_workflow_config_matches_its_schema():
    data = config.load_yaml(ROOT / "config" / "config.yaml")
    schema = config.load_yaml(ROOT / "workflow" / "schemas" / "config.schema.yaml")
    config.validate(data, schema, "config/config.yaml")
    implemented = sorted(
        p.stem
        for p in (ROOT / "rules").glob("*.smk")
        if p.stem not in {"common", "corpus", "download", "plan", "scoreboard"}
    )
    papers = config.validate_workflow_config(data, ROOT / "config", ROOT / "workflow" / "schemas", implemented)
    assert set(papers) == set(implemented) >= {"amortized_ot", "pred_loss_space"}
    assert math.isfinite(papers["amortized_ot"]["quick"]["ridge"])


def test_workflow_config_rejects_an_unimplemented_paper():
    data = {"scale": "quick", "papers": ["amortized_ot", "missing_paper"]}
    with pytest.raises(
        config.ConfigError, match=r"unknown paper\(s\) \['missing_paper'\] \(allowed values: amortized_ot\)"
    ):
        config.validate_workflow_config(data, ROOT / "config", ROOT / "workflow" / "schemas", ["amortized_ot"])


def test_the_test_fault_switch_does_nothing_unless_it_names_the_rule(tmp_path):
    from neurips26.common.faults import inject_fault

    inject_fault("some_rule", spec="")
    inject_fault("some_rule", spec=f"other_rule:fail_once:{tmp_path}")
    assert not any(tmp_path.iterdir())


def test_the_test_fault_switch_fails_exactly_the_first_job_of_its_rule(tmp_path):
    from neurips26.common.faults import InjectedFault, inject_fault

    spec = f"some_rule:fail_once:{tmp_path / 'markers'}"
    with pytest.raises(InjectedFault, match="some_rule"):
        inject_fault("some_rule", spec=spec)
    inject_fault("some_rule", spec=spec)  # the retry, or any later job of the rule, runs
    assert (tmp_path / "markers/some_rule.failed").exists()


@pytest.mark.parametrize("spec", ["some_rule", "some_rule:explode:1", ":sleep:1", "some_rule:sleep:"])
def test_a_malformed_test_fault_switch_is_an_error_naming_it(spec):
    from neurips26.common.faults import inject_fault

    with pytest.raises(ValueError, match="NEURIPS26_TEST_FAULT"):
        inject_fault("some_rule", spec=spec)
