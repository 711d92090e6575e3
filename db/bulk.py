"""Bulk inserts that keep the derived tables (FTS indexes, run totals) set-wise.

A table's AFTER INSERT triggers keep `generations_fts`/`cases_fts` and the totals
(db.migrations.TALLIES) in step one row at a time: right for the app's single writes,
but ~3.5x the cost of importing 100k cases, and ~20 us a judgment when judging. A bulk
writer (importing cases or generations, storing a judge's scores) instead marks its
table in `bulk_writing` inside its own transaction, so those triggers stand aside
(their WHEN), and after each chunk adds the chunk's rows with one INSERT ... SELECT per
derived table (db.migrations.chunk_sql: the same expressions the triggers use, from
the same Tally definitions). An import may instead leave its rows out of the search
index (`defer_search_index`): trigram indexing costs many times the insert itself
(docs/benchmarks.md), and db.search_index catches up afterwards, in steps.

Why a marker row and not DROP/CREATE TRIGGER inside the transaction: the marker is an
ordinary row of the main schema (triggers cannot read a TEMP table), so it is rolled
back with everything else by an error or a crash, and no other connection ever sees it
(it never outlives the transaction). Dropping triggers would change the schema cookie:
every other connection (the app, a worker) would re-prepare all its statements after
each import, and `verify` reads the schema. Updates and deletes (--replace, rejudging)
keep firing their triggers.

The chunk's rows are those with id > the largest id before it: the tables' ids are
INTEGER PRIMARY KEY without AUTOINCREMENT, so SQLite gives a new row the largest id + 1.
Delete rows first, then insert (db.runs.save_judgments): a deleted largest id is
otherwise given again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from db.connection import Store
from db.migrations import chunk_sql


class BulkInserts:
    """Inserts into one marked table; each call adds its rows to the derived tables."""

    def __init__(self, store: Store, table: str, defer_search_index: bool = False) -> None:
        self.store = store
        self.table = table
        self._derived = chunk_sql(table, defer_search_index)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run an INSERT into the table over `rows`, then add what it inserted to the
        derived tables (also when the insert fails part-way and the caller goes on)."""
        conn = self.store.conn
        after = conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {self.table}").fetchone()[0]
        try:
            return conn.executemany(sql, rows).rowcount
        finally:
            if conn.in_transaction:
                for statement in self._derived:
                    conn.execute(statement, (after,))


@contextmanager
def bulk_inserts(
    store: Store, table: str, *, defer_search_index: bool = False
) -> Iterator[BulkInserts]:
    """Mark `table` for a bulk writer inside a transaction (the caller's, or one of its
    own): write its inserts through the yielded BulkInserts. A second marker of the same
    table (nesting) is refused by the table's primary key. `defer_search_index`: leave
    the new rows out of the search index, to a catch-up (db.search_index)."""
    with store.transaction() as conn:
        conn.execute("INSERT INTO bulk_writing (tbl) VALUES (?)", (table,))
        try:
            yield BulkInserts(store, table, defer_search_index)
        finally:
            if conn.in_transaction:
                conn.execute("DELETE FROM bulk_writing WHERE tbl = ?", (table,))
