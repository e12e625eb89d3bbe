"""The HTML report's texts are valid reStructuredText: every caption renders without a docutils message
(a `|x|` in prose is a substitution reference, an error), and the report built from the smoke run too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import PAPERS, ROOT, SMOKE_PAPERS, smoke_targets, snakemake

# workflow.rst, the landing page, is a Jinja template that includes the scoreboard's rst (checked in the smoke report)
CAPTIONS = sorted(p for p in (ROOT / "workflow/report").rglob("*.rst") if p.name != "workflow.rst")


def docutils_messages(text: str) -> list[str]:
    """The warnings and errors docutils reports while rendering `text` as HTML."""
    import io

    import docutils.core

    stream = io.StringIO()
    docutils.core.publish_string(
        text,
        writer_name="html",
        settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream},
    )
    return [line for line in stream.getvalue().splitlines() if line.strip()]


def test_docutils_reports_a_substitution_written_in_prose():
    assert docutils_messages("The update |dx| is small.")  # the checker can fail


@pytest.mark.parametrize("caption", CAPTIONS, ids=lambda p: str(p.relative_to(ROOT / "workflow/report")))
def test_every_caption_renders_without_a_docutils_message(caption: Path):
    assert docutils_messages(caption.read_text()) == []


def test_the_html_report_of_the_smoke_run_builds_without_docutils_errors(smoke_run, tmp_path):
    html = tmp_path / "report.html"
    out = snakemake(smoke_run, "--config", "scale=smoke", "--report", str(html), *smoke_targets())
    text = out.stdout + out.stderr
    assert not re.search(r"\(\s*(WARNING|ERROR|SEVERE)/\d\)", text), text[-4000:]
    page = html.read_text(errors="replace")
    assert "System Message" not in page and "system-message" not in page
    for slug in SMOKE_PAPERS:  # every chosen paper's results are in the report
        assert f"results/smoke/{slug}/" in page, slug
    if SMOKE_PAPERS == PAPERS:  # the landing page is the scoreboard (workflow/report/workflow.rst)
        desc = re.search(r"var workflow_desc = (.*?);\n", page, re.S)
        assert desc and "Scoreboard, scale smoke" in desc.group(1) and "decided" in desc.group(1)
        assert "Overview: scoreboard" in page


def test_each_papers_results_sit_under_one_category_named_paper_nn_and_its_title_in_paper_order():
    """The HTML report's menu sorts categories by name: "Paper NN: title" puts the papers in order, the scoreboard
    ("Overview: ...") before them; NN is the number the paper's own report gives itself."""
    for slug in PAPERS:
        categories = set(re.findall(r'category="([^"]+)"', (ROOT / f"rules/{slug}.smk").read_text()))
        assert len(categories) == 1, (slug, categories)
        number = {
            m
            for folder in ("workflow/report", "scripts", "src/neurips26")
            for path in (ROOT / folder / slug).rglob("*")
            if path.is_file() and path.suffix in {".j2", ".py", ".md"}
            for m in re.findall(r"# Paper (\d\d)[: ]", path.read_text())
        }
        assert len(number) == 1, (slug, number)
        assert re.fullmatch(rf"Paper {number.pop()}: \S.*", categories.pop()), slug
    overview = re.findall(r'category="([^"]+)"', (ROOT / "rules/scoreboard.smk").read_text())
    assert overview == ["Overview: scoreboard"] and sorted(["Paper 01: x", *overview])[0] == overview[0]
