"""The case dossier as data: what the builder gathers and the renderers write."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copyaudit.judges.metric_facts import format_metric
from copyaudit.render.highlight import Segment


@dataclass(frozen=True)
class ReferenceBlock:
    title: str
    segments: list[Segment]


@dataclass
class Dossier:
    key: str
    generation: dict[str, Any]  # db.case_file.generation_record
    prompt: str
    prompt_note: str | None  # set when the prompt shown is not the generation's own
    output: list[Segment]
    reference: list[ReferenceBlock]
    items: list[dict[str, Any]]  # per labelled/judged item: verdicts and human labels
    judgments: list[dict[str, Any]]  # db.case_file.judgments_with_provenance
    template: dict[str, Any]
    labels: list[dict[str, Any]]  # current labels
    review: dict[str, Any]  # current status, reviewer, note
    history: list[dict[str, Any]]  # every label/review event, oldest first
    integrity: dict[str, Any] = field(default_factory=dict)
    # each judge figure's measured P/R/F1 against people (verification.quality)
    quality: list[dict[str, Any]] = field(default_factory=list)
    # the run's rates as people would give them (reports.people.run_people_lines)
    people: list[str] = field(default_factory=list)


def judgment_figures(judgment: dict[str, Any]) -> tuple[str, str]:
    """A judgment's value and threshold as every screen writes its metric (the raw
    floats stay exact in the dossier's JSON)."""
    metric, threshold = judgment["metric"], judgment["evidence"].get("threshold")
    shown = format_metric(metric, threshold) if isinstance(threshold, int | float) else ""
    return format_metric(metric, judgment["value"]), shown if threshold is not None else ""


def flag_text(flagged: bool | None) -> str:
    return "—" if flagged is None else ("flagged" if flagged else "not flagged")


def verdict_text(verdict: dict[str, Any]) -> str:
    """One judge's verdict on an item, e.g. 'events/events: flagged (score 0.9, threshold 0.5)'."""
    if verdict["excluded"]:
        state = "left out (named in the prompt)"
    else:
        state = flag_text(verdict["verdict"])
    details = []
    if verdict["score"] is not None:
        details.append(f"score {round(verdict['score'], 4)}")
    if verdict["threshold"] is not None:
        details.append(f"threshold {verdict['threshold']}")
    suffix = f" ({', '.join(details)})" if details else ""
    return f"{verdict['judge']}/{verdict['metric']}: {state}{suffix}"
