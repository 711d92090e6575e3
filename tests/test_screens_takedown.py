"""The takedown screen: t on a dashboard run opens its suite and model's takedown table,
the same cells `copyaudit takedown --table-only` prints; snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.judges.infringement import INFRINGEMENT_METRICS
from copyaudit.studies.takedown.render import cells
from copyaudit.studies.takedown.table import takedown_table
from copyaudit.types import Score
from db import Store
from db.runs import (
    JudgeIdentity,
    NewGeneration,
    RunSpec,
    add_generations,
    create_or_resume_run,
    save_judgments,
    set_run_status,
)
from screens.app import CopyauditApp
from screens.runs.takedown_view import TakedownScreen
from tests.conftest import write_jsonl
from tests.test_screens_data import cell_texts, settle

pytestmark = pytest.mark.anyio
SIZE = (180, 24)
# method -> (copying level of its outputs in [0, 1], tokens, seconds per generation)
METHODS = {"none": (0.9, 40, 2.0), "topk": (0.5, 40, 2.5), "memfree": (0.3, 36, 3.0)}


def _values(level: float, case: int) -> list[float]:
    """The eight metrics of an output copying at `level` (case 1 a little less)."""
    level -= 0.1 * case
    words = 40 * level
    return [level, level, level, 200 * level, words, words, 100 * (1 - level), level]


@pytest.fixture
def takedown_db(tmp_path: Path, cli) -> Path:
    path = tmp_path / "takedown.db"
    records = [
        {"id": f"c{i}", "title": "Harbour Tales", "input": f"prefix {i}", "reference": "ref"}
        for i in range(2)
    ]
    assert cli("import", "literal", str(write_jsonl(tmp_path / "l.jsonl", records)),
               "--suite", "lit", db=path).code == 0  # fmt: skip
    judge = JudgeIdentity("takedown", "1", {}, "takedown-test")
    with Store(path) as store:
        cases = [row["id"] for row in store.query("SELECT id FROM cases ORDER BY id")]
        for method, (level, tokens, seconds) in METHODS.items():
            spec = RunSpec(f"lit-tiny-{method}", "lit", "hf", "tiny", mitigation=method)
            run_id = create_or_resume_run(store, spec)
            add_generations(
                store,
                run_id,
                [NewGeneration(pk, 1, "p", f"out {method}", tokens, seconds) for pk in cases],
            )
            set_run_status(store, run_id, "done")
            generations = store.query("SELECT id FROM generations WHERE run_id = ?", (run_id,))
            save_judgments(
                store,
                judge,
                [
                    (row["id"], [Score(m, v) for m, v in zip(INFRINGEMENT_METRICS,
                                                             _values(level, i), strict=True)])
                    for i, row in enumerate(generations)
                ],
            )  # fmt: skip
    return path


async def _open_takedown(pilot) -> TakedownScreen:
    await settle(pilot)
    await pilot.press("t")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TakedownScreen)
    return screen


async def test_t_opens_the_takedown_table_of_the_runs_suite_and_model(
    takedown_db: Path,
) -> None:
    with Store(takedown_db) as store:
        table = takedown_table(store, "lit", "tiny")
    head, rows = cells(table)
    # memfree copies least, then topk, then none: win rates 100, 50 and 0 on every metric
    assert [r.average for r in table.rows] == [0.0, 0.5, 1.0]
    assert [r.speed_ratio for r in table.rows] == pytest.approx([1.0, 0.8, 0.6])
    app = CopyauditApp(takedown_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_takedown(pilot)
        assert (screen.suite, screen.model) == ("lit", "tiny")
        shown = screen.query_one("#takedown-table")
        assert [str(c.label) for c in shown.columns.values()] == head
        assert [cell_texts(shown, key) for key in shown.rows] == rows
        notes = str(screen.query_one("#takedown-notes").render())
        assert "fluency" in notes  # why the utility column is empty
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, TakedownScreen)


def test_takedown_snapshot(takedown_db: Path, snap_compare) -> None:
    async def open_takedown(pilot) -> None:
        await _open_takedown(pilot)

    assert snap_compare(CopyauditApp(takedown_db), terminal_size=SIZE, run_before=open_takedown)


def test_a_method_without_generations_is_left_out_with_a_note(takedown_db: Path) -> None:
    """A method cancelled before its first generation used to empty every win rate."""
    with Store(takedown_db) as store:
        before = takedown_table(store, "lit", "tiny")
        spec = RunSpec("lit-tiny-rcad", "lit", "hf", "tiny", mitigation="rcad")
        set_run_status(store, create_or_resume_run(store, spec), "cancelled")
        after = takedown_table(store, "lit", "tiny")
    assert [row.method for row in after.rows] == [row.method for row in before.rows]
    assert [row.win_rates for row in after.rows] == [row.win_rates for row in before.rows]
    assert all(row.average is not None for row in after.rows)
    assert any("rcad (lit-tiny-rcad, cancelled) left out" in note for note in after.notes)
