"""CopyBench (paper 000) as a study: literal, nonliteral and qa cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from copyaudit.records import case_record
from copyaudit.render.highlight import reference_marks
from copyaudit.studies.copybench.format import read_cases
from copyaudit.studies.copybench.prompts import CopyBenchPrompter
from copyaudit.studies.spec import ReferenceText, StudySpec
from copyaudit.types import Case


def protected_texts(case: Case) -> list[str]:
    """What MemFree guards: the passage a literal prompt continues, a qa answer, the
    story's events."""
    p = case.payload
    if case.kind == "literal":
        return [f"{p['input']} {p['reference']}"]
    if case.kind == "qa":
        return [p["reference"]]
    return list(p["reference_events"])


def reference(
    kind: str, payload: Mapping[str, Any], judgments: Sequence[Any]
) -> list[ReferenceText]:
    """The dossier's reference: the continuation (the literal judge's spans marked),
    the answers, or the numbered events and characters."""
    if kind == "literal":
        marks = reference_marks(judgments)
        return [ReferenceText("Reference continuation", payload.get("reference"), marks)]
    if kind == "qa":
        return [ReferenceText("Reference answer(s)", payload.get("reference"))]
    events = payload.get("reference_events") or []
    characters = payload.get("reference_characters") or []
    return [
        ReferenceText("Reference events", [f"[{i}] {e}" for i, e in enumerate(events, 1)]),
        ReferenceText(
            "Reference characters (aliases)",
            [f"[{i}] {' / '.join(map(str, a))}" for i, a in enumerate(characters, 1)],
        ),
    ]


def literal_source(payload: Mapping[str, Any]) -> str | None:
    """A literal case's true continuation (the text the model was not shown)."""
    return payload.get("reference")


COPYBENCH = StudySpec(
    name="copybench",
    title="CopyBench",
    kinds=("literal", "nonliteral", "qa"),
    read_cases=read_cases,
    to_record=case_record,
    reference=reference,
    samples={"literal": "literal.jsonl", "nonliteral": "nonliteral.jsonl", "qa": "qa.jsonl"},
    prompter=CopyBenchPrompter(),
    protected_texts=protected_texts,
    verbatim_sources={"literal": literal_source},
)
