"""Writing suites, works and cases (one transaction per import)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from copyaudit.errors import InputError, UserError
from copyaudit.formats import LocatedCase
from copyaudit.hashing import stable_hash
from copyaudit.types import Case, Work
from db.clock import now
from db.connection import Store


@dataclass(frozen=True)
class ImportSummary:
    added: int
    unchanged: int
    replaced: int


def case_content_hash(case: Case) -> str:
    return stable_hash(
        {
            "kind": case.kind,
            "work": [case.work.title, case.work.author, case.work.year, case.work.membership],
            "payload": case.payload,
        }
    )


def work_key(work: Work) -> str:
    return f"{work.title}\x1f{work.author or ''}"


def _ensure_work(store: Store, work: Work, where: tuple[str, int]) -> int:
    row = store.conn.execute(
        "SELECT id, membership, year FROM works WHERE key = ?", (work_key(work),)
    ).fetchone()
    if row is None:
        cur = store.conn.execute(
            "INSERT INTO works (key, title, author, year, membership) VALUES (?, ?, ?, ?, ?)",
            (work_key(work), work.title, work.author, work.year, work.membership),
        )
        return int(cur.lastrowid)
    if work.membership != "unknown" and row["membership"] != work.membership:
        if row["membership"] != "unknown":
            raise InputError(
                where[0],
                where[1],
                "Label",
                f"work '{work.title}' is already recorded as {row['membership']}, "
                f"this file says {work.membership}",
            )
        store.conn.execute(
            "UPDATE works SET membership = ? WHERE id = ?", (work.membership, row["id"])
        )
    if work.year is not None and row["year"] is None:
        store.conn.execute("UPDATE works SET year = ? WHERE id = ?", (work.year, row["id"]))
    return int(row["id"])


def ensure_suite(store: Store, name: str, kind: str) -> int:
    row = store.conn.execute("SELECT id, kind FROM suites WHERE name = ?", (name,)).fetchone()
    if row is None:
        cur = store.conn.execute(
            "INSERT INTO suites (name, kind, created_at) VALUES (?, ?, ?)", (name, kind, now())
        )
        return int(cur.lastrowid)
    if row["kind"] != kind:
        raise UserError(f"suite '{name}' holds {row['kind']} cases, not {kind}")
    return int(row["id"])


def import_cases(
    store: Store,
    suite: str,
    kind: str,
    cases: Sequence[LocatedCase],
    *,
    source: str,
    replace: bool = False,
    doc_type: str | None = None,
) -> ImportSummary:
    """Import all cases or none. Unchanged cases are skipped (re-import is idempotent);
    a changed case under an existing id is an error unless `replace`. `doc_type` (decop
    suites: book | paper) is recorded with the suite in the same transaction."""
    added = unchanged = replaced = 0
    with store.transaction():
        suite_id = ensure_suite(store, suite, kind)
        if doc_type is not None:
            from db.decop import set_doc_type

            set_doc_type(store, suite_id, doc_type, replace)
        existing = {
            r["case_id"]: (r["id"], r["content_hash"])
            for r in store.conn.execute(
                "SELECT id, case_id, content_hash FROM cases WHERE suite_id = ?", (suite_id,)
            )
        }
        work_ids: dict[str, int] = {}
        inserts = []
        created = now()
        for located in cases:
            case = located.case
            content_hash = case_content_hash(case)
            key = work_key(case.work)
            if key not in work_ids:
                work_ids[key] = _ensure_work(store, case.work, (source, located.line))
            payload = json.dumps(case.payload, ensure_ascii=False, sort_keys=True)
            row = (suite_id, case.case_id, work_ids[key], payload, content_hash, source, created)
            if case.case_id not in existing:
                inserts.append(row)
                added += 1
            elif existing[case.case_id][1] == content_hash:
                unchanged += 1
            elif replace:
                store.conn.execute(
                    "UPDATE cases SET work_id = ?, payload = ?, content_hash = ?, source = ? "
                    "WHERE id = ?",
                    (work_ids[key], payload, content_hash, source, existing[case.case_id][0]),
                )
                replaced += 1
            else:
                raise InputError(
                    source,
                    located.line,
                    "id",
                    f"case '{case.case_id}' already exists in suite '{suite}' with different "
                    "content (use --replace to overwrite it)",
                )
        store.conn.executemany(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            inserts,
        )
    return ImportSummary(added, unchanged, replaced)
