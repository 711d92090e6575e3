"""Generation list: filters, sort, search, paging from SQL, snapshot."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from copyaudit.formats import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Score, Work
from db import Store
from db.cases import import_cases
from db.events import append_label
from db.runs import JudgeIdentity, import_generations, save_judgments
from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.state.paging import PAGE_SIZE, GenerationPager
from tests.factories import counting_query
from tests.test_screens_data import generation_id, settle, wait_until

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


async def _open_literal_run(pilot) -> GenerationListScreen:
    await settle(pilot)
    await pilot.press("enter")  # demo-literal is the first run
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, GenerationListScreen)
    return screen


def _row_keys(screen: GenerationListScreen) -> list[int]:
    table = screen.query_one("#generations")
    return [int(table.coordinate_to_cell_key((i, 0)).row_key.value) for i in range(table.row_count)]


def _db_ids(path: Path, where: str, params: tuple = ()) -> list[int]:
    with Store(path) as store:
        return [
            int(r[0])
            for r in store.query(
                "SELECT g.id FROM generations g JOIN runs r ON r.id = g.run_id "
                f"WHERE r.name = 'demo-literal' {where} ORDER BY g.id",
                params,
            )
        ]


async def test_filters_sort_and_search_from_the_keyboard(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_literal_run(pilot)
        assert _row_keys(screen) == _db_ids(demo_db, "")
        # f: the flag filter; the second option is "flagged by any judge"
        await pilot.press("f", "down", "enter")
        await settle(pilot)
        flagged = _db_ids(
            demo_db,
            "AND EXISTS (SELECT 1 FROM judgments j WHERE j.generation_id = g.id AND j.flagged = 1)",
        )
        assert 0 < len(flagged) < 21
        assert _row_keys(screen) == flagged
        assert "generations match" in str(screen.query_one("#status").render())
        # s: sort by rougeL (options: generation order, rouge1, rougeL, refusal), highest first
        await pilot.press("s", "down", "down", "enter")
        await settle(pilot)
        assert screen.pager.filter.sort is not None and screen.pager.filter.sort.metric == "rougeL"
        with Store(demo_db) as store:
            values = {
                int(r[0]): r[1]
                for r in store.query(
                    "SELECT generation_id, value FROM judgments WHERE metric = 'rougeL'"
                )
            }
        shown = [values[i] for i in _row_keys(screen)]
        assert shown == sorted(shown, reverse=True) and sorted(_row_keys(screen)) == flagged
        await pilot.press("r")  # reverse
        await settle(pilot)
        shown = [values[i] for i in _row_keys(screen)]
        assert shown == sorted(shown)
        # /: search (substring of the output), Enter goes back to the table
        await pilot.press("c")
        await settle(pilot)
        await pilot.press("slash", *"New Zealand", "enter")
        await settle(pilot)
        assert _row_keys(screen) == _db_ids(demo_db, "AND g.output LIKE '%New Zealand%'")
        assert screen.focused is screen.query_one("#generations")
        status = screen.query_one("#status")
        assert "not the index" not in str(status.content)
        await pilot.press("slash", "ctrl+u", *"Ne", "enter")  # too short for the index
        await settle(pilot)
        assert _row_keys(screen) == _db_ids(
            demo_db,
            "AND (g.output LIKE '%Ne%' OR g.prompt LIKE '%Ne%' OR g.case_pk IN "
            "(SELECT id FROM cases WHERE payload LIKE '%Ne%' OR case_id LIKE '%Ne%'))",
        )
        assert "search under 3 characters: a scan, not the index" in str(status.content)


async def test_unlabeled_and_disagreement_toggles(demo_db: Path) -> None:
    first = generation_id(demo_db, "demo-literal", "alice-lit-01")  # flagged by rougeL
    with Store(demo_db) as store:
        append_label(
            store, generation_id=first, annotator="ann", target="literal", item_index=0, label="no"
        )
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_literal_run(pilot)
        await pilot.press("d")
        await settle(pilot)
        assert _row_keys(screen) == [first]
        await pilot.press("d", "u")
        await settle(pilot)
        assert first not in _row_keys(screen) and len(_row_keys(screen)) == 20


@pytest.fixture
def big_db(tmp_path: Path) -> Path:
    """One run of 250 generations, for paging."""
    path = tmp_path / "big.db"
    cases = [
        LocatedCase(i, Case(f"c{i:03d}", "literal", Work("W"), {"input": "p", "reference": "r"}))
        for i in range(250)
    ]
    with Store(path) as store:
        import_cases(store, "big", "literal", cases, source="test")
        rows = [LocatedGeneration(i, f"c{i:03d}", 1, f"output {i}") for i in range(250)]
        import_generations(store, run="big-run", suite="big", model="m", rows=rows, source="t")
        ids = [int(r[0]) for r in store.query("SELECT id FROM generations ORDER BY id")]
        save_judgments(
            store,
            JudgeIdentity("literal", "1", {}, "h"),
            [
                (gid, [Score("rougeL", (gid % 97) / 97, flagged=False, threshold=0.8)])
                for gid in ids
            ],
        )
    return path


async def test_pages_load_as_the_cursor_nears_the_end(big_db: Path) -> None:
    app = CopyauditApp(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#generations")
        assert table.row_count == PAGE_SIZE  # one page, not the table
        assert "250 generations match" in str(screen.query_one("#status").render())
        await pilot.press("end")
        await settle(pilot)
        assert table.row_count == 2 * PAGE_SIZE
        await pilot.press("end")
        await settle(pilot)
        assert table.row_count == 250 and screen.pager.exhausted
        assert _row_keys(screen) == sorted(_row_keys(screen))


async def test_a_long_count_shows_a_lower_bound_first(
    big_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count that takes long (a word in most rows of a big run) shows what a quick count
    found ("100+") while the exact count goes on, then the exact total."""
    import threading

    import screens.generations.paged_table as paged_table

    monkeypatch.setattr(paged_table, "QUICK_COUNT", 100)
    release = threading.Event()
    exact_count = GenerationPager.count

    def slow_count(pager: GenerationPager, store: Store) -> int:
        release.wait(10)
        return exact_count(pager, store)

    app = CopyauditApp(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        status = screen.query_one("#status")
        assert "250 generations match" in str(status.render())
        monkeypatch.setattr(GenerationPager, "count", slow_count)
        await pilot.press("slash", *"output", "enter")
        shown = "100+ generations match (counting…)"
        await wait_until(pilot, lambda: shown in str(status.render()))
        assert screen.query_one("#generations").row_count == PAGE_SIZE
        release.set()
        await settle(pilot)
        assert "250 generations match" in str(status.render())


@asynccontextmanager
async def _big_list(big_db: Path, monkeypatch: pytest.MonkeyPatch, count: Any):
    """The big run's list open, its exact counts made by `count` (no quick counts)."""
    monkeypatch.setattr(GenerationPager, "count", count)
    monkeypatch.setattr(GenerationPager, "count_at_most", lambda *_: None)
    app = CopyauditApp(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        yield pilot, app.screen, app.screen.query_one("#status")


async def test_a_new_order_keeps_the_count_and_a_reload_counts_again(
    big_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reversing or re-sorting a searched list shows the same rows, so their exact count
    is not read again (at a million rows a word in most of them costs a second); R
    (reload) and a new search count anew."""
    counted: list[str] = []
    exact_count = GenerationPager.count

    def count(pager: GenerationPager, store: Store) -> int:
        counted.append(pager.filter.search)
        return exact_count(pager, store)

    async with _big_list(big_db, monkeypatch, count) as (pilot, screen, status):
        await pilot.press("slash", *"output 1", "enter")
        await settle(pilot)
        assert counted[-1] == "output 1" and "111 generations match" in str(status.render())
        before = len(counted)
        await pilot.press("r")  # reverse: same rows, other order
        await settle(pilot)
        descending = _row_keys(screen)
        assert descending == sorted(descending, reverse=True) and len(descending) == PAGE_SIZE
        assert len(counted) == before and "111 generations match" in str(status.render())
        await pilot.press("R")  # reload: the rows may have changed, so count again
        await settle(pilot)
        assert len(counted) == before + 1 and "111 generations match" in str(status.render())
        await pilot.press("slash", *"output 12", "enter")  # other rows
        await settle(pilot)
        assert counted[-1] == "output 12" and "11 generations match" in str(status.render())


async def test_a_count_of_a_filter_left_behind_is_abandoned(
    big_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers share one connection, so a long count of a search the user has already
    changed would hold back the new search's page; SQLite interrupts it instead."""
    import threading

    # about 40 s uninterrupted (0.2-0.4 s a million rows): longer than typing the second
    # search takes while the count runs (over 4 s in some runs, when 20M rows finished
    # first), yet a regression still fails here rather than hanging
    endless = counting_query(100_000_000)
    started, outcome = threading.Event(), []
    exact_count = GenerationPager.count

    def count(pager: GenerationPager, store: Store) -> int:
        if pager.filter.search != "output 1":
            return exact_count(pager, store)
        started.set()
        try:
            store.scalar(endless)
            outcome.append("finished")
        except Exception as error:  # SQLite's "interrupted" (Store.interrupted_when's to name)
            outcome.append(str(error))
            raise
        return 0

    async with _big_list(big_db, monkeypatch, count) as (pilot, screen, status):
        await pilot.press("slash", *"output 1", "enter")
        await wait_until(pilot, started.is_set)
        await pilot.press("slash", *"output 12", "enter")
        await settle(pilot)
        assert outcome == ["interrupted"]
        assert "11 generations match" in str(status.render())
        assert len(_row_keys(screen)) == 11


def test_list_snapshot(demo_db: Path, snap_compare) -> None:
    async def open_run(pilot) -> None:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("f", "down", "enter")
        await settle(pilot)

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=open_run)


async def test_the_footer_is_rebuilt_once_per_burst_and_shows_the_keys(
    big_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a run changes the screen's bindings several times in a row; the footer
    rebuilds once per burst (Textual's own rebuilds each time) and ends showing every
    shown binding of the screen."""
    from textual.widgets._footer import FooterKey

    from screens.widgets.footer import KeysFooter

    rebuilds, changes = [], []
    recompose, bindings_changed = KeysFooter.recompose, KeysFooter.bindings_changed

    async def counted(footer: KeysFooter) -> None:
        rebuilds.append(footer.screen)
        await recompose(footer)

    def signalled(footer: KeysFooter, screen) -> None:
        if footer.is_attached and screen is footer.screen:  # each one a rebuild in Textual's
            changes.append(screen)
        bindings_changed(footer, screen)

    monkeypatch.setattr(KeysFooter, "recompose", counted)
    monkeypatch.setattr(KeysFooter, "bindings_changed", signalled)
    app = CopyauditApp(big_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rebuilds.clear()
        changes.clear()
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GenerationListScreen)
        signals = len([s for s in changes if s is screen])
        assert 0 < len([s for s in rebuilds if s is screen]) < signals
        shown = {b.action for _, b, _, _ in screen.active_bindings.values() if b.show}
        got = {k.action for k in screen.query(FooterKey)}
        assert got - {"command_palette"} == shown, (shown - got, got - shown)


async def test_a_run_mostly_unreadable_says_so_above_its_list(
    cli: Any, tmp_path: Path, db_path: Path
) -> None:
    """Two of three events judgments unreadable: the run's list opens with the warning."""
    from tests.label_fixtures import EVENTS_JUDGE, event_score, judge, make_run

    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2", "nl-3"])
    unreadable = Score("events", None, target="event", error="unparseable: 2 judge answer(s)")
    with Store(db_path) as store:
        judge(
            store,
            EVENTS_JUDGE,
            {"r/nl-1/1": unreadable, "r/nl-2/1": unreadable, "r/nl-3/1": event_score([])},
        )
    app = CopyauditApp(db_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        warnings = pilot.app.screen.query_one("#warnings")
        await wait_until(pilot, lambda: warnings.display)
        assert "events: 2 of 3 judgments unreadable" in str(warnings.render())
