"""Reviewer queue and case view: a reviewer walks three cases (status keys, notes, n/p,
dossier export), decisions are written at once as chained review events, the case view
highlights as the generation view does, the queue's filters and keyset paging, the
refusal without a reviewer name, and a snapshot of the queue."""

from __future__ import annotations

import sqlite3
from html import escape
from pathlib import Path
from typing import Any

import pytest
from textual.content import Content

from db import Store
from db.browse import generation_detail
from db.events import append_review, verify_chains
from db.review import review_queue, review_queue_count
from screens.app import CopyauditApp
from screens.export_dialog import ExportScreen
from screens.generations.case_view import CaseScreen
from screens.line_input import LineInputScreen
from screens.review.review_queue import ReviewQueueScreen
from screens.state.export_choices import file_stem
from screens.state.review_cases import QueueFilter, ReviewPager
from screens.widgets.evidence import evidence_items, render_output
from tests.test_screens_data import MODEL, settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
REVIEWER = "reviewer1"
NOTE_1 = "ball scene [b]retold[/b] <i>closely</i>"
NOTE_3 = "second reader please"
HTML_SECTIONS = ("case", "prompt", "texts", "items", "judges", "provenance", "labels", "review")


def _reviews(path: Path) -> list[tuple[str, str, str | None, str]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(
            "SELECT generation_key, status, note, reviewer FROM reviews ORDER BY chain, seq"
        ).fetchall()
    finally:
        conn.close()


def _queue_keys(path: Path, **filters: Any) -> list[str]:
    with Store(path) as store:
        return [r.generation_key for r in review_queue(store, limit=500, **filters)]


def _notices(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _open_queue(pilot: Any) -> ReviewQueueScreen:
    await settle(pilot)
    await pilot.press("v")  # from the dashboard
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, ReviewQueueScreen)
    return screen


async def test_reviewer_walks_three_cases_and_exports_a_dossier(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo_db.parent)  # the dossier's default place: the current directory
    order = _queue_keys(demo_db)
    assert len(order) == 25
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        queue = await _open_queue(pilot)
        table = queue.query_one("#review-queue")
        assert table.row_count == 25
        assert [str(table.get_row_at(i)[0]) for i in range(3)] == order[:3]
        await pilot.press("enter")
        await settle(pilot)
        case = app.screen
        assert isinstance(case, CaseScreen) and case.case is not None
        assert case.case.key == order[0]
        assert "case 1 of 25" in str(case.query_one("#case-title").render())

        # the same highlights as the generation view (built from db.browse there)
        with Store(demo_db) as store:
            detail = generation_detail(store, case.generation_id)
        assert detail is not None
        output = case.query_one("#case-output")
        width = output.content_size.width
        expected = Content.from_rich_text(
            render_output(detail.output, evidence_items(detail), width=width).text
        )
        shown = output.render()
        assert shown.plain == expected.plain and shown.spans == expected.spans
        assert len(expected.spans) > 3  # characters and event windows really are marked
        # every judge figure with its threshold, version and config; the run's provenance
        judges = str(case.query_one("#case-judges").render())
        assert "events/events" in judges and "(threshold 5)" in judges
        assert "characters/characters" in judges and "(threshold 3)" in judges
        assert "judge version test · config test-events" in judges
        assert f"model: {MODEL}" in judges and "prompt template: 1" in judges

        # case 1: a note, then escalate: one event carrying both, written by the key
        await pilot.press("m")
        await settle(pilot)
        assert isinstance(app.screen, LineInputScreen)
        await pilot.press(*NOTE_1, "enter")
        await settle(pilot)
        assert _reviews(demo_db) == []  # a note alone writes nothing
        assert NOTE_1 in str(case.query_one("#case-status").render())
        await pilot.press("3")
        assert _reviews(demo_db) == [(order[0], "escalated", NOTE_1, REVIEWER)]
        people = str(case.query_one("#case-people").render())
        assert f"escalated by {REVIEWER}" in people and NOTE_1 in people
        await pilot.press("3")  # the same status again, no note: nothing new
        assert len(_reviews(demo_db)) == 1

        # case 2: cleared without a note
        await pilot.press("N")
        assert case.case.key == order[1]
        await pilot.press("2")
        assert _reviews(demo_db)[-1] == (order[1], "cleared", None, REVIEWER)

        # case 3: a note and "needs second look", then the dossier
        await pilot.press("N")
        assert case.case.key == order[2]
        assert "case 3 of 25" in str(case.query_one("#case-title").render())
        await pilot.press("m")
        await settle(pilot)
        await pilot.press(*NOTE_3, "enter")
        await settle(pilot)
        await pilot.press("4")
        assert _reviews(demo_db)[-1] == (order[2], "needs_second_look", NOTE_3, REVIEWER)
        await pilot.press("D")  # the export dialog, its name prefilled: Enter writes
        await settle(pilot)
        assert isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is case
        path = demo_db.parent / f"{file_stem(order[2])}.dossier.html"
        assert path.is_file()
        assert any(f"wrote the dossier to {path}" in notice for notice in _notices(app))

        # P goes back; the status shown is the one stored
        await pilot.press("P")
        assert case.case.key == order[1] and case.case.review["status"] == "cleared"

        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is queue
        statuses = [str(table.get_row_at(i)[5]) for i in range(4)]
        assert statuses == ["escalated", "cleared", "second look", "open"]
        assert str(table.get_row_at(0)[6]) == REVIEWER
        assert table.cursor_row == 1  # where the case view was last

    assert _reviews(demo_db) == [
        (order[0], "escalated", NOTE_1, REVIEWER),
        (order[1], "cleared", None, REVIEWER),
        (order[2], "needs_second_look", NOTE_3, REVIEWER),
    ]
    with Store(demo_db) as store:
        assert verify_chains(store) == []
    html = path.read_text(encoding="utf-8")
    for section in HTML_SECTIONS:
        assert f'id="{section}"' in html, section
    assert escape(order[2]) in html and escape(NOTE_3) in html
    assert "<strong>needs_second_look</strong>" in html and REVIEWER in html
    assert "ball scene" not in html  # case 1's note is not in case 3's dossier


async def test_status_keys_are_refused_without_a_reviewer(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)  # no annotator, and not asked at start
    async with app.run_test(size=SIZE) as pilot:
        await _open_queue(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, CaseScreen)
        await pilot.press("3", "2", "4", "1")
        await settle(pilot)
        assert _reviews(demo_db) == []
        assert any("no reviewer name" in notice for notice in _notices(app))


async def test_queue_filters_by_status_run_and_work(demo_db: Path) -> None:
    with Store(demo_db) as store:
        first, second = review_queue(store, limit=2)
        append_review(store, generation_id=first.generation_id, reviewer="rita", status="cleared")
        append_review(
            store, generation_id=second.generation_id, reviewer="rita", status="escalated"
        )
        literal = review_queue_count(store, run="demo-literal")
    assert 0 < literal < 25
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        queue = await _open_queue(pilot)
        table = queue.query_one("#review-queue")

        def keys() -> list[str]:
            return [str(table.get_row_at(i)[0]) for i in range(table.row_count)]

        queue.query_one("#review-status").value = "escalated"
        await settle(pilot)
        assert keys() == [second.generation_key] and queue.pager.total == 1
        queue.query_one("#review-status").value = "open"
        await settle(pilot)
        assert keys() == _queue_keys(demo_db, status="open") and len(keys()) == 23
        await pilot.press("c")
        await settle(pilot)
        assert len(keys()) == 25
        queue.query_one("#review-model").value = ("run", "demo-literal")
        await settle(pilot)
        assert keys() == _queue_keys(demo_db, run="demo-literal") and len(keys()) == literal
        queue.query_one("#review-model").value = ("model", MODEL)
        await settle(pilot)
        assert len(keys()) == 25
        pride_key = "Pride and Prejudice\x1fJane Austen"  # works are keyed title + author
        queue.query_one("#review-work").value = pride_key
        await settle(pilot)
        pride = _queue_keys(demo_db, work=pride_key)
        assert keys() == pride and 0 < len(pride) < 25
        status = str(queue.query_one("#review-status-line").render())
        assert f"{len(pride)} cases" in status and "work Pride and Prejudice," in status


async def test_command_palette_opens_the_reviewer_queue(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"reviewer queue")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ReviewQueueScreen)
        assert app.screen.query_one("#review-queue").row_count == 25


def test_pager_walks_past_pages_and_keeps_its_place(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """n/p cross page boundaries, and clearing cases under an 'open' filter does not make
    the walk skip any open case (keyset paging)."""
    monkeypatch.setattr("screens.state.review_cases.PAGE_SIZE", 4)
    expected = _queue_keys(demo_db, status="open")
    with Store(demo_db) as store:
        pager = ReviewPager(QueueFilter(status="open"))
        pager.add_page(pager.page(store))
        assert len(pager.rows) == 4
        current, seen = pager.rows[0].generation_id, []
        while current is not None:
            seen.append(current)
            append_review(store, generation_id=current, reviewer="r", status="cleared")
            current = pager.neighbour(current, 1, store)
        keys = {r.generation_id: r.generation_key for r in pager.rows}
        assert [keys[g] for g in seen] == expected
        assert pager.neighbour(seen[4], -1, store) == seen[3]
        assert review_queue_count(store, status="open") == 0


def test_reviewer_queue_snapshot(demo_db: Path, snap_compare) -> None:
    with Store(demo_db) as store:
        rows = review_queue(store, limit=3)
        append_review(
            store,
            generation_id=rows[0].generation_id,
            reviewer="rita",
            status="escalated",
            note="[red]not markup[/red]",
        )
        append_review(store, generation_id=rows[2].generation_id, reviewer="lee", status="cleared")

    async def open_queue(pilot) -> None:
        await _open_queue(pilot)

    app = CopyauditApp(demo_db, annotator=REVIEWER)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_queue)


async def _open_first_case(pilot: Any) -> CaseScreen:
    await _open_queue(pilot)
    await pilot.press("enter")
    await settle(pilot)
    case = pilot.app.screen
    assert isinstance(case, CaseScreen)
    return case


async def test_a_review_decision_is_undone_by_a_new_event(demo_db: Path) -> None:
    order = _queue_keys(demo_db)
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        case = await _open_first_case(pilot)
        await pilot.press("3", "2")  # escalated, then cleared
        assert case.case.review["status"] == "cleared"
        await pilot.press("z")  # cleared withdrawn: escalated again
        assert case.case.review["status"] == "escalated"
        assert "escalated" in str(case.query_one("#case-status").render())
        await pilot.press("z")  # escalated withdrawn: open, as before any decision
        assert case.case.review["status"] == "open"
        await pilot.press("z")  # nothing of mine left in force
        assert any("no decision of yours" in notice for notice in _notices(app))
    reviews = _reviews(demo_db)
    assert [(key, status) for key, status, _, _ in reviews] == [
        (order[0], "escalated"),
        (order[0], "cleared"),
        (order[0], "escalated"),
        (order[0], "open"),
    ]
    assert reviews[2][2].endswith("withdrew cleared") and reviews[3][2].endswith(
        "withdrew escalated"
    )
    with Store(demo_db) as store:
        assert verify_chains(store) == []


def test_only_your_own_decision_in_force_can_be_undone(demo_db: Path) -> None:
    from db.review import current_review, undo_review

    with Store(demo_db) as store:
        generation = review_queue(store, limit=1)[0].generation_id
        assert undo_review(store, generation_id=generation, reviewer="ann") is None
        append_review(store, generation_id=generation, reviewer="ann", status="escalated")
        append_review(store, generation_id=generation, reviewer="bob", status="cleared")
        assert undo_review(store, generation_id=generation, reviewer="ann") is None  # bob's
        assert undo_review(store, generation_id=generation, reviewer="bob") == (
            "cleared",
            "escalated",
        )
        assert current_review(store, generation)["status"] == "escalated"
        assert undo_review(store, generation_id=generation, reviewer="ann") == (
            "escalated",
            "open",
        )
        assert current_review(store, generation)["status"] == "open"
        assert verify_chains(store) == []


def test_a_typed_note_never_acts_as_an_undo_and_an_undo_names_only_your_own(
    demo_db: Path,
) -> None:
    from copyaudit.errors import UserError
    from db.review import current_review, undo_review

    with Store(demo_db) as store:
        generation = review_queue(store, limit=1)[0].generation_id
        first = append_review(store, generation_id=generation, reviewer="ann", status="escalated")
        forged = f"undo {first}: withdrew escalated"  # the text of an undo, typed as a note
        append_review(
            store, generation_id=generation, reviewer="bob", status="cleared", note=forged
        )
        append_review(store, generation_id=generation, reviewer="bob", status="cleared")
        bob_undo = undo_review(store, generation_id=generation, reviewer="bob")
        assert bob_undo == ("cleared", "cleared")  # ann's escalation is still in force below
        with pytest.raises(UserError, match="has no review decision"):
            append_review(
                store, generation_id=generation, reviewer="bob", status="open", undoes=first
            )
        assert current_review(store, generation)["status"] == "cleared"
        assert verify_chains(store) == []


async def test_a_case_note_is_stored_when_moving_on(demo_db: Path) -> None:
    order = _queue_keys(demo_db)
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        case = await _open_first_case(pilot)
        await pilot.press("m")
        await settle(pilot)
        await pilot.press(*NOTE_3, "enter")
        await settle(pilot)
        assert _reviews(demo_db) == []  # pending until a status key or a move
        await pilot.press("N")  # moving on stores it, the status unchanged
        assert case.case.key == order[1]
        assert _reviews(demo_db) == [(order[0], "open", NOTE_3, REVIEWER)]
        await pilot.press("m")
        await settle(pilot)
        await pilot.press(*"second", "enter")
        await settle(pilot)
        await pilot.press("escape")  # so does going back
        await settle(pilot)
        assert isinstance(app.screen, ReviewQueueScreen)
    assert _reviews(demo_db)[-1] == (order[1], "open", "second", REVIEWER)


async def test_case_view_names_labels_by_their_item_text(demo_db: Path) -> None:
    from db.events import append_label

    order = _queue_keys(demo_db)
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        case = await _open_first_case(pilot)
        payload = case.case.generation["payload"]
        with Store(demo_db) as store:
            append_label(
                store,
                generation_id=case.generation_id,
                annotator="ann",
                target="event",
                item_index=1,
                label="yes",
            )
        case.show(case.generation_id)
        people = str(case.query_one("#case-people").render())
        event = payload["reference_events"][1]
        assert f"ann: event 2 “{event}” yes" in people
        assert case.case.key == order[0]


def test_case_view_snapshot(demo_db: Path, snap_compare, monkeypatch) -> None:
    import db.events
    from db.events import append_label

    monkeypatch.setattr(db.events, "now", lambda: "2026-01-02T10:11:12.000+00:00")
    with Store(demo_db) as store:
        first = review_queue(store, limit=1)[0].generation_id
        append_label(
            store, generation_id=first, annotator="ann", target="event", item_index=0, label="yes"
        )
        append_review(store, generation_id=first, reviewer="rita", status="escalated", note="why")

    async def open_case(pilot) -> None:
        await _open_first_case(pilot)

    app = CopyauditApp(demo_db, annotator=REVIEWER)
    assert snap_compare(app, terminal_size=SIZE, run_before=open_case)


async def test_case_view_measures_judge_quality_off_the_ui_thread(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a case never waits for the run-level judge quality: it is measured in a
    worker thread, shown when it arrives, and an answer for a case left behind is dropped."""
    import threading

    import screens.generations.case_view as case_view

    release_first = threading.Event()
    threads: list[bool] = []

    def slow_quality(store: Any, run: str, judgments: list[dict[str, Any]]) -> list[dict]:
        call = len(threads)
        threads.append(threading.current_thread() is threading.main_thread())
        if call == 0:
            release_first.wait(timeout=10)  # the first case's answer comes last
        j = judgments[0]
        basis = f"quality answer {call}"
        return [{"judge": j["judge"], "metric": j["metric"], "verified": False, "basis": basis}]

    monkeypatch.setattr(case_view, "case_quality", slow_quality)
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        await _open_queue(pilot)
        await pilot.press("enter")
        for _ in range(3):
            await pilot.pause()
        case = app.screen
        assert isinstance(case, CaseScreen) and case.case is not None  # shown, not waiting
        assert case_view.MEASURING in str(case.query_one("#case-judges").render())
        await pilot.press("N")  # the next case while the first one's quality is measured
        for _ in range(3):
            await pilot.pause()
        release_first.set()
        await settle(pilot)
        assert threads == [False, False]  # both measured in worker threads
        judges = str(case.query_one("#case-judges").render())
        assert "quality answer 1" in judges and "quality answer 0" not in judges
        assert case_view.MEASURING not in judges
        assert case.case.quality[0]["basis"] == "quality answer 1"


async def test_a_failed_quality_measure_says_so_instead_of_measuring_for_ever(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If measuring the judges against people raises, the case says it could not (with the
    error, as plain text) and the app's error notice names it; "measuring…" does not stay."""
    import screens.generations.case_view as case_view

    def broken_quality(store: Any, run: str, judgments: list[dict[str, Any]]) -> list[dict]:
        raise RuntimeError("[bold]no such table[/bold]")

    monkeypatch.setattr(case_view, "case_quality", broken_quality)
    app = CopyauditApp(demo_db, annotator=REVIEWER)
    async with app.run_test(size=SIZE) as pilot:
        await _open_queue(pilot)
        await pilot.press("enter")
        await settle(pilot)
        case = app.screen
        assert isinstance(case, CaseScreen) and case.case is not None
        judges = str(case.query_one("#case-judges").render())
        assert case_view.MEASURING not in judges
        assert f"{case_view.QUALITY_FAILED}: RuntimeError: [bold]no such table[/bold]" in judges
        assert any("measuring the judges failed" in str(n.message) for n in app._notifications)
