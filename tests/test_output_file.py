"""`-o FILE`: never over the database, an existing file only with --force, never through a
symbolic link, owner-only, and all or nothing."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from copyaudit.reports.output_file import output_file
from tests.conftest import database_fingerprint
from tests.test_screens_data import copy_demo_like_db

KEY_QUERY = "SELECT r.name || '/' || c.case_id || '/' || g.template FROM generations g " \
    "JOIN runs r ON r.id = g.run_id JOIN cases c ON c.id = g.case_pk LIMIT 1"  # fmt: skip


@pytest.fixture
def demo_db(db_path: Path) -> Path:
    copy_demo_like_db(db_path, kinds=("literal",))
    return db_path


def _first_key(path: Path) -> str:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return conn.execute(KEY_QUERY).fetchone()[0]
    finally:
        conn.close()


def _commands(db: Path) -> list[tuple[str, ...]]:
    run = _first_key(db).split("/")[0]
    return [
        ("export", "cases"),
        ("export", "labels"),
        ("report", run, "--format", "html"),
        ("dossier", _first_key(db), "--format", "md"),
    ]


def test_no_command_writes_over_the_database_or_its_wal(demo_db: Path, cli) -> None:
    before = database_fingerprint(demo_db)
    for command in _commands(demo_db):
        for target in (demo_db, Path(f"{demo_db}-wal")):
            result = cli(*command, "-o", str(target), "--force")
            assert result.code == 2, (command, result.err)
            assert "is the database" in result.err
    assert database_fingerprint(demo_db) == before


def test_an_existing_file_is_kept_unless_forced(demo_db: Path, cli, tmp_path: Path) -> None:
    for command in _commands(demo_db):
        out = tmp_path / "out.txt"
        out.write_text("keep me", encoding="utf-8")
        refused = cli(*command, "-o", str(out))
        assert refused.code == 2 and "--force" in refused.err
        assert out.read_text(encoding="utf-8") == "keep me"
        forced = cli(*command, "-o", str(out), "--force")
        assert forced.code == 0, forced.err
        assert out.read_text(encoding="utf-8") != "keep me"
        assert stat.S_IMODE(out.stat().st_mode) == 0o600
        out.unlink()


def test_a_symbolic_link_at_the_destination_is_not_followed(
    demo_db: Path, cli, tmp_path: Path
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    link = tmp_path / "link.txt"
    link.symlink_to(victim)
    result = cli("export", "cases", "-o", str(link), "--force")
    assert result.code == 2 and "symbolic link" in result.err
    assert victim.read_text(encoding="utf-8") == "precious"


def test_a_failed_write_leaves_the_old_file_and_no_partial_one(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), output_file(out, database=None, force=True) as handle:
        handle.write("half of the new")
        raise RuntimeError("killed mid-export")
    assert out.read_text(encoding="utf-8") == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl"]
