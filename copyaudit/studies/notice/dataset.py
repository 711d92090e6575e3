"""The copyright-notice study's own dataset file, read as it is.

The study's `src/generate_dataset.py` writes `dataset_<config>.json` with pandas
(`orient="records"`): one record per (notice, source sample, rewritten query) with
slash-namespaced fields and no id. The fields used here:

  source/source_name     the source file's name ("Beautyland (...).txt") -> work title
  source/type            book / doc / news / scripts                       -> source_type
  source/sample          the snippet (100, 500 or 1000 words)              -> snippet
  notice/level           "original" / "all rights reserved" / "no notice"  -> notice_level
  notice/notice          the notice, raw (`\\r\\n` kept byte for byte)       -> notice
  query/task             extract / repeat / paraphrase / translate          -> task
  query/rewritten_query  the query as the model received it                 -> query
  query/query_rewriting_weight (also accepted without the "query/" prefix)
                         the rewriting's weight in the study's averages -> payload

A case id is derived from the whole record (its fields in canonical JSON), so the
same file always gives the same ids and re-importing it changes nothing; a record
repeated exactly is reported as a duplicate id.
"""

from __future__ import annotations

from typing import Any

from copyaudit.hashing import stable_hash
from copyaudit.records import Record, string_field, weight_field
from copyaudit.studies.notice.metrics import NOTICE_TASKS
from copyaudit.types import Case, Work

REQUIRED: tuple[str, ...] = (
    "source/source_name",
    "source/type",
    "source/sample",
    "notice/level",
    "notice/notice",
    "query/task",
    "query/rewritten_query",
)
WEIGHT_FIELDS: tuple[str, ...] = ("query/query_rewriting_weight", "query_rewriting_weight")
# the study's level names -> ours (ours are accepted too)
LEVELS: dict[str, str] = {
    "original": "original",
    "all rights reserved": "all_rights_reserved",
    "no notice": "none",
    "all_rights_reserved": "all_rights_reserved",
    "none": "none",
}


def is_study_layout(first: Record) -> bool:
    """True when the file's first record carries the study's namespaced fields."""
    return "notice/level" in first.data or "query/task" in first.data


def _title(source_name: str) -> str:
    name = source_name.strip()
    return name[: -len(".txt")] if name.lower().endswith(".txt") else name


def parse_row(record: Record) -> Case:
    """One record of the study's dataset as a notice case."""
    level = string_field(record, "notice/level")
    if level.strip().lower() not in LEVELS:
        raise record.error(
            "notice/level", f"'{level}' is not one of original, all rights reserved, no notice"
        )
    task = string_field(record, "query/task")
    if task not in NOTICE_TASKS:
        raise record.error("query/task", f"'{task}' is not one of {', '.join(NOTICE_TASKS)}")
    weight_name = next((f for f in WEIGHT_FIELDS if f in record.data), WEIGHT_FIELDS[0])
    payload: dict[str, Any] = {
        "source_type": string_field(record, "source/type"),
        "snippet": string_field(record, "source/sample"),
        "notice_level": LEVELS[level.strip().lower()],
        "notice": string_field(record, "notice/notice", allow_empty=True),
        "task": task,
        "query": string_field(record, "query/rewritten_query"),
        **weight_field(record, weight_name),
    }
    source = string_field(record, "source/source_name")
    record.uses_all()  # every field makes the id
    digest = stable_hash(record.data, length=12)
    return Case(
        case_id=f"{payload['source_type']}/{payload['task']}/{payload['notice_level']}/{digest}",
        kind="notice",
        work=Work(title=_title(source)),
        payload=payload,
    )
