"""The copyright-notice study (paper 002) as a study: notice cases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from copyaudit.items import CONTENT_TASKS, EVERY_OUTPUT_TARGETS, WHOLE_OUTPUT_TARGETS
from copyaudit.records import case_record
from copyaudit.studies.notice.format import read_cases
from copyaudit.studies.notice.metrics import notice_target
from copyaudit.studies.notice.prompts import NoticePrompter
from copyaudit.studies.spec import ReferenceText, StudySpec
from copyaudit.types import Case

VERBATIM_TASKS = ("repeat", "extract")  # the tasks that ask for the text itself


def protected_texts(case: Case) -> list[str]:
    """What MemFree guards: the snippet and its notice."""
    return [case.payload["snippet"], case.payload.get("notice", "")]


def reference(
    kind: str, payload: Mapping[str, Any], judgments: Sequence[Any]
) -> list[ReferenceText]:
    """The dossier's reference: the snippet, its notice and the query."""
    return [
        ReferenceText("Snippet", payload.get("snippet")),
        ReferenceText(f"Notice ({payload.get('notice_level')})", payload.get("notice")),
        ReferenceText(f"Query ({payload.get('task')})", payload.get("query")),
    ]


def whole_output_targets(kind: str, payload: Mapping[str, Any]) -> tuple[str, ...]:
    """Refusal and verbatim copy; content too for a paraphrase or translate task."""
    return WHOLE_OUTPUT_TARGETS if payload.get("task") in CONTENT_TASKS else EVERY_OUTPUT_TARGETS


def verbatim_source(payload: Mapping[str, Any]) -> str | None:
    """For repeat and extract: the snippet and its notice, as the notice judge's target."""
    if payload.get("task") not in VERBATIM_TASKS:
        return None
    return notice_target(str(payload.get("snippet", "")), str(payload.get("notice") or ""))


NOTICE = StudySpec(
    name="notice",
    title="copyright notice",
    kinds=("notice",),
    read_cases=read_cases,
    to_record=case_record,
    reference=reference,
    samples={"notice": "notice.jsonl"},
    prompter=NoticePrompter(),
    protected_texts=protected_texts,
    whole_output_targets=whole_output_targets,
    run_fields=frozenset({"notice_position-field", "notice_mitigation-field"}),
    verbatim_sources={"notice": verbatim_source},
)
