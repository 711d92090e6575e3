"""Database access for the app: one connection for the UI thread (small primary-key
reads that finish in a millisecond) and one for worker threads (paged list queries,
dashboard aggregates), used by one worker at a time. WAL lets both read while a run
writes through its own connection."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from db import Store


class Connections:
    """`ui`: the UI thread's connection; `background()`: the workers' one."""

    def __init__(self, db_path: Path, *, read_only: bool = False) -> None:
        self.path = Path(db_path)
        self.read_only = read_only  # db.open_modes: evidence on read-only media
        self.ui = Store(self.path, read_only=read_only)
        self._background: Store | None = None
        self._lock = threading.Lock()

    @contextmanager
    def background(self) -> Iterator[Store]:
        """The worker connection; holds a lock, so one worker query runs at a time."""
        with self._lock:
            if self._background is None:
                self._background = Store(self.path, read_only=self.read_only)
            yield self._background

    def close(self) -> None:
        with self._lock:
            if self._background is not None:
                self._background.close()
                self._background = None
        self.ui.close()
