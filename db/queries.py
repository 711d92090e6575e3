"""Read-only queries used by the CLI, the runner, the reports and the screens."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from copyaudit.types import Case
from db.cases import suite_skipped
from db.columns import CASE_COLUMNS, GENERATION_KEY_SQL, case_from_row
from db.connection import Store
from db.run_owner import current_owner, live_owners, shown_status
from db.run_totals import generation_counts, thresholds
from db.totals import run_progress


def suites_summary(store: Store) -> list[dict[str, Any]]:
    """Each suite's name, kind, case and work counts, creation time and the rows its
    imports skipped (source, unit, line, field, reason)."""
    rows = store.conn.execute(
        "SELECT s.id, s.name, s.kind, COALESCE(SUM(t.cases), 0) AS cases, COUNT(t.work_id) "
        "AS works, s.created_at FROM suites s LEFT JOIN suite_work_totals t ON t.suite_id = s.id "
        "GROUP BY s.id ORDER BY s.name"
    ).fetchall()
    out = []
    for r in rows:
        row = dict(r)
        row["skipped"] = suite_skipped(store, row.pop("id"))
        out.append(row)
    return out


# A run's generations stored with an error (the endpoint failed, say), as column `failed`.
FAILED_SQL = (
    "(SELECT COALESCE(SUM(t.failed), 0) FROM generation_totals t WHERE t.run_id = r.id) AS failed"
)


def with_failures(status: str | None, row: dict[str, Any]) -> str | None:
    """'done with 3 failed' for a run that ended with failed generations (running it
    again retries them); any other status as it is."""
    failed = row.get("failed") or 0
    return f"done with {failed} failed" if status == "done" and failed else status


def runs_summary(store: Store) -> list[dict[str, Any]]:
    """Every run with its suite, kind, model, status and progress."""
    rows = store.conn.execute(
        "SELECT r.id, r.name, s.name AS suite, s.kind, r.backend, r.model, r.status, "
        "r.templates, r.config, r.mitigation, r.created_at, r.started_at, r.finished_at, r.error, "
        "(SELECT COALESCE(SUM(t.generations), 0) FROM generation_totals t "
        "WHERE t.run_id = r.id) AS generations, "
        f"{FAILED_SQL}, "
        "(SELECT COALESCE(SUM(t.cases), 0) FROM suite_work_totals t "
        "WHERE t.suite_id = r.suite_id) AS cases "
        "FROM runs r JOIN suites s ON s.id = r.suite_id ORDER BY r.id"
    ).fetchall()
    owners = live_owners(store)
    out = []
    for r in rows:
        row = dict(r)
        row["status"] = with_failures(shown_status(row["status"], owners.get(row["name"])), row)
        done, total = run_progress(store, row)
        del row["templates"], row["config"]
        row["generations"], row["total"] = done, total
        out.append(row)
    return out


def iter_cases(store: Store, suite: str | None = None) -> Iterator[tuple[str, Case]]:
    """(suite name, case) in suite then import order."""
    sql = (
        f"SELECT {CASE_COLUMNS} FROM cases c JOIN suites s ON s.id = c.suite_id "
        "JOIN works w ON w.id = c.work_id"
    )
    params: tuple = ()
    if suite is not None:
        sql += " WHERE s.name = ?"
        params = (suite,)
    for row in store.conn.execute(sql + " ORDER BY s.name, c.id", params):
        yield row["suite"], case_from_row(row)


def _run_filter(run: str | None) -> tuple[str, tuple]:
    return ("WHERE r.name = ?", (run,)) if run is not None else ("", ())


def iter_generations(store: Store, run: str | None = None) -> Iterator[dict[str, Any]]:
    where, params = _run_filter(run)
    for row in store.conn.execute(
        f"SELECT {GENERATION_KEY_SQL} AS generation, r.name AS run, c.case_id, g.template, "
        "g.prompt, g.output, g.tokens, g.seconds, g.source, g.error, g.created_at "
        "FROM generations g JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        f"{where} ORDER BY r.id, g.id",
        params,
    ):
        yield dict(row)


def iter_judgments(store: Store, run: str | None = None) -> Iterator[dict[str, Any]]:
    where, params = _run_filter(run)
    for row in store.conn.execute(
        f"SELECT {GENERATION_KEY_SQL} AS generation, j.judge, jc.version AS judge_version, "
        "j.judge_hash, j.metric, j.value, j.flagged, j.evidence "
        "FROM judgments j JOIN generations g ON g.id = j.generation_id "
        "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk "
        "LEFT JOIN judge_configs jc ON jc.hash = j.judge_hash "
        f"{where} ORDER BY r.id, g.id, j.judge, j.metric",
        params,
    ):
        out = dict(row)
        out["evidence"] = json.loads(out["evidence"]) if out["evidence"] else None
        out["flagged"] = None if out["flagged"] is None else bool(out["flagged"])
        yield out


def iter_labels(store: Store, run: str | None = None) -> Iterator[dict[str, Any]]:
    """Every label event (including retractions) in chain order, with its signature
    (`signed_by`: the key's fingerprint; both None when unsigned, db.signatures)."""
    where, params = _run_filter(run)
    for row in store.conn.execute(
        "SELECT l.uuid, l.chain, l.seq, l.generation_key AS generation, l.annotator, "
        "l.target, l.item_index AS 'index', l.action, l.label, l.note, l.supersedes, "
        "l.created_at, l.content_hash, l.prev_hash, l.hash, s.fingerprint AS signed_by, "
        "s.signature FROM labels l JOIN generations g ON g.id = l.generation_id "
        "LEFT JOIN event_signatures s ON s.tbl = 'labels' AND s.uuid = l.uuid "
        f"JOIN runs r ON r.id = g.run_id {where} ORDER BY l.chain, l.seq",
        params,
    ):
        yield dict(row)


def table_counts(store: Store) -> dict[str, int]:
    tables = ("works", "suites", "cases", "runs", "generations", "judgments", "labels", "reviews")
    return {t: int(store.scalar(f"SELECT COUNT(*) FROM {t}")) for t in tables}


def run_overview(store: Store, run: str) -> dict[str, Any]:
    """The run row with its suite and counts of generations (ok and failed)."""
    row = store.conn.execute(
        "SELECT r.*, s.name AS suite, s.kind FROM runs r JOIN suites s ON s.id = r.suite_id "
        "WHERE r.name = ?",
        (run,),
    ).fetchone()
    if row is None:
        return {}
    out = dict(row)
    out["generations"], out["failed"] = generation_counts(store, int(out["id"]))
    return with_shown_status(store, out, run)


def with_shown_status(
    store: Store, row: dict[str, Any], run: str, key: str = "status"
) -> dict[str, Any]:
    """`row` with its run status as a person should see it (running / interrupted,
    see db.run_owner.shown_status; 'done with N failed' when `row` counts `failed`)."""
    row[key] = with_failures(shown_status(row[key], current_owner(store, run)), row)
    return row


def metric_thresholds(store: Store, run: str) -> dict[str, list[float]]:
    """The thresholds each metric of a run was judged against (from the evidence)."""
    run_id = store.scalar("SELECT id FROM runs WHERE name = ?", (run,))
    return {} if run_id is None else thresholds(store, int(run_id))


def work_titles(store: Store) -> list[tuple[str, str]]:
    """(key, title) of every work, in title order."""
    return [
        (r["key"], r["title"]) for r in store.query("SELECT key, title FROM works ORDER BY title")
    ]


def run_models(store: Store) -> list[tuple[str, str | None]]:
    """(name, model) of every run, in name order."""
    return [
        (r["name"], r["model"]) for r in store.query("SELECT name, model FROM runs ORDER BY name")
    ]


def errors_starting(store: Store, run_id: int, prefixes: Sequence[str]) -> dict[str, int]:
    """metric -> the run's judgments without a value whose stored error starts with one
    of `prefixes` (metrics with none are absent)."""
    if not prefixes:
        return {}
    likes = " OR ".join("json_extract(j.evidence, '$.error') LIKE ? || '%'" for _ in prefixes)
    rows = store.conn.execute(
        "SELECT j.metric, COUNT(*) FROM judgments j JOIN generations g ON g.id = j.generation_id "
        f"WHERE g.run_id = ? AND j.value IS NULL AND ({likes}) GROUP BY j.metric ORDER BY j.metric",
        (run_id, *prefixes),
    )
    return {str(metric): int(count) for metric, count in rows}
