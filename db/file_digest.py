"""The SHA-256 of a database file that this process has open, read by a child process.

A plain open()/close() here would release this process's SQLite locks (see
`db.live_files`); a child process's descriptors are its own, so it may read the file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from copyaudit.errors import UserError

_HASH_FILE = (
    "import hashlib, sys\n"
    "digest = hashlib.sha256()\n"
    "with open(sys.argv[1], 'rb') as handle:\n"
    "    while block := handle.read(1 << 20):\n"
    "        digest.update(block)\n"
    "print(digest.hexdigest())\n"
)


def database_file_sha256(path: Path) -> str:
    """SHA-256 of the file's bytes (checkpoint first for it to cover the WAL)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _HASH_FILE, str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise UserError(f"could not hash {path}: {done.stderr.strip().splitlines()[-1:]}")
    return done.stdout.strip()
