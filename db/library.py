"""The library's register: the works tracing searches (their texts are files beside the
database: copyaudit.tracing.library)."""

from __future__ import annotations

from dataclasses import dataclass

from copyaudit.errors import UserError
from db.clock import now
from db.connection import Store
from db.runs import run_row

STATUSES = ("protected", "public-domain", "unknown")


@dataclass(frozen=True)
class LibraryWork:
    sha256: str
    title: str
    author: str | None
    source: str | None
    status: str
    chars: int


def add_work(store: Store, work: LibraryWork) -> bool:
    """Register `work`; False when a text with its SHA-256 is already registered (its
    record is kept), UserError when the status is unknown."""
    if work.status not in STATUSES:
        raise UserError(f"a work's status is one of {', '.join(STATUSES)}, not {work.status!r}")
    with store.transaction(durable=True):
        cursor = store.conn.execute(
            "INSERT OR IGNORE INTO library_works (sha256, title, author, source, status, "
            "chars, added_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (work.sha256, work.title, work.author, work.source, work.status, work.chars, now()),
        )
        return cursor.rowcount == 1


def library_works(store: Store) -> list[LibraryWork]:
    """Every registered work, in the order they were added."""
    return [
        LibraryWork(r["sha256"], r["title"], r["author"], r["source"], r["status"], r["chars"])
        for r in store.conn.execute("SELECT * FROM library_works ORDER BY added_at, rowid")
    ]


@dataclass(frozen=True)
class CaseReference:
    case_id: str
    title: str  # the case's work
    author: str | None
    text: str  # the case's reference text


def case_references(store: Store, suite: str) -> tuple[str, list[CaseReference]]:
    """The suite's kind and each of its cases' reference text (payload `reference`, a
    string: literal continuations, extraction suffixes), in import order; UserError for
    no such suite."""
    row = store.conn.execute("SELECT id, kind FROM suites WHERE name = ?", (suite,)).fetchone()
    if row is None:
        raise UserError(f"no suite named '{suite}' (see `copyaudit suites`)")
    rows = store.conn.execute(
        "SELECT c.case_id, w.title, w.author, json_extract(c.payload, '$.reference') AS text "
        "FROM cases c JOIN works w ON w.id = c.work_id WHERE c.suite_id = ? "
        "AND json_type(c.payload, '$.reference') = 'text' ORDER BY c.id",
        (row["id"],),
    )
    return row["kind"], [
        CaseReference(r["case_id"], r["title"], r["author"], r["text"]) for r in rows if r["text"]
    ]


def run_suite(store: Store, run: str) -> tuple[str, str]:
    """(name, kind) of the suite run `run` answers; UserError for no such run."""
    suite_id = run_row(store, run)["suite_id"]
    row = store.conn.execute("SELECT name, kind FROM suites WHERE id = ?", (suite_id,)).fetchone()
    return row["name"], row["kind"]
