"""Read queries for the copyright-notice report: a run's generations with their case
payload, and every judgment on them (value, verdict, and the stored error)."""

from __future__ import annotations

import json
from typing import Any

from db.columns import GENERATION_KEY_SQL
from db.connection import Store


def notice_generations(store: Store, run: str) -> list[dict[str, Any]]:
    """One dict per generation of `run` (failed ones included, with `error`):
    generation_id, key, case_id, template, output, error, payload (dict) and
    scores: {(judge, metric): {"value", "flagged", "error"}}."""
    rows: dict[int, dict[str, Any]] = {}
    for row in store.conn.execute(
        f"SELECT g.id, {GENERATION_KEY_SQL} AS key, c.case_id, g.template, g.output, "
        "g.error, c.payload FROM generations g JOIN runs r ON r.id = g.run_id "
        "JOIN cases c ON c.id = g.case_pk WHERE r.name = ? ORDER BY g.id",
        (run,),
    ):
        rows[int(row["id"])] = {
            "generation_id": int(row["id"]),
            "key": row["key"],
            "case_id": row["case_id"],
            "template": row["template"],
            "output": row["output"] or "",
            "error": row["error"],
            "payload": json.loads(row["payload"]),
            "scores": {},
        }
    for row in store.conn.execute(
        "SELECT j.generation_id, j.judge, j.metric, j.value, j.flagged, j.evidence "
        "FROM judgments j JOIN generations g ON g.id = j.generation_id "
        "JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
        (run,),
    ):
        evidence = json.loads(row["evidence"]) if row["evidence"] else {}
        rows[int(row["generation_id"])]["scores"][(row["judge"], row["metric"])] = {
            "value": row["value"],
            "flagged": None if row["flagged"] is None else bool(row["flagged"]),
            "error": evidence.get("error"),
        }
    return list(rows.values())
