"""The annotation flow: a work queue labelled end to end with y/n/u only (auto-advance,
a note), the cursor on the first item without my label, "next unlabelled by me", the
list's `u` filter per annotator, the list live after labelling and after an import, a
pending note never dropped silently, the auto-advance setting remembered."""

from __future__ import annotations

from collections.abc import Callable
from itertools import cycle
from pathlib import Path
from typing import Any

import pytest

from copyaudit.identity import setting
from db import Store
from db.labels import current_labels, label_progress
from db.queues import create_queue, queue_items, queue_progress
from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.generations.generation_view import GenerationScreen
from screens.review.annotation import AnnotationScreen
from tests.conftest import write_jsonl
from tests.label_fixtures import EVENTS_JUDGE, event_score, gid, judge, label, make_run
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
CASES = ("nl-1", "nl-2", "nl-3")
NOTE = "the wolf is only implied"


@pytest.fixture
def queue_db(cli: Callable[..., Any], tmp_path: Path, db_path: Path) -> Path:
    """Run `r`: three generations, each 4 events + 2 characters + 2 whole-output items,
    judged with different event counts; queue q3 holds all three."""
    make_run(cli, tmp_path, "nonliteral", CASES)
    with Store(db_path) as store:
        judge(
            store,
            EVENTS_JUDGE,
            {
                f"r/{case}/1": event_score([(i < n, 0.9 if i < n else 0.1) for i in range(4)])
                for n, case in enumerate(CASES, start=1)
            },
        )
        create_queue(store, "q3", run="r", metric="events", per_value=1, seed=1)
        assert len(queue_items(store, "q3")) == 3
    return db_path


async def _open_queue(pilot: Any, name: str = "q3") -> AnnotationScreen:
    await settle(pilot)
    await pilot.press("ctrl+p", *f"label queue {name}")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, AnnotationScreen)
    return screen


async def _open_list(pilot: Any) -> GenerationListScreen:
    await settle(pilot)
    await pilot.press("enter")  # the dashboard's first run: r
    await settle(pilot)
    listing = pilot.app.screen
    assert isinstance(listing, GenerationListScreen)
    return listing


def _mode(screen: AnnotationScreen) -> str:
    return str(screen.query_one("#scores").render())


async def test_a_queue_is_labelled_end_to_end_with_label_keys_only(queue_db: Path) -> None:
    with Store(queue_db) as store:
        ids = queue_items(store, "q3")
    keys = cycle("ynu")
    expected: dict[tuple[int, str, int], str] = {}
    app = CopyauditApp(queue_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        assert "queue q3: 0/3 generations, 0/21 items labelled by you (0%)" in _mode(screen)
        for number, generation in enumerate(ids):
            assert screen.generation_id == generation  # auto-advance brought us here
            checklist = screen.query_one("#checklist")
            asked = [item for item in screen.label_items if item.asked]
            assert checklist.current_item == asked[0]
            for item in asked:
                assert checklist.current_item == item
                if number == 1 and item.key == "event:2":  # a note on one item
                    await pilot.press("m")
                    await settle(pilot)
                    await pilot.press(*NOTE, "enter")
                    await settle(pilot)
                    assert "note pending on event 3" in _mode(screen)
                key = next(keys)
                await pilot.press(key)
                expected[(generation, item.target, item.index)] = {
                    "y": "yes",
                    "n": "no",
                    "u": "unsure",
                }[key]
        assert screen.generation_id == ids[-1]  # the last one: it stays, and says so
        assert "queue q3: 3/3 generations, 21/21 items labelled by you (100%)" in _mode(screen)
    with Store(queue_db) as store:
        stored = current_labels(store, annotator="ann")
        assert {(c.generation_id, c.target, c.item_index): c.label for c in stored} == expected
        notes = {(c.generation_id, c.target, c.item_index): c.note for c in stored if c.note}
        assert notes == {(ids[1], "event", 2): NOTE}
        assert queue_progress(store, "q3") == [
            {"annotator": "ann", "labelled": 3, "complete": 3, "total": 3}
        ]


async def test_reopening_starts_at_my_first_open_item_and_next_unlabelled(
    queue_db: Path,
) -> None:
    with Store(queue_db) as store:
        ids = queue_items(store, "q3")
        first, second, third = ids
        for index in (0, 1, 3):  # ann: three events of the first generation
            label(store, _key(store, first), "ann", "event", index, "yes")
        for item in ("event", "character", "refusal", "literal"):  # all of the second
            for index in range(4 if item == "event" else 2 if item == "character" else 1):
                label(store, _key(store, second), "ann", item, index, "no")
        label(store, _key(store, third), "bob", "event", 0, "yes")  # someone else's
    app = CopyauditApp(queue_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_queue(pilot)
        assert screen.generation_id == first  # partly labelled by me: resume here
        checklist = screen.query_one("#checklist")
        assert checklist.current_item.key == "event:2"  # my first unlabelled item
        await pilot.press("U")  # later on this generation: event 4 is labelled, so...
        assert checklist.current_item.key == "character:0"
        await pilot.press("y", "y", "y")  # characters 1-2, refusal
        assert screen.generation_id == first
        await pilot.press("y")  # literal, the last item: auto-advance to the next one
        assert screen.generation_id == second  # (event 3 of the first is left open)
        await pilot.press("P")
        assert screen.generation_id == first
        assert checklist.current_item.key == "event:2"  # reopened: my first open item
        await pilot.press("U")  # the only open item: the cursor stays on it
        assert checklist.current_item.key == "event:2"
        await pilot.press("n")
        await pilot.press("U")  # nothing left here; the second is complete: the third
        assert screen.generation_id == third
        assert checklist.current_item.key == "event:0"  # bob's label is not mine
    with Store(queue_db) as store:
        progress = label_progress(store, ids, "ann")
    assert progress[first] == (7, 7) and progress[second] == (7, 7) and progress[third] == (0, 7)


async def test_the_list_u_filter_means_unlabelled_by_me_and_follows_labelling(
    queue_db: Path,
) -> None:
    with Store(queue_db) as store:
        keys = [f"r/{case}/1" for case in CASES]
        label(store, keys[0], "bob", "event", 0, "yes")  # bob's label: not mine
    app = CopyauditApp(queue_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        listing = await _open_list(pilot)
        table = listing.query_one("#generations")
        assert [str(table.get_row_at(i)[-2]) for i in range(3)] == ["1", "—", "—"]
        await pilot.press("u")
        await settle(pilot)
        assert listing.pager.total == 3  # nothing is labelled by ann yet
        assert "not fully labelled by ann" in str(listing.query_one("#status").render())
        await pilot.press("enter", "a")  # the first row, annotation mode
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnnotationScreen)
        labelled = screen.generation_id
        await pilot.press("t")  # auto-advance off: the last label stays here
        for _ in screen.label_items:
            await pilot.press("y")
        assert screen.generation_id == labelled
        await pilot.press("escape")  # the view
        await settle(pilot)
        assert isinstance(app.screen, GenerationScreen)
        await pilot.press("escape")  # the list: filters and Labels column follow
        await settle(pilot)
        assert app.screen is listing
        assert listing.pager.total == 2
        assert labelled not in [row.generation_id for row in listing.pager.rows]
        await pilot.press("u")  # filter off: the Labels column shows the new labels
        await settle(pilot)
        counts = {row.generation_id: row.labels for row in listing.pager.rows}
        assert counts[labelled] == 7 + (1 if labelled == _gid(queue_db, keys[0]) else 0)
        assert str(table.get_row(str(labelled))[-2]) == str(counts[labelled])
    assert setting("auto_advance", True) is False  # the switch is remembered


async def test_rows_of_an_import_appear_in_an_open_list(
    cli: Callable[..., Any], queue_db: Path, tmp_path: Path
) -> None:
    app = CopyauditApp(queue_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        listing = await _open_list(pilot)
        assert listing.pager.total == 3
        more = write_jsonl(
            tmp_path / "more.jsonl",
            [{"case_id": "nl-1", "output": "Another one.", "template": 2}],
        )
        result = cli("import-generations", str(more), "--run", "r", "--suite", "nonliteral-suite")
        assert result.code == 0, result.err
        listing._poll()  # what the timer does every REFRESH_S seconds
        await settle(pilot)
        assert listing.pager.total == 4
        assert listing.query_one("#generations").row_count == 4
        with Store(queue_db) as store:
            label(store, "r/nl-3/1", "bob", "refusal", 0, "no")
        await pilot.press("R")  # the reload key
        await settle(pilot)
        row = next(r for r in listing.pager.rows if r.generation_id == _gid(queue_db, "r/nl-3/1"))
        assert row.labels == 1


async def test_an_empty_running_run_says_no_generations_yet(queue_db: Path) -> None:
    from db.run_owner import owned
    from db.runs import RunSpec, create_or_resume_run

    store = Store(queue_db)
    spec = RunSpec(name="empty", suite="nonliteral-suite", backend="hf", model="m")
    create_or_resume_run(store, spec, status="running")
    app = CopyauditApp(queue_db, annotator="ann")
    # held by this process, as a run in progress is: shown running, not interrupted
    with store, owned(store, "empty", "run"):
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            app.open_run("empty")
            await settle(pilot)
            status = str(app.screen.query_one("#status").render())
            assert "no generations yet (rows appear as the run makes them)" in status
            assert "filters" not in status


async def test_a_pending_note_is_never_dropped_silently(queue_db: Path) -> None:
    app = CopyauditApp(queue_db, annotator="ann")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await _open_queue(pilot)
        first = screen.generation_id
        await pilot.press("m", *"kept", "enter")
        await settle(pilot)
        await pilot.press("j")  # moving between items keeps it pending
        assert "note pending on event 1" in _mode(screen)
        await pilot.press("N")  # leaving the generation: asked once, nothing moves
        assert screen.generation_id == first
        assert any("not stored yet" in str(t.render()) for t in app.screen.query("Toast"))
        await pilot.press("k", "y")  # labelling the item stores the note with it
        assert "note pending" not in _mode(screen)
        await pilot.press("N")
        assert screen.generation_id != first
    with Store(queue_db) as store:
        stored = current_labels(store, annotator="ann")
    assert [(c.generation_id, c.target, c.item_index, c.note) for c in stored] == [
        (first, "event", 0, "kept")
    ]


def _key(store: Store, generation_id: int) -> str:
    return next(c for c in (f"r/{case}/1" for case in CASES) if gid(store, c) == generation_id)


def _gid(path: Path, key: str) -> int:
    with Store(path) as store:
        return gid(store, key)


def test_annotation_mode_snapshot(queue_db: Path, snap_compare) -> None:
    with Store(queue_db) as store:
        first = queue_items(store, "q3")[0]
        key = _key(store, first)
        label(store, key, "ann", "event", 0, "yes", note="[b]not markup[/b]")
        label(store, key, "ann", "event", 1, "no")

    async def annotate(pilot) -> None:
        screen = await _open_queue(pilot)
        await pilot.press("m", *"a pending note", "enter")  # on event 3
        await settle(pilot)
        assert "note pending" in _mode(screen)
        pilot.app.clear_notifications()
        await settle(pilot)

    app = CopyauditApp(queue_db, annotator="ann")
    assert snap_compare(app, terminal_size=SIZE, run_before=annotate)
