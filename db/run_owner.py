"""Who is running a run: one owner record per run name, so two processes never run
(or judge) the same run at once, and a run whose process died shows as interrupted.

The owner record holds the process id, the host, the process's start (boot id + start
time from /proc, so a reused pid is not taken for the owner), the purpose (run, decop,
judge) and a heartbeat that a thread refreshes every HEARTBEAT_S seconds. An owner is
live when
- on this host: its process exists and (where /proc tells) started when recorded; a
  host without /proc also needs a fresh heartbeat;
- on another host: its heartbeat is younger than STALE_AFTER_S.
A record that is not live is taken over by the next process that runs the run.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from copyaudit.errors import UserError
from db.clock import now
from db.connection import Store

HEARTBEAT_S = 10.0
STALE_AFTER_S = 60.0  # an owner on another host whose heartbeat is older is gone
SHOWN_WHILE_OWNED = {"run": "running", "decop": "running", "judge": "judging"}


class RunBusyError(UserError):
    """The run is held by another live process (or thread)."""


@dataclass(frozen=True)
class Owner:
    run: str
    token: str
    purpose: str
    pid: int
    host: str
    process_start: str | None
    started_at: str
    heartbeat_at: str

    def describe(self) -> str:
        age = _age_s(self.heartbeat_at)
        beat = "" if age is None else f", last heartbeat {age:.0f} s ago"
        return f"pid {self.pid} on host {self.host} (since {self.started_at}{beat})"


def process_start(pid: int) -> str | None:
    """'boot id:start ticks' of process `pid` (Linux /proc), None where unknown."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) "
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _age_s(stamp: str) -> float | None:
    try:
        return (datetime.now(UTC) - datetime.fromisoformat(stamp)).total_seconds()
    except ValueError:
        return None


def is_live(owner: Owner) -> bool:
    """Whether the owning process still runs (see the module docstring)."""
    age = _age_s(owner.heartbeat_at)
    fresh = age is not None and age < STALE_AFTER_S
    if owner.host != socket.gethostname():
        return fresh
    if not _pid_exists(owner.pid):
        return False
    started = process_start(owner.pid)
    if started is not None and owner.process_start is not None:
        return started == owner.process_start
    return fresh


def _owner(row: sqlite3.Row) -> Owner:
    return Owner(**{key: row[key] for key in Owner.__dataclass_fields__})


def current_owner(store: Store, run: str) -> Owner | None:
    """The live owner of `run`, or None."""
    row = store.conn.execute("SELECT * FROM run_owners WHERE run = ?", (run,)).fetchone()
    if row is None:
        return None
    owner = _owner(row)
    return owner if is_live(owner) else None


def live_owners(store: Store) -> dict[str, Owner]:
    """Run name -> its live owner."""
    owners = (_owner(r) for r in store.conn.execute("SELECT * FROM run_owners"))
    return {o.run: o for o in owners if is_live(o)}


def shown_status(status: str | None, owner: Owner | None) -> str | None:
    """The status a person sees: 'running' (or 'judging') while a live process holds
    the run, 'interrupted' for a run stored as running whose process is gone."""
    if owner is not None:
        return SHOWN_WHILE_OWNED.get(owner.purpose, status)
    return "interrupted" if status == "running" else status


def acquire(store: Store, run: str, purpose: str) -> Owner:
    """Record this process as the owner of `run`; RunBusyError naming the holder if a
    live process holds it. A stale record is replaced."""
    pid = os.getpid()
    stamp = now()
    mine = Owner(
        run, uuid.uuid4().hex, purpose, pid, socket.gethostname(), process_start(pid), stamp, stamp
    )
    with store.transaction():
        held = current_owner(store, run)
        if held is not None:
            raise RunBusyError(
                f"run '{run}' is already being run ({held.purpose}) by {held.describe()}; "
                "wait for it to finish or stop that process"
            )
        store.conn.execute(
            "INSERT OR REPLACE INTO run_owners (run, token, purpose, pid, host, process_start, "
            "started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (mine.run, mine.token, mine.purpose, mine.pid, mine.host, mine.process_start,
             mine.started_at, mine.heartbeat_at),
        )  # fmt: skip
    return mine


def heartbeat(store: Store, owner: Owner) -> bool:
    """Refresh the heartbeat; False if the record is no longer this owner's."""
    with store.transaction():
        cursor = store.conn.execute(
            "UPDATE run_owners SET heartbeat_at = ? WHERE run = ? AND token = ?",
            (now(), owner.run, owner.token),
        )
    return cursor.rowcount == 1


def release(store: Store, owner: Owner) -> None:
    with store.transaction():
        store.conn.execute(
            "DELETE FROM run_owners WHERE run = ? AND token = ?", (owner.run, owner.token)
        )


@contextmanager
def owned(store: Store, run: str, purpose: str) -> Iterator[Owner]:
    """Hold `run` for the block: acquire, refresh the heartbeat from a thread with its
    own connection, release at the end (whatever ends the block)."""
    owner = acquire(store, run, purpose)
    stop = threading.Event()

    def beat() -> None:
        with Store(store.path) as own:
            while not stop.wait(HEARTBEAT_S):
                heartbeat(own, owner)

    thread = threading.Thread(target=beat, name=f"heartbeat {run}", daemon=True)
    thread.start()
    try:
        yield owner
    finally:
        stop.set()
        thread.join()
        release(store, owner)
