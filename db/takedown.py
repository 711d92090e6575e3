"""Reading what the takedown comparison needs: a suite's runs with one model, each
run's per-generation metric values, mean of a metric and decoding speed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from db.connection import Store


def suite_model_runs(store: Store, suite: str, model: str) -> list[dict[str, Any]]:
    """The generation runs of `suite` with `model` (oldest first): id, name,
    mitigation, status."""
    rows = store.query(
        "SELECT r.id, r.name, r.mitigation, r.status FROM runs r "
        "JOIN suites s ON s.id = r.suite_id WHERE s.name = ? AND r.model = ? ORDER BY r.id",
        (suite, model),
    )
    return [dict(row) for row in rows]


def generation_metrics(
    store: Store, run_id: int, metrics: Sequence[str]
) -> dict[tuple[int, int], dict[str, float]]:
    """(case_pk, template) -> {metric: value} of the run's judged generations (values
    that were not computed are left out)."""
    marks = ", ".join("?" for _ in metrics)
    rows = store.query(
        "SELECT g.case_pk, g.template, j.metric, j.value FROM judgments j "
        "JOIN generations g ON g.id = j.generation_id "
        f"WHERE g.run_id = ? AND g.error IS NULL AND j.value IS NOT NULL AND j.metric IN ({marks})",
        (run_id, *metrics),
    )
    values: dict[tuple[int, int], dict[str, float]] = {}
    for row in rows:
        values.setdefault((row["case_pk"], row["template"]), {})[row["metric"]] = row["value"]
    return values


def metric_mean(store: Store, run_id: int, metric: str) -> tuple[float | None, int]:
    """Mean of a metric over the run's generations, and how many it covers."""
    row = store.query(
        "SELECT AVG(j.value) AS mean, COUNT(j.value) AS n FROM judgments j "
        "JOIN generations g ON g.id = j.generation_id "
        "WHERE g.run_id = ? AND j.metric = ? AND j.value IS NOT NULL",
        (run_id, metric),
    )[0]
    return row["mean"], int(row["n"])


def decoding_speed(store: Store, run_id: int) -> tuple[int, float]:
    """(tokens generated, seconds spent) over the run's generations that succeeded."""
    row = store.query(
        "SELECT COALESCE(SUM(tokens), 0) AS tokens, COALESCE(SUM(seconds), 0) AS seconds "
        "FROM generations WHERE run_id = ? AND error IS NULL",
        (run_id,),
    )[0]
    return int(row["tokens"]), float(row["seconds"])
