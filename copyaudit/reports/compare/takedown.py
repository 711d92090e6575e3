"""The takedown tables of a comparison: one per suite x model among the selected runs
whose runs were judged with CoTaEval's metrics under two methods or more (the table
itself is copyaudit.studies.takedown.table's)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from copyaudit.judges.infringement import INFRINGEMENT_METRICS
from copyaudit.studies.takedown.table import TakedownRow, TakedownTable, takedown_table
from db.takedown import metric_mean

if TYPE_CHECKING:
    from db.connection import Store


def takedown_tables(store: Store, runs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """As JSON: the takedown table of each suite x model with runs under two methods or
    more, one of them judged with the takedown judge."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for run in runs:
        groups.setdefault((run["suite"], run["model"] or ""), []).append(run)
    probe = INFRINGEMENT_METRICS[0]
    tables = []
    for (suite, model), members in groups.items():
        methods = {run["mitigation"] or "none" for run in members}
        if len(methods) < 2 or not any(metric_mean(store, r["id"], probe)[1] for r in members):
            continue
        tables.append(takedown_table(store, suite, model).as_dict())
    return tables


def from_dict(data: Mapping[str, Any]) -> TakedownTable:
    """The table back from its JSON form (for the Markdown and HTML renderers)."""
    return TakedownTable(
        data["suite"],
        data["model"],
        tuple(data["metrics"]),
        data["examples"],
        data["utility_metric"],
        tuple(TakedownRow(**row) for row in data["rows"]),
        tuple(data["notes"]),
    )
