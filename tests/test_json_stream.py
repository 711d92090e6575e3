"""The streaming JSON/JSONL reader gives what reading the whole text gave: the same
records on the same lines, and the same error (line, column, message) for a bad
file, whatever the chunk size (records and errors cut across chunk boundaries)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from copyaudit.errors import InputError
from copyaudit.records import read_json_records

CHUNKS = (1, 2, 3, 7, 64, 1 << 20)
WORDS = ["alpha", "béta", "γάμμα", "line\u2028sep", "tab\there", 'quote"d', "back\\slash", "🙂"]


def _whole_text_records(path: Path) -> list[tuple[int, dict]]:
    """The oracle: the whole text parsed at once; each item's line counted from it."""
    text = path.read_bytes().decode("utf-8-sig")
    if text.lstrip().startswith("["):
        decoder, out = json.JSONDecoder(), []
        pos = text.index("[") + 1
        while True:
            while text[pos] in " \t\r\n,":
                pos += 1
            if text[pos] == "]":
                return out
            value, end = decoder.raw_decode(text, pos)
            out.append((text.count("\n", 0, pos) + 1, value))
            pos = end
    return [(n, json.loads(line)) for n, line in enumerate(text.split("\n"), 1) if line.strip()]


def _read(path: Path, chunk: int) -> list[tuple[int, dict]]:
    return [(r.line, r.data) for r in read_json_records(path, chunk=chunk)]


def _error(path: Path, chunk: int) -> tuple[int | None, str]:
    with pytest.raises(InputError) as caught:
        for _ in read_json_records(path, chunk=chunk):
            pass
    return caught.value.line, caught.value.message


def _records(rng: random.Random, n: int) -> list[dict]:
    return [
        {
            "id": f"c{i}",
            "text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 12))),
            "n": rng.choice([0, -1.5, 2**62, -(2**63), 3e-7, True, None]),  # 64-bit: strict
            "nested": {"list": [rng.randint(0, 9) for _ in range(rng.randint(0, 3))]},
        }
        for i in range(n)
    ]


def _array_text(rng: random.Random, records: list[dict]) -> str:
    indent = rng.choice([None, 0, 2])
    ascii_only = rng.choice([True, False])
    if indent is None and rng.random() < 0.5:  # hand-spaced: blank lines, CRLF, tabs
        seps = [rng.choice([",", ",\n", " ,\r\n\t", "\n\n,"]) for _ in records]
        body = "".join(
            json.dumps(r, ensure_ascii=ascii_only) + (seps[i] if i < len(records) - 1 else "")
            for i, r in enumerate(records)
        )
        return rng.choice(["", "\n", "  \r\n"]) + "[" + body + "]" + rng.choice(["", "\n", " "])
    return json.dumps(records, indent=indent, ensure_ascii=ascii_only)


@pytest.mark.parametrize("seed", range(12))
def test_a_streamed_array_gives_every_record_on_its_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "cases.json"
    text = _array_text(rng, _records(rng, rng.randint(1, 30)))
    path.write_bytes((b"\xef\xbb\xbf" if seed % 3 == 0 else b"") + text.encode("utf-8"))
    want = _whole_text_records(path)
    assert want
    for chunk in CHUNKS:
        assert _read(path, chunk) == want, chunk


@pytest.mark.parametrize("seed", range(6))
def test_streamed_json_lines_give_every_record_on_its_line(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = [json.dumps(r, ensure_ascii=False) for r in _records(rng, 20)]
    for i in sorted(rng.sample(range(len(lines)), 4), reverse=True):
        lines.insert(i, rng.choice(["", "   ", "\r"]))
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(lines) + rng.choice(["", "\n"]), encoding="utf-8")
    assert _read(path, 7) == _whole_text_records(path)


# (line, message) as the whole-text reader before streaming (c79a38e) reported them
BROKEN_ARRAYS = {
    "bad value": (
        '[\n  {"id": "a", "n": 1},\n  {"id": "b", "n": tru}\n]',
        (3, "malformed JSON: Expecting value (column 20)"),
    ),
    "bad key": (
        '[{"id": "a"},\n\n   {id: "b"}]',
        (3, "malformed JSON: Expecting property name enclosed in double quotes (column 5)"),
    ),
    "unterminated": ('[{"id": "a"},\n{"id": "b"}', (2, "malformed JSON: unterminated array")),
    "cut string": (
        '[{"id": "a"},\n{"id": "b',
        (2, "malformed JSON: Unterminated string starting at (column 8)"),
    ),
    "not an object": ('[{"id": "a"},\n 3]', (2, "expected an array of objects")),
    "extra data": ('[{"id": "a"}]\n\n  x', (1, "malformed JSON: extra data after the array")),
    "control character": (
        '[{"id": "a"},\n{"id": "b\tc"}]',
        (2, "malformed JSON: Invalid control character at (column 10)"),
    ),
    "bad escape": (
        '[{"id": "a"}, {"id": "\\u12x4"}]',
        (1, "malformed JSON: Invalid \\uXXXX escape (column 24)"),
    ),
    "late on a long line": (
        "[" + ", ".join(['{"id": "a"}'] * 40) + ', {"id": }]',
        (1, "malformed JSON: Expecting value (column 529)"),
    ),
}


@pytest.mark.parametrize("name", BROKEN_ARRAYS)
def test_a_broken_array_is_reported_where_the_whole_text_reader_reported_it(
    tmp_path: Path, name: str
) -> None:
    text, want = BROKEN_ARRAYS[name]
    path = tmp_path / "cases.json"
    path.write_text(text, encoding="utf-8")
    for chunk in CHUNKS:
        assert _error(path, chunk) == want, chunk


# (line, field, message) of the strict rules (wt-inputs' whole-text reader gave the same)
STRICT_ARRAYS = {
    "trailing comma": (
        '[{"id": "a"},\n{"id": "b"},\n]',
        (3, None, "malformed JSON: trailing comma before ']'"),
    ),
    "missing comma": (
        '[{"id": "a"}\n{"id": "b"}]',
        (2, None, "malformed JSON: expected ',' or ']'"),
    ),
    "duplicate key": (
        '[{"id": "a"},\n{"id": "b", "id": "c"}]',
        (2, "id", "appears twice in one object (duplicate key)"),
    ),
    "integer past 64 bits": (
        '[{"id": "a"},\n{"id": "b", "n": [1, 9223372036854775808]}]',
        (2, "n[1]", "9223372036854775808 is outside the 64-bit integer range"),
    ),
    "NaN": (
        '[{"id": "a"},\n\n{"id": "b", "x": {"y": NaN}}]',
        (3, "x.y", "NaN is not a finite number"),
    ),
    "lone surrogate": (
        '[{"id": "a"},\n{"id": "\\ud800"}]',
        (2, "id", "lone surrogate \\ud800 (not valid Unicode text)"),
    ),
    # a bare number is judged whole, not on the digits of a chunk (a 24-digit prefix
    # would be out of range; the whole is a float)
    "bare long number": (
        '[{"id": "a"},\n 123456789012345678901234.5]',
        (2, None, "expected an array of objects"),
    ),
}


@pytest.mark.parametrize("name", STRICT_ARRAYS)
def test_the_strict_rules_hold_in_a_streamed_array_whatever_the_chunk(
    tmp_path: Path, name: str
) -> None:
    text, (line, field, message) = STRICT_ARRAYS[name]
    path = tmp_path / "cases.json"
    path.write_text(text, encoding="utf-8")
    for chunk in CHUNKS:
        with pytest.raises(InputError) as caught:
            for _ in read_json_records(path, chunk=chunk):
                pass
        got = (caught.value.line, caught.value.field, caught.value.message)
        assert got == (line, field, message), chunk


ONE_DOCUMENT = "expected a JSON array of objects or JSON Lines, got one JSON object"
BROKEN_LINES = {
    "bad line": ('{"id": "a"}\n{"id": }\n', (2, "malformed JSON: Expecting value (column 8)")),
    "not an object": ('{"id": "a"}\n[1]\n', (2, "expected a JSON object on each line")),
    "one object over lines": ('{\n  "cases": [{"id": "a"}]\n}\n', (None, ONE_DOCUMENT)),
    "one object on a line": ('{"cases": [{"id": "a"}], "meta": {}}\n\n', (None, ONE_DOCUMENT)),
    "bad utf-8 late": (
        '{"id": "a"}\n{"id": "b"}\n{"id": "\xff"}\n',
        (3, "not valid UTF-8 (byte 0xff at offset 32); save the file as UTF-8"),
    ),
}


@pytest.mark.parametrize("name", BROKEN_LINES)
def test_a_broken_jsonl_file_is_reported_as_before(tmp_path: Path, name: str) -> None:
    text, want = BROKEN_LINES[name]
    path = tmp_path / "cases.jsonl"
    path.write_bytes(text.encode("latin-1") if "\xff" in text else text.encode("utf-8"))
    assert _error(path, 7) == want


def test_an_object_of_containers_followed_by_records_is_read_as_records(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"cases": [1], "meta": {}}\n{"id": "b"}\n', encoding="utf-8")
    assert _read(path, 7) == [(1, {"cases": [1], "meta": {}}), (2, {"id": "b"})]


def test_bad_utf8_in_an_array_names_its_line_and_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "cases.json"
    path.write_bytes(b'[{"id": "a"},\n {"id": "\xc3\xa9"},\n {"id": "\xe9t\xc3"}]')
    want = (3, "not valid UTF-8 (byte 0xe9 at offset 38); save the file as UTF-8")
    for chunk in CHUNKS:
        assert _error(path, chunk) == want, chunk


def test_records_come_one_at_a_time(tmp_path: Path) -> None:
    """A bad record late in the file is met only after the earlier ones were handed
    out: the reader does not read the file whole first."""
    path = tmp_path / "cases.json"
    path.write_text("[" + '{"id": "a"},' * 50 + "{bad}]", encoding="utf-8")
    seen: list[int] = []
    records: Iterator = read_json_records(path, chunk=16)
    with pytest.raises(InputError):
        for record in records:
            seen.append(record.line)
    assert len(seen) == 50
