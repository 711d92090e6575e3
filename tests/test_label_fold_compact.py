"""The label fold in flat arrays (issue 20: import-labels at 1M under 300 MB) folds
as the plain rule says, written here with dicts of strings: on many generated files
(duplicate uuids, retractions of nothing, of retractions, of other items, of labels
already retracted; times with and without created_at, before 1970, equal times on
records of one line) the same records are usable, the same problems named, and the
same records chosen."""

from __future__ import annotations

import json
import struct
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from copyaudit.verification.label_files import (
    EMPTY,
    _DigestTable,
    _milliseconds,
    fold_label_file,
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
        chosen = list(folded.current())
        assert [(r.line, r.uuid) for r in chosen] == [
            (lines[p], rows[p].get("uuid")) for p in positions
        ]


@settings(max_examples=300, deadline=None)
@given(st.lists(records, min_size=1, max_size=14), st.booleans())
def test_the_compact_fold_equals_the_plain_fold(
    drawn: list[dict[str, Any]], one_line: bool
) -> None:
    _check([_file_record(r) for r in drawn], one_line)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 2**40)), max_size=120))
def test_the_digest_table_maps_as_a_dict(puts: list[tuple[int, int]]) -> None:
    """From 4 slots, so it grows; digests 0..40 share low bits (the probe's start)."""
    table, plain = _DigestTable(4), {}
    for key, value in puts:
        digest = (key << 70 | key % 3).to_bytes(16, "little")
        hi, lo = struct.unpack("<QQ", digest)
        table.put(table.slot(hi, lo), hi, lo, value)
        plain[digest] = value
        assert table.get(digest) == value
    assert {d: table.get(d) for d in plain} == plain
    assert table.get(b"\xff" * 16) is None
    assert sorted(v for v in table.values if v != EMPTY) == sorted(plain.values())
    assert 3 * table.count <= 2 * (table.mask + 1)


def test_milliseconds_order_as_the_canonical_times() -> None:
    assert sorted(TIMES, key=_milliseconds) == sorted(TIMES)
    assert _milliseconds(None) < _milliseconds(TIMES[-1])
    assert _milliseconds("1970-01-01T00:00:00.001+00:00") == 1
