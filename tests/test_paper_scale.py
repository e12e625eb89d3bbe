"""The paper's settings beside our paper-scale config (workflow/report/<slug>/paper_scale.yaml): every paper has
one, every row resolves in its config's paper block, every aspect is covered, and the checks refuse bad rows."""

from __future__ import annotations

import copy

import pytest
import yaml

from conftest import ROOT
from neurips26.common.paper_scale import REQUIRED, config_value, paper_scale_paths, paper_scale_rows

PAPERS = sorted(p.stem for p in (ROOT / "rules").glob("*.smk"))
PAPERS = [p for p in PAPERS if p not in {"common", "corpus", "download", "plan", "scoreboard"}]


def spec_and_block(slug):
    spec = yaml.safe_load((ROOT / "workflow" / "report" / slug / "paper_scale.yaml").read_text())
    block = yaml.safe_load((ROOT / "config" / f"{slug}.yaml").read_text())["paper"]
    return spec, block


@pytest.mark.parametrize("slug", PAPERS)
def test_every_paper_has_a_table_whose_rows_resolve_in_its_paper_config(slug):
    spec, block = spec_and_block(slug)
    paths = paper_scale_paths(spec, block)
    rows = paper_scale_rows(spec, {path: config_value(block, path) for path in paths})
    assert len(rows) == len(spec["rows"]) >= len(REQUIRED)
    assert {row["aspect"] for row in rows} >= set(REQUIRED)
    for row, source in zip(rows, spec["rows"], strict=True):
        for path in source.get("ours", []):
            assert f"`{path}` = " in row["ours (the config's paper block)"]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda s: s["rows"][0].update(ours=["no.such.key"]), "the paper block has no no.such.key"),
        (lambda s: s["rows"][0].update(reason=" "), "`reason` is empty"),
        (lambda s: s["rows"][0].update(aspect="size"), "aspect must be one of"),
        (lambda s: s["rows"][0].update(ours=[], fixed=""), "neither `ours`"),
        (lambda s: s.update(rows=[r for r in s["rows"] if r["aspect"] != "seeds"]), "no row for the aspects ['seeds']"),
        (lambda s: s.pop("cite"), "needs `cite`"),
    ],
)
def test_a_bad_table_is_refused_naming_the_row(edit, message):
    spec, block = spec_and_block("bird")
    spec = copy.deepcopy(spec)
    edit(spec)
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        paper_scale_paths(spec, block)


def test_ours_is_read_from_the_config_so_the_table_follows_it():
    spec, block = spec_and_block("bird")
    row = next(r for r in spec["rows"] if r.get("ours"))
    path = row["ours"][0]
    changed = copy.deepcopy(block)
    parent = changed
    *head, last = path.split(".")
    for key in head:
        parent = parent[key]
    parent[last] = "CHANGED"
    rendered = paper_scale_rows({"rows": [row]}, {p: config_value(changed, p) for p in row["ours"]})
    assert f"`{path}` = CHANGED" in rendered[0]["ours (the config's paper block)"]
