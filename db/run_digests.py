"""Per-run digests: every figure's inputs (judgments, generations, cases, run
configuration, DE-COP scores and calibration) under a hash that `verify` recomputes.

A generation's digest covers its case (case_id and payload), template, prompt, output,
tokens, seconds, source, error and every judgment of it (judge, judge_hash, metric,
value, flagged, evidence). A run's digest covers its configuration (name, suite,
backend, model, revision, templates, decoding, mitigation, config, config_hash,
code_version), a DE-COP run's scores and calibration (decop_digest) and its buckets'
digests (a bucket: the sorted digests of the run's
generations with ids in one range of 2**BUCKET_BITS), a two-level Merkle tree. Stored
in `generation_digests`, `digest_buckets` and `run_digests`
(db.migrations.m019_run_digests); anchors carry the run digests (db.anchors).

Kept up to date by every copyaudit write, at the commit of its transaction
(db.connection.Store.transaction): plain-SQL triggers note which generations and runs
a write touched in `digest_pending` while a copyaudit writer's marker row
(`digest_writing`) exists, and `refresh` recomputes only those (and the digests of
their runs, from the stored generation digests) before the commit. A write made
behind the tool (sqlite3 directly, no marker) is noted nowhere: its rows no longer
match their stored digests, which `verify` reports. Triggers that call no custom SQL
function, so every plain sqlite3 write still works.

A leaf module (no db import): db.migrations fills the tables with it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

# Run columns the run digest covers (not status, error, timestamps: they move no figure).
RUN_FIELDS = (
    "name",
    "backend",
    "model",
    "model_revision",
    "templates",
    "decoding",
    "mitigation",
    "config",
    "config_hash",
    "code_version",
)
GENERATION_FIELDS = ("template", "prompt", "output", "tokens", "seconds", "source", "error")
# A DE-COP run's figures come from its scores, not generations: each passage's row (and
# the case it scores) and the run's label calibration, digested with the run itself.
DECOP_SCORE_FIELDS = ("probs", "answers", "baselines", "errors")
DECOP_CALIBRATION_FIELDS = ("works", "delta", "n_prompts")
JUDGMENT_FIELDS = ("judge", "judge_hash", "metric", "value", "flagged", "evidence")
CHUNK = 500  # ids per query
# A run's generations are digested in buckets of 2**BUCKET_BITS consecutive ids, and the
# run over its buckets' digests: a write of a batch redigests its bucket or two, not the
# whole run (a judge's batches of 32 would make a whole run's redigest quadratic).
BUCKET_BITS = 8


@dataclass(frozen=True)
class GenerationDigest:
    generation_id: int
    run_id: int
    key: str  # run/case_id/template, for messages
    digest: str
    judgments: int


@dataclass(frozen=True)
class Bucket:
    number: int  # generation id >> BUCKET_BITS
    digest: str
    generations: int
    judgments: int


@dataclass(frozen=True)
class RunDigest:
    run_id: int
    name: str
    digest: str
    generations: int
    judgments: int


def _sha(parts: object) -> str:
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _named(conn: sqlite3.Connection) -> sqlite3.Cursor:
    """A cursor giving rows by column name whatever the connection's row factory (a
    plain sqlite3 connection: a migration, an attacker's tool in the tests)."""
    cursor = conn.cursor()
    cursor.row_factory = sqlite3.Row
    return cursor


def _generation_rows(conn: sqlite3.Connection, where: str, params: tuple) -> Iterator[sqlite3.Row]:
    columns = ", ".join(f"g.{c}" for c in GENERATION_FIELDS)
    return _named(conn).execute(
        f"SELECT g.id, g.run_id, r.name AS run, c.case_id, c.payload, {columns} "
        "FROM generations g JOIN cases c ON c.id = g.case_pk "
        f"LEFT JOIN runs r ON r.id = g.run_id WHERE {where} ORDER BY g.id",
        params,
    )


def _judgments(conn: sqlite3.Connection, where: str, params: tuple) -> dict[int, list[list]]:
    out: dict[int, list[list]] = {}
    columns = ", ".join(JUDGMENT_FIELDS)
    for row in conn.execute(
        f"SELECT generation_id, {columns} FROM judgments WHERE {where} "
        "ORDER BY generation_id, judge, metric",
        params,
    ):
        out.setdefault(row[0], []).append(list(row[1:]))
    return out


def _digests(
    conn: sqlite3.Connection, generation_where: str, judgment_where: str, params: tuple
) -> Iterator[GenerationDigest]:
    judged = _judgments(conn, judgment_where, params)
    payload_hashes: dict[str, str] = {}
    for row in _generation_rows(conn, generation_where, params):
        payload = row["payload"]
        if payload not in payload_hashes:
            payload_hashes[payload] = hashlib.sha256(payload.encode()).hexdigest()
        judgments = judged.get(row["id"], [])
        parts = [
            row["case_id"],
            payload_hashes[payload],
            [row[c] for c in GENERATION_FIELDS],
            judgments,
        ]
        key = f"{row['run']}/{row['case_id']}/{row['template']}"
        yield GenerationDigest(row["id"], row["run_id"], key, _sha(parts), len(judgments))


def generation_digests(conn: sqlite3.Connection, ids: Iterable[int]) -> list[GenerationDigest]:
    """The digests of the generations `ids` as their rows are now (absent ones left out)."""
    ordered = sorted(set(ids))
    found: list[GenerationDigest] = []
    for start in range(0, len(ordered), CHUNK):
        chunk = json.dumps(ordered[start : start + CHUNK])
        inside = "IN (SELECT value FROM json_each(?))"
        found += _digests(conn, f"g.id {inside}", f"generation_id {inside}", (chunk,))
    return found


def run_generation_digests(conn: sqlite3.Connection, run_id: int) -> list[GenerationDigest]:
    """The digests of every generation of run `run_id` as its rows are now."""
    return list(
        _digests(
            conn,
            "g.run_id = ?",
            "generation_id IN (SELECT id FROM generations WHERE run_id = ?)",
            (run_id,),
        )
    )


def bucket_of(generation_id: int) -> int:
    return generation_id >> BUCKET_BITS


def buckets(generations: Iterable[GenerationDigest]) -> list[Bucket]:
    """The generations' digests grouped in their buckets, each bucket digested."""
    grouped: dict[int, list[GenerationDigest]] = {}
    for d in generations:
        grouped.setdefault(bucket_of(d.generation_id), []).append(d)
    return [
        Bucket(
            number,
            _sha(sorted(d.digest for d in members)),
            len(members),
            sum(d.judgments for d in members),
        )
        for number, members in sorted(grouped.items())
    ]


def run_digest(conn: sqlite3.Connection, run_id: int, parts: list[Bucket]) -> RunDigest | None:
    """Run `run_id`'s digest over its configuration and its buckets' digests; None when
    there is no such run."""
    row = (
        _named(conn)
        .execute(
            f"SELECT s.name AS suite, {', '.join(f'r.{c}' for c in RUN_FIELDS)} "
            "FROM runs r LEFT JOIN suites s ON s.id = r.suite_id WHERE r.id = ?",
            (run_id,),
        )
        .fetchone()
    )
    if row is None:
        return None
    config = [row["suite"], *(row[c] for c in RUN_FIELDS)]
    ordered = sorted(parts, key=lambda b: b.number)
    covered: list[object] = [config, [[b.number, b.digest] for b in ordered]]
    decop = decop_digest(conn, run_id)
    if decop is not None:  # only then: the digests of runs without scores stay as they were
        covered.append(decop)
    return RunDigest(
        run_id,
        row["name"],
        _sha(covered),
        sum(b.generations for b in ordered),
        sum(b.judgments for b in ordered),
    )


def decop_digest(conn: sqlite3.Connection, run_id: int) -> str | None:
    """The digest of run `run_id`'s DE-COP scores (each passage's case id and payload and
    its row) and label calibration; None when it has neither."""
    score_columns = ", ".join(f"d.{c}" for c in DECOP_SCORE_FIELDS)
    digest = hashlib.sha256()
    rows = 0
    for row in conn.execute(
        f"SELECT c.case_id, c.payload, {score_columns} FROM decop_scores d "
        "JOIN cases c ON c.id = d.case_pk WHERE d.run_id = ? ORDER BY c.case_id",
        (run_id,),
    ):
        digest.update(_sha(list(row)).encode())
        rows += 1
    calibration = conn.execute(
        f"SELECT {', '.join(DECOP_CALIBRATION_FIELDS)} FROM decop_calibrations WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    if not rows and calibration is None:
        return None
    return _sha([rows, digest.hexdigest(), None if calibration is None else list(calibration)])


def _store_bucket(conn: sqlite3.Connection, run_id: int, number: int) -> None:
    low = number << BUCKET_BITS
    members = [
        GenerationDigest(int(r[0]), run_id, "", r[1], int(r[2]))
        for r in conn.execute(
            "SELECT generation_id, digest, n_judgments FROM generation_digests "
            "WHERE run_id = ? AND generation_id BETWEEN ? AND ?",
            (run_id, low, low + (1 << BUCKET_BITS) - 1),
        )
    ]
    conn.execute("DELETE FROM digest_buckets WHERE run_id = ? AND bucket = ?", (run_id, number))
    for bucket in buckets(members):
        conn.execute(
            "INSERT INTO digest_buckets (run_id, bucket, digest, n_generations, n_judgments) "
            "VALUES (?, ?, ?, ?, ?)",
            (run_id, bucket.number, bucket.digest, bucket.generations, bucket.judgments),
        )


def _store_run(conn: sqlite3.Connection, run_id: int, stamp: str) -> None:
    stored = [
        Bucket(int(r[0]), r[1], int(r[2]), int(r[3]))
        for r in conn.execute(
            "SELECT bucket, digest, n_generations, n_judgments FROM digest_buckets "
            "WHERE run_id = ?",
            (run_id,),
        )
    ]
    digest = run_digest(conn, run_id, stored)
    if digest is None:
        for table in ("run_digests", "digest_buckets", "generation_digests"):
            conn.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
        return
    conn.execute(
        "INSERT OR REPLACE INTO run_digests (run_id, digest, computed_at, n_generations, "
        "n_judgments) VALUES (?, ?, ?, ?, ?)",
        (run_id, digest.digest, stamp, digest.generations, digest.judgments),
    )


def _store_generations(conn: sqlite3.Connection, ids: list[int]) -> set[tuple[int, int]]:
    """Recompute and store the digests of generations `ids`; the (run, bucket) they were
    and are in."""
    touched: set[tuple[int, int]] = set()
    for start in range(0, len(ids), CHUNK):
        chunk = json.dumps(ids[start : start + CHUNK])
        touched.update(
            (int(r[0]), bucket_of(int(r[1])))
            for r in conn.execute(
                "SELECT run_id, generation_id FROM generation_digests "
                "WHERE generation_id IN (SELECT value FROM json_each(?))",
                (chunk,),
            )
        )
        conn.execute(
            "DELETE FROM generation_digests "
            "WHERE generation_id IN (SELECT value FROM json_each(?))",
            (chunk,),
        )
    fresh = generation_digests(conn, ids)
    conn.executemany(
        "INSERT INTO generation_digests (generation_id, run_id, digest, n_judgments) "
        "VALUES (?, ?, ?, ?)",
        [(d.generation_id, d.run_id, d.digest, d.judgments) for d in fresh],
    )
    return touched | {(d.run_id, bucket_of(d.generation_id)) for d in fresh}


def refresh(conn: sqlite3.Connection) -> int:
    """Recompute the digests a write noted in `digest_pending`, then empty it (inside the
    writer's transaction, before its commit): the generations', their buckets', their
    runs'. Returns how many runs were redigested."""
    pending = conn.execute("SELECT kind, id FROM digest_pending").fetchall()
    if not pending:
        return 0
    touched = _store_generations(conn, sorted(i for kind, i in pending if kind == "generation"))
    for run_id, number in sorted(touched):
        _store_bucket(conn, run_id, number)
    runs = {i for kind, i in pending if kind == "run"} | {run for run, _ in touched}
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    for run_id in sorted(runs):
        _store_run(conn, run_id, stamp)
    conn.execute("DELETE FROM digest_pending")
    return len(runs)


def fill(conn: sqlite3.Connection) -> None:
    """Digest every run from scratch (the migration that adds the tables)."""
    for table in ("generation_digests", "digest_buckets", "run_digests", "digest_pending"):
        conn.execute(f"DELETE FROM {table}")
    ids = [r[0] for r in conn.execute("SELECT id FROM generations ORDER BY id")]
    for run_id, number in sorted(_store_generations(conn, ids)):
        _store_bucket(conn, run_id, number)
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    for (run_id,) in conn.execute("SELECT id FROM runs ORDER BY id").fetchall():
        _store_run(conn, run_id, stamp)


# --- the triggers: which rows a copyaudit write touched ------------------------------

WRITER = "EXISTS (SELECT 1 FROM digest_writing)"


def _note(kind: str, expression: str) -> str:
    # NOT EXISTS, not INSERT OR IGNORE: an outer statement's conflict clause (an upsert's
    # ON CONFLICT) overrides a trigger's OR IGNORE, and the duplicate would then abort it
    return (
        f"INSERT INTO digest_pending (kind, id) SELECT '{kind}', {expression} WHERE NOT EXISTS "
        f"(SELECT 1 FROM digest_pending WHERE kind = '{kind}' AND id = {expression});"
    )


def _note_all(kind: str, select: str) -> str:
    return (
        f"INSERT INTO digest_pending (kind, id) SELECT '{kind}', x.id FROM ({select}) x "
        f"WHERE NOT EXISTS (SELECT 1 FROM digest_pending p WHERE p.kind = '{kind}' "
        "AND p.id = x.id);"
    )


def digest_trigger_sql() -> dict[str, str]:
    """name -> CREATE TRIGGER text of the triggers noting what a copyaudit write touched."""
    bodies = {
        ("generations", "insert"): _note("generation", "NEW.id"),
        ("generations", "update"): _note("generation", "NEW.id") + _note("generation", "OLD.id"),
        ("generations", "delete"): _note("generation", "OLD.id"),
        ("judgments", "insert"): _note("generation", "NEW.generation_id"),
        ("judgments", "update"): _note("generation", "NEW.generation_id")
        + _note("generation", "OLD.generation_id"),
        ("judgments", "delete"): _note("generation", "OLD.generation_id"),
        ("runs", "insert"): _note("run", "NEW.id"),
        ("runs", "update"): _note("run", "NEW.id") + _note("run", "OLD.id"),
        ("runs", "delete"): _note("run", "OLD.id"),
        ("cases", "update"): _note_all(
            "generation", "SELECT id FROM generations WHERE case_pk IN (NEW.id, OLD.id)"
        )
        + _note_all(
            "run",
            "SELECT DISTINCT run_id AS id FROM decop_scores WHERE case_pk IN (NEW.id, OLD.id)",
        ),
        ("suites", "update"): _note_all(
            "run", "SELECT id FROM runs WHERE suite_id IN (NEW.id, OLD.id)"
        ),
        ("decop_scores", "insert"): _note("run", "NEW.run_id"),
        ("decop_scores", "update"): _note("run", "NEW.run_id") + _note("run", "OLD.run_id"),
        ("decop_scores", "delete"): _note("run", "OLD.run_id"),
        ("decop_calibrations", "insert"): _note("run", "NEW.run_id"),
        ("decop_calibrations", "update"): _note("run", "NEW.run_id") + _note("run", "OLD.run_id"),
        ("decop_calibrations", "delete"): _note("run", "OLD.run_id"),
    }
    return {
        f"{table}_digest_{verb}": (
            f"CREATE TRIGGER {table}_digest_{verb} AFTER {verb.upper()} ON {table} "
            f"WHEN {WRITER} BEGIN {body} END"
        )
        for (table, verb), body in bodies.items()
    }
