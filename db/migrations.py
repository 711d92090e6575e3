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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from copyaudit.errors import UserError
from copyaudit.hashing import generation_content_hash
from db.derived import given_character_indices
from db.run_digests import digest_trigger_sql, fill

if TYPE_CHECKING:  # loaded by db.connection only when a migration runs (it loads pandas)
    import sqlite_utils


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def m001_initial(db: sqlite_utils.Database) -> None:
    db.table("meta").create({"key": str, "value": str}, pk="key")
    db.table("meta").insert_all(
        [
            {"key": "origin", "value": uuid.uuid4().hex},
            {"key": "created_at", "value": _now()},
        ]
    )
    db.table("works").create(
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
    db.table("works").create_index(["key"], unique=True)
    db.table("suites").create(
        {"id": int, "name": str, "kind": str, "created_at": str},
        pk="id",
        not_null={"name", "kind"},
    )
    db.table("suites").create_index(["name"], unique=True)
    db.table("cases").create(
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
    db.table("cases").create_index(["suite_id", "case_id"], unique=True)
    db.table("cases").create_index(["work_id"])
    db.table("runs").create(
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
    db.table("runs").create_index(["name"], unique=True)
    db.table("generations").create(
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
    db.table("generations").create_index(["run_id", "case_pk", "template"], unique=True)
    db.table("generations").create_index(["case_pk"])
    db.table("judge_configs").create(
        {"hash": str, "name": str, "version": str, "config": str}, pk="hash"
    )
    db.table("judgments").create(
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
    db.table("judgments").create_index(["generation_id", "judge", "metric"], unique=True)
    db.table("judgments").create_index(["metric", "value"])
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
    db.table("labels").create(
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
    db.table("labels").create_index(["generation_id", "annotator"])
    db.table("labels").create_index(["chain", "seq"], unique=True)
    db.table("reviews").create(
        {**event_columns, "reviewer": str, "status": str, "note": str},
        pk="uuid",
        not_null={"seq", "chain", "generation_id", "generation_key", "reviewer", "status", "hash"},
        foreign_keys=[("generation_id", "generations", "id")],
    )
    db.table("reviews").create_index(["generation_id"])
    db.table("reviews").create_index(["chain", "seq"], unique=True)
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
    db.table("decop_scores").create(
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
    db.table("decop_scores").create_index(["run_id", "case_pk"], unique=True)
    db.table("decop_scores").create_index(["case_pk"])
    db.table("decop_calibrations").create(
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
    db.table("generations").create_index(["run_id"])
    db.table("judgments").create_index(["judge", "metric", "generation_id"])
    db.table("labels").create_index(["supersedes"])


def migrate_queues(db: sqlite_utils.Database) -> None:
    """Tables `queues` (name, sampling parameters) and `queue_items` (the sample)."""
    db.table("queues").create(
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
    db.table("queues").create_index(["name"], unique=True)
    db.table("queue_items").create(
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
    db.table("queue_items").create_index(["queue_id", "position"], unique=True)


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
    db.table("skipped_rows").create(
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
    db.table("skipped_rows").create_index(["suite_id", "source"])
    db.table("skipped_rows").create_index(["run_id"])


def migrate_run_owners(db: sqlite_utils.Database) -> None:
    """The owner record of each run being run (keyed by run name: a run is owned before
    its row exists, while its model loads)."""
    db.table("run_owners").create(
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
    db.table("settings").create(
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


def migrate_content_binding(db: sqlite_utils.Database) -> None:
    """`content_hash` on labels and reviews: the generation's content an event was made
    on (db.content). Events already here are bound to the content now, in
    `backfilled_content_hashes` (append-only like them: their rows stay as hashed)."""
    for table in ("labels", "reviews"):
        db.execute(f"ALTER TABLE {table} ADD COLUMN content_hash TEXT")
    db.execute(
        "CREATE TABLE backfilled_content_hashes (uuid TEXT PRIMARY KEY, content_hash TEXT NOT NULL)"
    )
    for verb in ("UPDATE", "DELETE"):
        db.execute(
            f"CREATE TRIGGER backfilled_content_hashes_no_{verb.lower()} BEFORE {verb} ON "
            "backfilled_content_hashes BEGIN SELECT RAISE(ABORT, "
            "'backfilled_content_hashes are append-only'); END"
        )
    rows = db.execute(
        "SELECT e.uuid, g.output, c.content_hash FROM (SELECT uuid, generation_id FROM labels "
        "UNION ALL SELECT uuid, generation_id FROM reviews) e "
        "JOIN generations g ON g.id = e.generation_id JOIN cases c ON c.id = g.case_pk"
    ).fetchall()
    db.conn.executemany(
        "INSERT INTO backfilled_content_hashes (uuid, content_hash) VALUES (?, ?)",
        [(uuid, generation_content_hash(output, case)) for uuid, output, case in rows],
    )


# Full-text search (db.search): trigram FTS5 indexes over what the generation list's
# search reads. External content (the text stays in its table once), kept in step by
# triggers; an UPDATE that leaves the indexed columns alone does not touch the index.
FTS_TABLES = {"generations": ("output", "prompt"), "cases": ("case_id", "payload")}


def migrate_search_index(db: sqlite_utils.Database) -> None:
    """`generations_fts` (output, prompt) and `cases_fts` (case_id, payload): trigram
    FTS5 tables (substring search, case-folded) with their triggers, back-filled.
    Idempotent: a test that winds the schema back to an earlier migration runs it again."""
    for table, columns in FTS_TABLES.items():
        fts, names = f"{table}_fts", ", ".join(columns)
        new = ", ".join(f"new.{c}" for c in columns)
        old = ", ".join(f"old.{c}" for c in columns)
        remove = f"INSERT INTO {fts} ({fts}, rowid, {names}) VALUES ('delete', old.id, {old});"
        add = f"INSERT INTO {fts} (rowid, {names}) VALUES (new.id, {new});"
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({names}, content='{table}', "
            "content_rowid='id', tokenize='trigram')"
        )
        create = "CREATE TRIGGER IF NOT EXISTS"
        db.execute(f"{create} {fts}_insert AFTER INSERT ON {table} BEGIN {add} END")
        db.execute(f"{create} {fts}_delete AFTER DELETE ON {table} BEGIN {remove} END")
        db.execute(
            f"{create} {fts}_update AFTER UPDATE OF {names} ON {table} BEGIN {remove} {add} END"
        )
        db.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
        if db[SEARCH_PROGRESS].exists():  # a schema wound back (tests): every row indexed
            db.execute(
                f"UPDATE {SEARCH_PROGRESS} SET upto = (SELECT COALESCE(MAX(id), 0) FROM "
                f"{table}) WHERE tbl = '{table}'"
            )


# The search index may lag its table (db.search_index): `search_indexed` holds, per
# table of FTS_TABLES, the id up to which it is indexed. Every row with id <= upto is in
# the index with its current text, and no row above it: an import leaves its rows above
# (deferred, db.bulk), and catching up indexes them upward from upto. Searches scan the
# rows above upto (db.search.candidate_arms).
SEARCH_PROGRESS = "search_indexed"


def indexed_to_sql(table: str) -> str:
    """The id up to which `table`'s search index holds its rows, as a scalar subquery."""
    return f"(SELECT upto FROM {SEARCH_PROGRESS} WHERE tbl = '{table}')"


def search_trigger_sql() -> dict[str, str]:
    """name -> CREATE TRIGGER text of the triggers keeping the FTS indexes: a single
    insert is indexed when nothing waits below it (the index then reaches it), or when
    its id was given again below upto; updates and deletes touch only indexed rows. The
    insert trigger stands aside for a bulk writer (db.bulk)."""
    triggers: dict[str, str] = {}
    for table, columns in FTS_TABLES.items():
        fts, names, upto = f"{table}_fts", ", ".join(columns), indexed_to_sql(table)
        new = ", ".join(f"new.{c}" for c in columns)
        old = ", ".join(f"old.{c}" for c in columns)
        remove = f"INSERT INTO {fts} ({fts}, rowid, {names}) VALUES ('delete', old.id, {old});"
        add = f"INSERT INTO {fts} (rowid, {names}) VALUES (new.id, {new});"
        triggers[f"{fts}_insert"] = (
            f"CREATE TRIGGER {fts}_insert AFTER INSERT ON {table} {_standing_aside(table)} "
            f"BEGIN INSERT INTO {fts} (rowid, {names}) SELECT new.id, {new} "
            f"WHERE new.id <= {upto} + 1; UPDATE {SEARCH_PROGRESS} SET upto = new.id "
            f"WHERE tbl = '{table}' AND upto = new.id - 1; END"
        )
        triggers[f"{fts}_delete"] = (
            f"CREATE TRIGGER {fts}_delete AFTER DELETE ON {table} WHEN old.id <= {upto} "
            f"BEGIN {remove} END"
        )
        triggers[f"{fts}_update"] = (
            f"CREATE TRIGGER {fts}_update AFTER UPDATE OF {names} ON {table} "
            f"WHEN old.id <= {upto} BEGIN {remove} {add} END"
        )
    return triggers


def search_chunk_sql(table: str, defer: bool) -> list[str]:
    """A bulk writer's statements for the FTS index after writing rows with id > ?1:
    rows given ids at or below upto again are indexed; the others are indexed too, and
    upto moved past them, when nothing waited below them and the writer does not
    `defer` them to a catch-up (db.search_index)."""
    fts, names, upto = f"{table}_fts", ", ".join(FTS_TABLES[table]), indexed_to_sql(table)
    insert = (
        f"INSERT INTO {fts} (rowid, {names}) SELECT id, {names} FROM {table} NOT INDEXED "
        f"WHERE id > ?1 AND "
    )
    if defer:
        return [f"{insert}id <= {upto}"]
    return [
        f"{insert}(id <= {upto} OR {upto} >= ?1)",
        f"UPDATE {SEARCH_PROGRESS} SET upto = MAX(upto, (SELECT COALESCE(MAX(id), 0) "
        f"FROM {table})) WHERE tbl = '{table}' AND upto >= ?1",
    ]


# FTS5 merges a level's segments once it holds this many (its default: 4). At 8, catching
# up with 100,000 imported prose cases and generations took 35.6-38.3 CPU s against
# 46.6-48.0, and six searches' counts and first pages the same time (55-94 ms); 16 was
# no cheaper than 8 (docs/benchmarks.md).
FTS_AUTOMERGE = 8


def m023_search_backlog(db: sqlite_utils.Database) -> None:
    """Table `search_indexed` (how far each search index reaches: every row so far) and
    the FTS triggers that respect it, so that an import may leave its rows to a later
    catch-up (db.search_index); the indexes merge at FTS_AUTOMERGE segments. Idempotent
    (a test winding the schema back runs it again)."""
    _search_progress_table(db)
    for name, sql in search_trigger_sql().items():
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
        db.execute(sql)
    for table in FTS_TABLES:
        fts = f"{table}_fts"
        db.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('automerge', {FTS_AUTOMERGE})")


def _search_progress_table(db: sqlite_utils.Database) -> None:
    """`search_indexed`, each search index reaching every row of its table (what the
    triggers before m023 kept), unless it is there already."""
    db.execute(
        f"CREATE TABLE IF NOT EXISTS {SEARCH_PROGRESS} (tbl TEXT PRIMARY KEY, "
        "upto INTEGER NOT NULL) WITHOUT ROWID"
    )
    for table in FTS_TABLES:
        db.execute(
            f"INSERT OR IGNORE INTO {SEARCH_PROGRESS} (tbl, upto) "
            f"SELECT '{table}', COALESCE(MAX(id), 0) FROM {table}"
        )


# --- figures kept up to date by triggers (the dashboard, open-run and report queries) ----

# The inner edges of a fraction metric's ten histogram bins, written as the doubles
# numpy.linspace(0, 1, 11) gives (copyaudit.reports.run_report.histogram), so that the
# bin a trigger counts a value in is the one numpy.histogram puts it in.
FRACTION_EDGES = (
    "0.1",
    "0.2",
    "0.30000000000000004",
    "0.4",
    "0.5",
    "0.6000000000000001",
    "0.7000000000000001",
    "0.8",
    "0.9",
)


def value_bin_sql(row: str) -> str:
    """The SQL key a judgment's value is counted under in `value_counts`: for a fraction
    metric its histogram bin (0-9; -1 outside [0, 1], which a histogram leaves out), for
    any other metric the value itself. `row`: the judgment's alias (j, NEW or OLD)."""
    bins = " + ".join(f"({row}.value >= {edge})" for edge in FRACTION_EDGES)
    return (
        f"CASE WHEN {row}.metric NOT IN (SELECT metric FROM fraction_metrics) THEN {row}.value "
        f"WHEN {row}.value < 0 OR {row}.value > 1 THEN -1 ELSE {bins} END"
    )


def _threshold_sql(row: str) -> str:
    return (
        f"CASE WHEN json_valid({row}.evidence) THEN json_extract({row}.evidence, '$.threshold') END"
    )


def _upsert(table: str, key: tuple[str, ...], counted: tuple[str, ...], select: str) -> str:
    """INSERT INTO table ... SELECT ..., adding the counted columns on a key conflict."""
    add = ", ".join(f"{c} = {c} + excluded.{c}" for c in counted)
    return (
        f"INSERT INTO {table} ({', '.join((*key, *counted))}) {select} "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {add};"
    )


def _judgment_effect(row: str, sign: int) -> str:
    """Trigger statements adding (sign 1) or taking away (-1) judgment `row` (NEW/OLD)."""
    s, of_run = f"({sign})", f"FROM generations g WHERE g.id = {row}.generation_id"
    statements = [
        _upsert(
            "judgment_totals",
            ("run_id", "metric", "template", "judge", "judge_hash"),
            ("judged", "valued", "value_sum", "verdicts", "flagged"),
            f"SELECT g.run_id, {row}.metric, g.template, {row}.judge, "
            f"COALESCE({row}.judge_hash, ''), {s}, {s} * ({row}.value IS NOT NULL), "
            f"{s} * COALESCE({row}.value, 0.0), {s} * ({row}.flagged IS NOT NULL), "
            f"{s} * COALESCE({row}.flagged, 0) {of_run}",
        ),
        _upsert(
            "value_counts",
            ("run_id", "metric", "bin"),
            ("n",),
            f"SELECT g.run_id, {row}.metric, {value_bin_sql(row)}, {s} {of_run} "
            f"AND {row}.value IS NOT NULL",
        ),
        _upsert(
            "threshold_counts",
            ("run_id", "metric", "threshold"),
            ("n",),
            f"SELECT g.run_id, {row}.metric, {_threshold_sql(row)}, {s} {of_run} "
            f"AND {_threshold_sql(row)} IS NOT NULL",
        ),
    ]
    if sign < 0:  # a figure nothing counts any more is no figure
        run = f"(SELECT g.run_id {of_run})"
        statements += [
            f"DELETE FROM judgment_totals WHERE judged = 0 AND run_id = {run} "
            f"AND metric = {row}.metric;",
            f"DELETE FROM value_counts WHERE n = 0 AND run_id = {run} AND metric = {row}.metric;",
            f"DELETE FROM threshold_counts WHERE n = 0 AND run_id = {run} "
            f"AND metric = {row}.metric;",
        ]
    return " ".join(statements)


def _generation_effect(row: str, sign: int) -> str:
    statement = _upsert(
        "generation_totals",
        ("run_id", "template"),
        ("generations", "failed"),
        f"VALUES ({row}.run_id, {row}.template, {sign}, ({sign}) * ({row}.error IS NOT NULL))",
    )
    if sign < 0:
        statement += (
            f" DELETE FROM generation_totals WHERE generations = 0 AND run_id = {row}.run_id "
            f"AND template = {row}.template;"
        )
    return statement


def _case_effect(row: str, sign: int) -> str:
    statement = _upsert(
        "suite_work_totals",
        ("suite_id", "work_id"),
        ("cases",),
        f"VALUES ({row}.suite_id, {row}.work_id, {sign})",
    )
    if sign < 0:
        statement += (
            f" DELETE FROM suite_work_totals WHERE cases = 0 AND suite_id = {row}.suite_id "
            f"AND work_id = {row}.work_id;"
        )
    return statement


def _kept_by_triggers(
    db: sqlite_utils.Database, table: str, effect: Callable[[str, int], str], columns: str
) -> None:
    """Triggers keeping a totals table equal to what `effect` counts of `table`'s rows."""
    db.execute(
        f"CREATE TRIGGER {table}_totals_insert AFTER INSERT ON {table} BEGIN {effect('NEW', 1)} END"
    )
    db.execute(
        f"CREATE TRIGGER {table}_totals_delete AFTER DELETE ON {table} "
        f"BEGIN {effect('OLD', -1)} END"
    )
    db.execute(
        f"CREATE TRIGGER {table}_totals_update AFTER UPDATE OF {columns} ON {table} "
        f"BEGIN {effect('OLD', -1)} {effect('NEW', 1)} END"
    )


RUN_TOTALS_TABLES = (
    "fraction_metrics",
    "generation_totals",
    "suite_work_totals",
    "judgment_totals",
    "value_counts",
    "threshold_counts",
)


def migrate_run_totals(db: sqlite_utils.Database) -> None:
    """Totals kept by triggers, so that the dashboard, opening a run and a run report read
    a few rows instead of every generation and judgment: per run and template the
    generations (and failed ones); per suite and work the cases; per run, metric,
    template, judge and judge configuration ('' for none) the judgments (with a value,
    their sum, with a verdict, flagged); per run
    and metric the values by histogram bin (fraction metrics, listed in
    `fraction_metrics`, which the store fills from the code's declarations when it opens:
    db.fraction_metrics) or by value (any other), and the thresholds judged against."""

    # idempotent: run again (a test winding the schema back), it rebuilds the totals
    for table in ("generations", "cases", "judgments"):
        for event in ("insert", "delete", "update"):
            db.execute(f"DROP TRIGGER IF EXISTS {table}_totals_{event}")
    for table in RUN_TOTALS_TABLES:
        db.execute(f"DROP TABLE IF EXISTS {table}")
    db.execute("CREATE TABLE fraction_metrics (metric TEXT PRIMARY KEY) WITHOUT ROWID")
    db.execute(
        "CREATE TABLE generation_totals (run_id INTEGER NOT NULL, template INTEGER NOT NULL, "
        "generations INTEGER NOT NULL, failed INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, template)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE suite_work_totals (suite_id INTEGER NOT NULL, work_id INTEGER NOT NULL, "
        "cases INTEGER NOT NULL, PRIMARY KEY (suite_id, work_id)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE judgment_totals (run_id INTEGER NOT NULL, metric TEXT NOT NULL, "
        "template INTEGER NOT NULL, judge TEXT NOT NULL, judge_hash TEXT NOT NULL, "
        "judged INTEGER NOT NULL, valued INTEGER NOT NULL, value_sum REAL NOT NULL, "
        "verdicts INTEGER NOT NULL, flagged INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, metric, template, judge, judge_hash)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE value_counts (run_id INTEGER NOT NULL, metric TEXT NOT NULL, "
        "bin REAL NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (run_id, metric, bin)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE threshold_counts (run_id INTEGER NOT NULL, metric TEXT NOT NULL, "
        "threshold NOT NULL, n INTEGER NOT NULL, "
        "PRIMARY KEY (run_id, metric, threshold)) WITHOUT ROWID"
    )
    # what is there already (a database made before this migration)
    db.execute(
        "INSERT INTO generation_totals SELECT run_id, template, COUNT(*), COUNT(error) "
        "FROM generations GROUP BY run_id, template"
    )
    db.execute(
        "INSERT INTO suite_work_totals SELECT suite_id, work_id, COUNT(*) FROM cases "
        "GROUP BY suite_id, work_id"
    )
    judged = "FROM judgments j JOIN generations g ON g.id = j.generation_id"
    db.execute(
        "INSERT INTO judgment_totals SELECT g.run_id, j.metric, g.template, j.judge, "
        "COALESCE(j.judge_hash, '') AS hash, COUNT(*), COUNT(j.value), TOTAL(j.value), "
        f"COUNT(j.flagged), COALESCE(SUM(j.flagged), 0) {judged} "
        "GROUP BY g.run_id, j.metric, g.template, j.judge, hash"
    )
    db.execute(
        f"INSERT INTO value_counts SELECT g.run_id, j.metric, {value_bin_sql('j')} AS bin, "
        f"COUNT(*) {judged} WHERE j.value IS NOT NULL GROUP BY g.run_id, j.metric, bin"
    )
    db.execute(
        f"INSERT INTO threshold_counts SELECT g.run_id, j.metric, {_threshold_sql('j')} AS t, "
        f"COUNT(*) {judged} WHERE t IS NOT NULL GROUP BY g.run_id, j.metric, t"
    )
    _kept_by_triggers(db, "generations", _generation_effect, "run_id, template, error")
    _kept_by_triggers(db, "cases", _case_effect, "suite_id, work_id")
    _kept_by_triggers(
        db, "judgments", _judgment_effect, "generation_id, metric, value, flagged, evidence"
    )


def migrate_run_names(db: sqlite_utils.Database) -> None:
    """Run names lose '/' (a generation key run/case_id/template must read one way): each
    run named with one is renamed ('/' -> '_', then '-2', '-3'... on a clash) and the
    rename recorded in `run_renames` (old_name, new_name, run_id, renamed_at), through
    which keys written with the old name (in label and review events, exported files,
    other databases) still resolve. Stored events are left as they are (hash-chained)."""
    db.table("run_renames").create(
        {"old_name": str, "new_name": str, "run_id": int, "renamed_at": str},
        pk="old_name",
        not_null={"new_name", "run_id", "renamed_at"},
        if_not_exists=True,  # idempotent: a test winding the schema back runs it again
    )
    taken = {row[0] for row in db.execute("SELECT name FROM runs")}
    renamed = db.execute("SELECT id, name FROM runs WHERE instr(name, '/') > 0 ORDER BY id")
    for run_id, old in renamed.fetchall():
        base = old.replace("/", "_")
        new, n = base, 1
        while new in taken:
            n += 1
            new = f"{base}-{n}"
        taken.add(new)
        db.execute("UPDATE runs SET name = ? WHERE id = ?", (new, run_id))
        db.execute("UPDATE run_owners SET run = ? WHERE run = ?", (new, old))
        db.execute(
            "INSERT INTO run_renames (old_name, new_name, run_id, renamed_at) VALUES (?, ?, ?, ?)",
            (old, new, run_id, _now()),
        )


# The append-only triggers and the head-record triggers of the event tables, by name: what
# migrations create and what `verify` expects to find unchanged.
EVENT_TABLES = ("labels", "reviews")


def event_trigger_sql() -> dict[str, str]:
    """name -> CREATE TRIGGER text of every trigger guarding the event tables."""
    triggers: dict[str, str] = {}
    for table in EVENT_TABLES:
        for verb in ("update", "delete"):
            triggers[f"{table}_no_{verb}"] = (
                f"CREATE TRIGGER {table}_no_{verb} BEFORE {verb.upper()} ON {table} "
                f"BEGIN SELECT RAISE(ABORT, '{table} are append-only'); END"
            )
        triggers[f"{table}_head"] = (
            f"CREATE TRIGGER {table}_head AFTER INSERT ON {table} BEGIN "
            f"INSERT INTO event_heads (tbl, chain, seq, hash) "
            f"VALUES ('{table}', NEW.chain, NEW.seq, NEW.hash) "
            "ON CONFLICT (tbl, chain) DO UPDATE SET "
            "hash = CASE WHEN excluded.seq > seq THEN excluded.hash ELSE hash END, "
            "seq = MAX(seq, excluded.seq); END"
        )
    return triggers


def migrate_event_heads(db: sqlite_utils.Database) -> None:
    """Table `event_heads`: each chain's last seq and hash, kept by an AFTER INSERT trigger
    on labels and reviews, so deleting the last (or every) event of a chain without also
    editing this record is caught by `verify`. Filled from the events already there."""
    db.execute(  # idempotent: a test winding the schema back runs it again
        "CREATE TABLE IF NOT EXISTS event_heads (tbl TEXT NOT NULL, chain TEXT NOT NULL, "
        "seq INTEGER NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (tbl, chain))"
    )
    db.execute("DELETE FROM event_heads")
    for table in EVENT_TABLES:
        db.execute(f"DROP TRIGGER IF EXISTS {table}_head")
        db.execute(
            f"INSERT INTO event_heads (tbl, chain, seq, hash) "
            f"SELECT '{table}', chain, MAX(seq), hash FROM {table} GROUP BY chain"
        )
        db.execute(event_trigger_sql()[f"{table}_head"])


# --- bulk inserts keep the derived tables set-wise (db.bulk) --------------------------
#
# One definition of what each total counts (a `Tally`) gives both its per-row triggers
# and the set-wise statements a bulk writer runs once per chunk (db.bulk). A bulk writer
# marks a table in `bulk_writing` inside its own transaction; the AFTER INSERT triggers
# of that table then stand aside (their WHEN), and the writer adds the chunk's rows to
# the FTS indexes and the totals with one INSERT ... SELECT per derived table. Updates
# and deletes always go through their triggers. migrate_run_totals' helpers above
# (_judgment_effect ...) stay as that migration ran; migrate_bulk_writes replaces the
# triggers they made with these, which count the same.


@dataclass(frozen=True)
class Tally:
    """What a totals table counts of one table's rows: per row of `source` (written
    `{r}` in the expressions) where `where` holds, the `counted` expressions added under
    the `key` expressions. With `of_generation` the row is a judgment, read with its
    generation `g` (run and template)."""

    table: str
    source: str
    key: tuple[tuple[str, str], ...]  # (column, expression)
    counted: tuple[tuple[str, str], ...]
    where: str = "1"
    of_generation: bool = False

    def row_sql(self, row: str, sign: int) -> str:
        """The trigger statements adding (sign 1) or taking away (-1) row `row`."""
        keys = [_of(e, row) for _, e in self.key]
        counted = [f"({sign}) * ({_of(e, row)})" for _, e in self.counted]
        of_run = f"FROM generations g WHERE g.id = {row}.generation_id AND"
        source = of_run if self.of_generation else "WHERE"
        select = f"SELECT {', '.join(keys + counted)} {source} {_of(self.where, row)}"
        statement = _upsert(self.table, self._key_columns, self._counted_columns, select)
        if sign < 0:  # a figure nothing counts any more is no figure
            statement += (
                f" DELETE FROM {self.table} WHERE {self.counted[0][0]} = 0 AND "
                f"({', '.join(self._key_columns)}) IN (SELECT {', '.join(keys)} {source} "
                f"{_of(self.where, row)});"
            )
        return statement

    def chunk_sql(self) -> str:
        """One statement adding every row of `source` with id > ? (a chunk just written),
        read by rowid (NOT INDEXED: an index ordered for the GROUP BY would scan the table)."""
        keys = [_of(e, "s") for _, e in self.key]
        counted = [f"SUM({_of(e, 's')})" for _, e in self.counted]
        join = " JOIN generations g ON g.id = s.generation_id" if self.of_generation else ""
        group = ", ".join(str(i) for i in range(1, len(keys) + 1))
        select = (
            f"SELECT {', '.join(keys + counted)} FROM {self.source} s NOT INDEXED{join} "
            f"WHERE s.id > ? AND {_of(self.where, 's')} GROUP BY {group}"
        )
        return _upsert(self.table, self._key_columns, self._counted_columns, select)

    @property
    def _key_columns(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.key)

    @property
    def _counted_columns(self) -> tuple[str, ...]:
        return tuple(c for c, _ in self.counted)


def _of(expression: str, row: str) -> str:
    return expression.replace("{r}", row)


_JUDGMENT_KEY = (("run_id", "g.run_id"), ("metric", "{r}.metric"))
TALLIES = (
    Tally(
        "generation_totals",
        "generations",
        (("run_id", "{r}.run_id"), ("template", "{r}.template")),
        (("generations", "1"), ("failed", "{r}.error IS NOT NULL")),
    ),
    Tally(
        "suite_work_totals",
        "cases",
        (("suite_id", "{r}.suite_id"), ("work_id", "{r}.work_id")),
        (("cases", "1"),),
    ),
    Tally(
        "judgment_totals",
        "judgments",
        (
            *_JUDGMENT_KEY,
            ("template", "g.template"),
            ("judge", "{r}.judge"),
            ("judge_hash", "COALESCE({r}.judge_hash, '')"),
        ),
        (
            ("judged", "1"),
            ("valued", "{r}.value IS NOT NULL"),
            ("value_sum", "COALESCE({r}.value, 0.0)"),
            ("verdicts", "{r}.flagged IS NOT NULL"),
            ("flagged", "COALESCE({r}.flagged, 0)"),
        ),
        of_generation=True,
    ),
    Tally(
        "value_counts",
        "judgments",
        (*_JUDGMENT_KEY, ("bin", value_bin_sql("{r}"))),
        (("n", "1"),),
        where="{r}.value IS NOT NULL",
        of_generation=True,
    ),
    Tally(
        "threshold_counts",
        "judgments",
        (*_JUDGMENT_KEY, ("threshold", _threshold_sql("{r}"))),
        (("n", "1"),),
        where=f"{_threshold_sql('{r}')} IS NOT NULL",
        of_generation=True,
    ),
)
# the columns whose update changes what a table's rows count
TALLIED_COLUMNS = {
    "generations": "run_id, template, error",
    "cases": "suite_id, work_id",
    "judgments": "generation_id, metric, value, flagged, evidence",
}


def _standing_aside(table: str) -> str:
    """An insert trigger's WHEN: no bulk writer has marked `table` (db.bulk)."""
    return f"WHEN NOT EXISTS (SELECT 1 FROM bulk_writing WHERE tbl = '{table}')"


def derived_trigger_sql() -> dict[str, str]:
    """name -> CREATE TRIGGER text of the triggers keeping the totals (every event)
    and the FTS indexes (search_trigger_sql), each insert trigger standing aside for a
    bulk writer."""
    triggers: dict[str, str] = {}
    for table, columns in TALLIED_COLUMNS.items():
        tallies = [t for t in TALLIES if t.source == table]
        effect = {sign: " ".join(t.row_sql(r, sign) for t in tallies) for r, sign in
                  (("NEW", 1), ("OLD", -1))}  # fmt: skip
        head = f"CREATE TRIGGER {table}_totals"
        triggers[f"{table}_totals_insert"] = (
            f"{head}_insert AFTER INSERT ON {table} {_standing_aside(table)} BEGIN {effect[1]} END"
        )
        triggers[f"{table}_totals_delete"] = (
            f"{head}_delete AFTER DELETE ON {table} BEGIN {effect[-1]} END"
        )
        triggers[f"{table}_totals_update"] = (
            f"{head}_update AFTER UPDATE OF {columns} ON {table} BEGIN {effect[-1]} {effect[1]} END"
        )
    return triggers | search_trigger_sql()


def chunk_sql(table: str, defer_search_index: bool = False) -> list[str]:
    """The statements a bulk writer runs after writing rows of `table` with id > ?:
    the rows' FTS entries (search_chunk_sql) and their totals, set-wise (one parameter
    each: the id)."""
    statements = search_chunk_sql(table, defer_search_index) if table in FTS_TABLES else []
    return statements + [t.chunk_sql() for t in TALLIES if t.source == table]


def migrate_bulk_writes(db: sqlite_utils.Database) -> None:
    """Table `bulk_writing` (the tables a bulk writer is inserting into, inside its own
    transaction: empty at every commit) and the derived tables' triggers rebuilt from
    `TALLIES` and `FTS_TABLES`, the insert triggers standing aside while a table is
    marked (db.bulk). Idempotent (a test winding the schema back runs it again). The
    search triggers read `search_indexed` (m023), made here when it is not there yet."""
    db.execute("CREATE TABLE IF NOT EXISTS bulk_writing (tbl TEXT PRIMARY KEY) WITHOUT ROWID")
    _search_progress_table(db)
    for name, sql in derived_trigger_sql().items():
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
        db.execute(sql)


def m018_queue_designs(db: sqlite_utils.Database) -> None:
    """Queues record their sampling design (db.queues): 'per-value' (every queue made
    before, CopyBench's draw), 'random' or 'stratified', the size asked for, and each
    queued generation's inclusion probability (NULL for per-value: not a design with
    known probabilities over the run). Idempotent (a test winding the schema back runs it
    again)."""
    for table, column, declared in (
        ("queues", "design", "TEXT NOT NULL DEFAULT 'per-value'"),
        ("queues", "size", "INTEGER"),
        ("queue_items", "inclusion_prob", "REAL"),
    ):
        if column not in db[table].columns_dict:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declared}")


def m019_run_digests(db: sqlite_utils.Database) -> None:
    """Tables `generation_digests`, `digest_buckets`, `run_digests` (db.run_digests:
    judgments, outputs, cases and run configuration under a digest `verify` recomputes),
    `digest_pending` (what a copyaudit write touched, emptied at its commit) and
    `digest_writing` (a copyaudit writer's marker, inside its own transaction only), the
    triggers that fill `digest_pending`, and every run's digest computed from the rows
    there. Idempotent (a test winding the schema back runs it again). A later migration
    that changes those rows calls db.run_digests.fill itself."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS generation_digests (generation_id INTEGER PRIMARY KEY, "
        "run_id INTEGER NOT NULL, digest TEXT NOT NULL, n_judgments INTEGER NOT NULL)"
    )
    db.execute(
        "CREATE INDEX IF NOT EXISTS generation_digests_run "
        "ON generation_digests (run_id, generation_id)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS digest_buckets (run_id INTEGER NOT NULL, "
        "bucket INTEGER NOT NULL, digest TEXT NOT NULL, n_generations INTEGER NOT NULL, "
        "n_judgments INTEGER NOT NULL, PRIMARY KEY (run_id, bucket)) WITHOUT ROWID"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS run_digests (run_id INTEGER PRIMARY KEY, "
        "digest TEXT NOT NULL, computed_at TEXT NOT NULL, n_generations INTEGER NOT NULL, "
        "n_judgments INTEGER NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS digest_pending (kind TEXT NOT NULL, id INTEGER NOT NULL, "
        "PRIMARY KEY (kind, id)) WITHOUT ROWID"
    )
    db.execute("CREATE TABLE IF NOT EXISTS digest_writing (writer INTEGER PRIMARY KEY)")
    for name, sql in digest_trigger_sql().items():
        db.execute(f"DROP TRIGGER IF EXISTS {name}")
        db.execute(sql)
    fill(db.conn)


def m020_event_signatures(db: sqlite_utils.Database) -> None:
    """Tables `trusted_keys` (ed25519 public keys a person added, each as one person's)
    and `event_signatures` (a label or review event's signature over its hash:
    db.signatures). Idempotent (a test winding the schema back runs it again)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS trusted_keys (fingerprint TEXT PRIMARY KEY, "
        "name TEXT NOT NULL, public_key TEXT NOT NULL, added_at TEXT NOT NULL)"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS event_signatures (tbl TEXT NOT NULL, uuid TEXT NOT NULL, "
        "fingerprint TEXT NOT NULL, signature TEXT NOT NULL, PRIMARY KEY (tbl, uuid)) "
        "WITHOUT ROWID"
    )


def m021_decop_digests(db: sqlite_utils.Database) -> None:
    """DE-COP scores and calibrations under the run digests (db.run_digests.decop_digest):
    the triggers that note a DE-COP run's writes, and every digest recomputed (a run
    without scores keeps its digest; a DE-COP run's changes, so an anchor made before
    this migration reports it as changed since)."""
    m019_run_digests(db)


def m022_library(db: sqlite_utils.Database) -> None:
    """Table `library_works`: the works tracing searches (db.library; copyaudit.tracing),
    each by the SHA-256 of its text, with its title, author, where it came from and
    whether it is protected or in the public domain. The texts live in a folder beside
    the database (copyaudit.tracing.library)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS library_works (sha256 TEXT PRIMARY KEY, title TEXT NOT "
        "NULL, author TEXT, source TEXT, status TEXT NOT NULL CHECK (status IN "
        "('protected', 'public-domain', 'unknown')), chars INTEGER NOT NULL, "
        "added_at TEXT NOT NULL)"
    )


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
    migrate_content_binding,  # labels and reviews bound to the content they were made on
    migrate_search_index,  # db.search: the list's search, FTS5 trigram
    migrate_run_totals,  # the dashboard's, open-run's and report's figures
    migrate_run_names,  # generation keys read one way: no '/' in run names
    migrate_event_heads,  # verify: deleting a chain's last events
    migrate_bulk_writes,  # db.bulk: bulk inserts keep FTS and totals per chunk
    m018_queue_designs,  # queue designs for people-level estimates (random, stratified)
    m019_run_digests,  # verify: judgments, outputs, cases and run configuration digested
    m020_event_signatures,  # events signed by their person's key (db.signatures)
    m021_decop_digests,  # verify: DE-COP scores and calibrations digested with their run
    m022_library,  # the works tracing searches (copyaudit.tracing)
    m023_search_backlog,  # an import may leave its rows to a later catch-up of the index
]
SCHEMA_VERSION = len(MIGRATIONS)


def require_current(conn: sqlite3.Connection, path: object) -> None:
    """UserError unless the schema is SCHEMA_VERSION, naming each migration still needed:
    a read-only open never migrates (the file stays as it was given)."""
    current = conn.execute("PRAGMA user_version").fetchone()[0]
    if current > SCHEMA_VERSION:
        raise UserError(
            f"{path}: database schema version {current} is newer than this copyaudit "
            f"({SCHEMA_VERSION}); upgrade copyaudit"
        )
    if current == 0:
        raise UserError(
            f"{path}: an empty database (no copyaudit schema yet): nothing to read; a command "
            "that writes (e.g. `copyaudit migrate`) initialises it"
        )
    if current < SCHEMA_VERSION:
        needed = ", ".join(
            f"{number} ({MIGRATIONS[number - 1].__name__})"
            for number in range(current + 1, SCHEMA_VERSION + 1)
        )
        raise UserError(
            f"{path}: schema version {current} needs migration {needed} to reach "
            f"{SCHEMA_VERSION}; a command that only reads leaves the file as it is — run "
            "`copyaudit migrate` on a copy you may change"
        )


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
