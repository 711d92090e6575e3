"""Generation keys read one way: run names cannot contain '/', so run/case_id/template
splits at the first and the last '/'. Runs named with a '/' before (a database made by an
earlier copyaudit) are renamed by a migration; their old keys still resolve, and a key
that could name two generations is an error naming both, never a silent pick."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from copyaudit.errors import UserError
from copyaudit.generation_keys import GenerationKey, check_run_name, split_key
from db import Store
from db.audit import audit_events
from db.events import append_label, verify_chains
from db.generation_keys import generation_ids
from db.migrations import MIGRATIONS, migrate_run_names
from tests.conftest import database_fingerprint, write_jsonl


def test_a_key_splits_at_the_first_and_last_slash() -> None:
    assert split_key("run/Title_-_Author/3/1") == GenerationKey("run", "Title_-_Author/3", 1)
    assert str(GenerationKey("run", "a/b", 2)) == "run/a/b/2"
    # a template int() refuses (a Unicode digit, 5,001 digits: found by the import fuzzer)
    for bad in ("run/case", "run//1", "/case/1", "run/case/x", "run/case/", "run/case/²",
                "run/case/" + "9" * 5001):  # fmt: skip
        assert split_key(bad) is None, bad


@pytest.mark.parametrize("name", ["a/b", "", "  ", "/"])
def test_run_names_cannot_hold_a_slash(name: str) -> None:
    with pytest.raises(UserError):
        check_run_name(name)
    assert check_run_name("a_b-c.d") == "a_b-c.d"


def _cases(tmp_path: Path, cli, ids: list[str]) -> None:
    records = [{"id": i, "title": "Our Tale", "input": "Once", "reference": "upon"} for i in ids]
    result = cli(
        "import", "literal", str(write_jsonl(tmp_path / "c.jsonl", records)), "--suite", "s"
    )
    assert result.code == 0, result.err


def _outputs(tmp_path: Path, cli, run: str, case_id: str):
    path = write_jsonl(
        tmp_path / f"{run.replace('/', '_')}.jsonl", [{"case_id": case_id, "output": run}]
    )
    return cli("import-generations", str(path), "--run", run, "--suite", "s")


def test_new_runs_named_with_a_slash_are_refused(tmp_path: Path, cli, db_path: Path) -> None:
    _cases(tmp_path, cli, ["c"])
    before = database_fingerprint(db_path)
    result = _outputs(tmp_path, cli, "a/b", "c")
    assert result.code == 2 and "cannot contain '/'" in result.err
    result = cli(
        "run", "s", "--name", "x/y", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1"
    )
    assert result.code == 2 and "cannot contain '/'" in result.err
    assert database_fingerprint(db_path) == before


@pytest.fixture
def legacy_db(tmp_path: Path, cli, db_path: Path) -> dict[str, int]:
    """A database as an earlier copyaudit left it: runs 'a/b' and 'x/y' (named with a
    '/') beside run 'a', each generation labelled; key 'a/b/c/1' names both a/b's case
    'c' and a's case 'b/c'."""
    _cases(tmp_path, cli, ["c", "b/c"])
    for run, case_id in (("a", "b/c"), ("ab", "c"), ("xy", "c")):
        assert _outputs(tmp_path, cli, run, case_id).code == 0
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE runs SET name = 'a/b' WHERE name = 'ab'")
    conn.execute("UPDATE runs SET name = 'x/y' WHERE name = 'xy'")
    conn.commit()
    conn.close()
    ids = {}
    with Store(db_path) as store:
        for run in ("a", "a/b", "x/y"):
            gid = int(store.scalar(
                "SELECT g.id FROM generations g JOIN runs r ON r.id = g.run_id WHERE r.name = ?",
                (run,),
            ))  # fmt: skip
            append_label(
                store, generation_id=gid, annotator="ann", target="literal", item_index=0,
                label="yes",
            )  # fmt: skip
            ids[run] = gid
    # back to the schema before the rename: as the earlier copyaudit left it
    conn = sqlite3.connect(db_path)
    conn.execute("DROP TABLE run_renames")
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(migrate_run_names)}")
    conn.commit()
    conn.close()
    return ids


def test_the_migration_renames_and_old_keys_still_resolve(
    legacy_db: dict[str, int], cli, db_path: Path
) -> None:
    with Store(db_path) as store:  # migrates
        names = [r[0] for r in store.query("SELECT name FROM runs ORDER BY id")]
        assert names == ["a", "a_b", "x_y"]
        assert verify_chains(store) == []  # stored events untouched
        assert audit_events(store) == []  # their old keys still name their generations
        stored = [r[0] for r in store.query("SELECT generation_key FROM labels ORDER BY seq")]
        assert stored == ["a/b/c/1", "a/b/c/1", "x/y/c/1"]  # as written, hash-chained
        # today's keys read one way
        assert generation_ids(store, ["a_b/c/1", "x_y/c/1"]) == {
            "a_b/c/1": legacy_db["a/b"],
            "x_y/c/1": legacy_db["x/y"],
        }
        # an old key of a renamed run resolves when it reads one way only
        assert generation_ids(store, ["x/y/c/1"]) == {"x/y/c/1": legacy_db["x/y"]}
        # one that names two generations is an error naming both, never a pick
        with pytest.raises(UserError, match="ambiguous") as ambiguous:
            generation_ids(store, ["a/b/c/1"])
        assert str(legacy_db["a"]) in str(ambiguous.value)
        assert str(legacy_db["a/b"]) in str(ambiguous.value)
    result = cli("review", "history", "a/b/c/1")
    assert result.code == 2 and "ambiguous" in result.err
    assert cli("review", "history", "x/y/c/1").code == 0
    result = cli("report", "a/b")
    assert result.code == 2 and "renamed 'a_b'" in result.err
    assert cli("report", "a_b").code == 0


def test_the_migration_avoids_names_in_use(tmp_path: Path, cli, db_path: Path) -> None:
    _cases(tmp_path, cli, ["c"])
    for run in ("p_q", "pq"):
        assert _outputs(tmp_path, cli, run, "c").code == 0
    conn = sqlite3.connect(db_path)
    conn.execute("UPDATE runs SET name = 'p/q' WHERE name = 'pq'")
    conn.execute("DROP TABLE run_renames")
    conn.execute(f"PRAGMA user_version = {MIGRATIONS.index(migrate_run_names)}")
    conn.commit()
    conn.close()
    with Store(db_path) as store:
        assert [r[0] for r in store.query("SELECT name FROM runs ORDER BY id")] == ["p_q", "p_q-2"]
        assert store.query("SELECT old_name, new_name FROM run_renames")[0][:] == ("p/q", "p_q-2")
