"""Importers for the source studies' published formats, and the reverse mapping.

Every reader keeps the line (JSON/JSONL) or row (CSV) of each record so that a
bad file is reported as `file: line N: field 'x': what is wrong`.

Formats by kind:
  literal, qa   {id, title, input, reference[, author, year]}       JSON array or JSONL
  nonliteral    {id, title, input, reference_events: [str],
                 reference_characters: [[alias, ...], ...][, author, year]}
  decop         BookTection / arXivTection CSV: Example_A..Example_D, Answer, ID, Label
                [, Length]; ID is Title_-_Author; Label 1 = suspect, 0 = clean.
                (JSONL with the same columns is accepted too: that is what export writes.)
  notice        {id, title, source_type, snippet, notice_level, notice, task, query
                 [, query_rewriting_weight]}, or the notice study's own
                dataset_<config>.json (see copyaudit.studies.notice.dataset), detected by its fields
  generations   {case_id, output[, template]} (template defaults to 1)

A file whose structure is wrong (not UTF-8, not JSON/CSV, a required column absent
from every record) is rejected whole. A record whose content cannot be used is a
`RowProblem`: readers collect every one of them (`Loaded.problems`) and the caller
either stops (`InvalidRows`, the default) or imports the other records and keeps
the problems as the skipped rows (`--skip-invalid`).
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from copyaudit.errors import InputError
from copyaudit.rows import Loaded, RowProblem
from copyaudit.types import TASK_KINDS, Case, Work

T = TypeVar("T")

DECOP_LETTERS = ("A", "B", "C", "D")
DECOP_COLUMNS = ("Example_A", "Example_B", "Example_C", "Example_D", "Answer", "ID", "Label")
NOTICE_TASKS = ("repeat", "extract", "paraphrase", "translate")
NOTICE_LEVELS = ("original", "all_rights_reserved", "none")


@dataclass(frozen=True)
class Record:
    """One raw record and where it is in its file."""

    path: str
    line: int
    data: dict[str, Any]
    unit: str = "line"

    def error(self, field: str | None, message: str) -> InputError:
        return InputError(self.path, self.line, field, message, unit=self.unit)


@dataclass(frozen=True)
class LocatedCase:
    line: int
    case: Case


@dataclass(frozen=True)
class LocatedGeneration:
    line: int
    case_id: str
    template: int
    output: str


# --- reading -----------------------------------------------------------------------------


def read_text(path: str | Path) -> str:
    """Read a file as UTF-8 (a leading BOM is dropped); bad bytes name their line."""
    raw = Path(path).read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            path,
            line,
            None,
            f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
            f"{exc.start}); save the file as UTF-8",
        ) from None


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def read_json_records(path: str | Path) -> Iterator[Record]:
    """Records from a JSON array of objects or from JSONL, each with its line number."""
    text = read_text(path)
    stripped = text.lstrip()
    if stripped.startswith("["):
        yield from _read_json_array(str(path), text)
        return
    checked = False
    # JSON Lines ends a line at "\n" only: str.splitlines() also splits at U+2028,
    # U+0085 and others, which json.dumps(ensure_ascii=False) leaves raw inside strings
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            _reject_whole_document(path, text)
            raise InputError(
                path, number, None, f"malformed JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(value, dict):
            raise InputError(path, number, None, "expected a JSON object on each line")
        if not checked:
            checked = True
            if value and all(isinstance(v, dict | list) for v in value.values()):
                # a record holds some text; an object of only containers is a whole
                # data set in one object ({"cases": [...]}, pandas' column layout)
                _reject_whole_document(path, text)
        yield Record(str(path), number, value)


def _reject_whole_document(path: str | Path, text: str) -> None:
    """A file that is one valid JSON document but not an array (a top-level object
    spread over several lines) gets a message saying so, not "malformed JSON"."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return
    got = "object" if isinstance(value, dict) else type(value).__name__
    raise InputError(
        path, None, None, f"expected a JSON array of objects or JSON Lines, got one JSON {got}"
    )


def _read_json_array(path: str, text: str) -> Iterator[Record]:
    decoder = json.JSONDecoder()
    pos = text.index("[") + 1
    expect_item = True
    while True:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        if pos >= len(text):
            raise InputError(path, _line_of(text, pos), None, "malformed JSON: unterminated array")
        if text[pos] == "]":
            break
        if text[pos] == "," and not expect_item:
            pos += 1
            expect_item = True
            continue
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise InputError(
                path, exc.lineno, None, f"malformed JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(value, dict):
            raise InputError(path, _line_of(text, pos), None, "expected an array of objects")
        yield Record(path, _line_of(text, pos), value)
        pos = end
        expect_item = False
    if text[pos + 1 :].strip():
        raise InputError(
            path, _line_of(text, pos + 1), None, "malformed JSON: extra data after the array"
        )


def read_csv_records(path: str | Path, required: tuple[str, ...]) -> Iterator[Record]:
    """CSV rows as records; row 1 is the header, so the first data row is row 2."""
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = reader.fieldnames or []
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(
            path, 1, missing[0], f"missing column (header has: {', '.join(header)})", unit="row"
        )
    try:
        for number, row in enumerate(reader, start=2):
            if None in row:
                raise InputError(path, number, None, "more cells than header columns", unit="row")
            yield Record(str(path), number, dict(row), unit="row")
    except csv.Error as exc:
        raise InputError(path, reader.line_num, None, f"malformed CSV: {exc}", unit="row") from None


# --- field validation ----------------------------------------------------------------------


def _string(record: Record, field: str, *, required: bool = True, allow_empty: bool = False):
    if field not in record.data or record.data[field] is None:
        if required:
            raise record.error(field, "missing")
        return None
    value = record.data[field]
    if not isinstance(value, str):
        raise record.error(field, f"expected a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise record.error(field, "must not be empty")
    return value


def _year(record: Record) -> int | None:
    value = record.data.get("year")
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise record.error("year", f"expected an integer, got {type(value).__name__}")
    return value


def _string_list(record: Record, field: str) -> list[str]:
    value = record.data.get(field)
    if value is None:
        raise record.error(field, "missing")
    if not isinstance(value, list) or not value:
        raise record.error(field, "expected a non-empty list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise record.error(f"{field}[{i}]", "expected a non-empty string")
    return value


def _alias_lists(record: Record, field: str) -> list[list[str]]:
    value = record.data.get(field)
    if value is None:
        raise record.error(field, "missing")
    # an empty list is valid: CopyBench scores such a case as 0 characters
    if not isinstance(value, list):
        raise record.error(field, "expected a list of alias lists")
    for i, aliases in enumerate(value):
        if not isinstance(aliases, list):
            raise record.error(f"{field}[{i}]", "expected a list of aliases")
        if not aliases:
            raise record.error(f"{field}[{i}]", "alias list is empty")
        for j, alias in enumerate(aliases):
            if not isinstance(alias, str) or not alias.strip():
                raise record.error(f"{field}[{i}][{j}]", "expected a non-empty string")
    return value


def _choice(record: Record, field: str, choices: tuple[str, ...]) -> str:
    value = _string(record, field)
    if value not in choices:
        raise record.error(field, f"'{value}' is not one of {', '.join(choices)}")
    return value


def _work(record: Record, title: str, membership: str = "unknown") -> Work:
    author = _string(record, "author", required=False)
    return Work(title=title, author=author, year=_year(record), membership=membership)


# --- per-kind parsers ---------------------------------------------------------------------


def _parse_text_case(kind: str) -> Callable[[Record], Case]:
    def parse(record: Record) -> Case:
        return Case(
            case_id=_string(record, "id"),
            kind=kind,
            work=_work(record, _string(record, "title")),
            payload={"input": _string(record, "input"), "reference": _string(record, "reference")},
        )

    return parse


def _parse_nonliteral(record: Record) -> Case:
    return Case(
        case_id=_string(record, "id"),
        kind="nonliteral",
        work=_work(record, _string(record, "title")),
        payload={
            "input": _string(record, "input"),
            "reference_events": _string_list(record, "reference_events"),
            "reference_characters": _alias_lists(record, "reference_characters"),
        },
    )


def _parse_notice(record: Record) -> Case:
    return Case(
        case_id=_string(record, "id"),
        kind="notice",
        work=_work(record, _string(record, "title")),
        payload={
            "source_type": _string(record, "source_type"),
            "snippet": _string(record, "snippet"),
            "notice_level": _choice(record, "notice_level", NOTICE_LEVELS),
            "notice": _string(record, "notice", allow_empty=True),
            "task": _choice(record, "task", NOTICE_TASKS),
            "query": _string(record, "query"),
            **_weight(record, "query_rewriting_weight"),
        },
    )


def _weight(record: Record, field: str) -> dict[str, float]:
    """{"query_rewriting_weight": value} from the optional number in `field` (the
    notice study's weight of a rewritten query in its averages), else {}."""
    value = record.data.get(field)
    if value is None:
        return {}
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise record.error(field, f"expected a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise record.error(field, f"expected a finite number, got {value}")
    return {"query_rewriting_weight": value}


def parse_decop_id(value: str) -> tuple[str, str | None]:
    """'Pride_and_Prejudice_-_Jane_Austen' -> ('Pride and Prejudice', 'Jane Austen')."""
    title, sep, author = value.partition("_-_")
    clean = lambda s: " ".join(s.replace("_", " ").split())  # noqa: E731
    return clean(title), (clean(author) if sep else None)


def _decop_options(record: Record) -> list[str]:
    options = []
    for letter in DECOP_LETTERS:
        field = f"Example_{letter}"
        value = record.data.get(field)
        if not isinstance(value, str) or not value.strip():
            raise record.error(field, "missing or empty passage")
        options.append(value)
    for i, option in enumerate(options):
        same = [f"Example_{DECOP_LETTERS[j]}" for j in range(i) if options[j] == option]
        if same:
            raise record.error(
                f"Example_{DECOP_LETTERS[i]}",
                f"identical to {same[0]} (the four options must be distinct)",
            )
    return options


def _parse_decop_row(record: Record, counters: dict[str, int]) -> Case:
    data = record.data
    raw_id = data.get("ID")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise record.error("ID", "missing (expected Title_-_Author)")
    work_id = raw_id.strip()
    # numbered by position among the work's rows, valid or not: a skipped row leaves
    # a gap, so fixing it later does not renumber the work's other passages
    counters[work_id] = counters.get(work_id, 0) + 1
    number = counters[work_id]
    options = _decop_options(record)
    answer = str(data.get("Answer", "")).strip().upper()
    if answer not in DECOP_LETTERS:
        raise record.error("Answer", f"'{data.get('Answer')}' is not one of A, B, C, D")
    label = str(data.get("Label", "")).strip()
    if label not in ("0", "1"):
        raise record.error("Label", f"'{data.get('Label')}' is not 0 (clean) or 1 (suspect)")
    title, author = parse_decop_id(work_id)
    payload: dict[str, Any] = {
        "options": options,
        "answer": DECOP_LETTERS.index(answer),
        "id": work_id,
    }
    length = data.get("Length")
    if length not in (None, ""):
        payload["length"] = str(length)
    return Case(
        case_id=f"{work_id}/{number}",
        kind="decop",
        work=Work(title=title, author=author, membership="suspect" if label == "1" else "clean"),
        payload=payload,
    )


PARSERS: dict[str, Callable[[Record], Case]] = {
    "literal": _parse_text_case("literal"),
    "qa": _parse_text_case("qa"),
    "nonliteral": _parse_nonliteral,
    "notice": _parse_notice,
}
REQUIRED: dict[str, tuple[str, ...]] = {
    "literal": ("id", "title", "input", "reference"),
    "qa": ("id", "title", "input", "reference"),
    "nonliteral": ("id", "title", "input", "reference_events", "reference_characters"),
    "notice": (
        "id",
        "title",
        "source_type",
        "snippet",
        "notice_level",
        "notice",
        "task",
        "query",
    ),
    "decop": DECOP_COLUMNS,
}


def check_kind(kind: str, path: str | Path) -> None:
    if kind not in TASK_KINDS:
        raise InputError(
            path, None, "kind", f"unknown kind '{kind}' (one of {', '.join(TASK_KINDS)})"
        )


def collect(
    path: str | Path,
    records: Iterable[Record],
    parse: Callable[[Record], T],
    *,
    required: Sequence[str] = (),
    key: Callable[[T], Hashable] | None = None,
    duplicate: Callable[[T, int], RowProblem] | None = None,
) -> Loaded[T]:
    """Parse every record; a record that raises InputError, or whose `key` repeats an
    earlier one (`duplicate` words it), becomes a RowProblem instead of stopping. A
    `required` field that no record has is a structural problem (the JSON counterpart
    of a CSV column absent from the header): InputError, the whole file rejected."""
    items: list[T] = []
    problems: list[RowProblem] = []
    seen: dict[Hashable, int] = {}
    absent = set(required)
    count = 0
    for record in records:
        count += 1
        if absent:
            absent.difference_update(record.data)
        try:
            item = parse(record)
        except InputError as exc:
            problems.append(RowProblem.from_error(exc))
            continue
        if key is not None and duplicate is not None:
            k = key(item)
            if k in seen:
                problems.append(duplicate(item, seen[k]))
                continue
            seen[k] = record.line
        items.append(item)
    if not count:
        raise InputError(path, None, None, "no records found")
    if absent:
        field = next(f for f in required if f in absent)
        raise InputError(path, None, field, "missing from every record (a required field)")
    return Loaded(str(path), items, problems)


def read_cases(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    """Every usable case of the file and the problems of the others; structural
    problems (not UTF-8, not JSON/CSV, a required field absent) raise InputError."""
    check_kind(kind, path)
    if not Path(path).is_file():
        raise InputError(path, None, None, "no such file")
    if kind == "decop":
        counters: dict[str, int] = {}
        is_csv = Path(path).suffix.lower() not in (".jsonl", ".json")
        records = read_csv_records(path, DECOP_COLUMNS) if is_csv else read_json_records(path)
        return collect(
            path,
            records,
            lambda r: LocatedCase(r.line, _parse_decop_row(r, counters)),
            required=() if is_csv else DECOP_COLUMNS,
        )
    records = read_json_records(path)
    first = next(records, None)
    parse, required = PARSERS[kind], REQUIRED[kind]
    if kind == "notice" and first is not None:
        from copyaudit.studies.notice import (
            dataset as notice_study,
        )  # its parser builds on this module's helpers

        if notice_study.is_study_layout(first):
            parse, required = notice_study.parse_row, notice_study.REQUIRED
    return collect(
        path,
        itertools.chain([first] if first is not None else [], records),
        lambda r: LocatedCase(r.line, parse(r)),
        required=required,
        key=lambda c: c.case.case_id,
        duplicate=lambda c, first: RowProblem(
            c.line, "id", f"duplicate id '{c.case.case_id}' (first on line {first})"
        ),
    )


def load_cases(kind: str, path: str | Path, *, skip_invalid: bool = False) -> list[LocatedCase]:
    """The file's cases; raises InvalidRows listing every unusable record unless
    `skip_invalid` (then those are left out)."""
    return read_cases(kind, path).accept(skip_invalid)


def _parse_generation(record: Record) -> LocatedGeneration:
    case_id = _string(record, "case_id")
    output = _string(record, "output", allow_empty=True)
    template = record.data.get("template", 1)
    if isinstance(template, bool) or not isinstance(template, int) or template < 1:
        raise record.error("template", f"expected a positive integer, got {template!r}")
    return LocatedGeneration(record.line, case_id, template, output)


def read_generations(path: str | Path) -> Loaded[LocatedGeneration]:
    """A generations file {case_id, output[, template]}: usable rows and problems."""
    if not Path(path).is_file():
        raise InputError(path, None, None, "no such file")
    return collect(
        path,
        read_json_records(path),
        _parse_generation,
        required=("case_id", "output"),
        key=lambda g: (g.case_id, g.template),
        duplicate=lambda g, first: RowProblem(
            g.line,
            "case_id",
            f"duplicate generation for case '{g.case_id}' template {g.template} "
            f"(first on line {first})",
        ),
    )


def load_generations(path: str | Path, *, skip_invalid: bool = False) -> list[LocatedGeneration]:
    """Parse a generations file {case_id, output[, template]}."""
    return read_generations(path).accept(skip_invalid)


# --- export: back to the source formats ---------------------------------------------------


def case_to_record(case: Case) -> dict[str, Any]:
    """The record that `load_cases(case.kind, ...)` reads back as the same case."""
    p = case.payload
    if case.kind == "decop":
        row = {f"Example_{letter}": p["options"][i] for i, letter in enumerate(DECOP_LETTERS)}
        row.update(
            Answer=DECOP_LETTERS[p["answer"]],
            ID=p["id"],
            Label=1 if case.work.membership == "suspect" else 0,
        )
        if "length" in p:
            row["Length"] = p["length"]
        return row
    record: dict[str, Any] = {"id": case.case_id, "title": case.work.title}
    if case.work.author is not None:
        record["author"] = case.work.author
    if case.work.year is not None:
        record["year"] = case.work.year
    record.update(p)
    return record
