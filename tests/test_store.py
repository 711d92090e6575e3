"""The SQLite store: pragmas, permissions, migrations, append-only events, concurrency."""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from copyaudit.errors import UserError
from db import Store
from db.events import append_label, append_review, retract_label, verify_chains
from db.migrations import SCHEMA_VERSION
from tests.conftest import write_jsonl
from tests.factories import counting_query, literal_record


def test_new_database_settings(db_path: Path) -> None:
    with Store(db_path) as store:
        assert store.scalar("PRAGMA journal_mode") == "wal"
        assert store.scalar("PRAGMA foreign_keys") == 1
        assert store.scalar("PRAGMA busy_timeout") >= 5000
        assert store.scalar("PRAGMA user_version") == SCHEMA_VERSION
        store.conn.execute("CREATE TABLE scratch (x)")  # force the WAL file into being
    mode = stat.S_IMODE(db_path.stat().st_mode)
    assert mode == 0o600, oct(mode)


def test_reopening_does_not_migrate_again(db_path: Path) -> None:
    Store(db_path).close()
    origin = Store(db_path).scalar("SELECT value FROM meta WHERE key = 'origin'")
    assert Store(db_path).scalar("SELECT value FROM meta WHERE key = 'origin'") == origin


def test_newer_schema_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(UserError, match="newer than this copyaudit"):
        Store(db_path)


def test_foreign_keys_enforced(db_path: Path) -> None:
    with Store(db_path) as store, pytest.raises(sqlite3.IntegrityError):
        store.conn.execute(
            "INSERT INTO cases (suite_id, case_id, work_id, payload, "
            "content_hash) VALUES (99, 'x', 99, '{}', 'h')"
        )


@pytest.fixture
def store_with_generation(tmp_path: Path, cli, db_path: Path) -> Store:
    cases = write_jsonl(tmp_path / "lit.jsonl", [literal_record(1), literal_record(2)])
    gens = write_jsonl(
        tmp_path / "g.jsonl",
        [{"case_id": "lit-1", "output": "o1"}, {"case_id": "lit-2", "output": "o2"}],
    )
    assert cli("import", "literal", str(cases)).code == 0
    assert cli("import-generations", str(gens), "--run", "r", "--suite", "lit").code == 0
    return Store(db_path)


def test_labels_are_append_only_and_chained(store_with_generation: Store) -> None:
    store = store_with_generation
    first = append_label(
        store, generation_id=1, annotator="ann", target="literal", item_index=0, label="yes"
    )
    append_label(
        store,
        generation_id=2,
        annotator="ann",
        target="refusal",
        item_index=0,
        label="no",
        note="clean",
    )
    retract_label(store, label_uuid=first, annotator="ann")
    append_review(store, generation_id=1, reviewer="lawyer", status="escalated", note="check")
    assert verify_chains(store) == []
    rows = store.query("SELECT generation_key, action, seq FROM labels ORDER BY seq")
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("r/lit-1/1", "label", 1),
        ("r/lit-2/1", "label", 2),
        ("r/lit-1/1", "retract", 3),
    ]
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("UPDATE labels SET label = 'no'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("DELETE FROM reviews")


def test_tampering_behind_the_tools_back_is_detected(store_with_generation: Store) -> None:
    store = store_with_generation
    uuids = [
        append_label(
            store, generation_id=1, annotator=f"a{i}", target="literal", item_index=0, label="yes"
        )
        for i in range(3)
    ]
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TRIGGER labels_no_update")
    conn.execute("UPDATE labels SET label = 'no' WHERE uuid = ?", (uuids[1],))
    conn.commit()
    problems = verify_chains(store)
    assert len(problems) == 1 and problems[0].uuid == uuids[1]
    assert "altered" in str(problems[0])


def test_deletion_is_detected(store_with_generation: Store) -> None:
    store = store_with_generation
    for i in range(3):
        append_label(
            store, generation_id=1, annotator=f"a{i}", target="literal", item_index=0, label="no"
        )
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TRIGGER labels_no_delete")
    conn.execute("DELETE FROM labels WHERE seq = 2")
    conn.commit()
    problems = verify_chains(store)
    assert len(problems) == 1 and problems[0].seq == 2 and "deleted" in problems[0].message


@pytest.mark.slow  # make test-slow: starts and kills processes
def test_two_processes_import_and_export_at_once(tmp_path: Path, db_path: Path, cli) -> None:
    """One process imports a large file while another exports: both succeed."""
    seed = write_jsonl(tmp_path / "seed.jsonl", [literal_record(i) for i in range(2000)])
    assert cli("import", "literal", str(seed), "--suite", "seed").code == 0
    big = write_jsonl(
        tmp_path / "big.jsonl", [literal_record(i, input="x " * 200) for i in range(20000)]
    )
    exe = [sys.executable, "-m", "copyaudit", "--db", str(db_path)]
    importer = subprocess.Popen(
        [*exe, "import", "literal", str(big), "--suite", "big"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    exports = []
    while importer.poll() is None or not exports:
        out = tmp_path / f"export-{len(exports)}.jsonl"
        done = subprocess.run(
            [*exe, "export", "cases", "--suite", "seed", "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        exports.append((done.returncode, out))
        if len(exports) > 50:
            break
    _, err = importer.communicate(timeout=120)
    assert importer.returncode == 0, err
    assert all(code == 0 for code, _ in exports)
    assert all(len(out.read_text().splitlines()) == 2000 for _, out in exports)
    suites = {s["name"]: s["cases"] for s in json.loads(cli("suites", "--format", "json").out)}
    assert suites == {"seed": 2000, "big": 20000}


def test_verify_command_names_the_altered_event(store_with_generation: Store, cli) -> None:
    store = store_with_generation
    uuids = [
        append_label(
            store, generation_id=1, annotator=f"a{i}", target="literal", item_index=0, label="yes"
        )
        for i in range(3)
    ]
    ok = cli("verify")
    assert ok.code == 0 and "3 label and 0 review events" in ok.out
    conn = sqlite3.connect(store.path)
    conn.execute("DROP TRIGGER labels_no_update")
    conn.execute("UPDATE labels SET note = 'edited' WHERE uuid = ?", (uuids[2],))
    conn.commit()
    bad = cli("verify")
    assert bad.code == 1
    assert f"labels event {uuids[2]}" in bad.err and "altered" in bad.err


def test_interrupt_conditions_nest_and_each_names_its_own_error(tmp_path: Path) -> None:
    """A read stops once any enclosing condition holds; the error is that condition's
    own (a count abandoned by the list is not a quick count out of time)."""
    from db.connection import Interrupted, OutOfTime

    store = Store(tmp_path / "t.db")
    endless = counting_query(100_000_000)
    wanted = [True]
    outer = store.interrupted_when(lambda: not wanted[0])
    with pytest.raises(Interrupted) as raised, outer, store.time_limited(60.0):
        assert store.scalar("SELECT 40 + 2") == 42
        wanted[0] = False  # the list moved on
        store.scalar(endless)
    assert type(raised.value) is Interrupted  # the outer condition's, not OutOfTime
    never = store.interrupted_when(lambda: False)
    with pytest.raises(OutOfTime), never, store.time_limited(0.02):
        store.scalar(endless)
    wanted[0] = True
    with pytest.raises(Interrupted), store.interrupted_when(lambda: not wanted[0]):
        with store.time_limited(0.01):
            pass
        wanted[0] = False  # the inner one left: the outer condition still stops reads
        store.scalar(endless)
    assert store.scalar(counting_query(1000)) == 1000  # no condition left after


def test_a_time_limited_read_gives_up_and_the_store_goes_on(tmp_path: Path) -> None:
    from db.connection import OutOfTime

    store = Store(tmp_path / "t.db")
    endless = counting_query(100_000_000)
    with pytest.raises(OutOfTime), store.time_limited(0.02):
        store.scalar(endless)
    with store.time_limited(5.0):
        assert store.scalar("SELECT COUNT(*) FROM runs") == 0  # quick: answered
    assert store.scalar("SELECT 40 + 2") == 42  # the limit is gone afterwards
    with pytest.raises(RuntimeError), store.transaction(), store.time_limited(1.0):
        pass  # never around a write: an interrupt would roll it back


def test_opening_a_current_database_loads_no_sqlite_utils(tmp_path: Path) -> None:
    """sqlite_utils imports pandas where it is installed (a third of a second of every
    command): a store whose schema is current never loads it; a migration does."""
    probe = (
        "import sys; from db import Store; Store(sys.argv[1]).close(); "
        "print('sqlite_utils' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}

    def loaded() -> str:
        argv = [sys.executable, "-c", probe, str(tmp_path / "s.db")]
        return subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout

    assert loaded() == "True\n"  # a new file: every migration runs
    assert loaded() == "False\n"


def _rename_in_schema(path: Path, table: str, old: str, new: str) -> None:
    """A bit flipped in the schema's text on disk, as valid SQL naming another column."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA writable_schema = ON")
        conn.execute(
            "UPDATE sqlite_master SET sql = replace(sql, ?, ?) WHERE name = ?", (old, new, table)
        )
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize("command", [["verify"], ["export", "labels"]])
def test_a_schema_damaged_into_valid_text_is_named_not_an_internal_error(
    tmp_path: Path, cli, command: list[str]
) -> None:
    path = tmp_path / "flip.db"
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(i) for i in range(3)])
    assert cli("import", "literal", str(cases), "--suite", "s", db=path).code == 0
    _rename_in_schema(path, "labels", "generation_id", "generation_hd")
    result = cli(*command, db=path)
    assert result.code == 2, result.err
    assert f"{path}: its schema is not as copyaudit made it (table labels lacks " in result.err
    assert "internal error" not in result.err


def test_a_missing_column_in_an_intact_schema_stays_an_internal_error(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """copyaudit's own faulty SQL is not blamed on the database."""
    import db.queries

    path = tmp_path / "intact.db"
    cases = write_jsonl(tmp_path / "c.jsonl", [literal_record(i) for i in range(3)])
    assert cli("import", "literal", str(cases), "--suite", "s", db=path).code == 0

    def faulty(store: Store, *args: object, **kwargs: object) -> object:
        return store.conn.execute("SELECT no_such_column FROM suites").fetchall()

    monkeypatch.setattr(db.queries, "suites_summary", faulty)
    monkeypatch.setattr("copyaudit.cli.data.suites_summary", faulty)
    result = cli("suites", db=path)
    assert result.code == 1
    assert "internal error: OperationalError: no such column: no_such_column" in result.err
