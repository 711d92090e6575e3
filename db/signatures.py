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


def _key_since(store: Store, person: str) -> str | None:
    """When `person`'s first trusted key was added (None: they have none)."""
    since = store.scalar("SELECT MIN(added_at) FROM trusted_keys WHERE name = ?", (person,))
    return None if since is None else str(since)


def adopt_signature(
    store: Store,
    table: str,
    uuid: str,
    signature: tuple[str, str] | None,
    digest: Callable[[str, dict[str, Any]], str],
) -> tuple[str, str] | None:
    """Keep the signature (fingerprint, hex) an imported event `uuid` carried, just
    appended in this transaction, if it passes `verify`'s rule here: (field, problem)
    when it does not (an untrusted key, another person's key, a signature not over the
    event as it lands here), or when an unsigned event is by a person with a trusted key
    here. `digest`: what a key signs of an event (db.events.signed_digest)."""
    row = store.conn.execute(f"SELECT * FROM {table} WHERE uuid = ?", (uuid,)).fetchone()
    person = row[PERSON[table]]
    if signature is None:
        signed = store.scalar(
            "SELECT COUNT(*) FROM event_signatures WHERE tbl = ? AND uuid = ?", (table, uuid)
        )
        since = _key_since(store, person)
        if not signed and since is not None and row["created_at"] >= since:
            return (
                "signature",
                f"unsigned, but {person!r} has a key trusted here since {since}: import "
                "the export that carries their signature, or sign with --sign-key",
            )
        return None
    fingerprint, value = signature
    key = store.conn.execute(
        "SELECT name, public_key FROM trusted_keys WHERE fingerprint = ?", (fingerprint,)
    ).fetchone()
    if key is None:
        return (
            "signed_by",
            f"key {fingerprint} is not trusted by this database: add the public key of "
            f"{person!r} first (copyaudit keys add {person} FILE.pub)",
        )
    if key["name"] != person:
        return ("signed_by", f"key {fingerprint} is {key['name']!r}'s, not {person!r}'s")
    if not signature_valid(key["public_key"], digest(table, dict(row)), value):
        return (
            "signature",
            "not valid over the event as imported: the record was altered after it was "
            "signed, or its generation differs in this database",
        )
    store.conn.execute(
        "INSERT INTO event_signatures (tbl, uuid, fingerprint, signature) VALUES (?, ?, ?, ?)",
        (table, uuid, fingerprint, value),
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


@dataclass
class SignatureAudit:
    findings: list[tuple[str, str]]
    signed: int
    unsigned: int


def audit_signatures(store: Store, digest: Callable[[str, dict[str, Any]], str]) -> SignatureAudit:
    """Every event's signature against the trusted keys (see the module's rule); `digest`:
    what a key signs of an event (db.events.signed_digest)."""
    keys = {r["fingerprint"]: dict(r) for r in store.conn.execute("SELECT * FROM trusted_keys")}
    since: dict[str, str] = {}
    for trusted in keys.values():
        since[trusted["name"]] = min(
            since.get(trusted["name"], trusted["added_at"]), trusted["added_at"]
        )
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
            key = keys.get(row["fingerprint"]) if row["fingerprint"] else None
            if row["signature"] is None:
                unsigned += 1
                if row["person"] in since and row["created_at"] >= since[row["person"]]:
                    found.append(
                        ("signature missing", f"{where}: unsigned, but they have a trusted key "
                         "(appended behind the tool?)")
                    )  # fmt: skip
            elif key is None:
                found.append(
                    ("signature untrusted", f"{where}: signed by key {row['fingerprint']}, "
                     "which this database does not trust (copyaudit keys add)")
                )  # fmt: skip
            elif key["name"] != row["person"]:
                found.append(
                    ("signature of another person", f"{where}: signed by {key['name']!r}'s key")
                )
            elif not signature_valid(key["public_key"], digest(table, dict(row)), row["signature"]):
                found.append(
                    ("signature forged", f"{where}: the signature is not over its content")
                )
            else:
                signed += 1
    orphans = store.conn.execute(
        "SELECT COUNT(*) FROM event_signatures s WHERE NOT EXISTS (SELECT 1 FROM labels l "
        "WHERE s.tbl = 'labels' AND l.uuid = s.uuid) AND NOT EXISTS (SELECT 1 FROM reviews r "
        "WHERE s.tbl = 'reviews' AND r.uuid = s.uuid)"
    ).fetchone()[0]
    if orphans:
        found.append(("signature of no event", f"{orphans} signature(s) name no event (deleted?)"))
    return SignatureAudit(found, signed, unsigned)
