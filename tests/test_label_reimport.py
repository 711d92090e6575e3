"""Re-importing an older label export keeps each event's own uuid and time, adds
nothing already here, and never reverts a label made after the export."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

from db import Store
from db.labels import current_labels
from tests.conftest import database_fingerprint, write_jsonl
from tests.label_fixtures import label, make_run

G1 = "r/nl-1/1"


def _rows(path: Path) -> dict[str, tuple[str, str]]:
    with closing(sqlite3.connect(path)) as conn:
        return {
            u: (c, lab) for u, c, lab in conn.execute("SELECT uuid, created_at, label FROM labels")
        }


def test_an_older_export_never_reverts_a_newer_label(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    with Store(db_path) as store:
        old = label(store, G1, "ann", "event", 0, "yes")
    export = tmp_path / "old-export.jsonl"
    assert cli("export", "labels", "-o", str(export)).code == 0
    with Store(db_path) as store:
        new = label(store, G1, "ann", "event", 0, "no")  # ann changes her mind

    # Into the same database: the exported event is already here (same uuid): a no-op.
    before = database_fingerprint(db_path)
    same = cli("import-labels", str(export))
    assert same.code == 0 and "0 labels added, 1 unchanged" in same.out
    assert database_fingerprint(db_path) == before

    # Into a copy that has only the newer label: the older event comes in with its own
    # uuid and time, and the newer label stays current.
    fresh = tmp_path / "fresh.db"
    make_run(cli, tmp_path, "nonliteral", ["nl-1"], db=fresh)
    newer = write_jsonl(
        tmp_path / "newer.jsonl",
        [{"annotator": "ann", "generation": G1, "target": "event", "index": 0, "label": "no",
          "uuid": new, "created_at": _rows(db_path)[new][0]}],
    )  # fmt: skip
    assert cli("import-labels", str(newer), db=fresh).code == 0
    result = cli("import-labels", str(export), db=fresh)
    assert result.code == 0 and "1 labels added" in result.out, result.out
    rows = _rows(fresh)
    assert rows[old] == _rows(db_path)[old]  # own uuid, own created_at, not now()
    assert rows[new] == _rows(db_path)[new]
    with Store(fresh) as store:
        (current,) = current_labels(store, annotator="ann")
    assert (current.uuid, current.label) == (new, "no")
    assert cli("verify", db=fresh).code == 0


def test_a_uuid_already_here_with_other_content_is_refused(
    tmp_path: Path, cli, db_path: Path
) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    with Store(db_path) as store:
        uuid = label(store, G1, "ann", "event", 0, "yes")
    forged = write_jsonl(
        tmp_path / "forged.jsonl",
        [{"annotator": "ann", "generation": G1, "target": "event", "index": 1, "label": "no",
          "uuid": uuid}],
    )  # fmt: skip
    before = database_fingerprint(db_path)
    result = cli("import-labels", str(forged))
    assert result.code == 2 and "field 'uuid'" in result.err and "other content" in result.err
    assert database_fingerprint(db_path) == before


def test_a_future_or_garbage_time_in_a_label_file_is_named(
    tmp_path: Path, cli, db_path: Path
) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    before = database_fingerprint(db_path)
    for when, says in (("3026-01-01T00:00:00Z", "in the future"), ("soon", "not an ISO-8601")):
        path = write_jsonl(
            tmp_path / "t.jsonl",
            [{"annotator": "ann", "generation": G1, "target": "event", "index": 0,
              "label": "no", "created_at": when}],
        )  # fmt: skip
        result = cli("import-labels", str(path))
        assert result.code == 2, result.out
        assert "line 1: field 'created_at'" in result.err and says in result.err
        assert database_fingerprint(db_path) == before


def test_an_edited_export_is_refused_before_anything_else(
    tmp_path: Path, cli, db_path: Path
) -> None:
    """Issue 33: a label flipped in an export, its uuid and hash kept, was accepted ("3
    labels added") and the genuine database could then no longer be merged."""
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    with Store(db_path) as store:
        label(store, G1, "ann", "event", 0, "no")
        label(store, G1, "ann", "event", 1, "yes")
    export = tmp_path / "export.jsonl"
    assert cli("export", "labels", "-o", str(export)).code == 0
    records = [json.loads(line) for line in export.read_text().splitlines()]
    assert records[1]["label"] == "yes" and records[1]["content_hash"]
    records[1]["label"] = "no"  # the edit; uuid, prev_hash and hash kept
    edited = write_jsonl(tmp_path / "edited.jsonl", records)

    fresh = tmp_path / "fresh.db"
    make_run(cli, tmp_path, "nonliteral", ["nl-1"], db=fresh)
    before = database_fingerprint(fresh)
    refused = cli("import-labels", str(edited), db=fresh)
    assert refused.code == 2
    assert f"{edited}: line 2: field 'hash': does not match the record's own fields" in refused.err
    assert database_fingerprint(fresh) == before
    genuine = cli("import-labels", str(export), db=fresh)  # the untouched export still imports
    assert genuine.code == 0 and "2 labels added" in genuine.out, genuine.err


def test_an_annotator_name_with_a_nul_is_refused(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "nonliteral", ["nl-1"])
    path = write_jsonl(
        tmp_path / "nul.jsonl",
        [{"annotator": "ann\u0000x", "generation": G1, "target": "event", "index": 0,
          "label": "yes"}],
    )  # fmt: skip
    result = cli("import-labels", str(path))
    assert result.code == 2
    assert f"{path}: line 1: field 'annotator': 'ann\\x00x' contains a NUL" in result.err
