"""Prefix extraction (verbatim memorisation) as a study, after HELM's copyright
scenario: a text cut into a prefix and its true continuation; the model continues
the prefix greedily and the extraction judge counts what it reproduced."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from copyaudit.records import case_record
from copyaudit.render.highlight import reference_marks
from copyaudit.studies.extraction.format import read_cases, split_cases
from copyaudit.studies.extraction.prompts import ExtractionPrompter
from copyaudit.studies.spec import ReferenceText, StudySpec
from copyaudit.types import Case


def protected_texts(case: Case) -> list[str]:
    """What MemFree guards: the prefix and its continuation, one text."""
    return [case.payload["prefix"] + case.payload["reference"]]


def reference(
    kind: str, payload: Mapping[str, Any], judgments: Sequence[Any]
) -> list[ReferenceText]:
    """The dossier's reference: the true continuation (copied runs marked)."""
    marks = reference_marks(judgments)
    return [ReferenceText("True continuation", payload.get("reference"), marks)]


def verbatim_source(payload: Mapping[str, Any]) -> str | None:
    """The true continuation."""
    return payload.get("reference")


EXTRACTION = StudySpec(
    name="extraction",
    title="prefix extraction",
    kinds=("extraction",),
    read_cases=read_cases,
    to_record=case_record,
    reference=reference,
    samples={"extraction": "extraction.jsonl"},
    prompter=ExtractionPrompter(),
    protected_texts=protected_texts,
    verbatim_sources={"extraction": verbatim_source},
    split_cases=split_cases,
)
