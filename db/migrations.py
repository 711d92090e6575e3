"""Numbered schema migrations, applied in order and recorded in PRAGMA user_version.

Each migration is a function taking a sqlite_utils.Database inside an open
transaction. Never edit a released migration: add a new one. This module holds all
of the schema (every table, index and trigger), so it imports no feature module of
db/: they import db.connection, which applies these.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable
from datetime import UTC, datetime

import sqlite_utils

from copyaudit.errors import UserError
from db.derived import given_character_indices


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def m001_initial(db: sqlite_utils.Database) -> None:
    db["meta"].create({"key": str, "value": str}, pk="key")
    db["meta"].insert_all(
        [
            {"key": "origin", "value": uuid.uuid4().hex},
            {"key": "created_at", "value": _now()},
        ]
    )
    db["works"].create(
        {
            "id": int,
            "key": str,
            "title": str,
            "author": str,
            "year": int,
            "membership": str,
        },
        pk="id",
        not_null={"key", "title", "membership"},
        defaults={"membership": "unknown"},
    )
    db["works"].create_index(["key"], unique=True)
    db["suites"].create(
        {"id": int, "name": str, "kind": str, "created_at": str},
        pk="id",
        not_null={"name", "kind"},
    )
    db["suites"].create_index(["name"], unique=True)
    db["cases"].create(
        {
            "id": int,
            "suite_id": int,
            "case_id": str,
            "work_id": int,
            "payload": str,
            "content_hash": str,
            "source": str,
            "created_at": str,
        },
        pk="id",
        not_null={"suite_id", "case_id", "work_id", "payload", "content_hash"},
        foreign_keys=[("suite_id", "suites", "id"), ("work_id", "works", "id")],
    )
    db["cases"].create_index(["suite_id", "case_id"], unique=True)
    db["cases"].create_index(["work_id"])
    db["runs"].create(
        {
            "id": int,
            "name": str,
            "suite_id": int,
            "backend": str,
            "model": str,
            "model_revision": str,
            "templates": str,
            "decoding": str,
            "mitigation": str,
            "config": str,
            "config_hash": str,
            "code_version": str,
            "status": str,
            "error": str,
            "created_at": str,
            "started_at": str,
            "finished_at": str,
        },
        pk="id",
        not_null={"name", "suite_id", "backend", "status"},
        foreign_keys=[("suite_id", "suites", "id")],
    )
    db["runs"].create_index(["name"], unique=True)
    db["generations"].create(
        {
            "id": int,
            "run_id": int,
            "case_pk": int,
            "template": int,
            "prompt": str,
            "output": str,
            "tokens": int,
            "seconds": float,
            "source": str,
            "error": str,
            "created_at": str,
        },
        pk="id",
        not_null={"run_id", "case_pk", "template", "output", "source"},
        foreign_keys=[("run_id", "runs", "id"), ("case_pk", "cases", "id")],
    )
    db["generations"].create_index(["run_id", "case_pk", "template"], unique=True)
    db["generations"].create_index(["case_pk"])
    db["judge_configs"].create({"hash": str, "name": str, "version": str, "config": str}, pk="hash")
    db["judgments"].create(
        {
            "id": int,
            "generation_id": int,
            "judge": str,
            "judge_hash": str,
            "metric": str,
            "value": float,
            "flagged": int,
            "evidence": str,
            "created_at": str,
        },
        pk="id",
        not_null={"generation_id", "judge", "metric"},
        foreign_keys=[
            ("generation_id", "generations", "id"),
            ("judge_hash", "judge_configs", "hash"),
        ],
    )
    db["judgments"].create_index(["generation_id", "judge", "metric"], unique=True)
    db["judgments"].create_index(["metric", "value"])
    # Human events: append-only and hash-chained. `generation_key` (run/case_id/template)
    # is what the hash covers, so events keep their meaning across merged databases.
    event_columns = {
        "uuid": str,
        "seq": int,
        "chain": str,
        "generation_id": int,
        "generation_key": str,
        "created_at": str,
        "prev_hash": str,
        "hash": str,
    }
    db["labels"].create(
        {
            **event_columns,
            "annotator": str,
            "target": str,
            "item_index": int,
            "action": str,
            "label": str,
            "note": str,
            "supersedes": str,
        },
        pk="uuid",
        not_null={
            "seq",
            "chain",
            "generation_id",
            "generation_key",
            "annotator",
            "target",
            "action",
            "hash",
        },
        foreign_keys=[("generation_id", "generations", "id")],
    )
    db["labels"].create_index(["generation_id", "annotator"])
    db["labels"].create_index(["chain", "seq"], unique=True)
    db["reviews"].create(
        {**event_columns, "reviewer": str, "status": str, "note": str},
        pk="uuid",
        not_null={"seq", "chain", "generation_id", "generation_key", "reviewer", "status", "hash"},
        foreign_keys=[("generation_id", "generations", "id")],
    )
    db["reviews"].create_index(["generation_id"])
    db["reviews"].create_index(["chain", "seq"], unique=True)
    # Append-only is enforced by the database, not only by convention.
    for table in ("labels", "reviews"):
        db.execute(
            f"CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
        )
        db.execute(
            f"CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table} "
            f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
        )


def migrate_decop(db: sqlite_utils.Database) -> None:
    """Tables `decop_scores` (unique per run and case) and `decop_calibrations`."""
    db["decop_scores"].create(
        {
            "id": int,
            "run_id": int,
            "case_pk": int,
            "probs": str,  # JSON [[pA, pB, pC, pD] x 24], order as studies.decop.method.all_orders
            "answers": str,  # JSON [index of the verbatim option x 24]
            "baselines": str,  # JSON {method: score} or null (no logits / --no-baselines)
            "errors": str,  # JSON {order index: why its row could not be read} or null
            "seconds": float,
            "created_at": str,
        },
        pk="id",
        not_null={"run_id", "case_pk", "probs", "answers"},
        foreign_keys=[("run_id", "runs", "id"), ("case_pk", "cases", "id")],
    )
    db["decop_scores"].create_index(["run_id", "case_pk"], unique=True)
    db["decop_scores"].create_index(["case_pk"])
    db["decop_calibrations"].create(
        {
            "run_id": int,
            "works": str,  # JSON [work title] the label adjustment was fitted on
            "delta": str,  # JSON [dA, dB, dC, dD]
            "n_prompts": int,
            "created_at": str,
        },
        pk="run_id",
        not_null={"works", "delta"},
        foreign_keys=[("run_id", "runs", "id")],
    )


def m003_browse_indexes(db: sqlite_utils.Database) -> None:
    """Indexes the app's paged lists need: a run's generations in id order, which
    judges scored a run, and finding the retraction of a label event."""
    db["generations"].create_index(["run_id"])
    db["judgments"].create_index(["judge", "metric", "generation_id"])
    db["labels"].create_index(["supersedes"])


def migrate_queues(db: sqlite_utils.Database) -> None:
    """Tables `queues` (name, sampling parameters) and `queue_items` (the sample)."""
    db["queues"].create(
        {
            "id": int,
            "name": str,
            "run_id": int,
            "metric": str,
            "judge": str,
            "per_value": int,
            "seed": int,
            "bin_width": float,
            "created_at": str,
        },
        pk="id",
        not_null={"name", "run_id", "metric", "judge", "per_value", "seed"},
        foreign_keys=[("run_id", "runs", "id")],
    )
    db["queues"].create_index(["name"], unique=True)
    db["queue_items"].create(
        {
            "queue_id": int,
            "generation_id": int,
            "position": int,
            "stratum": float,  # the metric value (or bin start) it was drawn for
        },
        pk=("queue_id", "generation_id"),
        not_null={"position", "stratum"},
        foreign_keys=[("queue_id", "queues", "id"), ("generation_id", "generations", "id")],
    )
    db["queue_items"].create_index(["queue_id", "position"], unique=True)


def m005_sort_and_flag_indexes(db: sqlite_utils.Database) -> None:
    """Sorting a list by a score walks this index in value order (and stops after a
    page); the partial index holds only flagged judgments, so the flag filters and
    their counts touch the flagged rows, not every generation of the run."""
    db.execute(
        "CREATE INDEX IF NOT EXISTS idx_judgments_sort "
        "ON judgments (judge, metric, value, generation_id)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS idx_judgments_flagged "
        "ON judgments (judge, metric, generation_id) WHERE flagged = 1"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS idx_judgments_any_flagged "
        "ON judgments (generation_id) WHERE flagged = 1"
    )


def m006_import_skips(db: sqlite_utils.Database) -> None:
    """The rows an import left out with --skip-invalid, kept with their suite (cases)
    or run (imported generations) and source file, so that listings and reports can
    say what the suite or run lacks."""
    db["skipped_rows"].create(
        {
            "id": int,
            "suite_id": int,
            "run_id": int,
            "source": str,
            "unit": str,
            "line": int,
            "field": str,
            "reason": str,
            "created_at": str,
        },
        pk="id",
        not_null={"suite_id", "source", "unit", "line", "reason"},
        foreign_keys=[("suite_id", "suites", "id"), ("run_id", "runs", "id")],
    )
    db["skipped_rows"].create_index(["suite_id", "source"])
    db["skipped_rows"].create_index(["run_id"])


def migrate_run_owners(db: sqlite_utils.Database) -> None:
    """The owner record of each run being run (keyed by run name: a run is owned before
    its row exists, while its model loads)."""
    db["run_owners"].create(
        {
            "run": str,
            "token": str,
            "purpose": str,
            "pid": int,
            "host": str,
            "process_start": str,
            "started_at": str,
            "heartbeat_at": str,
        },
        pk="run",
        not_null={"token", "purpose", "pid", "host", "started_at", "heartbeat_at"},
    )


def migrate_settings(db: sqlite_utils.Database) -> None:
    """Table `settings` (scope, key, value, updated_at)."""
    db["settings"].create(
        {"scope": str, "key": str, "value": str, "updated_at": str},
        pk=("scope", "key"),
        not_null={"value", "updated_at"},
    )


def migrate_decop_doc_type(db: sqlite_utils.Database) -> None:
    """`suites.doc_type`: what a DE-COP suite's question names (book | paper); the decop
    suites imported before it were asked the book question, so they are books."""
    db.execute("ALTER TABLE suites ADD COLUMN doc_type TEXT")
    db.execute("UPDATE suites SET doc_type = 'book' WHERE kind = 'decop'")


def migrate_given_characters(db: sqlite_utils.Database) -> None:
    """`cases.given_characters` (db.derived.given_character_indices), filled for existing
    cases."""
    db.execute("ALTER TABLE cases ADD COLUMN given_characters TEXT NOT NULL DEFAULT '[]'")
    rows = db.execute(
        "SELECT id, payload FROM cases WHERE json_type(payload, '$.reference_characters') = 'array'"
    ).fetchall()
    for case_pk, payload in rows:
        given = given_character_indices(json.loads(payload))
        if given != "[]":
            db.execute("UPDATE cases SET given_characters = ? WHERE id = ?", (given, case_pk))


def migrate_review_undo(db: sqlite_utils.Database) -> None:
    """`reviews.undoes`: the decision a review event withdraws (undo), hashed when set."""
    db.execute("ALTER TABLE reviews ADD COLUMN undoes TEXT")


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    m001_initial,
    migrate_decop,
    m003_browse_indexes,
    migrate_queues,
    m005_sort_and_flag_indexes,
    m006_import_skips,
    migrate_run_owners,
    migrate_settings,  # the launcher's remembered values
    migrate_decop_doc_type,
    migrate_given_characters,  # the list's 'not fully labelled by me' filter
    migrate_review_undo,
]
SCHEMA_VERSION = len(MIGRATIONS)


def migrate(db: sqlite_utils.Database) -> int:
    """Bring the schema up to SCHEMA_VERSION; return the number of migrations applied."""
    conn: sqlite3.Connection = db.conn
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > SCHEMA_VERSION:
        raise UserError(
            f"database schema version {current} is newer than this copyaudit "
            f"({SCHEMA_VERSION}); upgrade copyaudit"
        )
    applied = 0
    for number in range(current + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[number - 1](db)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # SQLite rolls back by itself on a full disk
                conn.execute("ROLLBACK")
            raise
        applied += 1
    return applied
