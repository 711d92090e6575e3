"""Malformed inputs for every importer of the CLI, as hypothesis strategies, and one
runner that classifies what a command did with them. Shared by the fuzz test
(tests/test_fuzz_importers.py) and the census script (tests/bench/fuzz_census.py).

Every file starts from a valid one built from our own text (tests/factories.py,
tests/test_decop_results.py) and is then broken: bytes inserted, deleted or repeated,
a value replaced by an awkward JSON value (lone surrogates, 2^64, NaN, deep nesting,
control characters, U+2028), a field renamed, the file cut short, or bytes that are
not UTF-8. The importers are the CLI's commands that read a file (copyaudit.cli.commands:
import KIND for every study and decop-results, import-generations, import-labels, merge)
and --db itself.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

from copyaudit.cli.main import main
from copyaudit.studies.registry import STUDIES
from db import Store
from tests.factories import RECORD_FACTORIES, decop_rows
from tests.process_cache import copy_database as copy_db  # same origin, chain ids
from tests.test_decop_results import SUSPECT, workbook_rows, write_suite, write_workbook


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    db_changed: bool

    @property
    def kind(self) -> str:
        """rejected (exit 2) / warned (exit 0 with a warning) / accepted / crashed."""
        if self.code == 2:
            return "rejected"
        if self.code == 0:
            return "warned" if "warning:" in self.err else "accepted"
        return "crashed"

    def problems(self) -> list[str]:
        """What is wrong with this outcome (empty: it is clean)."""
        found = []
        if self.code not in (0, 2):
            found.append(f"exit {self.code}")
        if "Traceback" in self.out + self.err or "internal error" in self.err:
            found.append("a traceback or internal error")
        if self.code == 2 and self.db_changed:
            found.append("the database changed although the input was rejected")
        return found


def fingerprint(path: Path) -> str:
    """A hash of every row of every table, read through SQLite (never the file's bytes)."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()
    finally:
        conn.close()


def run_cli(db: Path, args: list[str], *, compare: bool = True) -> Outcome:
    """`copyaudit --db DB ARGS` in-process; the database compared before and after
    (unless `compare` is false: DB is itself the broken input)."""
    before = fingerprint(db) if compare else ""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--db", str(db), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    changed = compare and fingerprint(db) != before
    return Outcome(code, out.getvalue(), err.getvalue(), changed)


# --- the database every importer runs against ----------------------------------------------

SUITE = "literal-suite"
RUN = "r"


def _ok(db: Path, *args: str) -> None:
    outcome = run_cli(db, list(args))
    assert outcome.code == 0, outcome.err


def build_base_db(path: Path) -> Path:
    """A literal suite with a run `r` of two generations and a label, and a DE-COP
    suite `bt` whose passages the workbooks below answer."""
    Store(path).close()
    work = Path(tempfile.mkdtemp())
    cases = work / "cases.jsonl"
    cases.write_text(_jsonl([RECORD_FACTORIES["literal"](i) for i in (1, 2)]), encoding="utf-8")
    gens = work / "gens.jsonl"
    gens.write_text(_jsonl(_generations()), encoding="utf-8")
    labels = work / "labels.jsonl"
    labels.write_text(_jsonl(_labels()), encoding="utf-8")
    _ok(path, "import", "literal", str(cases), "--suite", SUITE)
    _ok(path, "import-generations", str(gens), "--suite", SUITE, "--run", RUN)
    _ok(path, "import-labels", str(labels))
    _ok(path, "import", "decop", str(write_suite(work / "bt.csv")), "--suite", "bt")
    return path


# --- valid files ---------------------------------------------------------------------------


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _generations() -> list[dict]:
    return [
        {"case_id": f"lit-{i}", "output": f"Output {i} of the model.", "template": 1}
        for i in (1, 2)
    ]


def _labels() -> list[dict]:
    return [
        {
            "annotator": "ana",
            "generation": f"{RUN}/lit-1/1",
            "target": "literal",
            "index": 0,
            "label": "yes",
            "created_at": "2026-01-01T10:00:00.000+00:00",
        },
        {
            "annotator": "bo",
            "generation": f"{RUN}/lit-2/1",
            "target": "literal",
            "label": "no",
            "note": "close paraphrase",
        },
    ]


def _case_records(kind: str) -> list[dict]:
    if kind == "extraction":
        return [
            {
                "id": f"ex-{i}",
                "title": "The Glass Orchard",
                "prefix": f"Prefix {i} here.",
                "reference": f"and reference {i}.",
            }
            for i in (1, 2, 3)
        ]
    return [RECORD_FACTORIES[kind](i) for i in (1, 2, 3)]


def _decop_csv() -> str:
    handle = io.StringIO()
    rows = decop_rows(n=3)
    writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return handle.getvalue()


@functools.cache
def _valid_workbook() -> bytes:
    """Built once: a workbook's bytes carry its save time, and hypothesis replays draws."""
    return _workbook(workbook_rows(SUSPECT, 1))


@functools.cache
def _db_bytes(valid_db: Path) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return copy_db(valid_db, Path(folder) / "copy.db").read_bytes()  # a closed copy


def _workbook(rows: list[list]) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = write_workbook(Path(folder) / "book.xlsx", rows)
        return path.read_bytes()


@dataclass(frozen=True)
class Importer:
    """A command that reads a file: its valid file, the file's name, and its arguments."""

    name: str
    filename: str
    valid: Callable[[], str | bytes]
    args: Callable[[Path], list[str]]
    text: bool = True  # the file is text (JSON, CSV) rather than binary


def _import(kind: str) -> Callable[[Path], list[str]]:
    return lambda path: ["import", kind, str(path), "--suite", f"fuzz-{kind}"]


IMPORTERS: dict[str, Importer] = {
    **{
        f"import {kind}": Importer(
            f"import {kind}",
            f"{kind}.jsonl",
            lambda k=kind: _jsonl(_case_records(k)),
            _import(kind),
        )
        for kind in STUDIES
        if kind != "decop"
    },
    "import decop (CSV)": Importer(
        "import decop (CSV)", "BookTection.csv", _decop_csv, _import("decop")
    ),
    "import decop (JSONL)": Importer(
        "import decop (JSONL)", "decop.jsonl", lambda: _jsonl(decop_rows(n=3)), _import("decop")
    ),
    "import decop-results": Importer(
        "import decop-results",
        f"{SUSPECT}_Paraphrases_Oversampling.xlsx",
        _valid_workbook,
        lambda path: ["import", "decop-results", str(path), "--model", "ChatGPT", "--suite", "bt"],
        text=False,
    ),
    "import-generations": Importer(
        "import-generations",
        "gens.jsonl",
        lambda: _jsonl(_generations()),
        lambda path: ["import-generations", str(path), "--suite", SUITE, "--run", "fuzz"],
    ),
    "import-labels": Importer(
        "import-labels",
        "labels.jsonl",
        lambda: _jsonl(_labels()),
        lambda path: ["import-labels", str(path)],
    ),
    "merge": Importer(
        "merge", "other.db", lambda: b"", lambda path: ["merge", str(path)], text=False
    ),
    "--db": Importer("--db", "given.db", lambda: b"", lambda path: ["runs"], text=False),
}
DB_FILE_IMPORTERS = ("merge", "--db")  # their input is a broken copy of a database


# --- breaking them -------------------------------------------------------------------------

# pieces that broke readers before: JSON syntax, escapes, numbers no field can hold,
# line separators str.splitlines() splits at, control characters, quotes
NASTY = [
    "\\ud800",
    "\\udfff",
    "\\u0000",
    "NaN",
    "-Infinity",
    "1e999",
    str(2**64),
    "9" * 5000,
    "[" * 3000,
    "{",
    "}",
    "]",
    ",",
    ":",
    '"',
    "\\",
    "\u2028",
    "\u0085",
    "\x00",
    "\x1b[31m",
    "\r",
    "\n",
    "\ufeff",
    "'",
    "null",
    "true",
    "-0",
    "0.0",
    "\t",
    " " * 3,
]

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
RAW_VALUES = st.sampled_from(
    [
        '"\\ud800"',
        "NaN",
        "Infinity",
        str(2**63),
        str(-(2**63) - 1),
        "1e400",
        "[" * 2000 + "]" * 2000,
        '"a\\u2028b"',
        '""',
        '"   "',
        "[]",
        "{}",
        '"x\\u0000"',
        "4611686018427387904",
    ]
)


def _splice(text: str, data: st.DataObject) -> str:
    """One textual mutation of `text`."""
    n = len(text)
    at = data.draw(st.integers(0, n), label="at")
    how = data.draw(st.sampled_from(["insert", "delete", "repeat", "cut", "replace"]), label="how")
    if how == "insert":
        piece = data.draw(st.sampled_from(NASTY) | st.text(max_size=5), label="piece")
        return text[:at] + piece + text[at:]
    if how == "delete":
        return text[:at] + text[at + data.draw(st.integers(1, 40), label="len") :]
    if how == "repeat":
        end = min(n, at + data.draw(st.integers(1, 200), label="len"))
        return text[:end] + text[at:end] + text[end:]
    if how == "cut":
        return text[:at]
    piece = data.draw(st.sampled_from(NASTY), label="piece")
    return text[:at] + piece + text[at + len(piece) :]


def _restructure(text: str, data: st.DataObject) -> str | None:
    """A JSON Lines file with one field of one record replaced by an awkward value, or
    renamed (a typo); None for a file that is not JSON Lines."""
    lines = [line for line in text.split("\n") if line.strip()]
    try:
        records = [json.loads(line) for line in lines]
    except json.JSONDecodeError:
        return None
    if not records or not all(isinstance(r, dict) and r for r in records):
        return None
    i = data.draw(st.integers(0, len(records) - 1), label="record")
    key = data.draw(st.sampled_from(sorted(records[i])), label="field")
    how = data.draw(st.sampled_from(["value", "raw", "rename", "drop", "clone"]), label="how")
    if how == "value":
        records[i][key] = data.draw(JSON_VALUES, label="value")
    elif how == "rename":
        records[i][key[:-1] + "x" if len(key) > 1 else key + "x"] = records[i].pop(key)
    elif how == "drop":
        records[i].pop(key)
    elif how == "clone":
        records.append(dict(records[i]))
    out = [json.dumps(r, ensure_ascii=False) for r in records]
    if how == "raw":
        raw = data.draw(RAW_VALUES, label="raw")
        body = json.dumps({k: v for k, v in records[i].items() if k != key}, ensure_ascii=False)
        out[i] = body[:-1] + (", " if len(body) > 2 else "") + json.dumps(key) + ": " + raw + "}"
    return "\n".join(out) + "\n"


def _bytes_mutation(blob: bytes, data: st.DataObject) -> bytes:
    n = len(blob)
    how = data.draw(st.sampled_from(["flip", "cut", "random", "zero"]), label="how")
    if how == "random" or not n:
        return data.draw(st.binary(max_size=200), label="bytes")
    at = data.draw(st.integers(0, n - 1), label="at")
    if how == "cut":
        return blob[:at]
    if how == "zero":
        return blob[:at] + bytes(min(64, n - at)) + blob[at + 64 :]
    return (
        blob[:at] + bytes([blob[at] ^ data.draw(st.integers(1, 255), label="xor")]) + blob[at + 1 :]
    )


def broken_file(importer: Importer, data: st.DataObject, valid_db: Path | None = None) -> bytes:
    """A broken variant of the importer's valid file, as bytes to write."""
    if importer.name in DB_FILE_IMPORTERS:
        assert valid_db is not None
        return _bytes_mutation(_db_bytes(valid_db), data)
    valid = importer.valid()
    if not importer.text:
        if data.draw(st.booleans(), label="cells"):
            rows = workbook_rows(SUSPECT, 1)
            r = data.draw(st.integers(0, len(rows) - 1), label="row")
            c = data.draw(st.integers(0, len(rows[r]) - 1), label="col")
            rows[r][c] = data.draw(
                st.none()
                | st.text(max_size=10)
                | st.floats()
                | st.integers(-(2**70), 2**70)
                | st.sampled_from(NASTY),
                label="cell",
            )
            try:
                return _workbook(rows)
            except Exception:  # openpyxl refuses some cells (control characters, huge ints)
                rows[r][c] = ascii(rows[r][c])
                return _workbook(rows)
        return _bytes_mutation(valid if isinstance(valid, bytes) else valid.encode(), data)
    assert isinstance(valid, str)
    choice = data.draw(st.sampled_from(["splice", "restructure", "bytes", "array"]), label="kind")
    if choice == "restructure" and (changed := _restructure(valid, data)) is not None:
        return changed.encode("utf-8", "surrogatepass")
    if choice == "bytes":
        return _bytes_mutation(valid.encode("utf-8"), data)
    if choice == "array" and importer.filename.endswith(".jsonl"):
        records = [line for line in valid.split("\n") if line.strip()]
        valid = "[\n" + ",\n".join(records) + "\n]"
    text = valid
    for _ in range(data.draw(st.integers(1, 3), label="splices")):
        text = _splice(text, data)
    return text.encode("utf-8", "surrogatepass")


def try_importer(importer: Importer, base: Path, content: bytes, folder: Path) -> Outcome:
    """Write `content` as the importer's file in `folder` and run the command on a fresh
    copy of the database `base` (so that each input is judged alone: a file accepted
    earlier does not make a later one a conflicting re-import)."""
    db = copy_db(base, folder / "audit.db")
    path = folder / importer.filename
    path.write_bytes(content)
    if importer.name == "--db":
        return run_cli(path, importer.args(path), compare=False)
    return run_cli(db, importer.args(path))
