"""Reading human label files (JSONL or a JSON array).

One record per label:

    {"annotator": "ana", "generation": "run/case_id/template", "target": "event",
     "index": 3, "label": "yes", "note": "optional"}

`target` is event / character / refusal / literal; `index` is the event or
character index (0 for refusal and literal); `label` is yes / no / unsure.

The file that `copyaudit export labels` writes is accepted as it is: its records
carry `action` ("label" or "retract"), `uuid` and, for a retraction, `supersedes`
(the uuid of the label event it undoes, which must appear earlier in the file).
An exported record's hash is checked against its own fields before anything else,
and its signature (`signed_by`, `signature`) is checked by the importing database
(db.signatures.adopt_signature); the chain fields are not imported: the importing
database writes its own chain. `fold_current` reduces a file to what it says each
annotator's current label is, with the same rule as the database: the latest label event not
retracted, where "latest" is by `created_at` when the records carry one and
otherwise by line.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from copyaudit.errors import InputError
from copyaudit.items import LABEL_TARGETS, WHOLE_OUTPUT_TARGETS
from copyaudit.records import (
    Record,
    collect,
    int_field,
    no_nul,
    read_json_records,
)
from copyaudit.rows import Loaded, RowProblem
from db.event_rules import EventProblem, canonical_time
from db.events import HASHED_FIELDS, event_hash, signed_digest
from db.label_scratch import LabelScratch

TARGETS: tuple[str, ...] = LABEL_TARGETS
LABEL_HASHED = HASHED_FIELDS["labels"]
LABELS: tuple[str, ...] = ("yes", "no", "unsure")
ACTIONS: tuple[str, ...] = ("label", "retract")
SINGLE_ITEM_TARGETS: frozenset[str] = frozenset(WHOLE_OUTPUT_TARGETS)
MAX_INDEX = 1_000_000  # an event's or character's index within one case
# what `export labels` writes besides the fields read: the exporting database's chain and
# what each event was made on (checked by `_own_hash`, not imported)
EXPORT_ONLY_FIELDS = ("chain", "seq", "prev_hash", "hash", "content_hash")
# an exported event's signature: the key's fingerprint and the ed25519 signature (hex)
SIGNATURE_FIELDS = ("signed_by", "signature")
HEX = re.compile(r"[0-9a-f]+")
# an exported event's hashed column -> the field of the label file that holds it
HASHED_FROM_FILE = {"generation_key": "generation", "item_index": "index"}
AHEAD = 1000  # records read ahead of the checks, whose uuids are looked up together


@dataclass(frozen=True)
class ExportSignature:
    """The signature an exported event carries (db.signatures), and what it must be over:
    the event's own fields without its place in the exporting chain."""

    fingerprint: str
    value: str
    digest: str


@dataclass(frozen=True)
class LabelRecord:
    """One validated record of a label file, with where it came from."""

    path: str
    line: int
    annotator: str
    generation: str  # run/case_id/template
    target: str
    index: int
    action: str = "label"
    label: str | None = None  # None for a retraction
    note: str | None = None
    uuid: str | None = None
    supersedes: str | None = None
    created_at: str | None = None
    signature: ExportSignature | None = None

    @property
    def item(self) -> tuple[str, str, str, int]:
        return (self.annotator, self.generation, self.target, self.index)

    def error(self, field: str | None, message: str) -> InputError:
        return InputError(self.path, self.line, field, message)


def _text(record: Record, field: str, *, required: bool) -> str | None:
    value = record.data.get(field)
    if value is None:
        if required:
            raise record.error(field, "missing")
        return None
    if not isinstance(value, str):
        raise record.error(field, f"expected a string, got {type(value).__name__}")
    if required and not value.strip():
        raise record.error(field, "must not be empty")
    return value


def _choice(record: Record, field: str, choices: tuple[str, ...], default: str | None) -> str:
    value = record.data.get(field, default)
    if value is None:
        raise record.error(field, f"missing (one of {', '.join(choices)})")
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise record.error(field, f"expected one of {', '.join(choices)}, got {value!r}")
    return value.strip().lower()


def _generation_key(record: Record) -> str:
    key = _text(record, "generation", required=True)
    assert key is not None
    parts = key.split("/")
    # run names and case ids may themselves contain '/': only the template is fixed.
    if len(parts) < 3 or not parts[-1].isdigit() or not all(p.strip() for p in parts[:-1]):
        raise record.error("generation", f"expected 'run/case_id/template', got {key!r}")
    return key


def _index(record: Record, target: str) -> int:
    value = record.data.get("index")
    if value is None:
        if target in SINGLE_ITEM_TARGETS:
            return 0
        raise record.error("index", f"missing (the {target}'s index in the case)")
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise record.error("index", f"expected a non-negative integer, got {value!r}")
    int_field(record, "index", 0, MAX_INDEX, value)
    if target in SINGLE_ITEM_TARGETS and value != 0:
        raise record.error("index", f"a {target} label has one item: index must be 0")
    return value


def _created_at(record: Record) -> str | None:
    """The record's `created_at` as the database writes it (UTC, ISO 8601 with
    milliseconds), or None; a time that is not ISO 8601 with an offset (converted to
    UTC here), or that lies in the future, is an error (it would order the annotator's
    labels wrongly). The rules are the store's own (db.event_rules.canonical_time)."""
    text = _text(record, "created_at", required=False)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise record.error("created_at", f"not an ISO-8601 time: {text!r}") from None
    if moment.tzinfo is None:
        raise record.error("created_at", f"{text!r} has no UTC offset (add +00:00 or Z)")
    try:
        return canonical_time(moment.astimezone(UTC).isoformat(timespec="milliseconds"))
    except EventProblem as problem:
        raise record.error("created_at", problem.message) from None


def _own_hash(record: Record) -> None:
    """A record that carries an exported event's `hash` must hash to it from its own
    fields, as written (db.events.event_hash), before anything else is read: an export
    edited after the fact (a label flipped, the uuid and hash kept) is refused."""
    data = record.data
    if "hash" not in data:
        return
    stored, prev = data.get("hash"), data.get("prev_hash")
    if not isinstance(stored, str) or not isinstance(prev, str):
        raise record.error("hash", "an exported event needs its hash and prev_hash as text")
    if event_hash("labels", _exported_event(record), prev) != stored:
        raise record.error(
            "hash",
            "does not match the record's own fields: the record was edited after export "
            "(or exported before exports carried content_hash: export it again)",
        )


def _exported_event(record: Record) -> dict[str, object]:
    """The hashed columns of the event an exported record was written from."""
    data = record.data
    return {column: data.get(HASHED_FROM_FILE.get(column, column)) for column in LABEL_HASHED}


def _signature(record: Record) -> ExportSignature | None:
    """The record's signature (`signed_by` and `signature`, as `export labels` writes
    them), checked for form here; whether the key is trusted and the signature valid is
    the importing database's check (db.signatures.check_imported)."""
    data = record.data
    by, value = (data.get(field) for field in SIGNATURE_FIELDS)
    if by is None and value is None:
        return None
    for field, text in zip(SIGNATURE_FIELDS, (by, value), strict=True):
        if not isinstance(text, str) or not HEX.fullmatch(text):
            raise record.error(
                field, "a signed record needs signed_by and signature, both as lowercase hex"
            )
    if "hash" not in data:
        raise record.error(
            "signature", "a signature covers an exported event: the record lacks its hash"
        )
    assert isinstance(by, str) and isinstance(value, str)
    return ExportSignature(by, value, signed_digest("labels", _exported_event(record)))


def parse_label_record(record: Record) -> LabelRecord:
    _own_hash(record)
    signature = _signature(record)
    annotator = _text(record, "annotator", required=True)
    assert annotator is not None
    no_nul(record, "annotator", annotator)
    generation = _generation_key(record)
    target = _choice(record, "target", TARGETS, None)
    index = _index(record, target)
    action = _choice(record, "action", ACTIONS, "label")
    uuid = _text(record, "uuid", required=False)
    created_at = _created_at(record)
    if action == "retract":
        supersedes = _text(record, "supersedes", required=True)
        return LabelRecord(
            record.path,
            record.line,
            annotator.strip(),
            generation,
            target,
            index,
            action="retract",
            uuid=uuid,
            supersedes=supersedes,
            created_at=created_at,
            signature=signature,
        )
    if record.data.get("supersedes") is not None:
        raise record.error("supersedes", "only a retraction (action 'retract') supersedes")
    return LabelRecord(
        record.path,
        record.line,
        annotator.strip(),
        generation,
        target,
        index,
        label=_choice(record, "label", LABELS, None),
        note=_text(record, "note", required=False),
        uuid=uuid,
        created_at=created_at,
        signature=signature,
    )


def read_labels(path: str | Path) -> Loaded[LabelRecord]:
    """The file's usable records and the problems of the others (each naming its
    line and field); a retraction of a record that is not usable is not usable.
    Streams (`Loaded.stream`): the checks keep `_Events`, not the records, and close
    them when the file is read (or its reading stops)."""
    return _read(path, _Events(_record_at(path)), close=True)


def _read(path: str | Path, events: _Events, *, close: bool) -> Loaded[LabelRecord]:
    """`read_labels`, whose usable records fill `events` as they stream (closed at the
    end when `close`)."""
    if not Path(path).is_file():
        raise InputError(path, None, None, "no such file")
    position = itertools.count()  # of every record, usable or not (a JSON array's
    # records may share a line)

    def parse(raw: Record) -> LabelRecord:
        key = next(position)
        record = parse_label_record(raw)
        events.add(record, key)
        return record

    return collect(
        path,
        events.ahead(read_json_records(path), close=close),
        parse,
        required=("annotator", "generation", "target"),
        ignored=EXPORT_ONLY_FIELDS + SIGNATURE_FIELDS,
    )


def read_label_file(path: str | Path, *, skip_invalid: bool = False) -> list[LabelRecord]:
    """Every record of the file, validated; unusable records are all listed (file,
    line and field) and stop the import unless `skip_invalid`."""
    return read_labels(path).accept(skip_invalid)


def _digest(text: str) -> bytes:
    """16 bytes standing for a uuid or an item key (a collision: about 2**-64 at 2**32)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _item_digest(record: LabelRecord) -> bytes:
    """The digest of the record's item; annotator and generation are prefixed by their
    lengths, so no two items spell the same text."""
    annotator, generation = record.annotator, record.generation
    return _digest(
        f"{len(annotator)}:{annotator}{len(generation)}:{generation}{record.target}/{record.index}"
    )


NO_TIME = -(2**63)  # the time of a record without created_at: before every time
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND = timedelta(milliseconds=1)


def _milliseconds(created_at: str | None) -> int:
    """A canonical created_at (db.event_rules: UTC, milliseconds) as milliseconds since
    1970, which order as the texts do; NO_TIME for None."""
    if created_at is None:
        return NO_TIME
    return (datetime.fromisoformat(created_at) - _EPOCH) // _MILLISECOND


class _Events:
    """What checking and folding a label file keeps per record, instead of the record:
    its key, line, action, item (a 16-byte digest of annotator, generation, target,
    index), created_at (in milliseconds) and its uuid's digest, in a private temporary
    database (db.label_scratch) opened at the first record. `add` raises the record's
    error (duplicate uuid, retraction of nothing, of a retraction or of another item)
    without keeping it; `record_at(key)` gives back a kept record for that error's
    wording. Keys ascend as records are added. `close()` (or `with`) ends the database."""

    def __init__(self, record_at: Callable[[int], LabelRecord]) -> None:
        self.record_at = record_at
        self.store: LabelScratch | None = None

    def _opened(self) -> LabelScratch:
        """The store, opened at the first record (or the first batch read ahead)."""
        if self.store is None:
            self.store = LabelScratch()
        return self.store

    def add(self, record: LabelRecord, key: int) -> None:
        store = self._opened()
        uuid = None if record.uuid is None else _digest(record.uuid)
        if uuid is not None and (first := store.find(uuid)) is not None:
            raise record.error("uuid", f"duplicate uuid (first on line {first.line})")
        item = _item_digest(record)
        retraction = record.action == "retract"
        if retraction:
            store.retract(self._check_retraction(store, record, item))
        time = _milliseconds(record.created_at)
        store.add(key, record.line, retraction, item, time, uuid)

    def ahead(self, records: Iterator[Record], *, close: bool) -> Iterator[Record]:
        """`records`, read a batch ahead: the store looks up the batch's uuids and the
        uuids they supersede in a few queries before the batch is parsed. A reading
        error is raised after the records read before it. `close`: closes the store
        once the last record was parsed (or the reading stopped)."""
        try:
            while True:
                batch: list[Record] = []
                try:
                    batch.extend(itertools.islice(records, AHEAD))
                except Exception:
                    self._prefetch(batch)
                    yield from batch
                    raise
                self._prefetch(batch)
                yield from batch
                if len(batch) < AHEAD:
                    return
        finally:
            if close:
                self.close()

    def _prefetch(self, batch: list[Record]) -> None:
        if not batch:
            return
        # dict.get: not a read of the parser (copyaudit.records.Fields notes those)
        uuids = (dict.get(r.data, f) for r in batch for f in ("uuid", "supersedes"))
        self._opened().prefetch(_digest(u) for u in uuids if isinstance(u, str))

    def _check_retraction(self, store: LabelScratch, record: LabelRecord, item: bytes) -> int:
        undone = store.find(_digest(record.supersedes or ""))
        if undone is None:
            raise record.error(
                "supersedes", f"no earlier label event with uuid {record.supersedes!r} in this file"
            )
        if undone.retraction:
            raise record.error("supersedes", f"line {undone.line} is a retraction, not a label")
        if undone.item != item:
            other = self.record_at(undone.key)
            raise record.error(
                "supersedes",
                f"line {undone.line} labels a different item "
                f"({other.generation} {other.target} {other.index})",
            )
        return undone.key

    def current(self) -> array[int]:
        """The keys of each item's current label: its latest label record (by
        created_at, then line, then order added) not retracted by a later record;
        ascending."""
        return array("q") if self.store is None else self.store.latest()

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> _Events:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _record_at(path: str | Path) -> Callable[[int], LabelRecord]:
    """The file's record at a position, read again (only to word an error)."""

    def record_at(position: int) -> LabelRecord:
        return parse_label_record(next(itertools.islice(read_json_records(path), position, None)))

    return record_at


def fold_current(records: Sequence[LabelRecord]) -> list[LabelRecord]:
    """Each (annotator, generation, target, index)'s current label according to the
    file: its latest label record not retracted by a later record. In file order of
    the chosen records. (`records` passed `read_labels`' checks.)"""
    with _Events(records.__getitem__) as events:
        for position, record in enumerate(records):
            events.add(record, position)
        chosen = events.current()
    return sorted((records[k] for k in chosen), key=lambda r: r.line)


@dataclass
class FoldedLabels:
    """A label file checked whole and folded (pass 1, kept in `_Events`):
    how many records it has, the problems of the unusable ones, and `current()`, which
    reads the file again (pass 2) and yields only the chosen records, in file order."""

    path: str
    records: int  # usable records
    problems: list[RowProblem]
    positions: array[int]  # the current labels' positions among the file's records, ascending
    warnings: list[RowProblem]  # unknown fields (each name once, at its first line)

    @property
    def total(self) -> int:
        return self.records + len(self.problems)

    def __len__(self) -> int:
        return len(self.positions)

    def current(self) -> Iterator[LabelRecord]:
        wanted = iter(self.positions)
        next_at = next(wanted, None)
        for position, raw in enumerate(read_json_records(self.path)):
            if next_at is None:
                return
            if position == next_at:
                yield parse_label_record(raw)
                next_at = next(wanted, None)
        if next_at is not None:
            raise InputError(self.path, None, None, "the file changed while it was read")


def fold_label_file(path: str | Path, *, skip_invalid: bool = False) -> FoldedLabels:
    """`read_labels` then `fold_current` without holding the records: raises as
    `Loaded.accept` does (every unusable record named) before anything is written."""
    with _Events(_record_at(path)) as events:
        loaded = _read(path, events, close=False)
        for _ in loaded.stream():
            pass
        loaded.check(skip_invalid)
        positions = events.current()
    return FoldedLabels(str(path), loaded.usable, loaded.problems, positions, loaded.warnings)
