"""Append-only, hash-chained human events: labels and review decisions.

Each event hashes its content together with the previous event's hash in the
same chain (one chain per table and per database of origin), so any edit or
deletion made behind the tool's back breaks the chain at that event.
"""

from __future__ import annotations

import hashlib
import uuid as uuidlib
from dataclasses import dataclass
from typing import Any

from copyaudit.errors import UserError
from copyaudit.hashing import canonical_json
from copyaudit.items import LABEL_TARGETS
from db.clock import now
from db.connection import Store

LABEL_VALUES = ("yes", "no", "unsure")
LABEL_ACTIONS = ("label", "retract")
REVIEW_STATUSES = ("open", "cleared", "escalated", "needs_second_look")
REVIEW_STATUS_ALIASES = {"second_look": "needs_second_look"}  # accepted on input

# The columns covered by the hash, per table (besides prev_hash).
HASHED_FIELDS: dict[str, tuple[str, ...]] = {
    "labels": (
        "uuid",
        "chain",
        "seq",
        "generation_key",
        "created_at",
        "annotator",
        "target",
        "item_index",
        "action",
        "label",
        "note",
        "supersedes",
    ),
    "reviews": (
        "uuid",
        "chain",
        "seq",
        "generation_key",
        "created_at",
        "reviewer",
        "status",
        "note",
        "undoes",
    ),
}
# Hashed only when set, so that events written before the field existed keep their hash.
# `content_hash` (the generation's content the event was made on) is hashed whenever an
# event carries it, in either table, even before it is listed in HASHED_FIELDS.
OPTIONAL_HASHED_FIELDS = frozenset({"undoes", "content_hash"})


def event_hash(table: str, event: dict[str, Any], prev_hash: str) -> str:
    """SHA-256 of the previous hash and every hashed field of the event. generation_id,
    a row id that merge renumbers, is not hashed: `verify` checks that it names the
    generation of the hashed generation_key (db.audit.binding_problems)."""
    content = {
        name: event.get(name)
        for name in HASHED_FIELDS[table]
        if name not in OPTIONAL_HASHED_FIELDS or event.get(name) is not None
    }
    content.update(
        (name, event[name])
        for name in sorted(OPTIONAL_HASHED_FIELDS - set(content))
        if event.get(name) is not None
    )
    return hashlib.sha256((prev_hash + canonical_json(content)).encode()).hexdigest()


def origin(store: Store) -> str:
    return str(store.scalar("SELECT value FROM meta WHERE key = 'origin'"))


def generation_key(store: Store, generation_id: int) -> str:
    row = store.conn.execute(
        "SELECT r.name AS run, c.case_id, g.template FROM generations g "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk WHERE g.id = ?",
        (generation_id,),
    ).fetchone()
    if row is None:
        raise UserError(f"no generation with id {generation_id}")
    return f"{row['run']}/{row['case_id']}/{row['template']}"


def _append(store: Store, table: str, generation_id: int, fields: dict[str, Any]) -> str:
    with store.transaction():
        chain = origin(store)
        last = store.conn.execute(
            f"SELECT seq, hash FROM {table} WHERE chain = ? ORDER BY seq DESC LIMIT 1", (chain,)
        ).fetchone()
        seq, prev = (1, "") if last is None else (last["seq"] + 1, last["hash"])
        event = {
            "uuid": uuidlib.uuid4().hex,
            "chain": chain,
            "seq": seq,
            "generation_id": generation_id,
            "generation_key": generation_key(store, generation_id),
            "created_at": now(),
            **fields,
        }
        event["prev_hash"] = prev
        event["hash"] = event_hash(table, event, prev)
        columns = ", ".join(event)
        marks = ", ".join("?" for _ in event)
        store.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(event.values())
        )
        return str(event["uuid"])


def append_label(
    store: Store,
    *,
    generation_id: int,
    annotator: str,
    target: str,
    item_index: int,
    label: str,
    note: str | None = None,
) -> str:
    """Record one label event (committed before returning); returns its uuid."""
    if target not in LABEL_TARGETS:
        raise UserError(f"unknown label target '{target}' (one of {', '.join(LABEL_TARGETS)})")
    if label not in LABEL_VALUES:
        raise UserError(f"unknown label '{label}' (one of {', '.join(LABEL_VALUES)})")
    if not annotator.strip():
        raise UserError("an annotator name is required")
    return _append(
        store,
        "labels",
        generation_id,
        {
            "annotator": annotator,
            "target": target,
            "item_index": item_index,
            "action": "label",
            "label": label,
            "note": note,
            "supersedes": None,
        },
    )


def retract_label(store: Store, *, label_uuid: str, annotator: str) -> str:
    """Undo: a new event that retracts an earlier label event of the same annotator."""
    row = store.conn.execute(
        "SELECT * FROM labels WHERE uuid = ? AND action = 'label'", (label_uuid,)
    ).fetchone()
    if row is None:
        raise UserError(f"no label event {label_uuid}")
    return _append(
        store,
        "labels",
        int(row["generation_id"]),
        {
            "annotator": annotator,
            "target": row["target"],
            "item_index": row["item_index"],
            "action": "retract",
            "label": None,
            "note": None,
            "supersedes": label_uuid,
        },
    )


def append_review(
    store: Store,
    *,
    generation_id: int,
    reviewer: str,
    status: str,
    note: str | None = None,
    undoes: str | None = None,
) -> str:
    """Record one review decision on a generation (committed before returning).
    `undoes`: the uuid of the reviewer's own decision on this generation that this event
    withdraws (its status is then the one in force before that decision)."""
    status = REVIEW_STATUS_ALIASES.get(status, status)
    if status not in REVIEW_STATUSES:
        raise UserError(f"unknown status '{status}' (one of {', '.join(REVIEW_STATUSES)})")
    if not reviewer.strip():
        raise UserError("a reviewer name is required")
    if undoes is not None:
        target = store.conn.execute(
            "SELECT reviewer FROM reviews WHERE uuid = ? AND generation_id = ?",
            (undoes, generation_id),
        ).fetchone()
        if target is None or target["reviewer"] != reviewer:
            raise UserError(f"{reviewer} has no review decision {undoes} on this generation")
    fields = {"reviewer": reviewer, "status": status, "note": note, "undoes": undoes}
    return _append(store, "reviews", generation_id, fields)


@dataclass(frozen=True)
class ChainProblem:
    table: str
    uuid: str | None
    chain: str
    seq: int
    message: str

    def __str__(self) -> str:
        return (
            f"{self.table} event {self.uuid} (chain {self.chain[:8]}, seq {self.seq}): "
            f"{self.message}"
        )


def verify_chains(store: Store) -> list[ChainProblem]:
    """Check every chain of every event table; return the problems in chain order."""
    problems: list[ChainProblem] = []
    for table in HASHED_FIELDS:
        chains = [r[0] for r in store.conn.execute(f"SELECT DISTINCT chain FROM {table}")]
        for chain in chains:
            prev = ""
            expected_seq = 1
            for row in store.conn.execute(
                f"SELECT * FROM {table} WHERE chain = ? ORDER BY seq", (chain,)
            ):
                event = dict(row)
                if event["seq"] != expected_seq:
                    problems.append(
                        ChainProblem(
                            table,
                            None,
                            chain,
                            expected_seq,
                            f"missing (next present event is seq {event['seq']}): deleted?",
                        )
                    )
                    break
                if event["prev_hash"] != prev:
                    problems.append(
                        ChainProblem(
                            table, event["uuid"], chain, event["seq"], "previous-hash link broken"
                        )
                    )
                    break
                if event_hash(table, event, prev) != event["hash"]:
                    problems.append(
                        ChainProblem(
                            table,
                            event["uuid"],
                            chain,
                            event["seq"],
                            "content does not match its hash: altered",
                        )
                    )
                    break
                prev = event["hash"]
                expected_seq += 1
    return problems


def chain_heads(store: Store) -> dict[str, str]:
    """The last hash of each chain, 'table:chain' -> hash (for dossiers)."""
    heads: dict[str, str] = {}
    for table in HASHED_FIELDS:
        for row in store.conn.execute(
            f"SELECT chain, hash FROM {table} t WHERE seq = "
            f"(SELECT MAX(seq) FROM {table} u WHERE u.chain = t.chain)"
        ):
            heads[f"{table}:{row['chain']}"] = row["hash"]
    return heads


def integrity_check(store: Store) -> list[str]:
    """SQLite's own check of the database file: ['ok'], or what it found wrong."""
    return [row[0] for row in store.conn.execute("PRAGMA integrity_check")]


def event_counts(store: Store) -> dict[str, int]:
    """How many label and review events the database holds."""
    return {t: int(store.scalar(f"SELECT COUNT(*) FROM {t}")) for t in ("labels", "reviews")}
