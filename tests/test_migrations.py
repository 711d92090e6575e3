"""Migrations: a database written by an older copyaudit opens, and the later steps fill
what they derive for the rows it already holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import sqlite_utils

from db import Store
from db.migrations import MIGRATIONS, SCHEMA_VERSION

BEFORE_DOC_TYPE = 8  # schema version before suites.doc_type and cases.given_characters


def _older_database(path: Path, version: int) -> None:
    """A database as a copyaudit at schema `version` left it, with a DE-COP suite and a
    non-literal case whose input names its first reference character."""
    conn = sqlite3.connect(path, isolation_level=None)
    db = sqlite_utils.Database(conn)
    for number, migration in enumerate(MIGRATIONS[:version], start=1):
        migration(db)
        conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("INSERT INTO works (key, title) VALUES ('w', 'W')")
    conn.execute("INSERT INTO suites (name, kind) VALUES ('d', 'decop'), ('n', 'nonliteral')")
    payload = {"input": "Harry walked in.", "reference_characters": [["Harry"], ["Ron"]]}
    conn.execute(
        "INSERT INTO cases (suite_id, case_id, work_id, payload, content_hash) "
        "VALUES (2, 'n-1', 1, ?, 'h')",
        (json.dumps(payload),),
    )
    conn.close()


def test_an_older_database_opens_and_gets_the_later_steps(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _older_database(path, BEFORE_DOC_TYPE)
    with Store(path) as store:
        assert store.scalar("PRAGMA user_version") == SCHEMA_VERSION
        doc_types = {r["name"]: r["doc_type"] for r in store.query("SELECT * FROM suites")}
        assert doc_types == {"d": "book", "n": None}
        assert store.scalar("SELECT given_characters FROM cases") == "[0]"
