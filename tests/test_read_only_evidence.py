"""Evidence that cannot be written is still read (issue 33): the commands that only read
open the database read-only (db.open_modes) and write nothing — no migration, no
checkpoint, no `-wal`/`-shm` beside it — and refuse a FIFO, a missing file or directory,
and an older schema with a clear error (exit 2).

Read-only media: the tests run as root, which ignores permission bits, so a chmod 0555
directory with a 0444 file proves nothing by itself. Each command is therefore checked
by what it leaves: the file's bytes (sha256 read by a child process, as db.live_files
asks) and mtime, and the directory's listing, all unchanged. Where the machine allows a
private mount namespace (`unshare -m`, root), the same commands also run in a child on a
real read-only bind mount and on a real full disk (a 1 MiB tmpfs filled to the last
byte); elsewhere those two tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from copyaudit.cli.main import main
from db import Store
from db.events import append_label
from db.file_digest import database_file_sha256
from db.migrations import SCHEMA_VERSION
from tests.conftest import write_jsonl
from tests.factories import nonliteral_record

ROOT = Path(__file__).resolve().parents[1]
READ_COMMANDS = (
    ("verify",),
    ("export", "generations", "--run", "r"),
    ("report", "r", "--format", "json"),
    ("report", "r", "--format", "html", "--file-hash"),
    ("runs", "--format", "json"),
    ("compare", "r", "r"),
    ("dossier", "r/nl-1/1"),
)


def _run_cli(db: Path, *args: str) -> int:
    try:
        main(["--db", str(db), *args])
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0


@pytest.fixture(scope="module")
def evidence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a suite, a run of two generations and a label chain, closed."""
    home = tmp_path_factory.mktemp("evidence")
    db = home / "audit.db"
    cases = write_jsonl(home / "c.jsonl", [nonliteral_record(1), nonliteral_record(2)])
    gens = write_jsonl(
        home / "g.jsonl",
        [{"case_id": "nl-1", "output": "first"}, {"case_id": "nl-2", "output": "second"}],
    )
    assert _run_cli(db, "import", "nonliteral", str(cases), "--suite", "s") == 0
    assert _run_cli(db, "import-generations", str(gens), "--run", "r", "--suite", "s") == 0
    with Store(db) as store:
        append_label(
            store, generation_id=1, annotator="ann", target="event", item_index=0, label="yes"
        )
    assert not Path(f"{db}-wal").exists()  # closed cleanly: the log was checkpointed away
    return db


def _copy_into(source: Path, folder: Path, name: str = "audit.db") -> Path:
    """A copy of the database `source` as `name` in the new directory `folder`."""
    folder.mkdir()
    shutil.copyfile(source, folder / name)
    return folder / name


@pytest.fixture
def media(evidence: Path, tmp_path: Path) -> Path:
    """A copy of the evidence in a 0555 directory as a 0444 file."""
    db = _copy_into(evidence, tmp_path / "media")
    folder = db.parent
    db.chmod(0o444)
    folder.chmod(0o555)
    return db


def _state(db: Path) -> tuple[str, int, list[str]]:
    return database_file_sha256(db), db.stat().st_mtime_ns, sorted(os.listdir(db.parent))


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda args: args[0])
def test_a_read_command_leaves_the_media_as_it_was(
    media: Path, args: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _state(media)
    code = _run_cli(media, *args)
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.out.strip()
    assert _state(media) == before  # same bytes, same mtime, no -wal/-shm/-journal


def test_a_write_is_seen(media: Path) -> None:
    """The check above can fail: one label written on the same copy changes its state."""
    media.parent.chmod(0o755)
    media.chmod(0o644)
    before = _state(media)
    with Store(media) as store:
        append_label(
            store, generation_id=2, annotator="x", target="event", item_index=0, label="no"
        )
    assert _state(media) != before


def test_verify_of_an_older_schema_exits_2_and_changes_nothing(
    media: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    media.parent.chmod(0o755)
    media.chmod(0o644)
    conn = sqlite3.connect(media)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    conn.commit()
    conn.close()
    before = _state(media)
    assert _run_cli(media, "verify") == 2
    err = capsys.readouterr().err
    assert f"schema version {SCHEMA_VERSION - 1} needs migration {SCHEMA_VERSION} (" in err
    assert "copyaudit migrate" in err and "internal error" not in err
    assert _state(media) == before
    assert _run_cli(media, "migrate") == 0
    assert "1 migration(s) applied" in capsys.readouterr().out
    assert _run_cli(media, "verify") == 0


def test_db_on_a_fifo_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    for args in (("verify",), ("suites",), ("anchor",)):
        assert _run_cli(fifo, *args) == 2
        assert "is a FIFO (named pipe), not a database file" in capsys.readouterr().err


def test_a_missing_directory_is_never_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nowhere = tmp_path / "no" / "such" / "audit.db"
    assert _run_cli(nowhere, "verify") == 2
    assert "no database there" in capsys.readouterr().err
    # a command that writes creates a database, but not the directories above it
    assert _run_cli(nowhere, "anchor") == 2
    assert "the directory" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_a_live_database_is_read_through_its_log(
    evidence: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a -wal beside it (open in another process), what was committed there is read."""
    db = tmp_path / "live.db"
    shutil.copyfile(evidence, db)
    with Store(db) as writer:  # holds the log open, like the app would
        append_label(
            writer, generation_id=2, annotator="bob", target="event", item_index=0, label="no"
        )
        assert Path(f"{db}-wal").exists()
        assert _run_cli(db, "export", "labels") == 0
        exported = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {row["annotator"] for row in exported} == {"ann", "bob"}


# --- real read-only media and a real full disk, in a private mount namespace -------------

_DRIVER = """
import json, sys
from copyaudit.cli.main import main
codes = []
for args in json.loads(sys.argv[2]):
    try:
        main(["--db", sys.argv[1], *args]); codes.append(0)
    except SystemExit as e:
        codes.append(e.code if isinstance(e.code, int) else 1)
print("CODES", json.dumps(codes))
"""
_COMMANDS = [["verify"], ["export", "generations", "--run", "r"], ["report", "r"]]


def _in_namespace(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private mount namespace")
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, timeout=10)
    if probe.returncode:
        pytest.skip(f"no private mount namespace here: {probe.stderr.decode().strip()}")
    (tmp_path / "driver.py").write_text(_DRIVER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-ec", script],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _codes(done: subprocess.CompletedProcess[str]) -> list[int]:
    lines = [line for line in done.stdout.splitlines() if line.startswith("CODES ")]
    assert lines, done.stdout + done.stderr
    return json.loads(lines[-1].removeprefix("CODES "))


def test_read_commands_on_a_read_only_mount(evidence: Path, tmp_path: Path) -> None:
    folder = _copy_into(evidence, tmp_path / "mounted").parent
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} && "
        f"! touch {folder}/probe 2>/dev/null && "
        f"{sys.executable} {tmp_path}/driver.py {folder}/audit.db '{json.dumps(_COMMANDS)}'"
    )
    done = _in_namespace(script, tmp_path)
    assert _codes(done) == [0, 0, 0], done.stderr
    assert sorted(os.listdir(folder)) == ["audit.db"]


def test_read_commands_on_a_full_disk(evidence: Path, tmp_path: Path) -> None:
    folder = tmp_path / "full"
    folder.mkdir()
    script = (
        f"mount -t tmpfs -o size=1m tmpfs {folder} && cp {evidence} {folder}/audit.db && "
        f"(dd if=/dev/zero of={folder}/filler bs=4k 2>/dev/null || true) && "
        f"! (echo x > {folder}/probe) 2>/dev/null && "
        f"{sys.executable} {tmp_path}/driver.py {folder}/audit.db '{json.dumps(_COMMANDS)}' && "
        f"ls {folder}"
    )
    done = _in_namespace(script, tmp_path)
    assert _codes(done) == [0, 0, 0], done.stderr
    assert "audit.db-wal" not in done.stdout and "audit.db-shm" not in done.stdout


# --- the app, read-only ---------------------------------------------------------------


@pytest.mark.anyio
async def test_the_app_read_only_browses_says_so_and_writes_nothing(
    demo_db: Path, tmp_path: Path
) -> None:
    from screens.app import CopyauditApp
    from screens.widgets.annotator_tag import AnnotatorTag
    from tests.test_screens_annotate import SIZE, _annotate_first_nonliteral

    db = _copy_into(demo_db, tmp_path / "ro", "demo.db")
    before = _state(db)
    app = CopyauditApp(db, annotator="ann", read_only=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        assert "read-only: nothing is written" in str(screen.query_one(AnnotatorTag).render())
        await pilot.press("y")  # a label: refused, saying why
        await pilot.pause()
        shown = [str(note.message) for note in app._notifications]
        assert any("open read-only: nothing is written" in message for message in shown), shown
        assert app.start_run(object()) is None  # type: ignore[arg-type]
    assert _state(db) == before


def test_read_only_flag_opens_the_app_read_only(
    media: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import screens.app

    opened: list[bool] = []
    monkeypatch.setattr(
        screens.app, "run_app", lambda path, annotator, read_only=False: opened.append(read_only)
    )
    assert _run_cli(media, "--read-only") == 0
    assert opened == [True]
    # and a command that writes, under --read-only, is refused before it writes
    before = _state(media)
    review = ("review", "set", "r/nl-1/1", "cleared", "--reviewer", "rev")
    assert _run_cli(media, "--read-only", *review) == 2
    assert "is open read-only: nothing is written" in capsys.readouterr().err
    assert _state(media) == before


def test_a_log_that_cannot_be_read_on_read_only_media_is_named(
    evidence: Path, tmp_path: Path
) -> None:
    """A -wal holding commits, without its -shm, on a read-only mount: a clear error."""
    folder = tmp_path / "walled"
    folder.mkdir()
    live = tmp_path / "live.db"
    shutil.copyfile(evidence, live)
    writer = sqlite3.connect(live)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE meta SET value = value WHERE key = 'origin'")
    writer.commit()
    shutil.copyfile(live, folder / "audit.db")
    shutil.copyfile(f"{live}-wal", folder / "audit.db-wal")  # copied while still open
    writer.close()
    script = (
        f"mount --bind {folder} {folder} && mount -o remount,ro,bind {folder} && "
        f"{sys.executable} {tmp_path}/driver.py {folder}/audit.db '{json.dumps([['verify']])}'"
    )
    done = _in_namespace(script, tmp_path)
    assert _codes(done) == [2], done.stderr
    assert "audit.db-wal holds commits not yet in the file" in done.stderr
