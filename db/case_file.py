"""Everything stored about one generation, with its provenance (for dossiers)."""

from __future__ import annotations

import json
import os
from typing import Any

from copyaudit.endpoint_url import redact_credentials
from copyaudit.errors import UserError
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.queries import with_shown_status
from db.run_totals import judge_configurations


def _loads(text: str | None) -> Any:
    return json.loads(text) if text else None


def _config(text: str | None) -> Any:
    """A stored configuration, with URL credentials an older copyaudit kept redacted."""
    return redact_credentials(_loads(text))


def generation_record(store: Store, generation_id: int) -> dict[str, Any]:
    """The generation, its case and work, and its run's provenance."""
    row = store.conn.execute(
        f"SELECT g.id, {GENERATION_KEY_SQL} AS key, g.template, g.prompt, g.output, g.tokens, "
        "g.seconds, g.source, g.error, g.created_at, c.case_id, c.payload, "
        "c.source AS case_source, c.created_at AS case_imported_at, "
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
    out = with_shown_status(store, dict(row), row["run"], "run_status")
    for name in ("payload", "templates"):
        out[name] = _loads(out[name])
    for name in ("decoding", "config"):
        out[name] = _config(out[name])
    return out


def run_record(store: Store, run: str) -> dict[str, Any]:
    """The run's provenance: model and revision, templates, decoding, mitigation,
    configuration and its hash, code version, status and times."""
    row = store.conn.execute(
        "SELECT r.name AS run, s.name AS suite, s.kind, r.backend, r.model, r.model_revision, "
        "r.templates, r.decoding, r.mitigation, r.config, r.config_hash, r.code_version, "
        "r.status, r.error, r.created_at, r.started_at, r.finished_at "
        "FROM runs r JOIN suites s ON s.id = r.suite_id WHERE r.name = ?",
        (run,),
    ).fetchone()
    if row is None:
        raise UserError(f"no run named '{run}' (see `copyaudit runs`)")
    out = with_shown_status(store, dict(row), run)
    out["templates"] = _loads(out["templates"])
    for name in ("decoding", "config"):
        out[name] = _config(out[name])
    return out


def run_judges(store: Store, run: str) -> list[dict[str, Any]]:
    """Each judge configuration that scored the run: name, version, hash, config, the
    metrics it gave and how many judgments (from the totals the database keeps)."""
    run_id = store.scalar("SELECT id FROM runs WHERE name = ?", (run,))
    out = []
    for row in [] if run_id is None else judge_configurations(store, int(run_id)):
        config = store.conn.execute(
            "SELECT version, config FROM judge_configs WHERE hash = ?", (row["judge_hash"],)
        ).fetchone()
        out.append(
            {
                "judge": row["judge"],
                "version": config["version"] if config else None,
                "judge_hash": row["judge_hash"],
                "config": _config(config["config"]) if config else None,
                "metrics": sorted((row["metrics"] or "").split(",")),
                "judgments": int(row["judgments"]),
            }
        )
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
        item["judge_config"] = _config(item["judge_config"])
        item["flagged"] = None if item["flagged"] is None else bool(item["flagged"])
        out.append(item)
    return out


def checkpoint(store: Store) -> bool:
    """Copy the WAL's commits into the database file so that the file's hash covers
    them; never waits. True when complete (a reader elsewhere may hold some back). A
    store opened read-only is never checkpointed: complete when no log lies beside it."""
    if store.read_only:
        return not os.path.exists(f"{store.path}-wal")
    busy, frames, copied = store.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    return busy == 0 and frames == copied


def judge_config(store: Store, config_hash: str) -> dict[str, Any] | None:
    """The stored judge configuration with this hash: name, version, hash, config."""
    row = store.conn.execute(
        "SELECT hash, name, version, config FROM judge_configs WHERE hash = ?", (config_hash,)
    ).fetchone()
    if row is None:
        return None
    return {
        "judge": row["name"],
        "version": row["version"],
        "judge_hash": row["hash"],
        "config": _config(row["config"]),
    }
