"""The careful attacker's append (tests/test_event_signatures.py, tests/test_tamper.py):
an event written with sqlite3 behind the tool, its hash chained and recomputed."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from db.events import event_hash, signed_digest


def append_behind(
    path: Path, table: str, person: str, sign: Callable[[str], tuple[str, str]] | None = None
) -> None:
    """The careful attacker: append an event by `person` with sqlite3, its hash chained
    and recomputed (the head record follows by its trigger); `sign` gives a
    (fingerprint, signature) they can make."""
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    last = dict(conn.execute(f"SELECT * FROM {table} ORDER BY seq DESC LIMIT 1").fetchone())
    event = {**last, "uuid": "f" * 32, "seq": last["seq"] + 1, "prev_hash": last["hash"]}
    event["annotator" if table == "labels" else "reviewer"] = person
    if table == "labels":
        event.update(label="no", item_index=1)
    else:
        event.update(status="escalated")
    event["hash"] = event_hash(table, event, last["hash"])
    conn.execute(
        f"INSERT INTO {table} ({', '.join(event)}) VALUES ({', '.join('?' for _ in event)})",
        list(event.values()),
    )
    if sign is not None:
        fingerprint, signature = sign(signed_digest(table, event))
        conn.execute(
            "INSERT INTO event_signatures VALUES (?, ?, ?, ?)",
            (table, event["uuid"], fingerprint, signature),
        )
    conn.commit()
    conn.close()


def signer_of(path: Path) -> Callable[[str], tuple[str, str]]:
    from copyaudit.event_signing import load_signer

    signer = load_signer(path)
    return lambda digest: (signer.fingerprint, signer.sign(digest))
