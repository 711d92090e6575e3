"""Read queries of the cross-model comparison: which runs take part, and per run which
metrics were judged, how many judgments have a value and why the others have none."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from copyaudit.errors import UserError
from db.connection import Store
from db.run_owner import live_owners, shown_status

_RUNS_SQL = (
    "SELECT r.id, r.name, r.model, r.mitigation, r.status, r.error, s.name AS suite, "
    "s.kind, (SELECT COALESCE(SUM(t.generations - t.failed), 0) FROM generation_totals t "
    "WHERE t.run_id = r.id) AS generated FROM runs r JOIN suites s ON s.id = r.suite_id"
)


def comparison_runs(
    store: Store, runs: Sequence[str] = (), models: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """The runs to compare, oldest first: the named `runs` (an unknown name is the user's
    error), else every run of the named `models` (a model with no run: an error), else
    every run. Each: id, name, model, mitigation, status (as shown), error, suite, kind,
    generated (generations without an error)."""
    rows = [dict(r) for r in store.conn.execute(_RUNS_SQL + " ORDER BY r.id")]
    if runs:
        known = {r["name"] for r in rows}
        unknown = [name for name in runs if name not in known]
        if unknown:
            raise UserError(f"unknown run(s): {', '.join(unknown)}")
        rows = [r for r in rows if r["name"] in set(runs)]
    if models:
        present = {r["model"] for r in rows}
        absent = [m for m in models if m not in present]
        if absent:
            raise UserError(f"no run of model(s): {', '.join(absent)}")
        rows = [r for r in rows if r["model"] in set(models)]
    owners = live_owners(store)
    for row in rows:
        row["status"] = shown_status(row["status"], owners.get(row["name"]))
    return rows


def metric_coverage(store: Store, run_id: int) -> dict[str, dict[str, Any]]:
    """metric -> {judged, with_value, reasons}: the run's judgments of each metric, how
    many carry a value, and (for a metric none of whose judgments has a value) the
    distinct reasons stored with them."""
    coverage: dict[str, dict[str, Any]] = {}
    for row in store.conn.execute(
        "SELECT metric, SUM(judged), SUM(valued) FROM judgment_totals WHERE run_id = ? "
        "GROUP BY metric ORDER BY metric",
        (run_id,),
    ):
        coverage[row[0]] = {"judged": int(row[1]), "with_value": int(row[2]), "reasons": []}
    for metric, entry in coverage.items():
        if entry["with_value"]:
            continue
        for (evidence,) in store.conn.execute(
            "SELECT j.evidence FROM judgments j JOIN generations g ON g.id = j.generation_id "
            "WHERE j.metric = ? AND j.value IS NULL AND g.run_id = ? ORDER BY j.id",
            (metric, run_id),
        ):
            found = json.loads(evidence) if evidence else {}
            reason = found.get("error") if isinstance(found, dict) else None
            if reason and reason not in entry["reasons"]:
                entry["reasons"].append(reason)
    return coverage
