"""Reading the records of a cases file, generically: JSON arrays, JSON Lines and CSV,
each record with its line (or row), the field checks the studies' parsers share, and
`collect`, which turns per-record failures into `RowProblem`s.

Every reader keeps the line (JSON/JSONL) or row (CSV) of each record so that a
bad file is reported as `file: line N: field 'x': what is wrong`. A file whose
structure is wrong (not UTF-8, not JSON/CSV, a required column absent from every
record) is rejected whole. What each study's records hold is its own parser's
business (copyaudit/studies/*/format.py).
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import math
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeVar

from copyaudit.errors import InputError, UserError
from copyaudit.rows import Loaded, RowProblem
from copyaudit.types import Case, Work

T = TypeVar("T")


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
    model: str | None = None  # the row's optional `model` field


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


# one decoder for every JSON record (JSONL lines and array items alike)
_DECODER = json.JSONDecoder()
CHUNK = 1 << 20  # characters read at a time from a JSON array file
_BOM = codecs.BOM_UTF8


def _bad_utf8(path: str | Path, line: int, offset: int, byte: int) -> InputError:
    return InputError(
        path,
        line,
        None,
        f"not valid UTF-8 (byte 0x{byte:02x} at offset {offset}); save the file as UTF-8",
    )


def read_json_records(path: str | Path, *, chunk: int = CHUNK) -> Iterator[Record]:
    """Records from a JSON array of objects or from JSONL, each with its line number,
    streamed: one line (JSONL) or one array item (plus a chunk of text) in memory at a
    time, so a file of any size is read in constant memory. A problem found late in
    the file (bad UTF-8, malformed JSON) raises when the reader gets there."""
    with open(path, "rb") as stream:
        array = _starts_with_bracket(stream)
        stream.seek(0)
        if array:
            yield from _read_json_array(str(path), _text_chunks(path, stream, chunk))
        else:
            yield from _read_json_lines(path, stream)


def _starts_with_bracket(stream: IO[bytes]) -> bool:
    """Whether the file's first non-blank character is '['."""
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    while block := stream.read(4096):
        text = decoder.decode(block).lstrip()
        if text:
            return text.startswith("[")
    return False


def _read_json_lines(path: str | Path, stream: IO[bytes]) -> Iterator[Record]:
    # JSON Lines ends a line at "\n" only (binary lines split there and nowhere else):
    # str.splitlines() would also split at U+2028, U+0085 and others, which
    # json.dumps(ensure_ascii=False) leaves raw inside strings
    held: Record | None = None  # a first record of only containers: a whole data set?
    seen_first = False
    offset = 0
    for number, raw in enumerate(stream, start=1):
        start, offset = offset, offset + len(raw)
        if number == 1 and raw.startswith(_BOM):
            raw, start = raw[len(_BOM) :], start + len(_BOM)
        try:
            line = raw.decode("utf-8").removesuffix("\n")
        except UnicodeDecodeError as exc:
            raise _bad_utf8(path, number, start + exc.start, raw[exc.start]) from None
        if not line.strip():
            continue
        try:
            value = _DECODER.decode(line)
        except json.JSONDecodeError as exc:
            if not seen_first:
                _reject_whole_document(path)
            raise InputError(
                path, number, None, f"malformed JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(value, dict):
            raise InputError(path, number, None, "expected a JSON object on each line")
        record = Record(str(path), number, value)
        if not seen_first:
            seen_first = True
            if value and all(isinstance(v, dict | list) for v in value.values()):
                # a record holds some text; an object of only containers is a whole
                # data set in one object ({"cases": [...]}, pandas' column layout) when
                # nothing else follows it
                held = record
                continue
        if held is not None:
            yield held
            held = None
        yield record
    if held is not None:
        raise _one_document(path, held.data)


def _reject_whole_document(path: str | Path) -> None:
    """A file that is one valid JSON document but not an array (a top-level object
    spread over several lines) gets a message saying so, not "malformed JSON". Read
    whole only when its first line is not JSON, to word that error."""
    try:
        value = json.loads(read_text(path))
    except json.JSONDecodeError:
        return
    raise _one_document(path, value)


def _one_document(path: str | Path, value: Any) -> InputError:
    got = "object" if isinstance(value, dict) else type(value).__name__
    return InputError(
        path, None, None, f"expected a JSON array of objects or JSON Lines, got one JSON {got}"
    )


def _text_chunks(path: str | Path, stream: IO[bytes], size: int) -> Iterator[str]:
    """The file's text, `size` bytes at a time; bad UTF-8 names its line and offset."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    fed = newlines = 0  # bytes given to the decoder so far, and the newlines in them
    first = True
    while True:
        block = stream.read(max(size, len(_BOM)) if first else size)
        end = not block
        if first and block.startswith(_BOM):
            block, fed = block[len(_BOM) :], len(_BOM)
        first = False
        pending = len(decoder.getstate()[0])  # an unfinished character's bytes
        try:
            text = decoder.decode(block, final=end)
        except UnicodeDecodeError as exc:
            data = exc.object
            line = newlines + data[: exc.start].count(b"\n") + 1
            raise _bad_utf8(path, line, fed - pending + exc.start, data[exc.start]) from None
        fed += len(block)
        newlines += block.count(b"\n")
        if end:
            return
        if text:
            yield text


class _Window:
    """The text of a JSON array file read so far, minus what was parsed long ago,
    and where it lies in the file (line and column of text[0]) for error messages."""

    def __init__(self, chunks: Iterator[str]) -> None:
        self.chunks = chunks
        self.text = ""
        self.line0, self.column0 = 1, 0  # where text[0] is in the file
        self.base, self.line = 0, 1  # a position reached and its line

    def fill(self) -> bool:
        """Read one more chunk; False at the end of the file."""
        chunk = next(self.chunks, None)
        if chunk is None:
            return False
        self.text += chunk
        return True

    def line_of(self, pos: int) -> int:
        """The line of `pos` (not before the last position asked)."""
        self.line += self.text.count("\n", self.base, pos)
        self.base = pos
        return self.line

    def compact(self, pos: int) -> int:
        """Forget the text before `pos` once it is most of the window; `pos` anew."""
        if pos < CHUNK or pos < len(self.text) // 2:
            return pos
        newlines = self.text.count("\n", 0, pos)
        if newlines:
            self.line0 += newlines
            self.column0 = pos - self.text.rindex("\n", 0, pos) - 1
        else:
            self.column0 += pos
        self.line_of(pos)
        self.text, self.base = self.text[pos:], 0
        return 0

    def skip_blanks(self, pos: int) -> int:
        """The position of the next non-blank character (len(text) at the end)."""
        while True:
            while pos < len(self.text) and self.text[pos] in " \t\r\n":
                pos += 1
            if pos < len(self.text) or not self.fill():
                return pos

    def error(self, path: str, exc: json.JSONDecodeError) -> InputError:
        column = exc.colno + (self.column0 if exc.lineno == 1 else 0)
        line = self.line0 + exc.lineno - 1
        return InputError(path, line, None, f"malformed JSON: {exc.msg} (column {column})")


def _read_json_array(path: str, chunks: Iterator[str]) -> Iterator[Record]:
    window = _Window(chunks)
    pos = window.skip_blanks(0)
    pos = window.text.index("[", pos) + 1
    expect_item = True
    while True:
        pos = window.skip_blanks(window.compact(pos))
        if pos >= len(window.text):
            raise InputError(path, window.line_of(pos), None, "malformed JSON: unterminated array")
        if window.text[pos] == "]":
            break
        if window.text[pos] == "," and not expect_item:
            pos += 1
            expect_item = True
            continue
        value, end = _next_value(path, window, pos)
        if not isinstance(value, dict):
            raise InputError(path, window.line_of(pos), None, "expected an array of objects")
        yield Record(path, window.line_of(pos), value)
        pos = end
        expect_item = False
    line = window.line_of(pos + 1)
    for tail in itertools.chain([window.text[pos + 1 :]], chunks):
        if tail.strip():
            raise InputError(path, line, None, "malformed JSON: extra data after the array")


# a value cut off at the end of the text read so far fails within this many characters
# of it (a literal like `tru`, an escape like `\u12`), or as an unterminated string
_TAIL = 16


def _next_value(path: str, window: _Window, pos: int) -> tuple[Any, int]:
    """The JSON value at `pos` and where it ends, reading more text while the value
    may be cut off at the end of what was read."""
    while True:
        try:
            value, end = _DECODER.raw_decode(window.text, pos)
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(window.text) - _TAIL or exc.msg.startswith("Unterminated string")
            if cut and window.fill():
                continue
            raise window.error(path, exc) from None
        if end < len(window.text) or not window.fill():  # a number may go on
            return value, end


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


def string_field(record: Record, field: str, *, required: bool = True, allow_empty: bool = False):
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


def year_field(record: Record) -> int | None:
    value = record.data.get("year")
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise record.error("year", f"expected an integer, got {type(value).__name__}")
    return value


def string_list_field(record: Record, field: str) -> list[str]:
    value = record.data.get(field)
    if value is None:
        raise record.error(field, "missing")
    if not isinstance(value, list) or not value:
        raise record.error(field, "expected a non-empty list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise record.error(f"{field}[{i}]", "expected a non-empty string")
    return value


def alias_lists_field(record: Record, field: str) -> list[list[str]]:
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


def choice_field(record: Record, field: str, choices: tuple[str, ...]) -> str:
    value = string_field(record, field)
    if value not in choices:
        raise record.error(field, f"'{value}' is not one of {', '.join(choices)}")
    return value


def work_field(record: Record, title: str, membership: str = "unknown") -> Work:
    author = string_field(record, "author", required=False)
    return Work(title=title, author=author, year=year_field(record), membership=membership)


def weight_field(record: Record, field: str) -> dict[str, float]:
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


def collect(
    path: str | Path,
    records: Iterable[Record],
    parse: Callable[[Record], T],
    *,
    required: Sequence[str] = (),
    key: Callable[[T], Hashable] | None = None,
    duplicate: Callable[[T, int], RowProblem] | None = None,
) -> Loaded[T]:
    """Parse every record, as the result is read (streamed or listed); a record that
    raises InputError, or whose `key` repeats an earlier one (`duplicate` words it),
    becomes a RowProblem instead of stopping. A `required` field that no record has is
    a structural problem (the JSON counterpart of a CSV column absent from the header):
    InputError, the whole file rejected, once every record was read. Memory: the keys
    seen (with their lines), not the records."""
    problems: list[RowProblem] = []

    def parsed() -> Iterator[T]:
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
            yield item
        if not count:
            raise InputError(path, None, None, "no records found")
        if absent:
            field = next(f for f in required if f in absent)
            raise InputError(path, None, field, "missing from every record (a required field)")

    return Loaded(str(path), parsed(), problems)


def collect_cases(
    path: str | Path,
    records: Iterable[Record],
    parse: Callable[[Record], Case],
    required: Sequence[str],
) -> Loaded[LocatedCase]:
    """Cases from `records`, one per record; an id seen before is a problem of the
    later record."""
    return collect(
        path,
        records,
        lambda r: LocatedCase(r.line, parse(r)),
        required=required,
        key=lambda c: c.case.case_id,
        duplicate=lambda c, first: RowProblem(
            c.line, "id", f"duplicate id '{c.case.case_id}' (first on line {first})"
        ),
    )


def required_text(payload: Mapping[str, Any], key: str) -> str:
    """A stored case's non-empty text field `key` (a prompt cannot do without it)."""
    value = payload.get(key)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"case payload needs a non-empty text field {key!r}")
    return value


def case_record(case: Case) -> dict[str, Any]:
    """A JSON case record: {id, title[, author, year], **payload}, what a study whose
    records carry their payload's fields flat reads back as the same case."""
    record: dict[str, Any] = {"id": case.case_id, "title": case.work.title}
    if case.work.author is not None:
        record["author"] = case.work.author
    if case.work.year is not None:
        record["year"] = case.work.year
    record.update(case.payload)
    return record
