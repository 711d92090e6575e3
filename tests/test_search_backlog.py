"""db.search_index: an import leaves its rows to a later catch-up of the search index.
Whatever the writes (imports deferring or not, single inserts, updates, deletes of the
largest ids, catch-up steps) the index lists exactly the rows at or below its reach,
with their current text; caught up, it is the index the triggers alone would build. The
CLI says what waits and catches up; the app catches up in the background; a step killed
half-way leaves nothing, and a catch-up gives way to a long writer."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import db.connection
from copyaudit.formats import LocatedCase
from copyaudit.types import Case, Work
from db import Store
from db.bulk import bulk_inserts
from db.cases import import_cases
from db.migrations import FTS_AUTOMERGE, FTS_TABLES, indexed_to_sql
from db.search_index import backlog, catch_up, catch_up_in_background, has_backlog, index_step
from screens.app import CopyauditApp
from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.killed_child import kill_when_said
from tests.label_fixtures import make_run
from tests.test_screens_data import settle

WORDS = ["amberlit", "quillwort", "saltmarsh", "larkspur", "tidewrack", "fernbrake"]
INSERT = (
    "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source) "
    "VALUES (1, ?, 1, ?, 'h', 't')"
)


def _payload(draw: list[int]) -> str:
    return " ".join(WORDS[i % len(WORDS)] for i in draw) or "-"


def _sound(store: Store) -> None:
    """The cases index lists, for every word, exactly the rows at or below its reach
    whose text holds it (so no row above, none deleted, no text replaced)."""
    reach = store.scalar(f"SELECT {indexed_to_sql('cases')}")
    for word in WORDS:
        listed = [
            r[0]
            for r in store.conn.execute(
                "SELECT rowid FROM cases_fts WHERE cases_fts MATCH ? ORDER BY rowid", (word,)
            )
        ]
        held = [
            r[0]
            for r in store.conn.execute(
                "SELECT id FROM cases WHERE (payload LIKE ? OR case_id LIKE ?) AND id <= ? "
                "ORDER BY id",
                (f"%{word}%", f"%{word}%", reach),
            )
        ]
        assert listed == held, (word, reach)


_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("import"), st.integers(1, 6), st.booleans()),  # rows, deferred
        st.tuples(st.just("insert"), st.integers(0, 5), st.booleans()),
        st.tuples(st.just("update"), st.integers(0, 40), st.booleans()),
        st.tuples(st.just("delete"), st.integers(0, 40), st.booleans()),  # True: the largest
        st.tuples(st.just("step"), st.integers(1, 5), st.booleans()),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=_OPS)
def test_the_index_lists_exactly_the_rows_it_reaches(tmp_path_factory, ops) -> None:
    path = tmp_path_factory.mktemp("backlog") / "b.db"
    with Store(path) as store:
        case = Case("seed", "literal", Work("W"), {"input": "seed", "reference": "seed"})
        import_cases(store, "s", "literal", [LocatedCase(1, case)], source="t")
        made = 0
        for n, (op, k, flag) in enumerate(ops):
            ids = [r[0] for r in store.conn.execute("SELECT id FROM cases ORDER BY id")]
            if op == "import":
                rows = [(f"c{made + i}", _payload([n, i, k + i])) for i in range(k)]
                with (
                    store.transaction(),
                    bulk_inserts(store, "cases", defer_search_index=flag) as bulk,
                ):
                    bulk.executemany(INSERT, rows)
                made += k
            elif op == "insert":
                with store.transaction():
                    store.conn.execute(INSERT, (f"c{made}", _payload([k, n])))
                made += 1
            elif op == "update" and ids:
                with store.transaction():
                    store.conn.execute(
                        "UPDATE cases SET payload = ? WHERE id = ?",
                        (_payload([k + 1, n + 2]), ids[k % len(ids)]),
                    )
            elif op == "delete" and ids:
                with store.transaction():
                    gone = ids[-1] if flag else ids[k % len(ids)]
                    store.conn.execute("DELETE FROM cases WHERE id = ?", (gone,))
            elif op == "step":
                index_step(store, "cases", k)
            _sound(store)
        catch_up(store, step_rows=3)
        assert not has_backlog(store)
        for table in FTS_TABLES:  # the index against its whole table
            store.conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('integrity-check')")
        _sound(store)


def _imported(path: Path, tmp_path: Path, cli, n: int = 30) -> None:
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(i) for i in range(n)])
    done = cli("import", "literal", str(cases), "--suite", "s", db=path)
    assert done.code == 0, done.err
    assert f"search index: {n} cases not indexed yet" in done.err


def test_the_cli_says_what_waits_and_catches_up(tmp_path: Path, cli) -> None:
    path = tmp_path / "a.db"
    _imported(path, tmp_path, cli)
    status = cli("--read-only", "search-index", "--status", db=path)
    assert (status.code, status.out.strip()) == (0, "search index: 30 cases waiting")
    done = cli("search-index", db=path)
    assert done.code == 0, done.err
    assert done.out.strip() == "search index: 30 rows indexed (30 cases); up to date"
    assert cli("search-index", db=path).out.strip() == "search index: up to date"
    with Store(path) as store:
        assert backlog(store).total == 0
        store.conn.execute("INSERT INTO cases_fts (cases_fts) VALUES ('integrity-check')")


# `copyaudit search-index` with steps of 4 rows; after its third step it says so and
# waits to be killed.
CHILD = """
import sys, time
import db.search_index as si
from copyaudit.cli.main import main
step, steps = si.index_step, []
def counted(store, table, rows=si.STEP_ROWS):
    done = step(store, table, 4)
    steps.append(done)
    if len(steps) == 3:
        print("three steps", flush=True)
        time.sleep(600)
    return done
si.index_step = counted
main(sys.argv[1:])
"""


def test_a_catch_up_killed_keeps_its_committed_steps_and_goes_on(tmp_path: Path, cli) -> None:
    path = tmp_path / "k.db"
    _imported(path, tmp_path, cli)
    kill_when_said(CHILD, ["--db", str(path), "search-index"], "three steps")
    with Store(path) as store:
        assert backlog(store).rows["cases"] == 30 - 8  # two steps committed, the third not
        _sound(store)
        assert catch_up(store) == 22
        _sound(store)


def test_a_catch_up_gives_way_to_a_long_writer(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.db"
    _imported(path, tmp_path, cli)
    monkeypatch.setattr(db.connection, "BUSY_TIMEOUT_MS", 50)
    with Store(path) as writer, writer.transaction():
        writer.conn.execute("UPDATE settings SET value = value")  # holds the write lock
        assert catch_up_in_background(path, threading.Event()) == 0
    assert catch_up_in_background(path, threading.Event()) == 30
    with Store(path) as store:
        assert not has_backlog(store)
        with pytest.raises(sqlite3.OperationalError, match="no such table"):  # not swallowed
            store.conn.execute("DROP TABLE search_indexed")
            catch_up_in_background(path, threading.Event())


@pytest.mark.anyio
@pytest.mark.parametrize("read_only", [False, True])
async def test_the_app_catches_up_in_the_background_unless_read_only(
    tmp_path: Path, cli, read_only: bool
) -> None:
    """Opened, the app indexes what waits (settle waits for its workers); read-only, it
    leaves the rows, and a search says they are scanned."""
    path = tmp_path / "app.db"
    make_run(cli, tmp_path, "literal", [f"lit-{i}" for i in range(30)], db=path)
    app = CopyauditApp(path, annotator="ann", read_only=read_only)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # the run's generation list
        await settle(pilot)
        await pilot.press("slash", *"orchard", "enter")
        await settle(pilot)
        status = str(app.screen.query_one("#status").render())
        assert "30 generations match" in status
        assert ("not yet in the search index are scanned" in status) == read_only
    with Store(path) as store:
        assert backlog(store).total == (60 if read_only else 0)
        assert (app._search_indexer is None) == read_only


def test_every_search_index_merges_at_the_declared_level(tmp_path: Path) -> None:
    with Store(tmp_path / "m.db") as store:
        for table in FTS_TABLES:
            got = store.scalar(f"SELECT v FROM {table}_fts_config WHERE k = 'automerge'")
            assert got == FTS_AUTOMERGE


def test_a_catch_up_goes_back_for_rows_that_arrive_meanwhile(tmp_path: Path, cli) -> None:
    """Generations imported while the catch-up is on the cases (it has passed the
    generations) are indexed by the same call."""
    path = tmp_path / "late.db"
    ids = [f"lit-{i}" for i in range(30)]
    make_run(cli, tmp_path, "literal", ids, db=path)  # 30 cases, 30 generations of run r
    late = write_jsonl(tmp_path / "late.jsonl", [{"case_id": c, "output": "late"} for c in ids])
    steps: list[tuple[int, int]] = []
    with Store(path) as store:

        def step(done: int, total: int) -> None:
            steps.append((done, total))
            if len(steps) == 2:  # the generations, then the cases: now more generations
                argv = ("import-generations", str(late), "--run", "r2", "--suite", "literal-suite")
                assert cli(*argv, db=path).code == 0

        assert catch_up(store, on_step=step) == 90
        assert not has_backlog(store)
    assert steps == [(30, 60), (60, 60), (90, 60)]
