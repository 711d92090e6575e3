"""Writing suites, works and cases (one transaction per import)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from copyaudit.errors import InputError, UserError
from copyaudit.hashing import stable_hash
from copyaudit.rows import RowProblem, skipped_note
from copyaudit.types import Case, Work
from db.bulk import bulk_inserts
from db.clock import now
from db.connection import Store
from db.decop import set_doc_type
from db.derived import given_character_indices
from db.inputs import LocatedCase

T = TypeVar("T")


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
        assert cur.lastrowid is not None  # an INSERT sets it
        return cur.lastrowid
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
        assert cur.lastrowid is not None  # an INSERT sets it
        return cur.lastrowid
    if row["kind"] != kind:
        raise UserError(f"suite '{name}' holds {row['kind']} cases, not {kind}")
    return int(row["id"])


# rows written per INSERT (and looked up per query) while an import streams its file
CHUNK_ROWS = 5000


def chunked(items: Iterable[T], size: int = CHUNK_ROWS) -> Iterator[list[T]]:
    """`items` in lists of `size` (the last one shorter)."""
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def import_cases(
    store: Store,
    suite: str,
    kind: str,
    cases: Iterable[LocatedCase],
    *,
    source: str,
    replace: bool = False,
    skipped: Sequence[RowProblem] = (),
    doc_type: str | None = None,
) -> ImportSummary:
    """Import all cases or none. Unchanged cases are skipped (re-import is idempotent);
    a changed case under an existing id is an error unless `replace`. `cases` may be a
    stream (Loaded.accepted): it is written CHUNK_ROWS at a time inside the one
    transaction (its totals set-wise per chunk: db.bulk; its search index left to a
    catch-up: db.search_index), so an error it raises at its end leaves nothing written. `skipped`:
    the file's rows left out (--skip-invalid), read once `cases` is exhausted; they
    replace what an earlier import of the same source recorded, in the same
    transaction. `doc_type` (decop suites: book | paper) is recorded with the suite in
    the same transaction."""
    added = unchanged = replaced = 0
    conflict: InputError | None = None  # raised after the stream ends (its errors first)
    with (
        store.transaction(durable=True),
        bulk_inserts(store, "cases", defer_search_index=True) as bulk,
    ):
        suite_id = ensure_suite(store, suite, kind)
        if doc_type is not None:
            set_doc_type(store, suite_id, doc_type, replace)
        work_ids: dict[str, int] = {}
        created = now()
        for chunk in chunked(cases):
            existing = _existing_cases(store, suite_id, [c.case.case_id for c in chunk])
            inserts = []
            for located in chunk:
                case = located.case
                content_hash = case_content_hash(case)
                key = work_key(case.work)
                if key not in work_ids:
                    work_ids[key] = _ensure_work(store, case.work, (source, located.line))
                payload = json.dumps(case.payload, ensure_ascii=False, sort_keys=True)
                given = given_character_indices(case.payload)
                row = (
                    suite_id, case.case_id, work_ids[key], payload, content_hash, source, created,
                    given,
                )  # fmt: skip
                if case.case_id not in existing:
                    inserts.append(row)
                    added += 1
                elif existing[case.case_id][1] == content_hash:
                    unchanged += 1
                elif replace:
                    store.conn.execute(
                        "UPDATE cases SET work_id = ?, payload = ?, content_hash = ?, "
                        "source = ?, given_characters = ? WHERE id = ?",
                        (
                            work_ids[key],
                            payload,
                            content_hash,
                            source,
                            given,
                            existing[case.case_id][0],
                        ),
                    )
                    replaced += 1
                elif conflict is None:
                    conflict = InputError(
                        source,
                        located.line,
                        "id",
                        f"case '{case.case_id}' already exists in suite '{suite}' with "
                        "different content (use --replace to overwrite it)",
                    )
            bulk.executemany(
                "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash, source, "
                "created_at, given_characters) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                inserts,
            )
        if conflict is not None:
            raise conflict
        record_skipped(store, suite_id, None, source, skipped)
    return ImportSummary(added, unchanged, replaced)


def _existing_cases(store: Store, suite_id: int, case_ids: list[str]) -> dict[str, tuple[int, str]]:
    """case_id -> (row id, content hash) of those of `case_ids` already in the suite."""
    rows = store.conn.execute(
        "SELECT id, case_id, content_hash FROM cases WHERE suite_id = ? "
        "AND case_id IN (SELECT value FROM json_each(?))",
        (suite_id, json.dumps(case_ids)),
    )
    return {r["case_id"]: (r["id"], r["content_hash"]) for r in rows}


def record_skipped(
    store: Store, suite_id: int, run_id: int | None, source: str, skipped: Sequence[RowProblem]
) -> None:
    """Replace what an earlier import of `source` into the suite's cases (run_id None)
    or into a run's generations recorded as skipped. Call inside the import's
    transaction."""
    store.conn.execute(
        "DELETE FROM skipped_rows WHERE suite_id = ? AND run_id IS ? AND source = ?",
        (suite_id, run_id, source),
    )
    created = now()
    store.conn.executemany(
        "INSERT INTO skipped_rows (suite_id, run_id, source, unit, line, field, reason, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(suite_id, run_id, source, p.unit, p.line, p.field, p.reason, created) for p in skipped],
    )


def suite_skipped(store: Store, suite_id: int, run_id: int | None = None) -> list[dict[str, Any]]:
    """The rows left out of the suite's case imports (or, with `run_id`, of that
    run's generation imports), by source and line."""
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT source, unit, line, field, reason FROM skipped_rows "
            "WHERE suite_id = ? AND run_id IS ? ORDER BY source, line, id",
            (suite_id, run_id),
        )
    ]


def run_import_note(store: Store, run_id: int) -> str | None:
    """The same line for a run's imported generations; None when none was skipped."""
    row = store.conn.execute("SELECT suite_id FROM runs WHERE id = ?", (run_id,)).fetchone()
    skipped = suite_skipped(store, int(row["suite_id"]), run_id) if row else []
    if not skipped:
        return None
    n = store.conn.execute("SELECT COUNT(*) FROM generations WHERE run_id = ?", (run_id,))
    return skipped_note(int(n.fetchone()[0]), skipped)


def suite_import_note(store: Store, suite_id: int) -> str | None:
    """The line every listing and report of a suite shows when its imports skipped
    rows ("1,548 of 1,549 rows; 1 skipped: row 615 Example_A: ..."); None otherwise."""
    skipped = suite_skipped(store, suite_id)
    if not skipped:
        return None
    cases = store.conn.execute("SELECT COUNT(*) FROM cases WHERE suite_id = ?", (suite_id,))
    return skipped_note(int(cases.fetchone()[0]), skipped)
