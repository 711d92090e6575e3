"""What the trace judge's judgments say about a run's works (copyaudit.judges.trace)."""

from __future__ import annotations

from db.connection import Store

TRACED = "longest_traced_chars"


def traced_statuses(store: Store, run_id: int) -> dict[str, int]:
    """Status (protected, public-domain, unknown) -> how many of the run's generations
    hold a traced span at the judge's threshold in a work of that status."""
    rows = store.conn.execute(
        "SELECT s.value AS status, COUNT(DISTINCT j.generation_id) AS n "
        "FROM judgments j JOIN generations g ON g.id = j.generation_id, "
        "json_each(json_extract(j.evidence, '$.extra.statuses_at_threshold')) s "
        "WHERE g.run_id = ? AND j.metric = ? AND j.flagged = 1 GROUP BY s.value",
        (run_id, TRACED),
    )
    return {str(r["status"]): int(r["n"]) for r in rows}
