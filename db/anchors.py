"""What an anchor records of the database, and whether the database still extends it.

After certificate-transparency logs: an anchor holds, per event chain, its id, the seq
of its last event and that event's hash. Since each hash covers every earlier event of
its chain, a chain extends the anchored one exactly when its event at the anchored seq
still has the anchored hash and the chain verifies: events deleted from the end, a chain
rewritten (even with every hash recomputed) or reordered all fail that. The anchor also
digests the content (output and case) of the generations the anchored events were made
on, so an edit of a labelled output is caught as well.
"""

from __future__ import annotations

import hashlib
from typing import Any

from db.connection import Store
from db.events import HASHED_FIELDS


def database_origin(store: Store) -> str:
    """The database's identity: the random id its first migration gave it."""
    return str(store.scalar("SELECT value FROM meta WHERE key = 'origin'"))


def current_heads(store: Store) -> list[dict[str, Any]]:
    """Every chain's last event: [{table, chain, seq, hash}], by table then chain."""
    return [
        {"table": table, "chain": row["chain"], "seq": int(row["seq"]), "hash": row["hash"]}
        for table in HASHED_FIELDS
        for row in store.conn.execute(
            f"SELECT chain, MAX(seq) AS seq, hash FROM {table} GROUP BY chain ORDER BY chain"
        )
    ]


def _sha(text: str | None) -> bytes:
    return hashlib.sha256((text or "").encode()).digest()


def labelled_content(store: Store, heads: list[dict[str, Any]]) -> dict[str, Any]:
    """{generations, digest}: SHA-256 over the output and case payload of every generation
    an event up to the given heads was made on (which generation each event names is
    proved by its hashed generation_key; the digest depends on no key format)."""
    ids: set[int] = set()
    for head in heads:
        ids.update(
            int(row[0])
            for row in store.conn.execute(
                f"SELECT DISTINCT generation_id FROM {head['table']} WHERE chain = ? AND seq <= ?",
                (head["chain"], head["seq"]),
            )
        )
    ordered = sorted(ids)
    parts: list[bytes] = []
    for start in range(0, len(ordered), 500):
        chunk = ordered[start : start + 500]
        rows = store.conn.execute(
            "SELECT g.output, c.payload FROM generations g JOIN cases c ON c.id = g.case_pk "
            f"WHERE g.id IN ({', '.join('?' for _ in chunk)})",
            chunk,
        )
        parts += [_sha(row["output"]) + _sha(row["payload"]) for row in rows]
    digest = hashlib.sha256(b"".join(sorted(parts)))
    count = len(parts)
    return {"generations": count, "digest": digest.hexdigest()}


def run_digests(store: Store) -> list[dict[str, Any]]:
    """Each run's stored digest (db.run_digests), by name: what an anchor records."""
    return [
        {"run": row["name"], "digest": row["digest"], "generations": row["n_generations"],
         "judgments": row["n_judgments"]}
        for row in store.conn.execute(
            "SELECT r.name, d.digest, d.n_generations, d.n_judgments FROM run_digests d "
            "JOIN runs r ON r.id = d.run_id ORDER BY r.name"
        )
    ]  # fmt: skip


def run_problems(store: Store, anchored: list[dict[str, Any]]) -> list[str]:
    """Anchored runs whose digest is no longer the stored one (rejudged, regenerated,
    edited, or their stored digest rewritten to hide an edit) or that are gone. A run
    made after the anchor is no problem."""
    now = {run["run"]: run for run in run_digests(store)}
    problems = []
    for run in anchored:
        name = run.get("run")
        if name not in now:
            problems.append(f"run {name}: anchored, now absent (deleted or renamed)")
        elif now[name]["digest"] != run.get("digest"):
            problems.append(
                f"run {name}: its judgments, generations, cases or configuration changed "
                f"since the anchor ({run.get('generations')} generation(s), "
                f"{run.get('judgments')} judgment(s) then; {now[name]['generations']}, "
                f"{now[name]['judgments']} now)"
            )
    return problems


def anchor_problems(
    store: Store, heads: list[dict[str, Any]], content: Any, runs: Any = None
) -> list[str]:
    """How this database fails to extend anchored `heads` (and their labelled `content`,
    when the anchor has it), and the anchored `runs`' digests: [] when every anchored
    chain is still its prefix and every anchored run as it was."""
    problems = []
    for head in heads:
        table, chain, seq = head["table"], head["chain"], head["seq"]
        if table not in HASHED_FIELDS:
            problems.append(f"anchor names an unknown event table {table!r}")
            continue
        where = f"{table} chain {chain[:8]}"
        last = store.scalar(f"SELECT MAX(seq) FROM {table} WHERE chain = ?", (chain,))
        row = store.conn.execute(
            f"SELECT hash FROM {table} WHERE chain = ? AND seq = ?", (chain, seq)
        ).fetchone()
        if last is None:
            problems.append(f"{where}: anchored at seq {seq}, now has no events (deleted)")
        elif row is None:
            problems.append(f"{where}: anchored at seq {seq}, now ends at seq {last} (truncated)")
        elif row["hash"] != head["hash"]:
            problems.append(
                f"{where}: event seq {seq} hash {row['hash'][:12]} is not the anchored "
                f"{head['hash'][:12]} (rewritten, reordered or hashes recomputed)"
            )
    if content is not None and not problems and labelled_content(store, heads) != content:
        problems.append(
            "the output or case of a generation labelled before the anchor changed since "
            "(edited, or replaced with --replace)"
        )
    return problems + (run_problems(store, runs) if isinstance(runs, list) else [])
