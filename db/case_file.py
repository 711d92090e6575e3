"""Everything stored about one generation, with its provenance (for dossiers)."""

from __future__ import annotations

import json
from typing import Any

from copyaudit.errors import UserError
from db.connection import Store
from db.queries import GENERATION_KEY_SQL


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def generation_record(store: Store, generation_id: int) -> dict[str, Any]:
    """The generation, its case and work, and its run's provenance."""
    row = store.conn.execute(
        f"SELECT g.id, {GENERATION_KEY_SQL} AS key, g.template, g.prompt, g.output, g.tokens, "
        "g.seconds, g.source, g.error, g.created_at, c.case_id, c.payload, "
        "c.content_hash, s.name AS suite, s.kind, w.title, w.author, w.year, w.membership, "
        "r.name AS run, r.backend, r.model, r.model_revision, r.templates, r.decoding, "
        "r.mitigation, r.config, r.config_hash, r.code_version, r.status AS run_status, "
        "r.created_at AS run_created_at, r.finished_at AS run_finished_at "
        "FROM generations g JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "JOIN suites s ON s.id = c.suite_id JOIN works w ON w.id = c.work_id WHERE g.id = ?",
        (generation_id,),
    ).fetchone()
    if row is None:
        raise UserError(f"no generation with id {generation_id}")
    out = dict(row)
    for name in ("payload", "templates", "decoding", "config"):
        out[name] = _loads(out[name])
    return out


def judgments_with_provenance(store: Store, generation_id: int) -> list[dict[str, Any]]:
    """Every judgment of the generation with its judge's version, config and hash."""
    rows = store.conn.execute(
        "SELECT j.judge, jc.version AS judge_version, j.judge_hash, jc.config AS judge_config, "
        "j.metric, j.value, j.flagged, j.evidence, j.created_at FROM judgments j "
        "LEFT JOIN judge_configs jc ON jc.hash = j.judge_hash "
        "WHERE j.generation_id = ? ORDER BY j.judge, j.metric",
        (generation_id,),
    )
    out = []
    for row in rows:
        item = dict(row)
        item["evidence"] = _loads(item["evidence"]) or {}
        item["judge_config"] = _loads(item["judge_config"])
        item["flagged"] = None if item["flagged"] is None else bool(item["flagged"])
        out.append(item)
    return out


def checkpoint(store: Store) -> bool:
    """Copy the WAL's commits into the database file so that the file's hash covers
    them; never waits. True when complete (a reader elsewhere may hold some back)."""
    busy, frames, copied = store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return busy == 0 and frames == copied
