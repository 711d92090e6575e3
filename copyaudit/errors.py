"""Errors a user can act on. The CLI prints them as one line and exits 2."""

from __future__ import annotations

import errno
from pathlib import Path


class UserError(Exception):
    """Something the user asked for cannot be done; the message says why."""

    exit_code = 2


class InputError(UserError):
    """A bad input file: names the file, the line (or CSV row) and the field."""

    def __init__(
        self,
        path: str | Path,
        line: int | None,
        field: str | None,
        message: str,
        *,
        unit: str = "line",
    ) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        self.unit = unit
        where = self.path if line is None else f"{self.path}: {unit} {line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


DISK_FULL_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# SQLite's result codes for a file damaged on disk (a page zeroed or overwritten)
DAMAGED_FILE_ERRORS = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})


def environment_error(exc: BaseException) -> UserError | None:
    """A failure of the machine rather than of copyaudit, worded for the user: a full
    disk (SQLite's "database or disk is full", ENOSPC, a quota) or a database file
    damaged on disk (SQLite's "database disk image is malformed"). None for others."""
    # sqlite3's errors carry their SQLite code (the core does not import sqlite3)
    full = getattr(exc, "sqlite_errorname", None) == "SQLITE_FULL" or (
        isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS
    )
    if full:
        return UserError(
            f"disk full ({exc}): the write in progress was rolled back; free some space and run "
            "the command again (commands that only read, such as export and verify, still work)"
        )
    if getattr(exc, "sqlite_errorname", None) in DAMAGED_FILE_ERRORS:
        return UserError(
            f"a damaged database file ({exc}): the write in progress, if any, was rolled back; "
            "SQLite's "
            "`sqlite3 FILE .recover` may save what it still holds"
        )
    return None
