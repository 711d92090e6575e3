"""The scratch store of checking and folding a label file (copyaudit.verification.
label_files): a private temporary SQLite database, never the live one, so the fold of
a million records keeps a bounded page cache in memory instead of per-record maps.

SQLite's own private temporary database (`connect("")`): it lives in the temporary
directory, is unlinked when created (nothing is left behind even if the process is
killed) and is gone when closed. No journal and no sync: nothing in it has to survive.
Rows wait in a batch and are written `BATCH` at a time; a lookup reads the batch, then
the database, so each record sees every earlier one. A reader that knows the next
batch's uuids (`prefetch`) writes the waiting rows and looks them all up in a few
queries, instead of one query per record.

Per record: its key (the caller's, ascending as added; the order among equals), line,
action, item (a 16-byte digest), time (an integer, ordered) and the digest of its uuid,
if it has one. `latest()` chooses each item's latest label by SQL.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable
from types import TracebackType
from typing import NamedTuple

LABEL, RETRACTION, RETRACTED = 1, 0, 2  # the action of a row; a retracted label is marked
BATCH = 5000  # rows written per executemany
PROBES = 500  # digests looked up per query by `prefetch`
CACHE_KIB = 16 * 1024  # the page cache, the store's memory (SQLite's default is 2 MiB)

SCHEMA = (
    # key: the caller's number of the record (its position in the file)
    "CREATE TABLE labels (key INTEGER PRIMARY KEY, line INTEGER NOT NULL, "
    "action INTEGER NOT NULL, item BLOB NOT NULL, time INTEGER NOT NULL)",
    "CREATE TABLE uuids (digest BLOB PRIMARY KEY, key INTEGER NOT NULL) WITHOUT ROWID",
)
FIND = "SELECT labels.key, line, action, item FROM uuids JOIN labels USING (key) WHERE digest = ?"
FIND_MANY = (
    "SELECT digest, labels.key, line, action, item FROM uuids JOIN labels USING (key) "
    "WHERE digest IN ({})"
)
# each item's latest label not retracted: by time, then line, then key
LATEST = (
    "SELECT key FROM (SELECT key, row_number() OVER (PARTITION BY item "
    "ORDER BY time DESC, line DESC, key DESC) AS rank FROM labels WHERE action = ?) "
    "WHERE rank = 1 ORDER BY key"
)


class Held(NamedTuple):
    """A record found by its uuid: key, line, whether it is a retraction, item digest."""

    key: int
    line: int
    retraction: bool
    item: bytes


class LabelScratch:
    """Records by key, uuid digests to keys, and the fold; `close()` (or `with`) ends
    the database and its file."""

    def __init__(self, batch: int = BATCH) -> None:
        self.batch = batch
        self.db = sqlite3.connect("", isolation_level=None)
        for pragma in ("journal_mode = OFF", "synchronous = OFF", "temp_store = FILE"):
            self.db.execute(f"PRAGMA {pragma}")
        self.db.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        for statement in SCHEMA:
            self.db.execute(statement)
        # one transaction to the end: a commit would write every page a batch touched
        # (nothing is kept: closing rolls back and deletes the file)
        self.db.execute("BEGIN")
        self.rows: list[tuple[int, int, int, bytes, int]] = []  # waiting to be written
        self.uuids: list[tuple[bytes, int]] = []
        self.waiting: dict[bytes, int] = {}  # uuid digest -> index in self.rows
        self.marks: list[tuple[int]] = []  # keys of labels retracted
        # what `prefetch` found of the written rows (None: not found), else None
        self.known: dict[bytes, Held | None] | None = None

    def prefetch(self, uuids: Iterable[bytes]) -> None:
        """Writes the waiting rows and looks up these digests (the next records' uuids and
        what they supersede): until the next `prefetch`, `find` answers from what was
        found here and the rows added since (none is written meanwhile)."""
        self.flush()
        known: dict[bytes, Held | None] = dict.fromkeys(uuids)
        probes = list(known)
        for start in range(0, len(probes), PROBES):
            chunk = probes[start : start + PROBES]
            query = FIND_MANY.format(", ".join("?" * len(chunk)))
            for digest, key, line, action, item in self.db.execute(query, chunk):
                known[digest] = Held(key, line, action == RETRACTION, item)
        self.known = known

    def find(self, uuid: bytes) -> Held | None:
        """The record whose uuid has this digest, or None."""
        at = self.waiting.get(uuid)
        if at is not None:
            key, line, action, item, _ = self.rows[at]
        elif self.known is not None and uuid in self.known:
            return self.known[uuid]
        else:
            found = self.db.execute(FIND, (uuid,)).fetchone()
            if found is None:
                return None
            key, line, action, item = found
        return Held(key, line, action == RETRACTION, item)

    def add(
        self, key: int, line: int, retraction: bool, item: bytes, time: int, uuid: bytes | None
    ) -> None:
        """A record, after every record of a smaller key; `uuid` not found before."""
        if uuid is not None:
            self.waiting[uuid] = len(self.rows)
            self.uuids.append((uuid, key))
        self.rows.append((key, line, RETRACTION if retraction else LABEL, item, time))
        if self.known is None and len(self.rows) >= self.batch:
            self.flush()

    def retract(self, key: int) -> None:
        """Marks the label of this key retracted (written with the next batch)."""
        self.marks.append((key,))

    def flush(self) -> None:
        self.db.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?)", self.rows)
        self.uuids.sort()  # in the index's order: neighbours share pages
        self.db.executemany("INSERT INTO uuids VALUES (?, ?)", self.uuids)
        self.db.executemany(f"UPDATE labels SET action = {RETRACTED} WHERE key = ?", self.marks)
        self.rows, self.uuids, self.waiting, self.marks = [], [], {}, []
        self.known = None

    def latest(self) -> array[int]:
        """The keys of each item's latest label (by time, then line, then key) that no
        record retracted; ascending."""
        self.flush()
        return array("q", (key for (key,) in self.db.execute(LATEST, (LABEL,))))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> LabelScratch:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
