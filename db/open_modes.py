"""How a database file is opened: what `--db` may name, and the read-only way in.

A read-only open must work on evidence that cannot be written (a read-only mount, a full
disk) and must write nothing, not even SQLite's companions: a plain `mode=ro` open of a
WAL database creates `-wal` and `-shm` next to it and leaves them there. So a database
with no `-wal` beside it (closed cleanly: no process has it open in WAL mode) is opened
`immutable=1`: SQLite reads the file as it is, takes no locks and creates nothing. One
with a `-wal` (open elsewhere, or not closed cleanly) is opened `mode=ro` through its
existing log, so what other processes committed is seen.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from urllib.parse import quote

from copyaudit.errors import UserError

_KINDS = {
    stat.S_ISFIFO: "a FIFO (named pipe)",
    stat.S_ISDIR: "a directory",
    stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device",
    stat.S_ISSOCK: "a socket",
}


def check_database_path(path: Path, *, create: bool) -> bool:
    """Whether `path` exists; UserError when it names something other than a regular
    file (opening a FIFO would hang), when it is missing and may not be created, or when
    its directory is missing (never created silently: a mistyped --db would start an
    empty database somewhere unexpected)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as error:
        raise UserError(f"--db {path}: cannot be read ({error.strerror})") from None
    if mode is not None:
        for is_kind, kind in _KINDS.items():
            if is_kind(mode):
                raise UserError(f"--db {path}: is {kind}, not a database file")
        return True
    if not create:
        raise UserError(f"--db {path}: no database there (a command that only reads creates none)")
    if not path.parent.is_dir():
        raise UserError(
            f"--db {path}: the directory {path.parent} does not exist; create it first "
            "(it is not created for you, so that a mistyped path starts no new database)"
        )
    return False


def read_only_uri(path: Path) -> str:
    """The SQLite URI that reads `path` without writing anything (see the module's note)."""
    absolute = quote(os.path.abspath(path))
    if Path(f"{path}-wal").exists():
        return f"file:{absolute}?mode=ro"
    return f"file:{absolute}?mode=ro&immutable=1"


def check_readable(conn: sqlite3.Connection, path: Path) -> None:
    """UserError when a read-only open cannot read `path` because of the log beside it
    (a `-wal` on read-only media without its `-shm`: SQLite would have to create one)."""
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as error:  # OperationalError, or "file is not a database"
        if (
            getattr(error, "sqlite_errorname", "") == "SQLITE_CANTOPEN"
            and Path(f"{path}-wal").exists()
        ):
            raise UserError(
                f"{path}: its write-ahead log {path}-wal holds commits not yet in the file, "
                "and reading them here would need a -shm file beside it, which cannot be "
                "created (read-only media or a full disk); copy the database with its -wal "
                "to writable storage and run the command there"
            ) from None
        # anything else is for check_ours to name (not a database, another app's)
