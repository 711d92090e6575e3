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
import dataclasses
import itertools
import json
import math
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal, TypeVar, overload

from copyaudit.columns import ColumnMap
from copyaudit.columns import current as current_map
from copyaudit.errors import InputError, UserError
from copyaudit.file_kinds import refuse_non_json
from copyaudit.first_seen import FirstSeen
from copyaudit.hashing import stable_hash
from copyaudit.rows import Loaded, RowProblem
from copyaudit.types import Case, Work

T = TypeVar("T")


class Fields(dict[str, Any]):
    """A record's fields, noting which ones its parser looks at (`read`), so that a field
    no parser reads (a typo such as `autor`) can be reported."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.read.add(key)
        return super().__contains__(key)

    def unread(self) -> list[str]:
        return [key for key in self.keys() if key not in self.read]


@dataclass(frozen=True)
class Record:
    """One raw record and where it is in its file."""

    path: str
    line: int
    data: Fields
    unit: str = "line"
    text_cells: bool = False  # CSV/TSV: every value is text, "" an empty cell

    def __post_init__(self) -> None:
        if not isinstance(self.data, Fields):
            object.__setattr__(self, "data", Fields(self.data))

    def error(self, field: str | None, message: str) -> InputError:
        return InputError(self.path, self.line, field, message, unit=self.unit)

    def typed(self, field: str) -> Any:
        """The value of `field` as a number or list may be given: in a text cell (CSV)
        an empty cell is None and a cell holding JSON (`1813`, `["a", "b"]`) its value;
        any other value as it is (so a check can say what it got)."""
        value = self.data.get(field)
        if not self.text_cells or not isinstance(value, str):
            return value
        if not value.strip():
            return None
        try:
            return loads_strict(value)
        except (json.JSONDecodeError, _Defect):
            return value

    def uses_all(self) -> None:
        """Mark every field as read (a parser that keeps the whole record)."""
        self.data.read.update(self.data.keys())


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


# --- strict JSON -----------------------------------------------------------------------------

MAX_INT = 2**63 - 1  # what SQLite's INTEGER (and so every stored number) holds
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Defect(Exception):
    """Something JSON's grammar allows but a record may not hold, found while decoding."""

    def __init__(self, field: str | None, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


class _BadNumber(str):
    """A number a record cannot hold (NaN, ±Infinity, an overflowing float, an integer
    outside 64 bits), kept as its text until its field is found."""


def printable(name: str) -> str:
    """A name from a file as it may be shown on a terminal: escaped where it holds
    control characters or other unprintable ones."""
    return name if name.isprintable() else ascii(name)[1:-1]


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) < len(pairs):  # a key given twice: find the first repeat
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Defect(printable(key), "appears twice in one object (duplicate key)")
            seen.add(key)
    return out


_FLAGS = threading.local()  # .bad: the value being decoded holds a _BadNumber


def _bad(text: str) -> _BadNumber:
    _FLAGS.bad = True
    return _BadNumber(text)


def _int(text: str) -> int | _BadNumber:
    # the length test first: int() of a 5,000-digit string raises ValueError itself
    if len(text) > 20:
        return _bad(text)
    value = int(text)
    return value if -MAX_INT - 1 <= value <= MAX_INT else _bad(text)


def _float(text: str) -> float | _BadNumber:
    value = float(text)
    return value if math.isfinite(value) else _bad(text)


# keeps every number a record cannot hold as a _BadNumber, so that its field can be named
_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_int=_int, parse_float=_float, parse_constant=_bad
)


def _find_defect(value: object, escapes: bool) -> _Defect | None:
    """The first number a record cannot hold, or (when the text may hold one:
    _may_hold_surrogate) the first lone surrogate, with the path of its field ('a',
    'a[2]', 'a.b')."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _BadNumber):
            shown = item if len(item) <= 24 else f"{item[:20]}… ({len(item)} characters)"
            why = (
                "is not a finite number"
                if not item.lstrip("-").isdigit()
                else "is outside the 64-bit integer range"
            )
            return _Defect(where or None, f"{shown} {why}")
        if isinstance(item, str):
            if escapes and (found := _SURROGATE.search(item)):
                code = f"\\u{ord(found.group()):04x}"
                return _Defect(where or None, f"lone surrogate {code} (not valid Unicode text)")
        elif isinstance(item, dict):
            for key, child in reversed(item.items()):
                if escapes and _SURROGATE.search(key):
                    return _Defect(where or None, "a key holds a lone surrogate")
                name = printable(key)
                stack.append((child, f"{where}.{name}" if where else name))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in reversed(list(enumerate(item))))
    return None


def _may_hold_surrogate(text: str, pos: int, end: int) -> bool:
    """Whether the value decoded from text[pos:end] may hold a lone surrogate: only a
    \\uD800-\\uDFFF escape makes one (the text is decoded UTF-8, which holds none). Most
    files hold other escapes only (json.dumps writes \\u201c for a curly quote): their
    records need no walk. Two finds cost less than a regular expression over the line."""
    return text.find("\\ud", pos, end) >= 0 or text.find("\\uD", pos, end) >= 0


def decode_value(text: str, pos: int = 0) -> tuple[Any, int]:
    """One JSON value from `text` at `pos` and where it ends, strictly: NaN, Infinity,
    numbers beyond 64 bits, duplicate keys, lone surrogates and nesting deeper than
    Python can follow raise `_Defect` (naming the field); bad syntax JSONDecodeError."""
    _FLAGS.bad = False
    try:
        value, end = _DECODER.raw_decode(text, pos)
    except RecursionError:
        raise _Defect(None, "nested too deeply (arrays or objects inside each other)") from None
    escapes = _may_hold_surrogate(text, pos, end)
    if _FLAGS.bad or escapes:
        defect = _find_defect(value, escapes)
        if defect is not None:
            raise defect
    return value, end


def loads_strict(text: str) -> Any:
    """The one JSON value `text` holds (decode_value's rules); JSONDecodeError for
    anything after it."""
    start = len(text) - len(text.lstrip())
    value, end = decode_value(text, start)
    if text[end:].strip():
        raise json.JSONDecodeError("Extra data", text, end)
    return value


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
    the file (bad UTF-8, malformed JSON) raises when the reader gets there; a directory,
    Parquet, Arrow or CSV file is refused by name (copyaudit.file_kinds)."""
    refuse_non_json(path)
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
            value = loads_strict(line)
        except json.JSONDecodeError as exc:
            if not seen_first:
                _reject_whole_document(path)
            raise InputError(
                path, number, None, f"malformed JSON: {exc.msg} (column {exc.colno})"
            ) from None
        except _Defect as exc:
            raise InputError(path, number, exc.field, exc.message) from None
        if not isinstance(value, dict):
            raise InputError(path, number, None, "expected a JSON object on each line")
        record = Record(str(path), number, Fields(value))
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
        value = loads_strict(read_text(path))
    except (json.JSONDecodeError, _Defect):
        return
    raise _one_document(path, value)


def _one_document(path: str | Path, value: object) -> InputError:
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
    expect_item, after_comma = True, False
    while True:
        pos = window.skip_blanks(window.compact(pos))
        if pos >= len(window.text):
            raise InputError(path, window.line_of(pos), None, "malformed JSON: unterminated array")
        if window.text[pos] == "]":
            if after_comma:
                raise InputError(
                    path, window.line_of(pos), None, "malformed JSON: trailing comma before ']'"
                )
            break
        if not expect_item:
            if window.text[pos] != ",":
                raise InputError(
                    path, window.line_of(pos), None, "malformed JSON: expected ',' or ']'"
                )
            pos += 1
            expect_item, after_comma = True, True
            continue
        value, end = _next_value(path, window, pos)
        if not isinstance(value, dict):
            raise InputError(path, window.line_of(pos), None, "expected an array of objects")
        yield Record(path, window.line_of(pos), Fields(value))
        pos = end
        expect_item, after_comma = False, False
    line = window.line_of(pos + 1)
    for tail in itertools.chain([window.text[pos + 1 :]], chunks):
        if tail.strip():
            raise InputError(path, line, None, "malformed JSON: extra data after the array")


# a value cut off at the end of the text read so far fails within this many characters
# of it (a literal like `tru`, an escape like `\u12`), or as an unterminated string
_TAIL = 16


def _next_value(path: str, window: _Window, pos: int) -> tuple[Any, int]:
    """The JSON value at `pos` and where it ends, reading more text while the value
    may be cut off at the end of what was read. Decoded strictly (`decode_value`): a
    defect names the item's line and its field."""
    while True:
        try:
            value, end = decode_value(window.text, pos)
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(window.text) - _TAIL or exc.msg.startswith("Unterminated string")
            if cut and window.fill():
                continue
            raise window.error(path, exc) from None
        except _Defect as exc:
            # only a bare number can end at the end of the text read (a container ends
            # at its bracket) and be judged on its first digits: read on and decide again
            if window.text[pos] in "-0123456789" and window.fill():
                continue
            raise InputError(path, window.line_of(pos), exc.field, exc.message) from None
        if end < len(window.text) or not window.fill():  # a number may go on
            return value, end


# the most characters one CSV cell may hold: a DE-COP passage is a few thousand; the csv
# module's own default (131,072) is process-wide and its error names no row
MAX_CELL = 1 << 20


@contextmanager
def _cell_limit(limit: int) -> Iterator[None]:
    before = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _text_lines(path: str | Path) -> Iterator[str]:
    """The file's lines as UTF-8 text (a leading BOM dropped), one at a time; bad bytes
    name their line and offset."""
    offset = 0
    with open(path, "rb") as stream:
        for number, raw in enumerate(stream, start=1):
            start, offset = offset, offset + len(raw)
            if number == 1 and raw.startswith(_BOM):
                raw, start = raw[len(_BOM) :], start + len(_BOM)
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _bad_utf8(path, number, start + exc.start, raw[exc.start]) from None


def _csv_rows(path: str, lines: Iterable[str], delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """(row number, cells) of every non-blank row, the header being row 1. A row the
    csv module cannot read names its row and the line it starts on: a quote never
    closed, a cell over MAX_CELL characters, text after a closing quote."""
    reader = csv.reader(lines, strict=True, delimiter=delimiter)
    number = 0
    with _cell_limit(MAX_CELL):
        while True:
            start = reader.line_num + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise InputError(
                    path, number + 1, None, _csv_problem(str(exc), start), unit="row"
                ) from None
            if cells:
                number += 1
                yield number, cells


def _csv_problem(error: str, line: int) -> str:
    if "unexpected end of data" in error:
        return f"unterminated quote: the quoted cell opened on line {line} or after is never closed"
    if "field larger than field limit" in error:
        return f"a cell longer than {MAX_CELL:,} characters (starting on line {line})"
    return f"malformed CSV (line {line}): {error}"


def open_csv(path: str | Path, delimiter: str = ",") -> tuple[list[str], Iterator[Record]]:
    """The header of a CSV (or, with a tab, TSV) file and its rows as records, streamed
    a line at a time; row 1 is the header, so the first data row is row 2. Every cell
    is text (`Record.text_cells`): the field checks read numbers and lists from it."""
    rows = _csv_rows(str(path), _text_lines(path), delimiter)
    header = next(rows, (1, []))[1]
    repeated = next((c for i, c in enumerate(header) if c in header[:i]), None)
    if repeated is not None:
        raise InputError(path, 1, repeated, "column named twice in the header", unit="row")

    def records() -> Iterator[Record]:
        for number, cells in rows:
            if len(cells) != len(header):
                more = "more" if len(cells) > len(header) else "fewer"
                raise InputError(
                    path,
                    number,
                    None,
                    f"{more} cells ({len(cells)}) than header columns ({len(header)})",
                    unit="row",
                )
            data = Fields(zip(header, cells, strict=True))
            yield Record(str(path), number, data, unit="row", text_cells=True)

    return header, records()


# --- field validation ----------------------------------------------------------------------


@overload
def string_field(
    record: Record, field: str, *, required: Literal[True] = True, allow_empty: bool = False
) -> str: ...
@overload
def string_field(
    record: Record, field: str, *, required: bool, allow_empty: bool = False
) -> str | None: ...
def string_field(
    record: Record, field: str, *, required: bool = True, allow_empty: bool = False
) -> str | None:
    empty_cell = record.text_cells and not required and record.data.get(field) == ""
    if field not in record.data or record.data[field] is None or empty_cell:
        if required:
            raise record.error(field, "missing")
        return None
    value = record.data[field]
    if not isinstance(value, str):
        raise record.error(field, f"expected a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise record.error(field, "must not be empty")
    return value


def no_nul(record: Record, field: str, value: str) -> str:
    """`value`, unless it holds a NUL (C strings, SQLite's text functions and terminals
    end it there). Other control characters are allowed and escaped wherever shown
    (copyaudit.untrusted; tests/test_untrusted_output.py)."""
    if "\0" in value:
        raise record.error(field, f"{value!r} contains a NUL")
    return value


def id_field(record: Record, field: str) -> str:
    """A required id (a case's): text with no NUL and no space at either end (ids are
    matched exactly: 'c1 ' would be another case than 'c1' that nobody can tell apart
    on screen)."""
    value = no_nul(record, field, string_field(record, field))
    if value != value.strip():
        raise record.error(field, f"{value!r} has space at its start or end")
    return value


MAX_YEAR = 9999  # a work's year is shown and compared as at most four digits


def int_field(record: Record, field: str, low: int, high: int, value: object) -> int:
    """`value` (record's `field`) as an integer in [low, high]: every integer the app
    keeps has a range it uses, and one outside it is an error, not a stored number."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise record.error(field, f"expected an integer, got {type(value).__name__}")
    if not low <= value <= high:
        raise record.error(field, f"{value} is outside {low}..{high:,}")
    return value


def year_field(record: Record) -> int | None:
    value = record.typed("year")
    if value is None or value == "":
        return None
    return int_field(record, "year", -MAX_YEAR, MAX_YEAR, value)


def string_list_field(record: Record, field: str) -> list[str]:
    value = record.typed(field)
    if value is None:
        raise record.error(field, "missing")
    if not isinstance(value, list) or not value:
        raise record.error(field, "expected a non-empty list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item.strip():
            raise record.error(f"{field}[{i}]", "expected a non-empty string")
    return value


def alias_lists_field(record: Record, field: str) -> list[list[str]]:
    value = record.typed(field)
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
    value = record.typed(field)
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
    key: Callable[[T], str] | None = None,
    duplicate: Callable[[T, int], RowProblem] | None = None,
    ignored: Collection[str] = (),
    warnings: list[RowProblem] | None = None,
) -> Loaded[T]:
    """Parse every record, as the result is read (streamed or listed); a record that
    raises InputError, or whose `key` repeats an earlier one (`duplicate` words it),
    becomes a RowProblem instead of stopping. A `required` field that no record has is
    a structural problem (the JSON counterpart of a CSV column absent from the header):
    InputError, the whole file rejected, once every record was read. A field that
    `parse` never read and that is not `ignored` (a typo of an optional field) is a
    warning, once per field name, at its first line; the warnings (`warnings`, where
    `parse` may add its own) are complete when the records were read. Memory: a digest
    and the line of each key seen (copyaudit.first_seen) and field names, not the records."""
    problems: list[RowProblem] = []
    noted: list[RowProblem] = [] if warnings is None else warnings
    columns = current_map()  # --map in force when the read was asked for

    def parsed() -> Iterator[T]:
        seen = FirstSeen()
        absent = set(required)
        unknown = UnknownFields(ignored)
        known: set[str] = set()  # the fields the parser read in a usable record
        count = 0
        for record in records:
            count += 1
            if absent:
                absent.difference_update(record.data.keys())
            try:
                item = parse(record)
            except InputError as exc:
                problems.append(RowProblem.from_error(exc))
                continue
            if columns and len(known) < MAX_KNOWN:
                known.update(record.data.read)
            unknown.note(record)
            if key is not None and duplicate is not None:
                first = seen.note(key(item), record.line)
                if first is not None:
                    problems.append(duplicate(item, first))
                    continue
            yield item
        if not count:
            raise InputError(path, None, None, "no records found")
        if absent:
            field = next(f for f in required if f in absent)
            how = (
                f"read with {columns.shown()}"
                if columns
                else f"--map {field}=COLUMN reads it from a column named otherwise"
            )
            raise InputError(
                path, None, field, f"missing from every record (a required field; {how})"
            )
        if known:
            check_mapped_fields(path, columns, known)
        noted[:0] = unknown.warnings()

    return Loaded(str(path), parsed(), problems, noted)


MAX_KNOWN = 256  # field names remembered for the --map check (a parser reads a few)


def check_mapped_fields(path: str | Path, columns: ColumnMap, known: Collection[str]) -> None:
    """InputError for a `--map FIELD=COLUMN` whose FIELD the importer never read in a
    usable record: a field it does not know (a typo, or another study's name)."""
    for field, column in columns.pairs:
        if field not in known:
            reads = ", ".join(sorted(known))
            raise InputError(
                path,
                None,
                field,
                f"--map {field}={column}: not a field this importer reads (it reads: {reads})",
            )


class UnknownFields:
    """The fields of a file's records that their parser did not read: each name's first
    line and how many records carry it."""

    def __init__(self, ignored: Collection[str] = ()) -> None:
        self.ignored = frozenset(ignored)
        self.first: dict[str, tuple[int, str]] = {}
        self.count: dict[str, int] = {}

    def note(self, record: Record) -> None:
        for name in record.data.unread():
            if name in self.ignored:
                continue
            self.first.setdefault(name, (record.line, record.unit))
            self.count[name] = self.count.get(name, 0) + 1

    def warnings(self) -> list[RowProblem]:
        out = []
        for name, (line, unit) in self.first.items():
            n = self.count[name]
            more = f" (and in {n - 1:,} more records)" if n > 1 else ""
            out.append(RowProblem(line, printable(name), f"unknown field, ignored{more}", unit))
        return out


def collect_cases(
    path: str | Path,
    records: Iterable[Record],
    parse: Callable[[Record], Case],
    required: Sequence[str],
) -> Loaded[LocatedCase]:
    """Cases from `records`, one per record; an id seen before is a problem of the
    later record. A file whose first record has no `id` (a Hugging Face export) gets
    derived ids (DerivedIds), said in the result's `notes`."""
    # the first id of each folded form that holds whitespace (folding changes no other
    # id): what a later id differing only by whitespace is told it differs from
    spaced: dict[str, str] = {}
    derived = DerivedIds(ID_FIELD in required)

    def key(c: LocatedCase) -> str:
        folded = fold_space(c.case.case_id)
        if folded != c.case.case_id or " " in folded:
            spaced.setdefault(folded, c.case.case_id)
        return folded

    def duplicate(c: LocatedCase, first: int) -> RowProblem:
        folded = fold_space(c.case.case_id)
        earlier = spaced.get(folded, folded)
        if earlier == c.case.case_id:
            return RowProblem(
                c.line, "id", f"duplicate id '{c.case.case_id}' (first on line {first})"
            )
        return RowProblem(
            c.line,
            "id",
            f"id {c.case.case_id!r} differs from {earlier!r} (line {first}) only by "
            "whitespace: two cases would look the same",
        )

    loaded = collect(
        path,
        derived.records(records),
        lambda r: LocatedCase(r.line, derived.parse(parse, r)),
        required=required,  # a stand-in id is in place before this check sees a record
        key=key,
        duplicate=duplicate,
    )
    derived.notes = loaded.notes
    return loaded


ID_FIELD = "id"
DERIVED_ID_LENGTH = 16  # hex digits of SHA-256: 64 bits, no collision in millions of cases


def derived_case_id(case: Case) -> str:
    """An id from what the case holds (its work and payload), so that the same case
    read from JSON Lines, CSV or Parquet gets the same id, and two identical rows
    are one case repeated (the later a duplicate) as they would be with ids."""
    work = case.work
    content = {
        "kind": case.kind,
        "work": [work.title, work.author, work.year, work.membership],
        "payload": case.payload,
    }
    return stable_hash(content, length=DERIVED_ID_LENGTH)


class DerivedIds:
    """Ids for a file whose first record has none (as the notice study's own dataset
    gets ids hashed from its rows): each record without an `id` is parsed under a
    stand-in and its case given `derived_case_id`; a record that has one keeps it."""

    STAND_IN = "derived"

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted  # the importer reads an `id`
        self.active: bool | None = None  # decided by the first record
        self.pending: Record | None = None  # the record given a stand-in, being parsed
        self.count = 0
        self.notes: list[str] = []

    def records(self, records: Iterable[Record]) -> Iterator[Record]:
        for record in records:
            if self.active is None:
                self.active = self.wanted and ID_FIELD not in record.data
            if self.active and record.data.get(ID_FIELD) in (None, ""):
                record.data[ID_FIELD] = self.STAND_IN
                record.data.read.add(ID_FIELD)
                self.pending = record
            yield record
        if self.count:
            self.notes.append(
                f"ids derived from each case's content ({self.count:,} cases had no id)"
            )

    def parse(self, parse: Callable[[Record], Case], record: Record) -> Case:
        case = parse(record)
        if self.pending is record:
            self.pending = None
            self.count += 1
            return dataclasses.replace(case, case_id=derived_case_id(case))
        return case


def fold_space(value: str) -> str:
    """`value` with its runs of whitespace as one space and none at the ends: ids that
    differ only there are the same id to a reader."""
    return " ".join(value.split())


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
