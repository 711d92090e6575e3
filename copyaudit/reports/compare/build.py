"""Build the comparison: the runs grouped into rows (per model, per model x mitigation,
or per model x a table's part such as the notice level), each cell the run report's
own figure with its n, 95% interval and the run it came from, or the reason it is empty."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.intervals import interval
from copyaudit.judges.metric_facts import fraction_metrics, metric_label
from copyaudit.models.registry import display_name
from copyaudit.reports.compare.declared import comparisons
from copyaudit.reports.compare.tables import (
    NOT_JUDGED,
    NOT_JUDGED_DEFAULT,
    PART,
    Column,
    ComparisonTable,
    RunData,
)
from copyaudit.reports.compare.takedown import takedown_tables
from copyaudit.reports.compare.traced import trace_rows
from copyaudit.reports.run_report import build_report
from copyaudit.verification.quality import quality_line
from db.compare import comparison_runs, metric_coverage

if TYPE_CHECKING:
    from db.connection import Store

BY_MODEL, BY_MITIGATION = "model", "mitigation"


def views(tables: Sequence[ComparisonTable] | None = None) -> tuple[str, ...]:
    """The row groupings `compare --by` accepts: model, mitigation and each table's part
    (`tables`: every comparison, copyaudit.reports.compare.declared.comparisons)."""
    tables = comparisons() if tables is None else tables
    parts = [t.part_name.replace(" ", "-") for t in tables if t.part_name]
    return (BY_MODEL, BY_MITIGATION, *dict.fromkeys(parts))


def dig(tree: object, path: Sequence[str]) -> Any:
    """The value at `path` in nested dicts; None where a step is missing."""
    for step in path:
        if not isinstance(tree, Mapping) or step not in tree:
            return None
        tree = tree[step]
    return tree


def _path(column_path: Sequence[str], part: Sequence[str]) -> list[str]:
    return [s for step in column_path for s in (part if step == PART else (step,))]


class _Runs:
    """The selected runs with their reports and judgment coverage, each built once."""

    def __init__(self, store: Store, runs: list[dict[str, Any]]) -> None:
        # rows group by the model as a person reads it (the embedded model's spec
        # "default" and its display name are one model); "model" stays as stored
        self.store = store
        self.runs = [{**run, "shown_model": display_name(run["model"])} for run in runs]
        self._reports: dict[str, dict[str, Any]] = {}
        self._coverage: dict[str, dict[str, Any]] = {}
        self._data: dict[str, RunData] = {}

    def data(self, run: Mapping[str, Any]) -> RunData:
        name = run["name"]
        if name not in self._data:
            self._data[name] = RunData(self.store, name)
        return self._data[name]

    def report(self, run: Mapping[str, Any]) -> dict[str, Any]:
        name = run["name"]
        if name not in self._reports:
            self._reports[name] = build_report(self.store, name)
        return self._reports[name]

    def coverage(self, run: Mapping[str, Any]) -> dict[str, Any]:
        name = run["name"]
        if name not in self._coverage:
            self._coverage[name] = metric_coverage(self.store, int(run["id"]))
        return self._coverage[name]


def _empty_reason(
    runs: _Runs, run: Mapping[str, Any], column: Column, samples: list[float] | None
) -> str:
    """Why the cell of `column` on `run` has no figure."""
    if run["status"] == "failed" and run["error"]:
        return f"run failed: {run['error']}"
    report = runs.report(run)
    if column.kind == "decop":
        if not dig(report, ("decop", "passages", "scored")):
            return f"no passages scored yet (run {run['status']})"
    elif not run["generated"]:
        return f"no generations yet (run {run['status']})"
    if column.metric is not None:
        entry = runs.coverage(run).get(column.metric)
        if entry is None:
            return NOT_JUDGED.get(column.metric, NOT_JUDGED_DEFAULT.format(run=run["name"]))
        if not entry["with_value"]:
            reasons = "; ".join(entry["reasons"]) or "no reason stored"
            return f"not computed: {reasons}"
        if samples == []:
            return "no judged generations in this cell"
    explained = dig(report, column.reason) if column.reason else None
    return str(explained) if explained else column.undefined


def _cell(
    runs: _Runs,
    table: ComparisonTable,
    column: Column,
    candidates: list[dict[str, Any]],
    part: str | None,
) -> dict[str, Any]:
    if not candidates:
        return {"value": None, "reason": f"no {column.kind} run", "run": None}
    run = candidates[-1]  # the newest
    report = runs.report(run)
    segments = table.parts[part] if part is not None else ("all",) if table.parts else ()
    value = dig(report, _path(column.figure, segments))
    samples = None
    if column.metric is not None and table.sampler is not None:
        samples = table.sampler(
            runs.data(run), column, None if part is None else _level(table, part)
        )
    cell: dict[str, Any] = {"value": value, "run": run["name"], "suite": run["suite"]}
    if len(candidates) > 1:
        cell["note"] = f"newest of {len(candidates)} {column.kind} runs: " + ", ".join(
            r["name"] for r in candidates
        )
    if column.interval is not None:
        bounds = dig(report, _path(column.interval, segments))
        cell["interval"] = list(bounds) if bounds else None
    elif samples is not None:
        bounds = interval(samples, column.rate, column.metric in fraction_metrics())
        cell["interval"] = list(bounds) if bounds else None
    if samples is not None:
        cell["n"] = len(samples)
    elif column.n is not None:
        counted = dig(report, column.n)
        cell["n"] = len(counted) if isinstance(counted, list) else counted
    if value is None:
        cell["reason"] = _empty_reason(runs, run, column, samples)
    elif column.flag is not None and dig(report, column.flag):
        cell["flag"] = dig(report, column.flag)
    people = _people(report, column, segments)
    if people is not None:
        cell["people"] = people
    quality = [
        quality_line(q) for q in report.get("judge_quality") or [] if q["metric"] == column.metric
    ]
    if quality:  # how far to trust the judge behind the figure, where it is read
        cell["judge_quality"] = quality
    return cell


def _people(
    report: Mapping[str, Any], column: Column, segments: Sequence[str]
) -> dict[str, Any] | None:
    """The people-level estimate of a cell whose figure is a whole run's headline rate
    (copyaudit.verification.estimates); None for any other figure."""
    if segments or len(column.figure) != 1:
        return None
    estimate = (report.get("people_estimates") or {}).get(column.figure[0])
    return None if estimate is None or "not_a_rate" in estimate else estimate


def _level(table: ComparisonTable, part: str) -> str:
    """The stored key of a part (its last path segment: the notice level)."""
    return table.parts[part][-1]


def _row_keys(table: ComparisonTable, runs: list[dict[str, Any]], by: str) -> list[tuple]:
    keys: list[tuple] = []
    for run in runs:
        key: tuple = (run["shown_model"],)
        if by == BY_MITIGATION:
            key = (run["shown_model"], run["mitigation"])
        if key not in keys:
            keys.append(key)
    if table.part_name and by == table.part_name.replace(" ", "-"):
        return [(*key, part) for key in keys for part in table.parts]
    return keys


def _plain(run: Mapping[str, Any]) -> bool:
    """A run without a mitigation (stored as "none", or nothing in older runs)."""
    return run["mitigation"] in (None, "", "none")


def _table(runs: _Runs, table: ComparisonTable, by: str) -> dict[str, Any] | None:
    mine = [r for r in runs.runs if r["kind"] in table.kinds]
    if not mine:
        return None
    part_name = table.part_name or ""
    by_part = bool(part_name) and by == part_name.replace(" ", "-")
    group = ["model"] + (["mitigation"] if by == BY_MITIGATION else [])
    group += [table.part_name] if by_part and table.part_name else []
    rows = []
    for key in _row_keys(table, mine, by):
        model = key[0]
        mitigation = key[1] if by == BY_MITIGATION else None
        part = key[-1] if by_part else None
        cells = {}
        for column in table.columns:
            candidates = [
                r
                for r in mine
                if r["shown_model"] == model
                and r["kind"] == column.kind
                and (mitigation is None or r["mitigation"] == mitigation)
            ]
            if by != BY_MITIGATION:  # per model: its run without a mitigation, if any
                candidates = [r for r in candidates if _plain(r)] or candidates
            cells[column.key] = _cell(runs, table, column, candidates, part)
        rows.append({"group": dict(zip(group, key, strict=True)), "cells": cells})
    return {
        "distributions": _distributions(runs, table, rows),
        "study": table.study,
        "title": table.title,
        "paper": table.paper,
        "note": table.note,
        "group": group,
        "columns": [
            {
                "key": c.key,
                "label": c.label,
                "kind": c.kind,
                "metric": c.metric,
                "shown_as": c.shown_as,
            }
            for c in table.columns
        ],
        "rows": rows,
    }


def _distributions(
    runs: _Runs, table: ComparisonTable, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per metric of the table's columns (refusal verdicts aside), each run's histogram
    of its scores from the run report, so the long tails show side by side."""
    by_name = {r["name"]: r for r in runs.runs}
    out = []
    for metric in dict.fromkeys(
        c.metric for c in table.columns if c.metric not in (None, "refusal")
    ):
        kinds = {c.kind for c in table.columns if c.metric == metric}
        shown: list[dict[str, Any]] = []
        for row in rows:
            for name in dict.fromkeys(c.get("run") for c in row["cells"].values()):
                run = by_name.get(name or "")
                if run is None or run["kind"] not in kinds:
                    continue
                hist = dig(runs.report(run), ("histograms", metric))
                if hist and sum(hist["counts"]) and all(s["run"] != name for s in shown):
                    shown.append({"run": name, "model": run["shown_model"], **hist})
        if shown:
            out.append(
                {"metric": metric, "label": f"{metric_label(metric)} ({metric})", "runs": shown}
            )
    return out


def build_comparison(
    store: Store,
    runs: Sequence[str] = (),
    models: Sequence[str] = (),
    by: str = BY_MODEL,
    tables: Sequence[ComparisonTable] | None = None,
) -> dict[str, Any]:
    """The comparison of the selected runs (named `runs`, or every run of `models`, or
    every run): one table per study that has a run among them (`tables`: every
    comparison), the takedown table of each suite x model judged under two methods or
    more, and the trace figures of each run the trace judge judged."""
    tables = comparisons() if tables is None else tables
    if by not in views(tables):
        raise UserError(f"unknown view '{by}' (one of {', '.join(views(tables))})")
    selected = _Runs(store, comparison_runs(store, runs, models))
    built = [_table(selected, t, by) for t in tables]
    shown = [t for t in built if t is not None]
    absent = [t.paper for t, b in zip(tables, built, strict=True) if b is None]
    return {
        "by": by,
        "runs": [r["name"] for r in selected.runs],
        "tables": shown,
        "not_shown": [f"{paper}: no run of its kinds" for paper in absent],
        "takedown": takedown_tables(store, selected.runs),
        "trace": trace_rows(selected.runs, selected.report),
    }
