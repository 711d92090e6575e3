"""CopyBench's case files, JSON array or JSON Lines:

literal, qa   {id, title, input, reference[, author, year]}
nonliteral    {id, title, input, reference_events: [str],
               reference_characters: [[alias, ...], ...][, author, year]}
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from copyaudit.records import (
    LocatedCase,
    Record,
    alias_lists_field,
    collect_cases,
    id_field,
    string_field,
    string_list_field,
    work_field,
)
from copyaudit.rows import Loaded
from copyaudit.sources import read_records
from copyaudit.types import Case


def _parse_text_case(kind: str) -> Callable[[Record], Case]:
    def parse(record: Record) -> Case:
        return Case(
            case_id=id_field(record, "id"),
            kind=kind,
            work=work_field(record, string_field(record, "title")),
            payload={
                "input": string_field(record, "input"),
                "reference": string_field(record, "reference"),
            },
        )

    return parse


def _parse_nonliteral(record: Record) -> Case:
    return Case(
        case_id=id_field(record, "id"),
        kind="nonliteral",
        work=work_field(record, string_field(record, "title")),
        payload={
            "input": string_field(record, "input"),
            "reference_events": string_list_field(record, "reference_events"),
            "reference_characters": alias_lists_field(record, "reference_characters"),
        },
    )


PARSERS: dict[str, Callable[[Record], Case]] = {
    "literal": _parse_text_case("literal"),
    "qa": _parse_text_case("qa"),
    "nonliteral": _parse_nonliteral,
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "literal": ("id", "title", "input", "reference"),
    "qa": ("id", "title", "input", "reference"),
    "nonliteral": ("id", "title", "input", "reference_events", "reference_characters"),
}


def read_cases(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    """The file's literal, qa or nonliteral cases and the problems of the other records."""
    return collect_cases(path, read_records(path), PARSERS[kind], REQUIRED[kind])
