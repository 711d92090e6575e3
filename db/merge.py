"""Merging another database's label and review events into this one.

Events are identified by uuid: one already here is skipped (after checking that
its content is the same), so merging twice adds nothing. Each new event must
name a generation (run/case_id/template) that exists here with the same output.

Chains. A copied database file shares its origin (and so its chain ids) with the
original, and both copies may have appended events after the copy. An event from
the other database keeps its chain id, seq and hash when it extends, here, the
chain of its predecessor exactly where the other database has it (the usual case:
the same chain continued on one side only). Where that slot is taken (both sides
appended after the copy: the chains diverged), the rest of that chain is
re-originated: it goes into a new chain whose id is derived from the old chain id
and the first diverging event's uuid (so repeated merges find it again), starting
at seq 1, with its hashes recomputed over the same content. Nothing already here
is ever rewritten, labels are never overwritten (a person's current label is still
their latest one), and `verify` holds afterwards.

Every new event is held to the app's own rules (db.event_rules: value, target,
action, item index within the generation's items here, time, a retract only of its
author's label); the first that breaks one is named (file, table, uuid, field).

The other database is audited first as `verify` audits one (db.audit.audit_events: its
guarding triggers, chains, head records and generation bindings; one of an older schema:
its chains); any problem refuses the merge, naming it. Everything happens in one
transaction: any error leaves this database unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from copyaudit.errors import UserError
from copyaudit.hashing import generation_content_hash
from db.audit import audit_events
from db.columns import GENERATION_KEY_SQL
from db.connection import Store
from db.event_rules import EventProblem, Lookup, check_event
from db.events import HASHED_FIELDS, event_hash, verify_chains
from db.labels import generation_ids_by_key
from db.migrations import SCHEMA_VERSION
from db.open_modes import read_only_uri
from db.schema_check import damaged_schema
from db.signatures import carry as carry_signature

EVENT_TABLES = ("labels", "reviews")
# Content that must match when an event (by uuid) is already here; chain, seq and
# hash may differ (a re-originated event).
PLACEMENT_FIELDS = ("chain", "seq")
MAX_NAMED = 5


@dataclass
class MergeResult:
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVENT_TABLES, 0))
    present: dict[str, int] = field(default_factory=lambda: dict.fromkeys(EVENT_TABLES, 0))
    rechained: list[tuple[str, str, str]] = field(default_factory=list)  # table, from, to


@dataclass
class _ReadOnly:
    """What the audit needs of a Store: a connection with sqlite3.Row rows."""

    conn: sqlite3.Connection


class _OtherConnection(sqlite3.Connection):
    """The other database's connection: a statement that fails for a table or column its
    schema lacks (damaged on disk into valid text, which quick_check passes, or not
    copyaudit's: db.schema_check) is a clear error naming the file, not an internal one."""

    path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.OperationalError as exc:
            if not damaged_schema(exc, self.path):
                raise
            raise UserError(
                f"{self.path}: cannot be read as a copyaudit database ({exc}: a damaged or "
                "foreign schema); nothing was merged"
            ) from None


def _utf8(path: Path, raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: a damaged database (a text value is not UTF-8)") from None


@contextmanager
def _open_read_only(path: Path) -> Iterator[sqlite3.Connection]:
    if not path.is_file():
        raise UserError(f"no database at {path}")
    # writes nothing beside it
    conn = sqlite3.connect(read_only_uri(path), uri=True, factory=_OtherConnection)
    conn.path = path
    conn.row_factory = sqlite3.Row
    conn.text_factory = functools.partial(_utf8, path)  # a damaged file: a clear error
    try:
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise UserError(f"cannot read {path}: not a SQLite database? ({exc})") from exc
        _refuse_damaged(conn, path)
        missing = {"meta", "generations", *EVENT_TABLES} - tables
        if missing:
            raise UserError(
                f"{path} is not a copyaudit database (no {', '.join(sorted(missing))} table)"
            )
        yield conn
    finally:
        conn.close()


def _refuse_damaged(conn: sqlite3.Connection, path: Path) -> None:
    """A page of the other file damaged on disk is refused before anything is read from
    it, naming the file (merge reads all of it anyway, so the check costs one pass)."""
    try:
        problem = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        problem = str(exc)
    if problem != "ok":
        raise UserError(f"{path}: a damaged database file ({problem}); nothing was merged")


def derived_chain(chain: str, first_uuid: str) -> str:
    """The id of the chain re-originated from `chain` at event `first_uuid`."""
    return hashlib.sha256(f"{chain}/{first_uuid}".encode()).hexdigest()[:32]


def _columns(table: str) -> tuple[str, ...]:
    """The columns of an event row this version knows (a newer database may have more)."""
    return (*HASHED_FIELDS[table], "generation_id", "prev_hash", "hash")


def _content(table: str, event: dict[str, Any]) -> dict[str, Any]:
    return {k: event[k] for k in HASHED_FIELDS[table] if k not in PLACEMENT_FIELDS}


def _check_generations(store: Store, other: sqlite3.Connection, keys: set[str]) -> dict[str, int]:
    """Map each key to this database's generation id; the same generation must exist."""
    ids = generation_ids_by_key(store, keys)
    missing = sorted(keys - ids.keys())
    if missing:
        named = ", ".join(missing[:MAX_NAMED])
        more = f" and {len(missing) - MAX_NAMED} more" if len(missing) > MAX_NAMED else ""
        raise UserError(
            f"the other database has events on generation(s) missing here: {named}{more}; "
            "import those runs first"
        )
    theirs = dict(
        other.execute(
            f"SELECT {GENERATION_KEY_SQL}, g.output FROM generations g "
            "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
            f"WHERE {GENERATION_KEY_SQL} IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(keys)),),
        ).fetchall()
    )
    ours = {
        row["id"]: row["output"]
        for row in store.conn.execute(
            "SELECT id, output FROM generations WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids.values())),),
        )
    }
    differing = sorted(k for k in keys if k in theirs and theirs[k] != ours[ids[k]])
    if differing:
        raise UserError(
            "generation(s) with the same key but a different output in the two databases: "
            f"{', '.join(differing[:MAX_NAMED])}; their labels cannot be merged"
        )
    return ids


def _head_seq(store: Store, table: str, chain: str) -> int:
    return int(store.scalar(f"SELECT COALESCE(MAX(seq), 0) FROM {table} WHERE chain = ?", (chain,)))


def _lookup(store: Store, other: sqlite3.Connection, table: str) -> Lookup:
    """An earlier event by uuid, here or in the other database (what a retract or an
    undo names may come in the same merge)."""

    def lookup(uuid: str) -> Mapping[str, Any] | None:
        for conn in (store.conn, other):
            row = conn.execute(f"SELECT * FROM {table} WHERE uuid = ?", (uuid,)).fetchone()
            if row is not None:
                return cast(Mapping[str, Any], row)
        return None

    return lookup


def _check(store: Store, table: str, event: dict[str, Any], lookup: Lookup, source: Path) -> None:
    """The app's own rules (db.event_rules); the first broken one stops the merge."""
    try:
        check_event(store, table, event, lookup)
    except EventProblem as problem:
        raise UserError(
            f"{source}: {table} event {event['uuid']}: field '{problem.field}': "
            f"{problem.message}; nothing was merged"
        ) from None


def _carry_binding(store: Store, other: sqlite3.Connection, event: dict[str, Any]) -> None:
    """Bind an event written before content hashes (db.content) as the other database
    binds it: its backfilled hash, or (an older database) its generation's content there."""
    tables = {r[0] for r in other.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    row = None
    if "backfilled_content_hashes" in tables:
        row = other.execute(
            "SELECT content_hash FROM backfilled_content_hashes WHERE uuid = ?", (event["uuid"],)
        ).fetchone()
    if row is None:
        output, case_hash = other.execute(
            f"SELECT g.output, c.content_hash FROM generations g JOIN runs r ON r.id = g.run_id "
            f"JOIN cases c ON c.id = g.case_pk WHERE {GENERATION_KEY_SQL} = ?",
            (event["generation_key"],),
        ).fetchone()
        bound = generation_content_hash(output, case_hash)
    else:
        bound = row[0]
    store.conn.execute(
        "INSERT OR IGNORE INTO backfilled_content_hashes (uuid, content_hash) VALUES (?, ?)",
        (event["uuid"], bound),
    )


def _merge_table(
    store: Store,
    other: sqlite3.Connection,
    table: str,
    ids: dict[str, int],
    result: MergeResult,
    source: Path,
) -> None:
    chains = [r[0] for r in other.execute(f"SELECT DISTINCT chain FROM {table} ORDER BY chain")]
    lookup = _lookup(store, other, table)
    for chain in chains:
        placed: tuple[str, int, str] | None = None  # where the predecessor lives here
        for row in other.execute(f"SELECT * FROM {table} WHERE chain = ? ORDER BY seq", (chain,)):
            present = row.keys()  # an older database lacks the newer optional fields
            event: dict[str, Any] = {
                name: row[name] if name in present else None for name in _columns(table)
            }
            mine = store.conn.execute(
                f"SELECT * FROM {table} WHERE uuid = ?", (event["uuid"],)
            ).fetchone()
            if mine is not None:
                if _content(table, dict(mine)) != _content(table, event):
                    raise UserError(
                        f"{table} event {event['uuid']} differs between the two databases; "
                        "run `copyaudit verify` on both"
                    )
                placed = (mine["chain"], mine["seq"], mine["hash"])
                result.present[table] += 1
                continue
            target_chain, seq, prev = chain, 1, ""
            if placed is not None:
                target_chain, seq, prev = placed[0], placed[1] + 1, placed[2]
            if _head_seq(store, table, target_chain) != seq - 1:  # slot taken: diverged
                new_chain = derived_chain(chain, event["uuid"])
                if _head_seq(store, table, new_chain):
                    raise UserError(f"{table} chain {new_chain} already exists; cannot re-origin")
                result.rechained.append((table, chain, new_chain))
                target_chain, seq, prev = new_chain, 1, ""
            event.update(
                chain=target_chain,
                seq=seq,
                prev_hash=prev,
                generation_id=ids[event["generation_key"]],
            )
            _check(store, table, event, lookup, source)
            event["hash"] = event_hash(table, event, prev)
            columns = ", ".join(event)
            marks = ", ".join("?" for _ in event)
            store.conn.execute(
                f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(event.values())
            )
            if event["content_hash"] is None:  # bound by the other database's migration
                _carry_binding(store, other, event)
            carry_signature(store, other, table, event["uuid"])
            placed = (target_chain, seq, event["hash"])
            result.added[table] += 1


def _audit(other: sqlite3.Connection) -> list[Any]:
    """verify's audit of the other database's events (db.audit.audit_events: guarding
    triggers, chains, head records, bindings). A database of an older schema, which has
    no head records or renames yet (merge reads it as it is), gets its chains checked."""
    store = cast(Store, _ReadOnly(other))
    if other.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
        return verify_chains(store)
    return audit_events(store)


def merge_database(store: Store, other_path: str | Path) -> MergeResult:
    """Bring every label and review event of the database at `other_path` into `store`."""
    other_path = Path(other_path)
    if other_path.resolve() == store.path.resolve():
        raise UserError("cannot merge a database into itself")
    with _open_read_only(other_path) as other:
        problems = _audit(other)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UserError(f"{other_path} fails verification: {problems[0]}{more}")
        result = MergeResult()
        with store.transaction(durable=True):
            known = {
                r[0] for t in EVENT_TABLES for r in store.conn.execute(f"SELECT uuid FROM {t}")
            }
            keys = {
                r[1]
                for t in EVENT_TABLES
                for r in other.execute(f"SELECT uuid, generation_key FROM {t}")
                if r[0] not in known
            }
            ids = _check_generations(store, other, keys)
            for table in EVENT_TABLES:
                _merge_table(store, other, table, ids, result, other_path)
    return result
