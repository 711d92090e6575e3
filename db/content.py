"""Binding human events to the content they were made on.

Each label and review event stores `content_hash`: the generation's content hash
(copyaudit.hashing.generation_content_hash: output + case content) when it was
written. Events written before that column existed are bound by the migration that
added it, in `backfilled_content_hashes` (their own rows are append-only and hashed).
An event whose binding differs from the generation's content now was made on an
earlier version (a `--replace` changed the output or the case): it is shown as such
and left out of agreement, calibration and judge quality until re-confirmed.
"""

from __future__ import annotations

import functools
import sqlite3

from copyaudit.hashing import generation_content_hash

EARLIER_VERSION = "made on an earlier version"  # how a stale label or decision is shown
SQL_FUNCTION = "generation_content_hash"  # registered on every Store connection

# The generation's content now (aliases g: generations, c: cases).
CONTENT_NOW_SQL = f"{SQL_FUNCTION}(g.output, c.content_hash)"


def with_version(text: str, stale: object) -> str:
    """`text` (a label, a status) with the earlier-version mark when `stale`."""
    return f"{text} ({EARLIER_VERSION})" if stale else text


def bound_sql(event: str) -> str:
    """SQL for the content hash event row `event` (alias) was made on."""
    return (
        f"COALESCE({event}.content_hash, (SELECT b.content_hash FROM backfilled_content_hashes b "
        f"WHERE b.uuid = {event}.uuid))"
    )


def stale_sql(event: str) -> str:
    """SQL: 1 when event row `event` was made on an earlier version of generation `g`
    joined with its case `c`, else 0."""
    return f"({bound_sql(event)} IS NOT {CONTENT_NOW_SQL})"


# A query calls the function once per event row; many events share a generation.
_content_hash = functools.lru_cache(maxsize=1024)(generation_content_hash)


def register(conn: sqlite3.Connection) -> None:
    """Make generation_content_hash(output, case_hash) callable from SQL."""
    conn.create_function(SQL_FUNCTION, 2, _content_hash, deterministic=True)


def content_now(conn: sqlite3.Connection, generation_id: int) -> str | None:
    """The generation's content hash now (what an event written now is bound to);
    None if there is no such generation."""
    row = conn.execute(
        f"SELECT {CONTENT_NOW_SQL} FROM generations g JOIN cases c ON c.id = g.case_pk "
        "WHERE g.id = ?",
        (generation_id,),
    ).fetchone()
    return None if row is None else str(row[0])
