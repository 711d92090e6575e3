"""`verify`'s check of the run digests (db.run_digests): every run's generations,
judgments, cases and configuration recomputed and compared with what copyaudit stored
at its last write. A difference names the run and, where it lies there, the
generations whose content or judgments changed, were deleted or were added behind the
tool's back. An attacker who also rewrites the stored digests passes this check; the
anchor (db.anchors) holds the run digests outside the database and catches that.
"""

from __future__ import annotations

from db.connection import Store
from db.run_digests import buckets, run_digest, run_generation_digests

SHOWN = 3  # generations named per run


def _stored(store: Store, run_id: int) -> dict[int, str]:
    return {
        int(r[0]): str(r[1])
        for r in store.conn.execute(
            "SELECT generation_id, digest FROM generation_digests WHERE run_id = ?", (run_id,)
        )
    }


def _run_problems(store: Store, run_id: int, name: str, stored: str | None) -> list[str]:
    fresh = run_generation_digests(store.conn, run_id)
    digest = run_digest(store.conn, run_id, buckets(fresh))
    if digest is not None and digest.digest == stored:
        return []
    if stored is None:
        return [f"run {name}: no stored digest (written behind the tool)"]
    kept = _stored(store, run_id)
    changed = [
        d.key for d in fresh if d.generation_id in kept and kept[d.generation_id] != d.digest
    ]
    added = [d.key for d in fresh if d.generation_id not in kept]
    gone = sorted(set(kept) - {d.generation_id for d in fresh})
    said = []
    if changed:
        said.append(
            f"{len(changed)} generation(s) whose output, case or judgments (value, verdict, "
            f"evidence) changed or were deleted: {', '.join(changed[:SHOWN])}"
        )
    if added:
        said.append(f"{len(added)} generation(s) added behind the tool: {', '.join(added[:SHOWN])}")
    if gone:
        said.append(f"{len(gone)} generation(s) deleted (ids {', '.join(map(str, gone[:SHOWN]))})")
    if not said:
        said.append(
            "its configuration (runs row or suite), its DE-COP scores or calibration (or "
            "their passages) changed, or its digest was edited"
        )
    return [f"run {name}: " + "; ".join(said)]


def digest_problems(store: Store) -> list[tuple[str, str]]:
    """(check, message) for every run whose rows no longer match its stored digest, every
    stored digest of a run that is gone, and a copyaudit writer's marker or noted
    changes left committed (written behind the tool)."""
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
    if "run_digests" not in tables or "generation_digests" not in tables:
        return [("run digests missing", "table run_digests or generation_digests was dropped")]
    stored = {
        int(r[0]): str(r[1]) for r in store.conn.execute("SELECT run_id, digest FROM run_digests")
    }
    found = []
    runs = store.conn.execute("SELECT id, name FROM runs ORDER BY id").fetchall()
    for row in runs:
        for message in _run_problems(store, int(row["id"]), row["name"], stored.get(row["id"])):
            found.append(("run content changed", message))
    for run_id in sorted(set(stored) - {int(r["id"]) for r in runs}):
        found.append(("run deleted", f"run id {run_id} has a stored digest but no run row"))
    left = store.conn.execute(
        "SELECT (SELECT COUNT(*) FROM digest_pending) + (SELECT COUNT(*) FROM digest_writing)"
    ).fetchone()[0]
    if left:
        found.append(
            ("digest marker left", "digest_pending or digest_writing holds rows outside a write")
        )
    return found
