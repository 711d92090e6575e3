"""No plain file I/O on a database this process has open (it drops SQLite's locks and,
after another process opens and closes the file, every later commit goes into an
unlinked WAL): the guard, a scan of the code, and the regression for the dossier key."""

from __future__ import annotations

import ast
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from copyaudit.hashing import file_sha256
from db import Store
from db.file_digest import database_file_sha256
from db.live_files import LiveDatabaseFileError, live_paths
from tests.test_screens_data import copy_demo_like_db

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("copyaudit", "db", "screens")


def test_plain_io_on_an_open_database_is_refused_and_allowed_once_closed(db_path: Path) -> None:
    store = Store(db_path)
    link = db_path.parent / "link.db"
    link.symlink_to(db_path)
    for path in (db_path, Path(f"{db_path}-wal"), link, Path(os.path.relpath(db_path))):
        with pytest.raises(LiveDatabaseFileError, match="child process"):
            open(path, "rb")  # noqa: SIM115 - the call under test
    with pytest.raises(LiveDatabaseFileError):
        file_sha256(db_path)  # what the dossier key did before
    assert os.path.realpath(db_path) in live_paths()
    store.close()
    assert os.path.realpath(db_path) not in live_paths()
    assert len(file_sha256(db_path)) == 64


def test_a_store_dropped_without_close_stops_guarding(db_path: Path) -> None:
    Store(db_path)  # collected at once: its connection closes with it
    assert os.path.realpath(db_path) not in live_paths()


def test_the_database_hash_is_read_by_a_child_and_equals_the_file(db_path: Path) -> None:
    with Store(db_path) as store:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        digest = database_file_sha256(db_path)
    assert digest == file_sha256(db_path)


def _reads_database_path(call: ast.Call) -> str | None:
    """The source of a file-I/O call whose target looks like the database path."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name not in {"open", "file_sha256", "read_bytes", "read_text", "write_bytes",
                    "write_text", "copyfile", "copy", "copy2", "fdopen"}:  # fmt: skip
        return None
    parts = [*call.args, *(func.value for _ in [0] if isinstance(func, ast.Attribute))]
    text = " ".join(ast.unparse(p) for p in parts)
    suspicious = ("db_path", "store.path", "self.path", "data.path", "database")
    return text if any(s in text for s in suspicious) else None


def test_no_module_opens_the_database_path_with_plain_file_io() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "file_digest.py":
                continue  # the child process's script, run with no connection open
            if path.name == "connection.py":
                continue  # creates the empty file (0600) before any connection opens
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and (text := _reads_database_path(node)):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert found == []


APP_SESSION = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from db.events import append_label
    from screens.app import CopyauditApp
    from screens.generations.case_view import CaseScreen
    from screens.state.export_choices import file_stem

    db, flags = Path(sys.argv[1]), Path(sys.argv[2])

    async def main():
        app = CopyauditApp(db, annotator="ann")
        async with app.run_test(size=(120, 40)) as pilot:
            for key in ("v", "enter"):
                await pilot.pause(0.3)
                await pilot.app.workers.wait_for_complete()
                await pilot.press(key)
            await pilot.pause(0.3)
            case = app.screen
            assert isinstance(case, CaseScreen), case
            await pilot.press("D")  # the export dialog, its name prefilled: Enter writes
            await pilot.pause(0.3)
            await pilot.press("enter")
            dossier = Path(f"{file_stem(case.case.key)}.dossier.html")  # in the cwd
            while not dossier.exists():
                await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            (flags / "ready").touch()
            while not (flags / "go").exists():
                await asyncio.sleep(0.05)
            for item in range(3):  # the app's own connection, as a label key writes
                append_label(app.data.ui, generation_id=case.generation_id, annotator="ann",
                             target="event", item_index=item, label="yes")
            (flags / "labelled").touch()
            await asyncio.sleep(600)

    asyncio.run(main())
    """
)


def _wait_for(path: Path, process: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(process.stderr.read() if process.stderr else "child died")
        assert time.monotonic() < deadline, f"child never wrote {path.name}"
        time.sleep(0.05)


@pytest.mark.slow  # make test-slow: starts and kills processes
def test_labels_after_the_dossier_key_survive_another_process_and_kill_9(tmp_path: Path) -> None:
    db_path = tmp_path / "demo.db"
    copy_demo_like_db(db_path, kinds=("literal", "nonliteral"))
    flags = tmp_path / "flags"
    flags.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    app = subprocess.Popen(
        [sys.executable, "-c", APP_SESSION, str(db_path), str(flags)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        _wait_for(flags / "ready", app)
        other = subprocess.run(
            [sys.executable, "-m", "copyaudit", "--db", str(db_path), "runs"],
            cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert other.returncode == 0, other.stderr
        (flags / "go").touch()
        _wait_for(flags / "labelled", app)
        assert Path(f"{db_path}-wal").exists()  # the app's WAL was not deleted under it
    finally:
        app.send_signal(signal.SIGKILL)
        app.wait()
    conn = sqlite3.connect(db_path)
    try:
        labelled = conn.execute("SELECT COUNT(*) FROM labels WHERE annotator = 'ann'").fetchone()[0]
    finally:
        conn.close()
    assert labelled == 3
