"""The database files this process has open through SQLite, and the guard that keeps
plain file I/O away from them.

SQLite's locks on a database are POSIX advisory locks, which belong to the process, not
to a file descriptor: closing *any* descriptor of the file in this process releases all
of them (SQLite's "How To Corrupt An SQLite Database File", section 2.2). Once they are
gone, the next process that opens and closes the database believes it is the last one
and deletes `-wal` and `-shm` under the running app, and every later commit goes into an
unlinked WAL. So while a Store is open, nothing in this process may open() the database
file or its `-wal`/`-shm`/`-journal` companions; an audit hook makes such a call fail
loudly instead of silently losing work. Read the file from a child process instead
(`db.file_digest`).
"""

from __future__ import annotations

import os
import sys
import threading
from collections import Counter
from pathlib import Path

COMPANIONS = ("", "-wal", "-shm", "-journal")

_live: Counter[str] = Counter()  # real path of each open database -> open Stores
_guarded: frozenset[str] = frozenset()  # those paths and their companions
_lock = threading.Lock()
_hook_installed = False


class LiveDatabaseFileError(RuntimeError):
    """Plain file I/O on a database this process has open through SQLite."""


def _refresh() -> None:
    global _guarded
    _guarded = frozenset(f"{path}{suffix}" for path in _live for suffix in COMPANIONS)


def register(path: Path) -> str:
    """Note that a Store on `path` is open; returns the key to pass to `release`."""
    key = os.path.realpath(path)
    with _lock:
        _install_hook()
        _live[key] += 1
        _refresh()
    return key


def release(key: str) -> None:
    """Note that one Store on the path registered as `key` closed."""
    with _lock:
        _live[key] -= 1
        if _live[key] <= 0:
            del _live[key]
        _refresh()


def live_paths() -> frozenset[str]:
    """Real paths of the databases open in this process."""
    return frozenset(_live)


def _audit(event: str, args: tuple) -> None:
    if event != "open" or not _guarded:
        return
    target = args[0] if args else None
    if isinstance(target, bytes):
        target = os.fsdecode(target)
    if not isinstance(target, str):
        return  # a file descriptor or None: nothing to resolve
    if os.path.realpath(target) in _guarded:  # through symlinks and relative paths
        raise LiveDatabaseFileError(
            f"refusing plain file I/O on {target}: this process has the database open "
            "through SQLite, and closing another descriptor of it would drop SQLite's "
            "locks (read it from a child process: db.file_digest)"
        )


def _install_hook() -> None:
    global _hook_installed
    if not _hook_installed:
        sys.addaudithook(_audit)
        _hook_installed = True
