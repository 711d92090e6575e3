"""How far each run has got: (done, total) for a generation run and a DE-COP run."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from db.connection import Store
from db.pending import run_case_count


def decop_progress(store: Store, run_id: int) -> tuple[int, int]:
    """(passages scored, passages the run scores: its suite's (of its `length`, if set),
    or the first `passages_per_work` of each work when the run was limited so)."""
    row = store.conn.execute(
        "SELECT suite_id, config, (SELECT COUNT(*) FROM decop_scores d WHERE d.run_id = r.id) "
        "AS scored FROM runs r WHERE r.id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return 0, 0
    config = json.loads(row["config"] or "{}")
    return int(row["scored"]), run_case_count(
        store, int(row["suite_id"]), config.get("passages_per_work"), config.get("length")
    )


def run_progress(store: Store, run: Mapping[str, Any]) -> tuple[int, int]:
    """(done, total) of a run given its id, kind, templates and config (JSON, as stored),
    its generations and its suite's cases: generations of its cases (the first `limit`)
    times its templates; passages for a DE-COP run."""
    if run["kind"] == "decop":  # DE-COP runs score passages, they generate nothing
        return decop_progress(store, run["id"])
    templates = json.loads(run["templates"] or "[]")
    limit = json.loads(run["config"] or "{}").get("limit")
    cases = run["cases"] if limit is None else min(limit, run["cases"])
    # An imported run has no fixed template list: its total is what was imported.
    return run["generations"], cases * len(templates) if templates else run["generations"]
