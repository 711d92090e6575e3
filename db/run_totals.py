"""Reads of the totals the triggers keep (db.migrations.migrate_run_totals): a run's
judgments per metric and template, its values per histogram bin, its thresholds and
its generations, each a few rows however many generations the run has; and the one
column a figure needs every value of (a median, a mean's interval), streamed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from db.connection import Store


def judgment_tallies(store: Store, run_id: int) -> list[dict[str, Any]]:
    """Per metric and template of the run: judged, valued (with a value), value_sum,
    verdicts (with a flag) and flagged, in metric then template order."""
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT metric, template, SUM(judged) AS judged, SUM(valued) AS valued, "
            "SUM(value_sum) AS value_sum, SUM(verdicts) AS verdicts, SUM(flagged) AS flagged "
            "FROM judgment_totals WHERE run_id = ? GROUP BY metric, template "
            "ORDER BY metric, template",
            (run_id,),
        )
    ]


def judge_configurations(store: Store, run_id: int) -> list[dict[str, Any]]:
    """Per judge and configuration hash (None: none stored) that scored the run: the
    metrics it gave (comma-separated) and how many judgments, in judge then hash order."""
    return [
        dict(r)
        for r in store.conn.execute(
            "SELECT judge, NULLIF(judge_hash, '') AS judge_hash, GROUP_CONCAT(DISTINCT metric) "
            "AS metrics, SUM(judged) AS judgments FROM judgment_totals WHERE run_id = ? "
            "GROUP BY judge, judge_hash ORDER BY judge, judge_hash",
            (run_id,),
        )
    ]


def run_metric_tallies(store: Store) -> Iterator[dict[str, Any]]:
    """Per run and metric (every run): the same counts summed over the templates."""
    for row in store.conn.execute(
        "SELECT run_id, metric, SUM(judged) AS judged, SUM(valued) AS valued, "
        "SUM(value_sum) AS value_sum, SUM(verdicts) AS verdicts, SUM(flagged) AS flagged "
        "FROM judgment_totals GROUP BY run_id, metric"
    ):
        yield dict(row)


def value_counts(store: Store, run_id: int) -> dict[str, dict[float, int]]:
    """metric -> {bin: values}: a fraction metric's values per histogram bin (0-9, -1
    outside [0, 1]), any other metric's per value."""
    out: dict[str, dict[float, int]] = {}
    for metric, key, n in store.conn.execute(
        "SELECT metric, bin, n FROM value_counts WHERE run_id = ? ORDER BY metric, bin",
        (run_id,),
    ):
        out.setdefault(metric, {})[float(key)] = int(n)
    return out


def metric_values(store: Store, run_id: int, metric: str) -> list[float]:
    """Every value of one metric in the run (judgments with a value), in generation order."""
    return [
        float(r[0])
        for r in store.conn.execute(
            "SELECT j.value FROM generations g JOIN judgments j ON j.generation_id = g.id "
            "WHERE g.run_id = ? AND j.metric = ? AND j.value IS NOT NULL ORDER BY g.id",
            (run_id, metric),
        )
    ]


def thresholds(store: Store, run_id: int) -> dict[str, list[float]]:
    """metric -> the thresholds the run's judgments of it were flagged at, ascending."""
    out: dict[str, list[float]] = {}
    for metric, threshold in store.conn.execute(
        "SELECT metric, threshold FROM threshold_counts WHERE run_id = ? "
        "ORDER BY metric, threshold",
        (run_id,),
    ):
        out.setdefault(metric, []).append(float(threshold))
    return out


def generation_counts(store: Store, run_id: int) -> tuple[int, int]:
    """(generations, failed ones) of the run."""
    row = store.conn.execute(
        "SELECT COALESCE(SUM(generations), 0), COALESCE(SUM(failed), 0) "
        "FROM generation_totals WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    return int(row[0]), int(row[1])
