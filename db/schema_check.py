"""Whether a database's tables hold the columns this version of copyaudit gives them.

Asked only after a statement failed for a table or column that is not there: a bit
flipped in the schema's text on disk can leave valid SQL that names another column
(quick_check passes: the pages are sound), and that is damage to report, not a fault of
copyaudit's. The reference is a new database made by the migrations, in a temporary
folder; a database of this schema version has the same tables and columns whatever
version it was made by (older ones are migrated first, or refused read-only).
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from db.connection import Store
from db.open_modes import read_only_uri


def _columns(conn: sqlite3.Connection) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for table, column in conn.execute(
        "SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p "
        "WHERE m.type = 'table'"
    ):
        out.setdefault(table, set()).add(column)
    return out


def schema_differences(path: Path) -> list[str]:
    """How the tables and columns of the database at `path` fall short of a new one's
    ("table labels lacks generation_id"); empty when they do not."""
    with tempfile.TemporaryDirectory() as folder:
        reference = Store(Path(folder) / "reference.db")
        try:
            expected = _columns(reference.conn)
        finally:
            reference.close()
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True)
        try:
            actual = _columns(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [f"its schema cannot be read ({exc})"]
    out = []
    for table, columns in sorted(expected.items()):
        if table not in actual:
            out.append(f"no table {table}")
        elif missing := sorted(columns - actual[table]):
            out.append(f"table {table} lacks {', '.join(missing)}")
    return out


def names_missing(exc: BaseException) -> bool:
    """Whether a statement failed for a table or column that is not there."""
    text = str(exc)
    missing = "no such column" in text or "no such table" in text
    return getattr(exc, "sqlite_errorname", None) == "SQLITE_ERROR" and missing


def damaged_schema(exc: BaseException, path: Path | None) -> list[str]:
    """How the database at `path` falls short of a new one's tables (schema_differences)
    when `exc` failed for a missing table or column there; empty otherwise, and then
    the failure is not the database's."""
    if path is None or not names_missing(exc) or not path.is_file():
        return []
    return schema_differences(path)
