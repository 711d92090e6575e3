"""import-labels in constant memory (issue 20): the file is checked and folded in one
pass that keeps per-record numbers, not records, then read again and written a chunk
at a time inside one transaction. Chunks here are 3 current labels (CHUNK_ROWS
patched), so a few records cross several chunks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import db.labels
from copyaudit.rows import InvalidRows
from copyaudit.verification.label_files import fold_current, fold_label_file, read_label_file
from db import Store
from db.labels import current_labels
from tests.conftest import database_fingerprint, write_jsonl
from tests.label_fixtures import make_run

CHUNK = 3
CASES = [f"lit-{i}" for i in range(4)]


def _label(n: int, annotator: str, case: str, target: str, value: str, **extra: Any) -> dict:
    return {
        "annotator": annotator,
        "generation": f"r/{case}/1",
        "target": target,
        "index": 0,
        "label": value,
        "uuid": f"u{n}",
        **extra,
    }


def _file_records() -> list[dict]:
    """13 records, 9 items: u1 (line 2, the first chunk's) is retracted on the last
    line, so its item goes back to u0; u3 is overtaken by u11 on line 12; u6 (line 6)
    stays current over u5 (line 7), which is later in the file but older."""
    records = [
        _label(0, "ana", "lit-0", "literal", "yes", created_at="2026-01-01T00:00:00Z"),
        _label(1, "ana", "lit-0", "literal", "no", created_at="2026-01-02T00:00:00Z"),
        _label(2, "ana", "lit-0", "refusal", "no"),
        _label(3, "ana", "lit-1", "literal", "yes"),
        _label(4, "bo", "lit-1", "literal", "no"),
        _label(6, "bo", "lit-1", "refusal", "yes", created_at="2026-03-01T00:00:00Z"),
        _label(5, "bo", "lit-1", "refusal", "no", created_at="2026-02-01T00:00:00Z"),
        _label(7, "bo", "lit-2", "literal", "unsure"),
        _label(8, "cy", "lit-2", "literal", "yes"),
        _label(9, "cy", "lit-3", "literal", "no"),
        {**_label(10, "cy", "lit-3", "refusal", "no"), "uuid": None},
        _label(11, "ana", "lit-1", "literal", "no"),
    ]
    retract = {k: v for k, v in _label(12, "ana", "lit-0", "literal", "no").items() if k != "label"}
    records.append({**retract, "action": "retract", "supersedes": "u1"})
    return [{k: v for k, v in r.items() if v is not None} for r in records]


EXPECTED = {  # (annotator, case, target) -> (uuid, label): the fold by hand
    ("ana", "lit-0", "literal"): ("u0", "yes"),  # u1 retracted by the last record
    ("ana", "lit-0", "refusal"): ("u2", "no"),
    ("ana", "lit-1", "literal"): ("u11", "no"),  # later line overtakes u3
    ("bo", "lit-1", "literal"): ("u4", "no"),
    ("bo", "lit-1", "refusal"): ("u6", "yes"),  # newer created_at, earlier line
    ("bo", "lit-2", "literal"): ("u7", "unsure"),
    ("cy", "lit-2", "literal"): ("u8", "yes"),
    ("cy", "lit-3", "literal"): ("u9", "no"),
    ("cy", "lit-3", "refusal"): (None, "no"),  # no uuid: the database gives one
}


@pytest.fixture
def chunks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Patches import_labels' chunk size to CHUNK; lists each chunk's length."""
    seen: list[int] = []
    write = db.labels._import_chunk

    def spy(store: Store, records: Any) -> tuple[int, int]:
        seen.append(len(records))
        return write(store, records)

    monkeypatch.setattr(db.labels, "CHUNK_ROWS", CHUNK)
    monkeypatch.setattr(db.labels, "_import_chunk", spy)
    return seen


def test_a_retraction_in_a_later_chunk_folds_as_the_whole_file_fold(
    tmp_path: Path, cli, db_path: Path, chunks: list[int]
) -> None:
    make_run(cli, tmp_path, "literal", CASES)
    path = write_jsonl(tmp_path / "labels.jsonl", _file_records())
    folded = fold_label_file(path)
    whole = fold_current(read_label_file(path))
    assert [r.line for r in folded.current()] == [r.line for r in whole]
    assert list(folded.current()) == whole  # the same records, re-read

    result = cli("import-labels", str(path))
    assert result.code == 0, result.err
    assert "9 labels added, 0 unchanged (13 records, 9 current labels)" in result.out
    assert chunks == [3, 3, 3]
    with Store(db_path) as store:
        got = {
            (c.annotator, c.generation_key.split("/")[1], c.target): (c.uuid, c.label)
            for c in current_labels(store)
        }
    assert {k: (None if e[0] is None else got[k][0], got[k][1]) for k, e in EXPECTED.items()} == (
        EXPECTED
    )
    assert set(got) == set(EXPECTED)
    again = cli("import-labels", str(path))
    assert "0 labels added, 9 unchanged" in again.out


@pytest.mark.parametrize(
    ("fault", "field", "message", "written"),
    [
        # found while writing: two chunks are written, then rolled back
        ({"generation": "r/lit-404/1"}, "generation", "no generation 'r/lit-404/1'", 3),
        # found by the reader's own checks (pass 1): nothing is written
        ({"created_at": "2999-01-01T00:00:00Z"}, "created_at", "future", 0),
    ],
)
def test_a_bad_record_after_the_first_chunk_leaves_the_database_unchanged(
    tmp_path: Path,
    cli,
    db_path: Path,
    chunks: list[int],
    fault: dict,
    field: str,
    message: str,
    written: int,
) -> None:
    make_run(cli, tmp_path, "literal", CASES)
    records = _file_records()
    records[9] = {**records[9], **fault}  # line 10: the third chunk
    path = write_jsonl(tmp_path / "labels.jsonl", records)
    before = database_fingerprint(db_path)
    result = cli("import-labels", str(path))
    assert result.code == 2
    assert f"{path}: line 10: field '{field}'" in result.err and message in result.err, result.err
    assert len(chunks) == written
    assert database_fingerprint(db_path) == before


@pytest.mark.parametrize(
    ("retraction", "reason"),
    [
        ({"supersedes": "u3"}, "line 4 labels a different item (r/lit-1/1 literal 0)"),
        ({"supersedes": "u12"}, "line 13 is a retraction, not a label"),
        ({"supersedes": "nope"}, "no earlier label event with uuid 'nope' in this file"),
        ({"supersedes": "u0", "uuid": "u2"}, "duplicate uuid (first on line 3)"),
    ],
)
def test_a_bad_retraction_is_named_from_the_kept_numbers(
    tmp_path: Path, retraction: dict, reason: str
) -> None:
    records = _file_records()
    records.append({**records[-1], "uuid": "u13", **retraction})  # line 14
    path = write_jsonl(tmp_path / "labels.jsonl", records)
    with pytest.raises(InvalidRows) as caught:
        fold_label_file(path)
    (problem,) = caught.value.problems
    field = "uuid" if "duplicate" in reason else "supersedes"
    assert (problem.line, problem.field, problem.reason) == (14, field, reason)
    folded = fold_label_file(path, skip_invalid=True)  # the others still fold as before
    assert (folded.records, len(folded), folded.total) == (13, 9, 14)


def test_a_one_line_json_array_folds_by_record_not_by_line(
    tmp_path: Path, cli, db_path: Path, chunks: list[int]
) -> None:
    """Every record of `[{...}, {...}]` on one line has line 1: the passes count records."""
    make_run(cli, tmp_path, "literal", CASES)
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(_file_records()), encoding="utf-8")
    whole = fold_current(read_label_file(path))
    assert list(fold_label_file(path).current()) == whole
    assert {r.uuid for r in whole} == {e[0] for e in EXPECTED.values()}
    assert cli("import-labels", str(path)).code == 0
    with Store(db_path) as store:
        assert {c.label for c in current_labels(store) if c.uuid == "u0"} == {"yes"}
        assert len(current_labels(store)) == len(EXPECTED)
