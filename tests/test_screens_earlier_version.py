"""Screens show labels and review decisions made on an earlier version of the content
(after a --replace) as such: annotation mode asks for the label again, the case view
and the reviewer queue mark them; a snapshot of the case view."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from db import Store
from db.browse import generation_detail
from db.events import append_label, append_review
from db.review import review_queue
from screens.app import CopyauditApp
from screens.review.review_queue import ReviewQueueScreen
from screens.widgets.checklist import _labels_text
from tests.test_screens_annotate import _annotate_first_nonliteral, _lines
from tests.test_screens_data import settle
from tests.test_screens_review import _open_first_case

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
EARLIER = "made on an earlier version"


def _change_output(path: Path, generation_id: int) -> None:
    """What an `import-generations --replace` with a new output does to the row."""
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "UPDATE generations SET output = output || ' (revised)' WHERE id = ?", (generation_id,)
        )
        conn.commit()


async def test_annotation_asks_again_for_a_label_on_an_earlier_version(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        gid = screen.generation_id
        await pilot.press("y")  # event 1: yes, on the content as it is
        await settle(pilot)
        assert EARLIER not in _lines(screen)["event:0"]
        _change_output(demo_db, gid)
        screen.show(gid)
        await settle(pilot)
        line = _lines(screen)["event:0"]
        assert "YES" in line and f"({EARLIER}: label again)" in line
        checklist = screen.query_one("#checklist")
        checklist.select_item("event:0")
        await pilot.press("y")  # re-confirmed on the new version
        await settle(pilot)
        assert EARLIER not in _lines(screen)["event:0"]


def _stale_case(path: Path) -> int:
    with Store(path) as store:
        first = review_queue(store, limit=1)[0].generation_id
        append_label(
            store, generation_id=first, annotator="ann", target="event", item_index=0, label="yes"
        )
        append_review(store, generation_id=first, reviewer="rita", status="escalated", note="why")
    _change_output(path, first)
    return first


async def test_case_view_and_queue_mark_the_earlier_version(demo_db: Path) -> None:
    first = _stale_case(demo_db)
    with Store(demo_db) as store:  # what the generation view's checklist shows
        (label,) = generation_detail(store, first).labels
    assert label["stale"] is True
    assert f"ann: yes ({EARLIER})" in str(_labels_text([label]))
    app = CopyauditApp(demo_db, annotator="reviewer1")
    async with app.run_test(size=SIZE) as pilot:
        case = await _open_first_case(pilot)
        people = str(case.query_one("#case-people").render())
        assert f"escalated ({EARLIER})" in people.replace("ESCALATED", "escalated")
        assert f"yes ({EARLIER})" in people
        await pilot.press("escape")
        await settle(pilot)
        queue = pilot.app.screen
        assert isinstance(queue, ReviewQueueScreen)
        table: Any = queue.query_one("#review-queue")
        assert "(earlier version)" in str(table.get_row_at(0))


def test_case_view_earlier_version_snapshot(demo_db: Path, snap_compare, monkeypatch) -> None:
    import db.events

    monkeypatch.setattr(db.events, "now", lambda: "2026-01-02T10:11:12.000+00:00")
    _stale_case(demo_db)

    async def open_case(pilot) -> None:
        await _open_first_case(pilot)

    app = CopyauditApp(demo_db, annotator="reviewer1")
    assert snap_compare(app, terminal_size=SIZE, run_before=open_case)
