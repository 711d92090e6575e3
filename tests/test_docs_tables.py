"""docs/judges.md's generated tables are the registry's and the shipped figures' now
(`make docs-tables` rewrites them), and the check can fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit import docs_tables
from copyaudit.judges.registry import JUDGES
from copyaudit.judges.validation_figures import FIGURES_FILE
from copyaudit.render.doc_regions import region, with_region


def test_the_judges_page_is_up_to_date() -> None:
    page = docs_tables.PAGE.read_text(encoding="utf-8")
    assert docs_tables.stale(page) == [], "run: make docs-tables"


def test_every_judge_and_every_shipped_figure_has_a_row() -> None:
    judges = docs_tables.judges_table()
    assert all(f"| `{name}` |" in judges for name in JUDGES)
    # what only the old hand table said now lives in the registry, and reaches the page
    assert "0 differences from a transcription on 504 pairs" in judges
    assert "98% of 200 responses" in judges
    figures = docs_tables.figures_table()
    shipped = json.loads(FIGURES_FILE.read_text(encoding="utf-8"))
    for name, row in shipped.items():
        if name == "validation_sha256":
            continue
        assert f"{row['f1']:.2f} [{row['ci']['f1'][0]:.2f}-{row['ci']['f1'][1]:.2f}]" in figures
        assert f"{row['run_level_right']}/{row['n_stories']} |" in figures


def test_a_stale_region_is_found_and_rewritten_leaving_the_prose(tmp_path: Path) -> None:
    page = docs_tables.PAGE.read_text(encoding="utf-8")
    name = docs_tables.FIGURES_REGION
    stale = with_region(page, name, "| judge | F1 |\n|---|---|\n| `events` | 0.99 |")
    assert docs_tables.stale(stale) == [name]
    assert docs_tables.regenerated(stale) == page
    figures = tmp_path / "figures.json"
    figures.write_text(json.dumps({"validation_sha256": "x"}), encoding="utf-8")
    with pytest.raises(ValueError, match="no shipped validation figures"):
        docs_tables.figures_table(figures)


def test_a_page_without_markers_is_refused() -> None:
    assert region("# a page\n", "judges-table") is None
    with pytest.raises(ValueError, match="judges-table:start"):
        with_region("# a page\n", "judges-table", "| x |")
