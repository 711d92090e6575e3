"""The generation view of a literal-style run shows the longest verbatim run: in the
score line with its threshold and verdict, highlighted in the output, named in the
legend; an extraction case shows its true continuation and its extracted prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.engine.demo import samples_dir
from copyaudit.engine.runner import judge_run
from copyaudit.formats import load_cases, load_generations
from copyaudit.judges.options import JudgeOptions
from db import Store
from db.cases import import_cases
from db.runs import import_generations
from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.generations.generation_view import GenerationScreen
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


@pytest.fixture
def extraction_db(tmp_path: Path) -> Path:
    path, root = tmp_path / "extraction.db", samples_dir()
    with Store(path) as store:
        cases = root / "extraction.jsonl"
        import_cases(
            store, "extraction", "extraction", load_cases("extraction", cases), source=cases.name
        )
        import_generations(
            store,
            run="demo-extraction",
            suite="extraction",
            model="illustrative",
            rows=load_generations(root / "generations" / "extraction.jsonl"),
            source="extraction.jsonl",
        )
        judge_run(store, "demo-extraction", JudgeOptions("verbatim,extraction"))
    return path


async def test_generation_view_shows_and_highlights_the_longest_verbatim_run(
    extraction_db: Path,
) -> None:
    app = CopyauditApp(extraction_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_run("demo-extraction")
        await settle(pilot)
        listing = app.screen
        assert isinstance(listing, GenerationListScreen)
        row = next(i for i, r in enumerate(listing.pager.rows) if r.case_id == "scarlet-ext-01")
        await pilot.press(*(["down"] * row), "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GenerationScreen) and screen.detail is not None
        verbatim = next(j for j in screen.detail.judgments if j.metric == "longest_verbatim_chars")
        length = int(verbatim.value)
        assert length >= 160 and verbatim.flagged  # this output copies a long run
        scores = str(screen.query_one("#scores").render())
        assert f"longest_verbatim_chars {length} (≥ 160) FLAGGED" in scores
        assert "lcp_tokens" in scores and "edit_similarity" in scores
        [item] = [i for i in screen.items if i.judgment.metric == "longest_verbatim_chars"]
        [(start, end)] = item.spans
        assert end - start == length
        run = screen.detail.output[start:end]
        assert run in screen.detail.payload["reference"]  # verbatim from the source
        output = screen.query_one("#output").render()
        highlighted = {o for span in output.spans for o in range(span.start, span.end)}
        shown = str(output).index(run[:40])
        assert set(range(shown, shown + len(run))) <= highlighted
        assert "longest_verbatim_chars evidence" in str(screen.query_one("#legend").render())
        context = str(screen.query_one("#context").render())
        assert "True continuation" in context
        assert screen.detail.payload["prefix"] in context  # the prompt: the prefix alone


def test_extraction_generation_view_snapshot(extraction_db: Path, snap_compare) -> None:
    async def open_view(pilot) -> None:
        await settle(pilot)
        pilot.app.open_run("demo-extraction")
        await settle(pilot)
        rows = pilot.app.screen.pager.rows
        row = next(i for i, r in enumerate(rows) if r.case_id == "scarlet-ext-01")
        await pilot.press(*(["down"] * row), "enter")
        await settle(pilot)
        assert isinstance(pilot.app.screen, GenerationScreen)

    assert snap_compare(CopyauditApp(extraction_db), terminal_size=SIZE, run_before=open_view)
