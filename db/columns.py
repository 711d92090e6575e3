"""SQL fragments shared by the store's queries, and the row decoder that goes with them."""

from __future__ import annotations

import json
import sqlite3

from copyaudit.types import Case, Work

# A generation's key as people and exports name it: run/case_id/template.
GENERATION_KEY_SQL = "r.name || '/' || c.case_id || '/' || g.template"

# A case with its suite and work (aliases c, s, w), as `case_from_row` reads it.
CASE_COLUMNS = (
    "c.id AS case_pk, c.case_id, c.payload, s.kind, s.name AS suite, "
    "w.title, w.author, w.year, w.membership"
)


def case_from_row(row: sqlite3.Row) -> Case:
    return Case(
        case_id=row["case_id"],
        kind=row["kind"],
        work=Work(
            title=row["title"],
            author=row["author"],
            year=row["year"],
            membership=row["membership"],
        ),
        payload=json.loads(row["payload"]),
    )
