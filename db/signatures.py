"""The keys a database trusts, the signatures of its events, and `verify`'s check of them
(copyaudit.event_signing: what a signature is and where the private key lives).

A key is trusted as one person's (`copyaudit keys add NAME PUBKEYFILE`, from then on:
`added_at`). An event by that person made since (created_at >= added_at) must carry a
valid signature over its hash by one of their trusted keys; every other event is
reported as unsigned, and a signature by a key the database does not trust, or not
over the event's hash, is a finding. The limit, stated: the registry is in the
database, so an attacker who adds a key of their own under a person's name (or who
backdates a forged event before the person's key was added) is not caught here.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from copyaudit.errors import UserError
from db.clock import now
from db.connection import Store


class Signer(Protocol):
    """A loaded private key (copyaudit.event_signing.Signer): db imports no key code."""

    @property
    def path(self) -> Path: ...

    @property
    def fingerprint(self) -> str: ...

    def sign(self, digest: str) -> str: ...


# What gives the key this process signs with (None: none named), set by its entry point
# (copyaudit.cli.main: copyaudit.sign_key.signer): db imports no key-choosing code.
_source: list[Callable[[], Signer | None]] = []


def use_signer(source: Callable[[], Signer | None] | None) -> None:
    """Sign the events this process appends with the key `source()` gives."""
    _source[:] = [] if source is None else [source]


PERSON = {"labels": "annotator", "reviews": "reviewer"}  # who made an event, per table


def add_key(store: Store, name: str, fingerprint: str, pem: str) -> None:
    """Trust the public key `pem` as `name`'s from now on (one already trusted is refused)."""
    if not name.strip():
        raise UserError("a key's NAME must not be empty")
    with store.transaction(durable=True):
        known = store.scalar("SELECT name FROM trusted_keys WHERE fingerprint = ?", (fingerprint,))
        if known is not None:
            raise UserError(f"key {fingerprint} is already trusted, as {known!r}'s")
        store.conn.execute(
            "INSERT INTO trusted_keys (fingerprint, name, public_key, added_at) "
            "VALUES (?, ?, ?, ?)",
            (fingerprint, name, pem, now()),
        )


def trusted_keys(store: Store) -> list[dict[str, Any]]:
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT fingerprint, name, added_at, (SELECT COUNT(*) FROM event_signatures s "
            "WHERE s.fingerprint = k.fingerprint) AS events FROM trusted_keys k "
            "ORDER BY name, added_at"
        )
    ]


def sign_event(store: Store, table: str, event: dict[str, Any], digest: str) -> None:
    """Sign the event being appended (inside its transaction) with the current key, if
    one is named: its `digest` (db.events.signed_digest). A key trusted as someone
    else's is refused."""
    signer = _source[0]() if _source else None
    if signer is None:
        return
    registered = store.scalar(
        "SELECT name FROM trusted_keys WHERE fingerprint = ?", (signer.fingerprint,)
    )
    name = event[PERSON[table]]
    if registered is not None and registered != name:
        raise UserError(
            f"the signing key {signer.path} is registered to {registered!r}, not {name!r}"
        )
    store.conn.execute(
        "INSERT INTO event_signatures (tbl, uuid, fingerprint, signature) VALUES (?, ?, ?, ?)",
        (table, event["uuid"], signer.fingerprint, signer.sign(digest)),
    )


def carry(store: Store, other: sqlite3.Connection, table: str, uuid: str) -> None:
    """Bring the signature of event `uuid` from the other database (connection `other`,
    merge), and its key, trusted there since its own added_at, if this one lacks it."""
    tables = {r[0] for r in other.execute("SELECT name FROM sqlite_master")}
    if "event_signatures" not in tables:
        return
    row = other.execute(
        "SELECT s.fingerprint, s.signature, k.name, k.public_key, k.added_at "
        "FROM event_signatures s LEFT JOIN trusted_keys k ON k.fingerprint = s.fingerprint "
        "WHERE s.tbl = ? AND s.uuid = ?",
        (table, uuid),
    ).fetchone()
    if row is None:
        return
    store.conn.execute(
        "INSERT OR IGNORE INTO event_signatures (tbl, uuid, fingerprint, signature) "
        "VALUES (?, ?, ?, ?)",
        (table, uuid, row[0], row[1]),
    )
    if row[2] is not None:
        store.conn.execute(
            "INSERT OR IGNORE INTO trusted_keys (fingerprint, name, public_key, added_at) "
            "VALUES (?, ?, ?, ?)",
            (row[0], row[2], row[3], row[4]),
        )


def _trusted(store: Store) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The trusted keys by fingerprint, and when each person's first key was added."""
    keys = {r["fingerprint"]: dict(r) for r in store.conn.execute("SELECT * FROM trusted_keys")}
    since: dict[str, str] = {}
    for key in keys.values():
        since[key["name"]] = min(since.get(key["name"], key["added_at"]), key["added_at"])
    return keys, since


def _finding(
    keys: dict[str, dict[str, Any]],
    since: dict[str, str],
    person: str,
    created_at: str,
    signature: tuple[str, str] | None,
    signed: Callable[[], str],
) -> str | None:
    """The module's rule for one event (`signature`: fingerprint and hex, or None;
    `signed`: what its key signs): the kind of finding, or None when it holds."""
    if signature is None:
        needed = person in since and created_at >= since[person]
        return "signature missing" if needed else None
    key = keys.get(signature[0])
    if key is None:
        return "signature untrusted"
    if key["name"] != person:
        return "signature of another person"
    if not signature_valid(key["public_key"], signed(), signature[1]):
        return "signature forged"
    return None


def adopt_signature(
    store: Store,
    table: str,
    uuid: str,
    signature: tuple[str, str] | None,
    digest: Callable[[str, dict[str, Any]], str],
) -> tuple[str, str] | None:
    """Keep the signature (fingerprint, hex) an imported event `uuid` carried, just
    appended in this transaction, if it passes `verify`'s rule here (_finding): (field,
    problem) when it does not (an untrusted key, another person's key, a signature not
    over the event as it lands here), or when an unsigned event is by a person with a
    trusted key here. `digest`: what a key signs of an event (db.events.signed_digest)."""
    event = dict(store.conn.execute(f"SELECT * FROM {table} WHERE uuid = ?", (uuid,)).fetchone())
    person = event[PERSON[table]]
    keys, since = _trusted(store)
    if signature is None and store.scalar(
        "SELECT COUNT(*) FROM event_signatures WHERE tbl = ? AND uuid = ?", (table, uuid)
    ):
        return None  # signed here as it was appended (the key named now is theirs)
    kind = _finding(
        keys, since, person, event["created_at"], signature, lambda: digest(table, event)
    )
    fingerprint = signature[0] if signature else ""
    problems = {
        "signature missing": (
            "signature",
            f"unsigned, but {person!r} has a key trusted here since {since.get(person)}: "
            "import the export that carries their signature, or sign with --sign-key",
        ),
        "signature untrusted": (
            "signed_by",
            f"key {fingerprint} is not trusted by this database: add the public key of "
            f"{person!r} first (copyaudit keys add {person} FILE.pub)",
        ),
        "signature of another person": (
            "signed_by",
            f"key {fingerprint} is {keys.get(fingerprint, {}).get('name')!r}'s, not {person!r}'s",
        ),
        "signature forged": (
            "signature",
            "not valid over the event as imported: the record was altered after it was "
            "signed, or its generation differs in this database",
        ),
    }
    if kind is not None:
        return problems[kind]
    if signature is not None:
        store.conn.execute(
            "INSERT INTO event_signatures (tbl, uuid, fingerprint, signature) VALUES (?, ?, ?, ?)",
            (table, uuid, *signature),
        )
    return None


def signed_count(store: Store) -> int:
    """How many events carry a signature (all valid and trusted when `verify` passes)."""
    return int(
        store.scalar(
            "SELECT COUNT(*) FROM event_signatures s WHERE EXISTS (SELECT 1 FROM labels l "
            "WHERE s.tbl = 'labels' AND l.uuid = s.uuid) OR EXISTS (SELECT 1 FROM reviews r "
            "WHERE s.tbl = 'reviews' AND r.uuid = s.uuid)"
        )
    )


def signature_valid(pem: str, digest: str, signature: str) -> bool:
    """Whether `signature` (hex) is the ed25519 key `pem`'s over `digest`."""
    from cryptography.exceptions import InvalidSignature  # deferred: only verify needs it
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    try:
        key = load_pem_public_key(pem.encode())
        if not isinstance(key, Ed25519PublicKey):
            return False
        key.verify(bytes.fromhex(signature), digest.encode())
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


# what `verify` says of each kind of finding (row: the event and its signature)
_AUDIT_SAYS: dict[str, Callable[[Any, dict[str, dict[str, Any]]], str]] = {
    "signature missing": lambda row, keys: (
        "unsigned, but they have a trusted key (appended behind the tool?)"
    ),
    "signature untrusted": lambda row, keys: (
        f"signed by key {row['fingerprint']}, which this database does not trust "
        "(copyaudit keys add)"
    ),
    "signature of another person": lambda row, keys: (
        f"signed by {keys[row['fingerprint']]['name']!r}'s key"
    ),
    "signature forged": lambda row, keys: "the signature is not over its content",
}


@dataclass
class SignatureAudit:
    findings: list[tuple[str, str]]
    signed: int
    unsigned: int


def audit_signatures(store: Store, digest: Callable[[str, dict[str, Any]], str]) -> SignatureAudit:
    """Every event's signature against the trusted keys (see the module's rule); `digest`:
    what a key signs of an event (db.events.signed_digest)."""
    keys, since = _trusted(store)
    found: list[tuple[str, str]] = []
    signed = unsigned = 0
    for table, person in PERSON.items():
        rows = store.conn.execute(
            f"SELECT e.*, e.{person} AS person, s.fingerprint, "
            f"s.signature FROM {table} e LEFT JOIN event_signatures s "
            f"ON s.tbl = '{table}' AND s.uuid = e.uuid ORDER BY e.chain, e.seq"
        )
        for row in rows:
            where = f"{table} event {row['uuid']} by {row['person']!r}"
            carried = None if row["signature"] is None else (row["fingerprint"], row["signature"])
            event = dict(row)
            kind = _finding(
                keys, since, row["person"], row["created_at"], carried,
                functools.partial(digest, table, event),
            )  # fmt: skip
            unsigned += carried is None
            signed += carried is not None and kind is None
            if kind is not None:
                found.append((kind, f"{where}: {_AUDIT_SAYS[kind](row, keys)}"))
    orphans = store.conn.execute(
        "SELECT COUNT(*) FROM event_signatures s WHERE NOT EXISTS (SELECT 1 FROM labels l "
        "WHERE s.tbl = 'labels' AND l.uuid = s.uuid) AND NOT EXISTS (SELECT 1 FROM reviews r "
        "WHERE s.tbl = 'reviews' AND r.uuid = s.uuid)"
    ).fetchone()[0]
    if orphans:
        found.append(("signature of no event", f"{orphans} signature(s) name no event (deleted?)"))
    return SignatureAudit(found, signed, unsigned)
