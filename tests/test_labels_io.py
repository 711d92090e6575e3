"""Importing label files: validation, all-or-nothing, re-import, export round trip,
and two processes labelling the same database at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest

import db.labels
from copyaudit.verification.label_files import fold_current, read_label_file
from db import Store
from db.events import retract_label, verify_chains
from db.labels import current_labels
from tests.conftest import database_fingerprint, write_jsonl
from tests.label_fixtures import gid, label, make_run

REPO = Path(__file__).resolve().parents[1]


def rec(generation: str = "r/nl-1/1", **over: object) -> dict[str, object]:
    return {
        "annotator": "ann",
        "generation": generation,
        "target": "event",
        "index": 0,
        "label": "yes",
        **over,
    }


@pytest.fixture
def run_db(tmp_path: Path, cli, db_path: Path) -> Path:
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"])
    return db_path


def state(path: Path) -> set[tuple]:
    with Store(path) as store:
        return {
            (c.annotator, c.generation_key, c.target, c.item_index, c.label, c.note)
            for c in current_labels(store)
        }


def test_import_adds_labels_and_reimport_adds_nothing(run_db: Path, tmp_path: Path, cli) -> None:
    path = write_jsonl(
        tmp_path / "labels.jsonl",
        [
            rec(),
            rec(index=1, label="no", note="only the setting"),
            rec("r/nl-2/1", annotator="bob", target="character", index=1, label="unsure"),
            rec(target="refusal", index=0, label="no"),
            rec(target="literal", label="no", index=None),  # index may be left out: 0
        ],
    )
    result = cli("import-labels", str(path))
    assert result.code == 0, result.err
    assert "5 labels added, 0 unchanged" in result.out
    assert state(run_db) == {
        ("ann", "r/nl-1/1", "event", 0, "yes", None),
        ("ann", "r/nl-1/1", "event", 1, "no", "only the setting"),
        ("bob", "r/nl-2/1", "character", 1, "unsure", None),
        ("ann", "r/nl-1/1", "refusal", 0, "no", None),
        ("ann", "r/nl-1/1", "literal", 0, "no", None),
    }
    before = database_fingerprint(run_db)
    again = cli("import-labels", str(path))
    assert again.code == 0 and "0 labels added, 5 unchanged" in again.out
    assert database_fingerprint(run_db) == before
    # A changed label (or note) is a new event: the old one stays in the history.
    changed = write_jsonl(tmp_path / "changed.jsonl", [rec(label="no"), rec(note="new note")])
    assert "1 labels added, 0 unchanged" in cli("import-labels", str(changed)).out
    assert ("ann", "r/nl-1/1", "event", 0, "yes", "new note") in state(run_db)
    with Store(run_db) as store:
        assert store.scalar("SELECT COUNT(*) FROM labels") == 6
        assert verify_chains(store) == []


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        ([{**rec(), "annotator": None}], "line 1: field 'annotator': missing"),
        ([rec(annotator=" ")], "line 1: field 'annotator': must not be empty"),
        ([rec(target="plot")], "line 1: field 'target': expected one of event"),
        ([rec(label="maybe")], "line 1: field 'label': expected one of yes, no, unsure"),
        ([rec(index=-1)], "line 1: field 'index': expected a non-negative integer"),
        ([rec(index="2")], "line 1: field 'index': expected a non-negative integer"),
        ([rec(index=True)], "line 1: field 'index': expected a non-negative integer"),
        ([rec(index=None)], "line 1: field 'index': missing"),
        ([rec(target="refusal", index=1)], "line 1: field 'index': a refusal label has one item"),
        ([rec("nl-1")], "line 1: field 'generation': expected 'run/case_id/template'"),
        (
            [rec(), rec("r/nl-9/1")],
            "line 2: field 'generation': no generation 'r/nl-9/1' in this database",
        ),
        ([rec(), rec(index=4)], "line 2: field 'index': r/nl-1/1 has 4 reference events"),
        (
            [rec(action="retract", supersedes="abc")],
            "line 1: field 'supersedes': no earlier label event with uuid 'abc'",
        ),
        ([rec(action="undo")], "line 1: field 'action': expected one of label, retract"),
        ([rec(uuid="u1"), rec(uuid="u1")], "line 2: field 'uuid': duplicate uuid"),
    ],
)
def test_bad_label_files_name_the_line_and_change_nothing(
    records, expected: str, run_db: Path, tmp_path: Path, cli
) -> None:
    with Store(run_db) as store:
        label(store, "r/nl-2/1", "bob", "event", 0, "no")
    before = database_fingerprint(run_db)
    path = write_jsonl(tmp_path / "bad.jsonl", records)
    result = cli("import-labels", str(path))
    assert result.code == 2, result.err
    assert expected in result.err and str(path) in result.err
    assert database_fingerprint(run_db) == before


def test_malformed_json_and_missing_file(run_db: Path, tmp_path: Path, cli) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(rec()) + "\n{not json\n", encoding="utf-8")
    before = database_fingerprint(run_db)
    result = cli("import-labels", str(path))
    assert result.code == 2 and "line 2: malformed JSON" in result.err
    missing = cli("import-labels", str(tmp_path / "nope.jsonl"))
    assert missing.code == 2 and "no such file" in missing.err
    assert database_fingerprint(run_db) == before


def test_a_failure_midway_rolls_back_every_label(
    run_db: Path, tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = database_fingerprint(run_db)
    real = db.labels.append_label
    calls = []

    def failing_append(store: Store, **fields: object) -> str:
        calls.append(fields)
        if len(calls) == 3:
            raise RuntimeError("disk full")
        return real(store, **fields)

    monkeypatch.setattr(db.labels, "append_label", failing_append)
    path = write_jsonl(tmp_path / "l.jsonl", [rec(index=i) for i in range(4)])
    result = cli("import-labels", str(path))
    assert result.code == 1 and "disk full" in result.err
    assert len(calls) == 3  # two labels were appended before the failure ...
    assert database_fingerprint(run_db) == before  # ... and rolled back with it


def test_export_round_trips_through_import(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"])
    with Store(db_path) as store:
        label(store, "r/nl-1/1", "ann", "event", 0, "yes")
        wrong = label(store, "r/nl-1/1", "ann", "event", 0, "no")
        retract_label(store, label_uuid=wrong, annotator="ann")  # back to "yes"
        gone = label(store, "r/nl-1/1", "ann", "event", 1, "yes")
        retract_label(store, label_uuid=gone, annotator="ann")  # no current label
        label(store, "r/nl-1/1", "bob", "event", 0, "no", note='a "quoted" note')
        label(store, "r/nl-2/1", "bob", "character", 1, "unsure")
        label(store, "r/nl-2/1", "bob", "character", 1, "yes")  # replaces unsure
        label(store, "r/nl-2/1", "ann", "refusal", 0, "no")
    original = state(db_path)
    assert original == {
        ("ann", "r/nl-1/1", "event", 0, "yes", None),
        ("bob", "r/nl-1/1", "event", 0, "no", 'a "quoted" note'),
        ("bob", "r/nl-2/1", "character", 1, "yes", None),
        ("ann", "r/nl-2/1", "refusal", 0, "no", None),
    }
    exported = tmp_path / "labels-export.jsonl"
    assert cli("export", "labels", "-o", str(exported)).code == 0
    assert len(exported.read_text().splitlines()) == 9  # every event, retractions too

    fresh = tmp_path / "fresh.db"
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2"], db=fresh)
    result = cli("import-labels", str(exported), db=fresh)
    assert result.code == 0, result.err
    assert "4 labels added" in result.out
    assert state(fresh) == original
    # Importing it again, into either database, adds nothing.
    before = database_fingerprint(fresh)
    assert "0 labels added, 4 unchanged" in cli("import-labels", str(exported), db=fresh).out
    assert database_fingerprint(fresh) == before
    before = database_fingerprint(db_path)
    assert "0 labels added, 4 unchanged" in cli("import-labels", str(exported)).out
    assert database_fingerprint(db_path) == before


def test_fold_orders_by_created_at_when_present(tmp_path: Path) -> None:
    # Merged databases export chain by chain, so file order is not time order.
    path = write_jsonl(
        tmp_path / "merged.jsonl",
        [
            rec(label="no", uuid="b", created_at="2024-01-02T00:00:00.000+00:00"),
            rec(label="yes", uuid="a", created_at="2024-01-01T00:00:00.000+00:00"),
        ],
    )
    current = fold_current(read_label_file(path))
    assert [(c.label, c.line) for c in current] == [("no", 1)]


TWO_WRITERS = """
import sys, time
from pathlib import Path
from db import Store
from db.events import append_label
path, name, generation_id, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = Store(path)
Path(f"{go}.{name}").touch()  # ready
while not go.exists():
    time.sleep(0.005)
for i in range(200):
    append_label(store, generation_id=generation_id, annotator=name, target="event",
                 item_index=i % 4, label="yes" if i % 3 else "no", note=f"{name} {i}")
    time.sleep(0.001)  # a pause between labels, as a person makes; lets the other one in
"""


def test_two_processes_label_at_once(run_db: Path, tmp_path: Path) -> None:
    with Store(run_db) as store:
        ids = [gid(store, "r/nl-1/1"), gid(store, "r/nl-2/1")]
    go = tmp_path / "go"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", TWO_WRITERS, str(run_db), name, str(g), str(go)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name, g in (("ann", ids[0]), ("bob", ids[1]))
    ]
    deadline = time.monotonic() + 60
    while not all(Path(f"{go}.{name}").exists() for name in ("ann", "bob")):
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers)
        time.sleep(0.01)
    go.touch()  # both are ready: they start appending at the same moment
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with Store(run_db) as store:
        rows = store.query("SELECT annotator, seq, note FROM labels ORDER BY seq")
        assert [r["seq"] for r in rows] == list(range(1, 401))
        for name in ("ann", "bob"):
            notes = [r["note"] for r in rows if r["annotator"] == name]
            assert notes == [f"{name} {i}" for i in range(200)]  # each in its own order
        assert verify_chains(store) == []
    # The two writers really did interleave (not one after the other).
    owners = [r["annotator"] for r in rows]
    switches = sum(1 for a, b in pairwise(owners) if a != b)
    assert switches > 1, "the writers did not overlap; the test did not test concurrency"
