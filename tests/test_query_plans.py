"""The dashboard's and opening a run's queries read indexes and the kept totals, never
every generation, judgment or case: each statement they run is captured and its
EXPLAIN QUERY PLAN may not SCAN those tables (plans, not timings: see
tests/bench/bench_report.py for the CPU seconds at a million generations)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from db import Store
from db.browse import (
    GenerationFilter,
    count_generations,
    generation_page,
    list_stamp,
    run_info,
    run_metrics,
    run_templates,
    run_works,
)
from db.labels import NOT_RETRACTED_SQL, current_label_events_sql, latest_label_event
from screens.runs.dashboard import load_dashboard
from tests.test_run_totals import _fill

BIG = ("generations", "judgments", "cases")
KEYWORDS = {"where", "join", "on", "group", "order", "left", "inner", "limit", "as", "using"}


def _statements(store: Store, call: Callable[[], object]) -> list[str]:
    """The SELECT statements `call` runs (parameters bound, as SQLite traces them)."""
    seen: list[str] = []
    store.conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        store.conn.set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith(("SELECT", "WITH"))]


def _big_names(sql: str) -> set[str]:
    """The big tables' names and the aliases the statement gives them."""
    names = set(BIG)
    for match in re.finditer(rf"\b({'|'.join(BIG)})\b(?:\s+(?:AS\s+)?(\w+))?", sql, re.I):
        alias = match.group(2)
        if alias and alias.lower() not in KEYWORDS:
            names.add(alias)
    return names


def _scans(store: Store, sql: str) -> list[str]:
    plan = [row[3] for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    names = _big_names(sql)
    return [
        line
        for line in plan
        if re.match(r"SCAN (\w+)", line) and re.match(r"SCAN (\w+)", line).group(1) in names
    ]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory):
    with Store(tmp_path_factory.mktemp("plans") / "plans.db") as opened:
        _fill(opened, runs=2, n=400)
        opened.conn.execute("ANALYZE")
        yield opened


def _open_run(store: Store) -> None:
    run_id = int(run_info(store, "run1")["id"])
    everything = GenerationFilter(run_id=run_id, annotator="me")  # as the list opens
    run_metrics(store, run_id)
    run_works(store, run_id)
    run_templates(store, run_id)
    list_stamp(store, run_id)
    count_generations(store, everything)
    assert generation_page(store, everything)  # the first page


@pytest.mark.parametrize(
    ("screen", "call"),
    [("dashboard", load_dashboard), ("open run", _open_run)],
)
def test_no_query_scans_generations_judgments_or_cases(
    store: Store, screen: str, call: Callable[[Store], object]
) -> None:
    statements = _statements(store, lambda: call(store))
    assert len(statements) >= 5, statements  # the capture saw the screen's queries
    scanning = {sql: _scans(store, sql) for sql in statements}
    assert not {sql: lines for sql, lines in scanning.items() if lines}, screen


def test_the_check_finds_a_scan(store: Store) -> None:
    """The plan check itself: the old dashboard query (AVG over every judgment) fails it."""
    old = (
        "SELECT g.run_id, j.metric, AVG(j.flagged) FROM judgments j "
        "JOIN generations g ON g.id = j.generation_id GROUP BY g.run_id, j.metric"
    )
    assert _scans(store, old)
    assert _scans(store, "SELECT COUNT(DISTINCT work_id) FROM cases")


def test_the_totals_tables_exist_in_a_new_database(tmp_path: Path) -> None:
    with Store(tmp_path / "new.db") as fresh:
        names = {r[0] for r in fresh.conn.execute("SELECT name FROM sqlite_master")}
    assert {"generation_totals", "suite_work_totals", "judgment_totals"} <= names


def _label_scans(store: Store, sql: str) -> list[str]:
    plan = [row[3] for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}", (1,))]
    return [line for line in plan if re.match(r"SCAN (labels|l|r)\b", line)]


def test_one_generations_current_labels_read_only_its_label_events(store: Store) -> None:
    """A case's labels (the case view, undo) look up retractions by the supersedes index,
    per label event, not every retraction per statement (bench_labels.py: 132 -> 2.3
    CPU ms at 1M label events, 100,000 of them retractions)."""
    assert not _label_scans(store, current_label_events_sql("l.generation_id = ?"))
    undo = _statements(store, lambda: latest_label_event(store, "me", generation_id=1))
    assert undo and not [s for s in undo if _label_scans(store, s.replace("'me'", "?"))]
    old = current_label_events_sql("l.generation_id = ?").replace(
        NOT_RETRACTED_SQL,
        "l.uuid NOT IN (SELECT supersedes FROM labels r WHERE supersedes IS NOT NULL "
        "AND r.action = 'retract')",
    )
    assert old != current_label_events_sql("l.generation_id = ?")
    assert _label_scans(store, old)  # the check finds the old definition's scan
