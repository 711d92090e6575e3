"""The copyright-notice study's case files, JSON array or JSON Lines: this tool's
{id, title, source_type, snippet, notice_level, notice, task, query
[, query_rewriting_weight]}, or the study's own dataset_<config>.json
(copyaudit.studies.notice.dataset), told apart by the first record's fields."""

from __future__ import annotations

import itertools
from pathlib import Path

from copyaudit.records import (
    LocatedCase,
    Record,
    choice_field,
    collect_cases,
    id_field,
    string_field,
    weight_field,
    work_field,
)
from copyaudit.rows import Loaded
from copyaudit.sources import read_records
from copyaudit.studies.notice import dataset
from copyaudit.studies.notice.metrics import NOTICE_TASKS
from copyaudit.types import Case

NOTICE_LEVELS = ("original", "all_rights_reserved", "none")
REQUIRED: tuple[str, ...] = (
    "id",
    "title",
    "source_type",
    "snippet",
    "notice_level",
    "notice",
    "task",
    "query",
)


def parse_case(record: Record) -> Case:
    """One record in this tool's layout as a notice case."""
    return Case(
        case_id=id_field(record, "id"),
        kind="notice",
        work=work_field(record, string_field(record, "title")),
        payload={
            "source_type": string_field(record, "source_type"),
            "snippet": string_field(record, "snippet"),
            "notice_level": choice_field(record, "notice_level", NOTICE_LEVELS),
            "notice": string_field(record, "notice", allow_empty=True),
            "task": choice_field(record, "task", NOTICE_TASKS),
            "query": string_field(record, "query"),
            **weight_field(record, "query_rewriting_weight"),
        },
    )


def read_cases(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    """The file's notice cases, in either layout, and the problems of the other records."""
    records = read_records(path)
    first = next(records, None)
    parse, required = parse_case, REQUIRED
    if first is not None and dataset.is_study_layout(first):
        parse, required = dataset.parse_row, dataset.REQUIRED
    return collect_cases(
        path,
        itertools.chain([first] if first is not None else [], records),
        parse,
        required,
    )
