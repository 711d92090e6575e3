"""DE-COP storage: one row per (run, passage) with the 24x4 answer-letter probabilities,
the true answer index of each order and the baseline token scores; one row per run with
the calibration it fitted.

A passage's row is written whole, with every other passage of its batch in one
transaction, so a killed run loses at most the batch in flight and a resumed run skips
what is already stored. JSON cannot hold NaN: a probability or score that could not be
read is stored as null and read back as NaN.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from copyaudit.errors import UserError
from db.clock import now
from db.connection import Store


def set_doc_type(store: Store, suite_id: int, doc_type: str, replace: bool = False) -> None:
    """Record what the suite's question names (inside the import's transaction). A suite
    keeps its doc type unless `replace`: its runs were asked that question."""
    stored = store.scalar("SELECT doc_type FROM suites WHERE id = ?", (suite_id,))
    if stored not in (None, doc_type) and not replace:
        raise UserError(
            f"this suite's passages are asked about a {stored}; importing them as a "
            f"{doc_type} changes the question (use --replace to change it)"
        )
    store.conn.execute("UPDATE suites SET doc_type = ? WHERE id = ?", (doc_type, suite_id))


def suite_doc_type(store: Store, suite_id: int) -> str:
    """book | paper (book for a suite without one, as before the option existed)."""
    return store.scalar("SELECT doc_type FROM suites WHERE id = ?", (suite_id,)) or "book"


def _json_floats(value: object) -> object:
    """NaN -> None, recursively (JSON has no NaN)."""
    if isinstance(value, list | tuple):
        return [_json_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_floats(v) for k, v in value.items()}
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _nan_floats(value: object) -> object:
    """None -> NaN inside lists and dicts (the reverse of `_json_floats`)."""
    if isinstance(value, list):
        return [_nan_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _nan_floats(v) for k, v in value.items()}
    return math.nan if value is None else value


@dataclass(frozen=True)
class DecopScoreRow:
    case_pk: int
    probs: Sequence[Sequence[float]]  # 24 rows of 4 probabilities (NaN where unread)
    answers: Sequence[int]  # 24 answer indices
    baselines: dict[str, float] | None = None
    errors: dict[int, str] | None = None
    seconds: float | None = None


def add_decop_scores(store: Store, run_id: int, rows: Iterable[DecopScoreRow]) -> int:
    """Insert one batch of passage scores in one transaction; a passage already scored
    in this run is left alone. Returns the number of rows inserted."""
    stamp = now()
    values = [
        (
            run_id,
            row.case_pk,
            json.dumps(_json_floats([[float(p) for p in r] for r in row.probs])),
            json.dumps([int(a) for a in row.answers]),
            None
            if row.baselines is None
            else json.dumps(_json_floats({k: float(v) for k, v in row.baselines.items()})),
            None if not row.errors else json.dumps({str(k): v for k, v in row.errors.items()}),
            row.seconds,
            stamp,
        )
        for row in rows
    ]
    with store.transaction():
        before = store.conn.total_changes
        store.conn.executemany(
            "INSERT OR IGNORE INTO decop_scores (run_id, case_pk, probs, answers, baselines, "
            "errors, seconds, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            values,
        )
        return store.conn.total_changes - before


def scored_case_pks(store: Store, run_id: int) -> set[int]:
    return {
        int(r[0])
        for r in store.conn.execute("SELECT case_pk FROM decop_scores WHERE run_id = ?", (run_id,))
    }


def _scored(store: Store, run_id: int, columns: str) -> sqlite3.Cursor:
    """`columns` (of d = decop_scores, c = cases, w = works) of every passage the run
    scored, in case order."""
    return store.conn.execute(
        f"SELECT {columns} FROM decop_scores d JOIN cases c ON c.id = d.case_pk "
        "JOIN works w ON w.id = c.work_id WHERE d.run_id = ? ORDER BY c.id",
        (run_id,),
    )


def decop_score_rows(store: Store, run_id: int) -> list[dict[str, Any]]:
    """Every stored passage of the run in case order, decoded: case_id, work_id, title,
    author, membership, probs (list of lists, NaN where unread), answers, baselines
    (dict or None, NaN where undefined), errors (dict or None), seconds."""
    rows = _scored(
        store,
        run_id,
        "d.case_pk, c.case_id, w.id AS work_id, w.title, w.author, w.membership, "
        "d.probs, d.answers, d.baselines, d.errors, d.seconds",
    ).fetchall()
    out = []
    for r in rows:
        row = dict(r)
        row["probs"] = _nan_floats(json.loads(row["probs"]))
        row["answers"] = json.loads(row["answers"])
        row["baselines"] = (
            None if row["baselines"] is None else _nan_floats(json.loads(row["baselines"]))
        )
        row["errors"] = None if row["errors"] is None else json.loads(row["errors"])
        out.append(row)
    return out


def scored_passages(store: Store, run_id: int) -> list[dict[str, Any]]:
    """The verbatim passage of every passage the run scored, in case order: title,
    author, membership, year (None where the work has none), verbatim."""
    rows = _scored(store, run_id, "c.payload, w.title, w.author, w.membership, w.year")
    out = []
    for r in rows:
        payload = json.loads(r["payload"])
        row = {k: r[k] for k in ("title", "author", "membership", "year")}
        out.append({**row, "verbatim": payload["options"][int(payload["answer"])]})
    return out


def iter_export_rows(store: Store, run_id: int) -> Iterator[dict[str, Any]]:
    """Every stored passage of the run in case order, one at a time, with its case
    payload: case_id, title, author, membership, payload (dict), probs (NaN where
    unread), answers."""
    rows = _scored(
        store, run_id, "c.case_id, c.payload, w.title, w.author, w.membership, d.probs, d.answers"
    )
    for r in rows:
        row = dict(r)
        row["payload"] = json.loads(row["payload"])
        row["probs"] = _nan_floats(json.loads(row["probs"]))
        row["answers"] = json.loads(row["answers"])
        yield row


def save_calibration(
    store: Store, run_id: int, works: Sequence[str], delta: Iterable[float], n_prompts: int
) -> None:
    """Store (replace) the label adjustment the run fitted on its held-out clean works."""
    with store.transaction():
        store.conn.execute(
            "INSERT OR REPLACE INTO decop_calibrations (run_id, works, delta, n_prompts, "
            "created_at) VALUES (?, ?, ?, ?, ?)",
            (
                run_id,
                json.dumps(list(works), ensure_ascii=False),
                json.dumps([float(d) for d in delta]),
                n_prompts,
                now(),
            ),
        )


def load_calibration(store: Store, run_id: int) -> dict[str, Any] | None:
    row = store.conn.execute(
        "SELECT works, delta, n_prompts, created_at FROM decop_calibrations WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return None
    return {
        "works": json.loads(row["works"]),
        "delta": json.loads(row["delta"]),
        "n_prompts": row["n_prompts"],
        "created_at": row["created_at"],
    }


def suite_works(store: Store, suite_id: int) -> list[dict[str, Any]]:
    """The works of a suite with their membership and number of cases, in title order."""
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT w.id AS work_id, w.title, w.author, w.membership, COUNT(c.id) AS passages "
            "FROM cases c JOIN works w ON w.id = c.work_id WHERE c.suite_id = ? "
            "GROUP BY w.id ORDER BY w.title, w.author",
            (suite_id,),
        )
    ]
