"""Writing a command's output file (`-o`) safely.

Never over the database or its -wal/-shm/-journal (an export over copyaudit.db used to
truncate it), never over an existing file unless asked (`--force`), never through a
symbolic link at the destination; the text goes to a temporary file beside it, created
owner-only like the database, and is renamed into place once complete, so a killed
export leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from copyaudit.errors import UserError
from copyaudit.file_kinds import DATASET_STATE

DATABASE_COMPANIONS = ("", "-wal", "-shm", "-journal")


def check_destination(
    path: Path, *, database: Path | None, force: bool, replaceable_dir: bool = False
) -> Path:
    """The absolute destination, or a UserError saying why it may not be written.
    `replaceable_dir`: the output is a folder, and an existing one may be replaced
    (with --force) when it is a `datasets` save_to_disk folder, no other."""
    target = Path(os.path.abspath(path))
    if target.is_symlink():
        raise UserError(f"{path} is a symbolic link; name the file itself (it is not followed)")
    if target.is_dir() and not (replaceable_dir and (target / DATASET_STATE).is_file()):
        raise UserError(
            f"{path} is a directory; name a file" + (" or a new folder" * replaceable_dir)
        )
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
        opened = os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        with opened as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@contextmanager
def output_target(
    path: Path, *, database: Path | None, force: bool, folder: bool = False
) -> Iterator[Path]:
    """A temporary path beside `path` (a file, or with `folder` a new folder) for a
    writer that needs a name rather than a text handle (Parquet, a save_to_disk folder);
    it replaces `path` when the block completes, as output_file does."""
    target = check_destination(path, database=database, force=force, replaceable_dir=folder)
    temporary = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part"))
    written = temporary / target.name
    try:
        if folder:
            written.mkdir(mode=0o700)
        yield written
        if not folder:
            os.chmod(written, 0o600)  # owner-only, like the database
        if folder and target.is_dir():  # a save_to_disk folder, --force: set aside
            os.replace(target, temporary / "replaced")
        os.replace(written, target)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)


def write_output(path: Path, text: str | bytes, *, database: Path | None, force: bool) -> None:
    """`text` (or bytes: a PDF) into `path`, safely (output_file)."""
    binary = isinstance(text, bytes)
    with output_file(path, database=database, force=force, binary=binary) as handle:
        handle.write(text)
