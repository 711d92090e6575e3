"""Writing a command's output file (`-o`) safely.

Never over the database or its -wal/-shm/-journal (an export over copyaudit.db used to
truncate it), never over an existing file unless asked (`--force`), never through a
symbolic link at the destination; the text goes to a temporary file beside it, created
owner-only like the database, and is renamed into place once complete, so a killed
export leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from copyaudit.errors import UserError

DATABASE_COMPANIONS = ("", "-wal", "-shm", "-journal")


def check_destination(path: Path, *, database: Path | None, force: bool) -> Path:
    """The absolute destination, or a UserError saying why it may not be written."""
    target = Path(os.path.abspath(path))
    if target.is_symlink():
        raise UserError(f"{path} is a symbolic link; name the file itself (it is not followed)")
    if target.is_dir():
        raise UserError(f"{path} is a directory; name a file")
    if database is not None:
        real = os.path.realpath(target)
        base = os.path.realpath(database)
        if any(real == f"{base}{suffix}" for suffix in DATABASE_COMPANIONS):
            raise UserError(f"{path} is the database (or one of its files); choose another file")
    if target.exists() and not force:
        raise UserError(f"{path} already exists; --force overwrites it")
    if not target.parent.is_dir():
        raise UserError(f"no directory {target.parent} for {path}")
    return target


@contextmanager
def output_file(
    path: Path, *, database: Path | None, force: bool, binary: bool = False
) -> Iterator[IO[Any]]:
    """A text (or `binary`) handle whose content replaces `path` atomically when the
    block completes."""
    target = check_destination(path, database=database, force=force)
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        text_mode = {} if binary else {"encoding": "utf-8", "newline": ""}
        with os.fdopen(fd, "wb" if binary else "w", **text_mode) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_output(path: Path, text: str | bytes, *, database: Path | None, force: bool) -> None:
    """`text` (or bytes: a PDF) into `path`, safely (output_file)."""
    binary = isinstance(text, bytes)
    with output_file(path, database=database, force=force, binary=binary) as handle:
        handle.write(text)
