"""Opening the SQLite store: pragmas, permissions, migrations, transactions."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from db import live_files
from db.content import register as register_content_hash
from db.fraction_metrics import declared_fractions, sync_fraction_metrics
from db.migrations import SCHEMA_VERSION, migrate, require_current
from db.open_modes import check_database_path, check_readable, read_only_uri
from db.run_digests import refresh as refresh_digests

if TYPE_CHECKING:
    import sqlite_utils

BUSY_TIMEOUT_MS = 30_000
PROGRESS_STEPS = 1_000  # SQLite VM steps between checks of a stop condition


class Interrupted(Exception):
    """A read under Store.interrupted_when stopped: its condition came to hold (SQLite
    interrupted it)."""


class ReadOnlyStore(UserError):
    """A write asked of a database opened read-only."""


class OutOfTime(Interrupted):
    """A read under Store.time_limited ran past its limit."""


# tables of the first migration: a database holding them and a schema version is ours
CORE_TABLES = frozenset({"works", "suites", "cases", "runs", "generations"})


def _create_owner_only(path: Path) -> None:
    """Create an empty database file readable and writable by its owner only.

    SQLite gives the -wal and -shm files the same permissions as the database.
    """
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.close(fd)


def check_ours(conn: sqlite3.Connection, path: Path) -> None:
    """Refuse a file that is not a SQLite database, and a SQLite database that holds
    another application's tables (copyaudit would add its own to it); an empty
    database is fine (it is initialised)."""
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }
    except sqlite3.DatabaseError as exc:
        raise UserError(
            f"{path}: not a SQLite database ({exc}); --db takes a copyaudit database or a "
            "new file name"
        ) from None
    if (version or tables) and not (version and tables >= CORE_TABLES):
        shown = ", ".join(t if t.isprintable() else ascii(t) for t in sorted(tables)[:5]) or "none"
        raise UserError(
            f"{path}: a SQLite database that is not copyaudit's (schema version {version}, "
            f"tables: {shown}); refusing to add copyaudit's tables to it"
        )


class Store:
    """One connection to a copyaudit database.

    Connections are not shared between threads: a worker thread opens its own
    Store on the same path (WAL lets readers and one writer proceed together).

    `read_only`: for commands that only read (verify, export, report...): the file must
    exist and be at the current schema (never migrated), and nothing is written, not
    even SQLite's companions (db.open_modes), so evidence on read-only media or a full
    disk can be read.
    """

    def __init__(self, path: str | Path, *, create: bool = True, read_only: bool = False) -> None:
        self.path = Path(path)
        self.read_only = read_only
        if not check_database_path(self.path, create=create and not read_only):
            _create_owner_only(self.path)
        self.conn = sqlite3.connect(
            read_only_uri(self.path) if read_only else self.path,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            timeout=BUSY_TIMEOUT_MS / 1000,
            check_same_thread=False,
            uri=read_only,
        )
        try:
            if read_only:
                check_readable(self.conn, self.path)
            check_ours(self.conn, self.path)
            if read_only:
                require_current(self.conn, self.path)
        except UserError:
            self.conn.close()
            raise
        # released on close(), or when the Store is collected without one
        self._released = weakref.finalize(self, live_files.release, live_files.register(self.path))
        self.conn.row_factory = sqlite3.Row
        self.conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if read_only:
            self.conn.execute("PRAGMA query_only = ON")  # a write is an error, not a change
        else:
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
        self.conn.execute("PRAGMA foreign_keys = ON")
        register_content_hash(self.conn)
        self._depth = 0
        self._durable = False  # the open transaction syncs the log at its commit
        self._lock = threading.RLock()
        # interrupted_when's conditions, innermost last (SQLite has one progress handler)
        self._stops: list[tuple[Callable[[], bool], type[Interrupted]]] = []
        version = self.conn.execute("PRAGMA user_version").fetchone()[0]
        current = read_only or version == SCHEMA_VERSION
        self.migrations_applied = 0 if current else migrate(self.db)
        if not read_only:  # the judges' fraction metrics, whenever the database was made
            sync_fraction_metrics(self.conn, declared_fractions())
        # a schema wound back before the run digests (tests of older migrations) has none
        self._digested = (
            self.scalar("SELECT 1 FROM sqlite_master WHERE name = 'digest_writing'") is not None
        )

    @contextmanager
    def transaction(self, *, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE); nested calls join the outer one.

        `durable` (labels, reviews, imports): the write-ahead log is synced to disk
        before the commit returns (synchronous=FULL for this transaction; NORMAL, the
        default, may lose the last commits on a power cut, never corrupt them). SQLite
        cannot change the level inside a transaction, so a durable call may join only
        a durable one (RuntimeError otherwise: ask for it in the outermost). On a store
        opened read-only: ReadOnlyStore, before anything is asked of SQLite.

        Its writes to runs, generations, judgments and cases are digested before the
        commit (db.run_digests: the marker row lets their triggers note what changed)."""
        if self.read_only:
            raise ReadOnlyStore(f"{self.path} is open read-only: nothing is written")
        with self._lock:
            if self._depth:
                if durable and not self._durable:
                    raise RuntimeError(
                        "a durable transaction cannot join one that is not: "
                        "open the outer one with durable=True"
                    )
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            if durable:
                self.conn.execute("PRAGMA synchronous = FULL")
            self._durable = durable
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                if self._digested:
                    self.conn.execute("INSERT INTO digest_writing (writer) VALUES (1)")
                self._depth = 1
                try:
                    yield self.conn
                    if self._digested:
                        refresh_digests(self.conn)
                        self.conn.execute("DELETE FROM digest_writing")
                except BaseException:
                    self._depth = 0
                    # SQLite has already rolled back after some errors (SQLITE_FULL): a
                    # second ROLLBACK would fail and hide the error that matters
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
                self._depth = 0
                self.conn.execute("COMMIT")
            finally:
                if durable:
                    self.conn.execute("PRAGMA synchronous = NORMAL")

    @contextmanager
    def interrupted_when(
        self, stop: Callable[[], bool], error: type[Interrupted] = Interrupted
    ) -> Iterator[None]:
        """Reads inside give up (`error`) as soon as `stop()` holds, checked every
        PROGRESS_STEPS SQLite steps: for work that can stop being wanted (a count for a
        filter the list has left) or is worth doing only if it is quick."""
        if self.conn.in_transaction:
            raise RuntimeError("an interruptible read must run outside a transaction")
        entry = (stop, error)
        self._stops.append(entry)
        if len(self._stops) == 1:
            self.conn.set_progress_handler(self._should_stop, PROGRESS_STEPS)
        try:
            yield
        except sqlite3.OperationalError as failure:
            if str(failure) == "interrupted" and stop():
                raise error from failure
            raise  # an enclosing condition's (it names its own error)
        finally:
            self._stops.remove(entry)
            if not self._stops:
                self.conn.set_progress_handler(None, 0)

    def _should_stop(self) -> bool:
        """SQLite's progress handler: whether any enclosing condition holds (they nest)."""
        return any(stop() for stop, _ in self._stops)

    def time_limited(self, cpu_seconds: float) -> AbstractContextManager[None]:
        """Reads inside give up (OutOfTime) after this thread has spent `cpu_seconds` of
        CPU in them: for work worth doing only if it is quick (the list's "1,000+")."""
        deadline = time.thread_time() + cpu_seconds
        return self.interrupted_when(lambda: time.thread_time() > deadline, OutOfTime)

    def query(self, sql: str, params: tuple | dict = ()) -> list[sqlite3.Row]:
        return self.conn.execute(sql, params).fetchall()

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """The connection as a sqlite_utils Database (the migrations'), made when first
        asked for: importing sqlite_utils imports pandas where it is installed, a third
        of a second no command that only opens the store should pay."""
        import sqlite_utils

        return sqlite_utils.Database(self.conn)

    def scalar(self, sql: str, params: tuple | dict = ()) -> Any:
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self.conn.close()
        self._released()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
