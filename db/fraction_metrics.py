"""The store's `fraction_metrics`: the metrics whose values the totals triggers count per
histogram bin over [0, 1] (db.migrations.value_bin_sql) rather than per value.

The table is synced from the code's set each time a store opens for writing, not only when
the totals migration ran: a fraction metric added to the code after a database was made
would otherwise be counted per value in it for ever (0.0 and 1.0 read as bins 0 and 1).
When the set changed, the counts of the metrics that moved are recounted from their
judgments, so the histograms of runs judged before are right too. A read-only open cannot
write: `binned_metrics` tells the report which metrics the file counts per bin, and the
report recounts any metric on which it disagrees with the code from its values.

The code's set is what the judges declare (copyaudit.judges.metric_facts). The store
sits below the judges (pyproject.toml's contracts): it names the collector and imports
it when a store first opens for writing, as copyaudit.judges.registry names the
studies' verbatim kinds, so no module of db imports the judges and nothing is copied.
"""

from __future__ import annotations

import importlib
import sqlite3
from collections.abc import Set

from db.migrations import value_bin_sql

DECLARED = "copyaudit.judges.metric_facts:fraction_metrics"  # () -> the code's fractions


def declared_fractions() -> frozenset[str]:
    """The metrics the judges declare as fractions (DECLARED, imported when first asked)."""
    module, function = DECLARED.split(":")
    return frozenset(getattr(importlib.import_module(module), function)())


def binned_metrics(conn: sqlite3.Connection) -> frozenset[str]:
    """The metrics this database counts per histogram bin."""
    return frozenset(r[0] for r in conn.execute("SELECT metric FROM fraction_metrics"))


def sync_fraction_metrics(conn: sqlite3.Connection, fractions: Set[str]) -> frozenset[str]:
    """Make `fraction_metrics` equal to `fractions` and recount `value_counts` of every
    metric that moved in or out; return the metrics that moved (empty: nothing written).
    Runs in its own write transaction; the caller holds no other. A schema from before
    the totals (a test winding it back) has no table: the migration making it fills it."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'fraction_metrics'").fetchone():
        return frozenset()
    stored = binned_metrics(conn)
    moved = frozenset(stored.symmetric_difference(fractions))
    if not moved:
        return moved
    marks = ", ".join("?" * len(moved))
    params = sorted(moved)
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute(f"DELETE FROM fraction_metrics WHERE metric IN ({marks})", params)
        conn.executemany(
            "INSERT INTO fraction_metrics (metric) VALUES (?)",
            [(m,) for m in params if m in fractions],
        )
        conn.execute(f"DELETE FROM value_counts WHERE metric IN ({marks})", params)
        conn.execute(
            f"INSERT INTO value_counts SELECT g.run_id, j.metric, {value_bin_sql('j')} AS bin, "
            "COUNT(*) FROM judgments j JOIN generations g ON g.id = j.generation_id "
            f"WHERE j.value IS NOT NULL AND j.metric IN ({marks}) GROUP BY g.run_id, j.metric, bin",
            params,
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return moved
