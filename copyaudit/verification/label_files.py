"""Reading human label files (JSONL or a JSON array).

One record per label:

    {"annotator": "ana", "generation": "run/case_id/template", "target": "event",
     "index": 3, "label": "yes", "note": "optional"}

`target` is event / character / refusal / literal; `index` is the event or
character index (0 for refusal and literal); `label` is yes / no / unsure.

The file that `copyaudit export labels` writes is accepted as it is: its records
carry `action` ("label" or "retract"), `uuid` and, for a retraction, `supersedes`
(the uuid of the label event it undoes, which must appear earlier in the file).
Other keys (chain, seq, hashes) are ignored: the importing database writes its
own chain. `fold_current` reduces a file to what it says each annotator's current
label is, with the same rule as the database: the latest label event not
retracted, where "latest" is by `created_at` when the records carry one and
otherwise by line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from copyaudit.errors import InputError
from copyaudit.items import LABEL_TARGETS, WHOLE_OUTPUT_TARGETS
from copyaudit.records import Record, collect, int_field, read_json_records
from copyaudit.rows import Loaded
from db.event_rules import EventProblem, canonical_time

TARGETS: tuple[str, ...] = LABEL_TARGETS
LABELS: tuple[str, ...] = ("yes", "no", "unsure")
ACTIONS: tuple[str, ...] = ("label", "retract")
SINGLE_ITEM_TARGETS: frozenset[str] = frozenset(WHOLE_OUTPUT_TARGETS)
MAX_INDEX = 1_000_000  # an event's or character's index within one case
# what `export labels` writes besides the fields read: the exporting database's chain
EXPORT_ONLY_FIELDS = ("chain", "seq", "prev_hash", "hash")


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


def parse_label_record(record: Record) -> LabelRecord:
    annotator = _text(record, "annotator", required=True)
    assert annotator is not None
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
    )


def read_labels(path: str | Path) -> Loaded[LabelRecord]:
    """The file's usable records and the problems of the others (each naming its
    line and field); a retraction of a record that is not usable is not usable."""
    if not Path(path).is_file():
        raise InputError(path, None, None, "no such file")
    uuids: dict[str, LabelRecord] = {}

    def parse(raw: Record) -> LabelRecord:
        record = parse_label_record(raw)
        if record.uuid is not None and record.uuid in uuids:
            raise record.error("uuid", f"duplicate uuid (first on line {uuids[record.uuid].line})")
        if record.action == "retract":
            _check_retraction(record, uuids)
        if record.uuid is not None:
            uuids[record.uuid] = record
        return record

    return collect(
        path,
        read_json_records(path),
        parse,
        required=("annotator", "generation", "target"),
        ignored=EXPORT_ONLY_FIELDS,
    )


def read_label_file(path: str | Path, *, skip_invalid: bool = False) -> list[LabelRecord]:
    """Every record of the file, validated; unusable records are all listed (file,
    line and field) and stop the import unless `skip_invalid`."""
    return read_labels(path).accept(skip_invalid)


def _check_retraction(record: LabelRecord, earlier: dict[str, LabelRecord]) -> None:
    undone = earlier.get(record.supersedes or "")
    if undone is None or undone is record:
        raise record.error(
            "supersedes", f"no earlier label event with uuid {record.supersedes!r} in this file"
        )
    if undone.action != "label":
        raise record.error("supersedes", f"line {undone.line} is a retraction, not a label")
    if undone.item != record.item:
        raise record.error(
            "supersedes",
            f"line {undone.line} labels a different item "
            f"({undone.generation} {undone.target} {undone.index})",
        )


def fold_current(records: Sequence[LabelRecord]) -> list[LabelRecord]:
    """Each (annotator, generation, target, index)'s current label according to the
    file: its latest label record not retracted by a later record. In file order of
    the chosen records."""
    retracted = {r.supersedes for r in records if r.action == "retract"}
    latest: dict[tuple[str, str, str, int], LabelRecord] = {}
    for record in records:
        if record.action != "label" or (record.uuid is not None and record.uuid in retracted):
            continue
        held = latest.get(record.item)
        if held is None or _order(record) >= _order(held):
            latest[record.item] = record
    return sorted(latest.values(), key=lambda r: r.line)


def _order(record: LabelRecord) -> tuple[str, int]:
    return (record.created_at or "", record.line)
