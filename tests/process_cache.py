"""For fixtures built once per test process and handed to each test as a copy: a scratch
folder removed when the process exits, and SQLite copies."""

from __future__ import annotations

import atexit
import shutil
import sqlite3
import tempfile
from pathlib import Path


def scratch_folder(prefix: str) -> Path:
    """A new temporary folder, removed when the test process exits."""
    folder = Path(tempfile.mkdtemp(prefix=f"copyaudit-{prefix}-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def copy_database(source: Path, target: Path) -> Path:
    """`source` copied to `target` with SQLite's online backup API (WAL content included)."""
    src, dst = sqlite3.connect(source), sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return target
