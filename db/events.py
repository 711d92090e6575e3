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
from db.clock import now
from db.connection import Store
from db.content import content_now
from db.event_rules import LABEL_ACTIONS as LABEL_ACTIONS
from db.event_rules import LABEL_VALUES as LABEL_VALUES
from db.event_rules import REVIEW_STATUS_ALIASES as REVIEW_STATUS_ALIASES
from db.event_rules import REVIEW_STATUSES as REVIEW_STATUSES
from db.event_rules import check_event
from db.signatures import sign_event

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
        "content_hash",
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
        "content_hash",
    ),
}
# Hashed only when set, so that events written before the field existed keep their hash.
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


def signed_digest(table: str, event: dict[str, Any]) -> str:
    """What a person's key signs (db.signatures): the event's hash without its place in a
    chain (chain, seq, previous hash), so that a signature survives `merge` re-chaining
    the event; the chain's own hashes order the events."""
    return event_hash(table, {k: v for k, v in event.items() if k not in ("chain", "seq")}, "")


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


def _append(
    store: Store,
    table: str,
    generation_id: int,
    fields: dict[str, Any],
    *,
    uuid: str | None = None,
    created_at: str | None = None,
) -> str:
    """Check the event against db.event_rules and append it to this database's chain.
    `uuid` and `created_at`: an imported event's own (default: new, now)."""
    with store.transaction(durable=True):
        chain = origin(store)
        last = store.conn.execute(
            f"SELECT seq, hash FROM {table} WHERE chain = ? ORDER BY seq DESC LIMIT 1", (chain,)
        ).fetchone()
        seq, prev = (1, "") if last is None else (last["seq"] + 1, last["hash"])
        event = {
            "uuid": uuid or uuidlib.uuid4().hex,
            "chain": chain,
            "seq": seq,
            "generation_id": generation_id,
            "generation_key": generation_key(store, generation_id),
            "created_at": created_at or now(),
            "content_hash": content_now(store.conn, generation_id),
            **fields,
        }
        check_event(store, table, event)
        event["prev_hash"] = prev
        event["hash"] = event_hash(table, event, prev)
        columns = ", ".join(event)
        marks = ", ".join("?" for _ in event)
        store.conn.execute(
            f"INSERT INTO {table} ({columns}) VALUES ({marks})", tuple(event.values())
        )
        if uuid is None:  # made here, by the person now at the keyboard (not imported)
            sign_event(store, table, event, signed_digest(table, event))
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
    uuid: str | None = None,
    created_at: str | None = None,
) -> str:
    """Record one label event (committed before returning); returns its uuid.
    `uuid`, `created_at`: an imported event's own."""
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
        uuid=uuid,
        created_at=created_at,
    )


def retract_label(store: Store, *, label_uuid: str, annotator: str) -> str:
    """Undo: a new event that retracts an earlier label event of the same annotator
    (anyone else's is refused by db.event_rules)."""
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
