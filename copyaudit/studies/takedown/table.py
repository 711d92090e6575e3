"""The takedown table: one row per takedown method run on one suite with one model —
its win rates on CoTaEval's eight infringement metrics and their average, its utility
(the suite's own quality figure) beside the method-less run's, and its decoding speed
beside the method-less run's (each run times its own generations).

`takedown_table(store, suite, model)` is pure data (rows as dataclasses), for the CLI,
the app and `copyaudit compare`; copyaudit.studies.takedown.render prints it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copyaudit.judges.infringement import INFRINGEMENT_METRICS, METRICS
from copyaudit.studies.takedown.winrates import win_rates
from copyaudit.vocabulary import MITIGATIONS
from db.connection import Store
from db.runs import suite_id, suite_kind
from db.takedown import decoding_speed, generation_metrics, metric_mean, suite_model_runs

# in CoTaEval's order: vanilla, system prompt, top-k perturbation, MemFree, R-CAD
METHODS: tuple[str, ...] = tuple(MITIGATIONS)  # CoTaEval's order
BASELINE = "none"
# the suite's own quality figure, read with the method on and off (CotaEval's utility)
UTILITY_METRIC: dict[str, str] = {"literal": "fluency", "nonliteral": "fluency", "qa": "qa_f1"}
HIGHER_IS_BETTER = frozenset(m.name for m in METRICS if not m.lower_is_better)


@dataclass(frozen=True)
class TakedownRow:
    method: str
    run: str
    status: str
    win_rates: dict[str, float]  # metric -> win rate (empty when none can be computed)
    average: float | None
    utility: float | None  # mean of the utility metric (None: not judged)
    utility_n: int
    tokens_per_s: float | None  # None: no timed generation
    speed_ratio: float | None  # tokens/s over the method-less run's


@dataclass(frozen=True)
class TakedownTable:
    suite: str
    model: str
    metrics: tuple[str, ...]
    examples: int  # generations every method has all eight metrics for
    utility_metric: str | None
    rows: tuple[TakedownRow, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)  # why a figure is missing

    def as_dict(self) -> dict[str, Any]:
        """The table as `--format json` prints it."""
        return {
            "suite": self.suite,
            "model": self.model,
            "metrics": list(self.metrics),
            "examples": self.examples,
            "utility_metric": self.utility_metric,
            "rows": [row.__dict__ for row in self.rows],
            "notes": list(self.notes),
        }


def _method_runs(store: Store, suite: str, model: str) -> list[dict[str, Any]]:
    """The latest run of each method, in METHODS order."""
    latest: dict[str, dict[str, Any]] = {}
    for run in suite_model_runs(store, suite, model):
        latest[run["mitigation"] or BASELINE] = run
    return [latest[m] for m in METHODS if m in latest] + [
        run for m, run in latest.items() if m not in METHODS
    ]


def takedown_table(store: Store, suite: str, model: str) -> TakedownTable:
    """The takedown table of `suite` x `model` from the runs stored (see module doc)."""
    kind = suite_kind(store, suite_id(store, suite))
    runs = _method_runs(store, suite, model)
    notes: list[str] = []
    values = {
        r["mitigation"]: generation_metrics(store, r["id"], INFRINGEMENT_METRICS) for r in runs
    }
    # a method with nothing to compare (cancelled before its first generation, or not
    # judged) is left out, not allowed to empty every other method's win rates
    for run in [r for r in runs if not values[r["mitigation"]]]:
        notes.append(
            f"{run['mitigation']} ({run['name']}, {run['status']}) left out: no generation "
            "with the eight metrics"
        )
        del values[run["mitigation"]]
    runs = [r for r in runs if r["mitigation"] in values]
    keys = set.intersection(*(set(v) for v in values.values())) if values else set()
    full = len(INFRINGEMENT_METRICS)
    complete = sorted(k for k in keys if all(len(v[k]) == full for v in values.values()))
    rates = None
    if len(runs) < 2:
        notes.append("win rates compare two methods or more; run `copyaudit takedown`")
    elif not complete:
        notes.append("no generation has the eight metrics in every run (judge `takedown`)")
    else:
        examples = [{m: values[m][key] for m in values} for key in complete]
        rates = win_rates(examples, INFRINGEMENT_METRICS, HIGHER_IS_BETTER)
    utility_metric = UTILITY_METRIC.get(kind or "")
    if utility_metric is None:
        notes.append(f"a {kind} suite has no utility figure")
    speeds = {r["mitigation"]: _tokens_per_s(store, r["id"]) for r in runs}
    baseline_speed = speeds.get(BASELINE)
    rows = []
    for run in runs:
        method = run["mitigation"]
        utility, utility_n = (
            metric_mean(store, run["id"], utility_metric) if utility_metric else (None, 0)
        )
        speed = speeds[method]
        rows.append(
            TakedownRow(
                method=method,
                run=run["name"],
                status=run["status"],
                win_rates=rates.per_metric[method] if rates else {},
                average=rates.average[method] if rates else None,
                utility=utility,
                utility_n=utility_n,
                tokens_per_s=speed,
                speed_ratio=speed / baseline_speed if speed and baseline_speed else None,
            )
        )
    if utility_metric and all(row.utility is None for row in rows):
        notes.append(
            f"utility: no run has {utility_metric} judgments" + _utility_hint(utility_metric)
        )
    if baseline_speed is None:
        notes.append("speed ratio: no method-less (none) run to compare with")
    return TakedownTable(
        suite, model, INFRINGEMENT_METRICS, len(complete), utility_metric, tuple(rows), tuple(notes)
    )


def _utility_hint(metric: str) -> str:
    return " (the fluency judge needs --judge-model)" if metric == "fluency" else ""


def _tokens_per_s(store: Store, run_id: int) -> float | None:
    tokens, seconds = decoding_speed(store, run_id)
    return tokens / seconds if tokens and seconds > 0 else None
