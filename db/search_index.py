"""The search index's backlog: rows an import stored and left out of the trigram FTS5
indexes (db.bulk `defer_search_index`), and catching up with them.

Indexing a row's text costs many times storing it (trigram FTS5: ~35x a plain insert
on prose, docs/benchmarks.md), so an import commits its rows without it and says so;
the app catches up in the background as it opens, or `copyaudit search-index` does.
Searching never waits for it: rows above the index's reach are scanned
(db.search.candidate_arms), so a search finds the same rows before, during and after.

Each step indexes the next rows above the reach (`search_indexed.upto`) and moves the
reach past them in one short transaction: a step killed half-way leaves nothing, the
next one starts where the last committed, and other writers wait at most one step.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from db.connection import Store
from db.migrations import FTS_TABLES, SEARCH_PROGRESS, indexed_to_sql

STEP_ROWS = 1_000  # rows a step indexes: ~0.25 CPU s of prose (cases of ~1.2 KB)


@dataclass(frozen=True)
class Backlog:
    """Rows stored but not yet in the search index, per table of FTS_TABLES."""

    rows: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.rows.values())

    def describe(self) -> str:
        """e.g. "12,000 cases and 3,000 generations", or "nothing"."""
        parts = [f"{n:,} {table}" for table, n in self.rows.items() if n]
        return " and ".join(parts) or "nothing"


def backlog(store: Store) -> Backlog:
    """How many rows of each indexed table lie above its index's reach (a count over a
    rowid range: the cost of the backlog, nothing for an index that is up to date)."""
    return Backlog(
        {
            table: int(
                store.scalar(f"SELECT COUNT(*) FROM {table} WHERE id > {indexed_to_sql(table)}")
            )
            for table in FTS_TABLES
        }
    )


def has_backlog(store: Store) -> bool:
    """Whether any row waits for the search index (one rowid seek a table)."""
    return any(
        store.scalar(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE id > {indexed_to_sql(table)})")
        for table in FTS_TABLES
    )


def index_step(store: Store, table: str, rows: int = STEP_ROWS) -> int:
    """Index the next `rows` rows of `table` above its index's reach and move the reach
    past them, in one transaction; the number indexed (0: up to date)."""
    names = ", ".join(FTS_TABLES[table])
    upto = indexed_to_sql(table)
    with store.transaction() as conn:
        last = conn.execute(
            f"SELECT MAX(id), COUNT(*) FROM (SELECT id FROM {table} WHERE id > {upto} "
            "ORDER BY id LIMIT ?)",
            (rows,),
        ).fetchone()
        if not last[1]:
            return 0
        conn.execute(
            f"INSERT INTO {table}_fts (rowid, {names}) SELECT id, {names} FROM {table} "
            f"WHERE id > {upto} AND id <= ?",
            (last[0],),
        )
        conn.execute(f"UPDATE {SEARCH_PROGRESS} SET upto = ? WHERE tbl = ?", (last[0], table))
        return int(last[1])


def catch_up(
    store: Store,
    *,
    step_rows: int = STEP_ROWS,
    cancel: threading.Event | None = None,
    on_step: Callable[[int, int], None] | None = None,
) -> int:
    """Index every row waiting, a step at a time, until none waits or `cancel` is set;
    the number indexed. `on_step(done, total)` after each step (total: the backlog as
    it was at the start, so `done` can pass it when rows arrive meanwhile)."""
    total = backlog(store).total
    done = 0
    passed = -1
    while done != passed:  # again while a pass found rows (some arrive meanwhile)
        passed = done
        for table in FTS_TABLES:
            while cancel is None or not cancel.is_set():
                indexed = index_step(store, table, step_rows)
                if not indexed:
                    break
                done += indexed
                if on_step is not None:
                    on_step(done, total)
    return done


def catch_up_in_background(path: Path, cancel: threading.Event) -> int:
    """catch_up on a connection of its own (the app's background indexing), until done
    or `cancel`; it gives way, returning what it indexed, when another writer holds the
    database past the busy timeout (a long import: the next chance comes later)."""
    indexed = 0

    def counted(done: int, total: int) -> None:
        nonlocal indexed
        indexed = done

    with Store(path) as store:
        try:
            catch_up(store, cancel=cancel, on_step=counted)
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) and "busy" not in str(error):
                raise
    return indexed
