"""The label fold in a private scratch database (db.label_scratch; issue 20:
import-labels at 1M under 300 MB) folds as the plain rule says, written here with
dicts of strings: on many generated files (duplicate uuids, retractions of nothing, of
retractions, of other items, of labels already retracted; times with and without
created_at, before 1970, equal times on records of one line), with batches of every
size (a record found among those waiting or among those written), the same records are
usable, the same problems named, and the same records chosen. The scratch database is
closed however the reading ends."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import db.label_scratch
from copyaudit.errors import InputError
from copyaudit.verification import label_files
from copyaudit.verification.label_files import (
    _milliseconds,
    fold_current,
    fold_label_file,
    read_label_file,
    read_labels,
)

TIMES = [  # canonical created_at (db.event_rules), out of order on purpose
    "2026-01-02T00:00:00.000+00:00",
    "2026-01-01T00:00:00.001+00:00",
    "2026-01-01T00:00:00.000+00:00",
    "1969-12-31T23:59:59.999+00:00",
    "0001-01-01T00:00:00.000+00:00",
]
UUIDS = [f"u{i}" for i in range(6)]

records = st.fixed_dictionaries(
    {
        "annotator": st.sampled_from(["ana", "bo"]),
        "generation": st.sampled_from(["r/c-1/1", "r/c-2/1", "r/a/b/2"]),
        "target": st.sampled_from(["literal", "event"]),
        "retract": st.integers(0, 3),  # 0: a retraction, else a label
        "label": st.sampled_from(["yes", "no", "unsure"]),
        "uuid": st.none() | st.sampled_from(UUIDS),
        "supersedes": st.sampled_from([*UUIDS, "nope"]),
        "created_at": st.none() | st.sampled_from(TIMES),
    }
)


def _file_record(r: dict[str, Any]) -> dict[str, Any]:
    out = {k: r[k] for k in ("annotator", "generation", "target")}
    out["index"] = 0
    if r["retract"] == 0:
        out |= {"action": "retract", "supersedes": r["supersedes"]}
    else:
        out["label"] = r["label"]
    return out | {k: r[k] for k in ("uuid", "created_at") if r[k] is not None}


def plain_fold(rows: list[dict[str, Any]], lines: list[int]) -> tuple[list[tuple], list[int]]:
    """(problems as (line, field), positions of the current labels), by the rule in
    copyaudit.verification.label_files, over dicts of strings."""
    problems: list[tuple] = []
    by_uuid: dict[str, int] = {}
    kept: list[dict[str, Any]] = []
    for position, (row, line) in enumerate(zip(rows, lines, strict=True)):
        item = (row["annotator"], row["generation"], row["target"], row["index"])
        uuid = row.get("uuid")
        if uuid is not None and uuid in by_uuid:
            problems.append((line, "uuid"))
            continue
        if row.get("action") == "retract":
            undone = by_uuid.get(row["supersedes"])
            if undone is None or kept[undone]["retraction"] or kept[undone]["item"] != item:
                problems.append((line, "supersedes"))
                continue
            kept[undone]["retracted"] = True
        if uuid is not None:
            by_uuid[uuid] = len(kept)
        kept.append(
            {
                "position": position,
                "order": (row.get("created_at", ""), line),
                "item": item,
                "retraction": row.get("action") == "retract",
                "retracted": False,
            }
        )
    latest: dict[tuple, dict[str, Any]] = {}
    for k in kept:
        if k["retraction"] or k["retracted"]:
            continue
        if k["item"] not in latest or k["order"] >= latest[k["item"]]["order"]:
            latest[k["item"]] = k
    return problems, sorted(k["position"] for k in latest.values())


def _check(rows: list[dict[str, Any]], one_line: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("labels.json" if one_line else "labels.jsonl")
        if one_line:  # a JSON array on one line: every record has line 1
            path.write_text(json.dumps(rows), encoding="utf-8")
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        lines = [1] * len(rows) if one_line else list(range(1, len(rows) + 1))
        problems, positions = plain_fold(rows, lines)
        if len(problems) == len(rows):
            return  # nothing usable: the reader refuses the file (tested elsewhere)
        folded = fold_label_file(path, skip_invalid=True)
        assert [(p.line, p.field) for p in folded.problems] == problems
        assert list(folded.positions) == positions
        chosen = [(r.line, r.uuid) for r in folded.current()]
        assert chosen == [(lines[p], rows[p].get("uuid")) for p in positions]
        if not problems:  # the fold of records in memory: no reading ahead
            assert [(r.line, r.uuid) for r in fold_current(read_label_file(path))] == chosen


@settings(max_examples=300, deadline=None)
@given(st.lists(records, min_size=1, max_size=14), st.booleans())
def test_the_compact_fold_equals_the_plain_fold(
    drawn: list[dict[str, Any]], one_line: bool
) -> None:
    _check([_file_record(r) for r in drawn], one_line)


@contextmanager
def _scratch_stores(batch: int = db.label_scratch.BATCH) -> Iterator[list[sqlite3.Connection]]:
    """Every scratch database opened inside, each writing `batch` rows at a time, the
    file read `batch` records ahead."""
    opened: list[sqlite3.Connection] = []
    real = db.label_scratch.LabelScratch.__init__

    def init(self: db.label_scratch.LabelScratch, _: int = 0) -> None:
        real(self, batch)
        opened.append(self.db)

    with (
        mock.patch.object(db.label_scratch.LabelScratch, "__init__", init),
        mock.patch.object(label_files, "AHEAD", batch),
    ):
        yield opened


def _closed(connection: sqlite3.Connection) -> bool:
    try:
        connection.execute("SELECT 1 FROM sqlite_master")
    except sqlite3.ProgrammingError:
        return True
    return False


@settings(max_examples=300, deadline=None)
@given(st.lists(records, min_size=1, max_size=14), st.booleans(), st.integers(1, 4))
def test_the_scratch_fold_equals_the_plain_fold_in_batches_of_any_size(
    drawn: list[dict[str, Any]], one_line: bool, batch: int
) -> None:
    with _scratch_stores(batch) as opened:
        _check([_file_record(r) for r in drawn], one_line)
    assert all(_closed(c) for c in opened)


def _labels(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


LABELLED = {"annotator": "ana", "generation": "r/c-1/1", "target": "literal"}


def test_the_scratch_database_is_closed_on_every_path(tmp_path: Path) -> None:
    good = _labels(tmp_path / "good.jsonl", [LABELLED | {"label": "yes", "uuid": "u1"}])
    bad = _labels(
        tmp_path / "bad.jsonl",
        [LABELLED | {"label": "yes", "uuid": "u1"}, LABELLED | {"label": "no", "uuid": "u1"}],
    )
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(LABELLED | {"label": "yes"}) + "\n{not json\n", "utf-8")
    runs = [
        lambda: fold_label_file(good),
        lambda: read_label_file(good),
        lambda: fold_current(read_label_file(good)),
        lambda: next(read_labels(good).stream()),  # stopped after one record
        lambda: fold_label_file(bad),  # a duplicate uuid: InvalidRows
        lambda: read_label_file(bad),
        lambda: fold_label_file(broken),  # not JSON: the reading stops
        lambda: read_label_file(broken),
    ]
    for run in runs:
        with _scratch_stores() as opened, suppress(InputError):
            run()
        assert opened, "each run reads a record"
        assert all(_closed(c) for c in opened), run
    with pytest.raises(InputError, match="duplicate uuid"):
        fold_label_file(bad)


def test_milliseconds_order_as_the_canonical_times() -> None:
    assert sorted(TIMES, key=_milliseconds) == sorted(TIMES)
    assert _milliseconds(None) < _milliseconds(TIMES[-1])
    assert _milliseconds("1970-01-01T00:00:00.001+00:00") == 1
