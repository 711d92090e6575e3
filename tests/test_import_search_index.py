"""An import leaves its rows to a later catch-up of the search index (db.bulk,
db.search_index), inside its one transaction: an import killed after some chunks leaves
the index and its reach as they were (sound: finding exactly what LIKE finds over the
rows it reaches), and the import run again, then caught up, leaves the same rows and
the same index as one never interrupted."""

from __future__ import annotations

from pathlib import Path

import pytest

from db import Store
from db.migrations import FTS_TABLES, indexed_to_sql
from db.search import fts_phrase
from db.search_index import catch_up
from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.killed_child import kill_when_said

N = 240  # rows an import writes, 40 a chunk in the child: six chunks
CHUNK = 40
WORDS = ["orchard", "lantern", "harbour", "Zoë", "naïve", "glass"]
QUERIES = ["orchard", "LANTERN", "zoë", "naïve gl", "case-17", "case-200", "absent text"]

# The CLI's import in this process, its chunks of CHUNK rows; after the second chunk is
# written (and indexed) it says so on stdout and waits to be killed.
CHILD = f"""
import sys, time
import db.bulk, db.cases, db.runs
from copyaudit.cli.main import main
whole = db.cases.chunked
small = lambda items, size=0: whole(items, {CHUNK})
db.cases.chunked = db.runs.chunked = small
write = db.bulk.BulkInserts.executemany
calls = 0
def counted(self, sql, rows):
    global calls
    done = write(self, sql, rows)
    calls += 1
    if calls == 2:
        print("chunks written", flush=True)
        time.sleep(600)
    return done
db.bulk.BulkInserts.executemany = counted
main(sys.argv[1:])
"""


def _text(i: int) -> str:
    return " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(8 + i % 5))


def _files(root: Path) -> tuple[Path, Path]:
    cases = root / "cases.jsonl"
    write_jsonl(
        cases, [{**literal_record(i), "id": f"case-{i}", "input": _text(i)} for i in range(N)]
    )
    generations = root / "generations.jsonl"
    write_jsonl(generations, [{"case_id": f"case-{i}", "output": _text(i + 1)} for i in range(N)])
    return cases, generations


def _argv(db: Path, step: str, cases: Path, generations: Path) -> list[str]:
    if step == "cases":
        return ["--db", str(db), "import", "literal", str(cases), "--suite", "s"]
    return ["--db", str(db), "import-generations", str(generations), "--run", "r", "--suite", "s"]


def _search(store: Store) -> dict[str, list[int]]:
    """Per FTS table and query: the rows the index matches, checked against LIKE over
    the rows it reaches (search_indexed), with the reach."""
    found: dict[str, list[int]] = {}
    for table, columns in FTS_TABLES.items():
        if not store.scalar(f"SELECT COUNT(*) FROM {table} WHERE id > {indexed_to_sql(table)}"):
            store.conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('integrity-check')")
        where = " OR ".join(f"{c} LIKE ?" for c in columns)
        match = f"SELECT rowid FROM {table}_fts WHERE {table}_fts MATCH ? ORDER BY rowid"
        scan = (
            f"SELECT id FROM {table} WHERE ({where}) AND id <= {indexed_to_sql(table)} ORDER BY id"
        )
        for q in QUERIES:
            index = [r[0] for r in store.conn.execute(match, (fts_phrase(q),))]
            like = [r[0] for r in store.conn.execute(scan, [f"%{q}%"] * len(columns))]
            assert index == like, (table, q)
            found[f"{table} {q}"] = index
        found[f"{table} reach"] = [store.scalar(f"SELECT {indexed_to_sql(table)}")]
    return found


@pytest.mark.parametrize("step", ["cases", "generations"])
def test_an_import_killed_mid_way_leaves_the_index_as_it_was(
    step: str, tmp_path: Path, cli
) -> None:
    cases, generations = _files(tmp_path)
    killed, whole = tmp_path / "killed.db", tmp_path / "whole.db"
    for db in (killed, whole):
        if step == "generations":  # the cases first, whole
            assert cli(*_argv(db, "cases", cases, generations)[2:], db=db).code == 0
    with Store(killed) as store:
        before = _search(store)
        rows_before = store.scalar(f"SELECT COUNT(*) FROM {step}")
    kill_when_said(CHILD, _argv(killed, step, cases, generations), "chunks written")
    with Store(killed) as store:  # two chunks were written, none committed
        assert store.scalar(f"SELECT COUNT(*) FROM {step}") == rows_before
        assert store.scalar("SELECT COUNT(*) FROM bulk_writing") == 0
        assert _search(store) == before
    for db in (killed, whole):
        done = cli(*_argv(db, step, cases, generations)[2:], db=db)
        assert done.code == 0, done.err
        with Store(db) as store:
            assert _search(store) == before  # the import left its rows to a catch-up
            assert catch_up(store, step_rows=50) >= N
    with Store(killed) as again, Store(whole) as once:
        assert again.scalar(f"SELECT COUNT(*) FROM {step}") == rows_before + N
        found = _search(again)
        assert found == _search(once)
        mine = [ids for key, ids in found.items() if key.startswith(step)]
        assert sum(1 for ids in mine if ids) >= 4  # the words are found, not only nothing
