"""What a run still has to do: pending generations and unjudged generations."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from copyaudit.types import Case
from db.columns import CASE_COLUMNS, case_from_row
from db.connection import Store


@dataclass(frozen=True)
class PendingGeneration:
    case_pk: int
    template: int
    case: Case


@dataclass(frozen=True)
class GenerationToJudge:
    generation_id: int
    case: Case
    prompt: str
    output: str


# The run's cases of a suite: all, or (DE-COP) those of one BookTection Length.
_OF_LENGTH_SQL = "suite_id = ? AND (? IS NULL OR json_extract(payload, '$.length') = ?)"
# The first N of them for each work, in import order (a DE-COP screening run).
_FIRST_PER_WORK_SQL = (
    "SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY work_id ORDER BY id) AS k "
    f"FROM cases WHERE {_OF_LENGTH_SQL}) WHERE k <= ?"
)


def run_cases(
    store: Store,
    suite_id: int,
    limit: int | None,
    per_work: int | None = None,
    length: str | None = None,
) -> list[tuple[int, Case]]:
    """The run's cases in import order (only those of `length`, if given): the first
    `limit` of them, or the first `per_work` of each work, if given."""
    sql = (
        f"SELECT {CASE_COLUMNS} FROM cases c JOIN suites s ON s.id = c.suite_id "
        "JOIN works w ON w.id = c.work_id WHERE c.suite_id = ? AND "
        "(? IS NULL OR json_extract(c.payload, '$.length') = ?)"
    )
    params: tuple[Any, ...] = (suite_id, length, length)
    if per_work is not None:
        sql += f" AND c.id IN ({_FIRST_PER_WORK_SQL})"
        params += (suite_id, length, length, per_work)
    sql += " ORDER BY c.id"
    if limit is not None:
        sql += " LIMIT ?"
        params += (limit,)
    return [(int(r["case_pk"]), case_from_row(r)) for r in store.conn.execute(sql, params)]


def run_case_count(
    store: Store, suite_id: int, per_work: int | None = None, length: str | None = None
) -> int:
    """How many cases `run_cases(store, suite_id, None, per_work, length)` gives."""
    of_length = (suite_id, length, length)
    if per_work is None:
        return int(store.scalar(f"SELECT COUNT(*) FROM cases WHERE {_OF_LENGTH_SQL}", of_length))
    return int(
        store.scalar(f"SELECT COUNT(*) FROM ({_FIRST_PER_WORK_SQL})", (*of_length, per_work))
    )


def suite_lengths(store: Store, suite_id: int) -> dict[str, int]:
    """DE-COP: passages per BookTection Length in the suite ({} without the column)."""
    rows = store.conn.execute(
        "SELECT json_extract(payload, '$.length') AS length, COUNT(*) FROM cases "
        "WHERE suite_id = ? AND json_extract(payload, '$.length') IS NOT NULL "
        "GROUP BY length ORDER BY length",
        (suite_id,),
    )
    return {str(r[0]): int(r[1]) for r in rows}


def pending_generations(
    store: Store,
    run_id: int,
    suite_id: int,
    templates: Sequence[int],
    limit: int | None,
    *,
    retry_failed: bool = False,
) -> tuple[list[PendingGeneration], int]:
    """(work still to generate, total work of the run) — what a resumed run picks up:
    what it lacks, and with `retry_failed` what failed (a generation stored with an
    error) too."""
    done = {
        (r[0], r[1])
        for r in store.conn.execute(
            "SELECT case_pk, template FROM generations WHERE run_id = ? "
            "AND (? = 0 OR error IS NULL)",
            (run_id, int(retry_failed)),
        )
    }
    cases = run_cases(store, suite_id, limit)
    pending = [
        PendingGeneration(case_pk, template, case)
        for case_pk, case in cases
        for template in templates
        if (case_pk, template) not in done
    ]
    return pending, len(cases) * len(templates)


# generations read per query while judging
JUDGE_PAGE = 1000


def _to_judge_where(rejudge: bool) -> str:
    """The run's generations without an error and (unless `rejudge`) not yet scored by
    the judge, up to a highest id; parameters (run, [judge,] highest id)."""
    where = "g.run_id = ? AND g.error IS NULL AND g.id <= ?"
    if not rejudge:
        where += (
            " AND NOT EXISTS (SELECT 1 FROM judgments j WHERE j.generation_id = g.id AND "
            "j.judge = ?)"
        )
    return where


def _to_judge_params(store: Store, run_id: int, judge: str, rejudge: bool) -> tuple[Any, ...]:
    last = store.scalar("SELECT MAX(id) FROM generations WHERE run_id = ?", (run_id,))
    return (run_id, last or 0, *(() if rejudge else (judge,)))


def count_to_judge(store: Store, run_id: int, judge: str, *, rejudge: bool = False) -> int:
    """How many generations `generations_to_judge` gives now."""
    sql = f"SELECT COUNT(*) FROM generations g WHERE {_to_judge_where(rejudge)}"
    return int(store.scalar(sql, _to_judge_params(store, run_id, judge, rejudge)))


def generations_to_judge(
    store: Store, run_id: int, judge: str, *, rejudge: bool = False, page: int = JUDGE_PAGE
) -> Iterator[GenerationToJudge]:
    """Generations of the run without an error and (unless `rejudge`) not yet scored by
    `judge`, in id order, read `page` at a time (keyset: the ids after the last one
    read), so memory does not grow with the run. Those the run holds when this is
    called: a generation added later is left for the next call."""
    sql = (
        f"SELECT g.id AS generation_id, g.prompt, g.output, {CASE_COLUMNS} "
        "FROM generations g JOIN cases c ON c.id = g.case_pk "
        "JOIN suites s ON s.id = c.suite_id JOIN works w ON w.id = c.work_id "
        f"WHERE {_to_judge_where(rejudge)} AND g.id > ? ORDER BY g.id LIMIT ?"
    )
    fixed = _to_judge_params(store, run_id, judge, rejudge)
    last = 0
    while True:
        rows = store.conn.execute(sql, (*fixed, last, page)).fetchall()
        for r in rows:
            yield GenerationToJudge(
                int(r["generation_id"]), case_from_row(r), r["prompt"] or "", r["output"]
            )
        if len(rows) < page:
            return
        last = int(rows[-1]["generation_id"])


def run_config(store: Store, run_id: int) -> dict[str, Any]:
    row = store.conn.execute("SELECT config FROM runs WHERE id = ?", (run_id,)).fetchone()
    return json.loads(row["config"] or "{}") if row else {}
