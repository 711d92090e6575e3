"""Judgments whose judge model's answer could not be had or read (an LM judge answering
garbage, an endpoint failing for good): counted per metric, and a warning when they are
most of a metric's judgments, since its rate then rests on the few that were read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from copyaudit.judges.lm_judge import UNREADABLE_ERRORS
from db.queries import errors_starting
from db.run_totals import judgment_tallies

if TYPE_CHECKING:
    from db.connection import Store


def unreadable_counts(store: Store, run_id: int) -> dict[str, int]:
    """metric -> the run's judgments left without a value by an unreadable answer."""
    return errors_starting(store, run_id, UNREADABLE_ERRORS)


def unreadable_warnings(unreadable: Mapping[str, int], judged: Mapping[str, int]) -> list[str]:
    """One sentence per metric whose judgments are mostly unreadable (more than half)."""
    return [
        f"{metric}: {count} of {judged[metric]} judgments unreadable (the judge model's "
        "answers could not be read or its requests failed); its figures leave them out and "
        "rest on the rest"
        for metric, count in unreadable.items()
        if judged.get(metric) and 2 * count > judged[metric]
    ]


def run_warnings(store: Store, run_id: int) -> list[str]:
    """The run's warnings about unreadable judgments (the app shows them with the run)."""
    judged: dict[str, int] = {}
    for row in judgment_tallies(store, run_id):
        judged[row["metric"]] = judged.get(row["metric"], 0) + int(row["judged"])
    return unreadable_warnings(unreadable_counts(store, run_id), judged)
