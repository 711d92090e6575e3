"""Reading one work's DE-COP passages back for the app: each passage's options (as
imported) with the 24x4 letter probabilities and true answers the run stored.

Rows come decoded like `db.decop.decop_score_rows`: probabilities NaN where unread;
`probs`, `answers` and `errors` are None for a passage the run has not scored yet.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from db.connection import Store
from db.decop import _nan_floats

_SELECT = (
    "SELECT c.id AS case_pk, c.case_id, c.payload, w.title, w.author, w.membership, "
    "d.probs, d.answers, d.errors, d.seconds FROM runs r "
    "JOIN cases c ON c.suite_id = r.suite_id JOIN works w ON w.id = c.work_id "
    "LEFT JOIN decop_scores d ON d.run_id = r.id AND d.case_pk = c.id "
)


def _decode(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    out["payload"] = json.loads(out["payload"])
    scored = out["probs"] is not None
    out["probs"] = _nan_floats(json.loads(out["probs"])) if scored else None
    out["answers"] = json.loads(out["answers"]) if scored else None
    out["errors"] = json.loads(out["errors"]) if out["errors"] else None
    return out


def work_passages(store: Store, run_id: int, work_id: int) -> list[dict[str, Any]]:
    """The passages of one work in the run's suite, in import order: case_pk, case_id,
    payload {options, answer}, title, author, membership, probs, answers, errors,
    seconds."""
    rows = store.conn.execute(
        _SELECT + "WHERE r.id = ? AND c.work_id = ? ORDER BY c.id", (run_id, work_id)
    )
    return [_decode(r) for r in rows]
