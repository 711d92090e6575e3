"""The one set of rules every label and review event obeys, whoever writes it.

The app's own writes (db.events), `import-labels` and `merge` all check an event with
`check_event` before it is stored, so an event another database or a file brings in is
held to exactly the rules of a keypress: value, target, action, item index within the
generation's items, author, what it retracts or undoes, and its time (ISO-8601 UTC in
the store's own form, which is what orders "latest"; not in the future beyond a small
clock skew). A broken rule raises EventProblem naming the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from copyaudit.errors import UserError
from copyaudit.items import LABEL_TARGETS, NUMBERED_TARGETS
from db.connection import Store

LABEL_VALUES = ("yes", "no", "unsure")
LABEL_ACTIONS = ("label", "retract")
REVIEW_STATUSES = ("open", "cleared", "escalated", "needs_second_look")
REVIEW_STATUS_ALIASES = {"second_look": "needs_second_look"}  # accepted on input
CLOCK_SKEW = timedelta(minutes=5)  # how far in the future an event's time may be
PAYLOAD_ITEMS = {"event": "reference_events", "character": "reference_characters"}

# An earlier event by uuid (a row of the same table), wherever the caller looks for it.
Lookup = Callable[[str], Mapping[str, Any] | None]


class EventProblem(UserError):
    """An event breaks a rule; `field` is the column at fault."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"field '{field}': {message}")


def canonical_time(value: object, *, field: str = "created_at") -> str:
    """`value` as the store writes times (UTC, milliseconds, '+00:00'); an EventProblem
    if it is not an ISO-8601 time with a UTC offset, or lies in the future."""
    if not isinstance(value, str):
        raise EventProblem(field, f"expected an ISO-8601 UTC time, got {value!r}")
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise EventProblem(field, f"not an ISO-8601 time: {value!r}") from None
    if moment.utcoffset() != timedelta(0):
        raise EventProblem(field, f"not a UTC time (offset +00:00 or Z): {value!r}")
    if moment - datetime.now(UTC) > CLOCK_SKEW:
        raise EventProblem(field, f"{value} is in the future")
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def _check_time(value: object) -> None:
    """A stored event's time must already be in the store's own form (it is hashed, and
    times order the events as strings)."""
    if canonical_time(value) != value:
        raise EventProblem("created_at", f"not in the store's form (e.g. {_example()}): {value!r}")


def _example() -> str:
    return datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).isoformat(timespec="milliseconds")


def _person(event: Mapping[str, Any], field: str) -> None:
    value = event.get(field)
    if not isinstance(value, str) or not value.strip():
        raise EventProblem(field, f"a {field} name is required")


def _optional_text(event: Mapping[str, Any], field: str) -> None:
    value = event.get(field)
    if value is not None and not isinstance(value, str):
        raise EventProblem(field, f"expected text, got {value!r}")


def item_counts(store: Store, generation_id: int) -> dict[str, int]:
    """How many items of each numbered target the generation's case has."""
    row = store.conn.execute(
        "SELECT c.payload FROM generations g JOIN cases c ON c.id = g.case_pk WHERE g.id = ?",
        (generation_id,),
    ).fetchone()
    if row is None:
        raise EventProblem("generation_id", f"no generation with id {generation_id}")
    payload = json.loads(row["payload"])
    return {
        target: len(payload[field]) if isinstance(payload.get(field), list) else 0
        for target, field in PAYLOAD_ITEMS.items()
    }


def _check_index(store: Store, event: Mapping[str, Any]) -> None:
    index, target = event.get("item_index"), event["target"]
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise EventProblem("item_index", f"expected a non-negative integer, got {index!r}")
    if target not in NUMBERED_TARGETS:
        if index != 0:
            raise EventProblem("item_index", f"a {target} label has one item: index must be 0")
        return
    size = item_counts(store, int(event["generation_id"]))[target]
    where = event.get("generation_key") or "the generation"
    if index >= size:
        raise EventProblem(
            "item_index",
            f"{where} has {size} reference {target}s (indices 0..{size - 1})"
            if size
            else f"{where}'s case has no reference {target}s",
        )


def _default_lookup(store: Store, table: str) -> Lookup:
    def lookup(uuid: str) -> Mapping[str, Any] | None:
        return store.conn.execute(f"SELECT * FROM {table} WHERE uuid = ?", (uuid,)).fetchone()

    return lookup


def check_label_event(store: Store, event: Mapping[str, Any], lookup: Lookup | None = None) -> None:
    """The rules of a label or retract event (see the module docstring). A retract
    applies only to a label of its own author on the same item."""
    _person(event, "annotator")
    if event.get("target") not in LABEL_TARGETS:
        raise EventProblem(
            "target",
            f"unknown label target {event.get('target')!r} (one of {', '.join(LABEL_TARGETS)})",
        )
    action = event.get("action")
    if action not in LABEL_ACTIONS:
        raise EventProblem(
            "action", f"unknown action {action!r} (one of {', '.join(LABEL_ACTIONS)})"
        )
    _check_index(store, event)
    _check_time(event.get("created_at"))
    _optional_text(event, "note")
    if action == "label":
        if event.get("label") not in LABEL_VALUES:
            raise EventProblem(
                "label", f"unknown label {event.get('label')!r} (one of {', '.join(LABEL_VALUES)})"
            )
        if event.get("supersedes") is not None:
            raise EventProblem("supersedes", "only a retract supersedes a label")
        return
    if event.get("label") is not None:
        raise EventProblem("label", "a retract carries no label value")
    supersedes = event.get("supersedes")
    undone = (lookup or _default_lookup(store, "labels"))(str(supersedes)) if supersedes else None
    if undone is None or undone["action"] != "label":
        raise EventProblem("supersedes", f"no label event {supersedes!r} to retract")
    if undone["annotator"] != event["annotator"]:
        raise EventProblem(
            "supersedes",
            f"{event['annotator']} cannot retract {undone['annotator']}'s label: "
            "a person retracts only their own labels",
        )
    if (undone["generation_key"], undone["target"], undone["item_index"]) != (
        event.get("generation_key"),
        event["target"],
        event["item_index"],
    ):
        raise EventProblem("supersedes", "the retracted label is on a different item")


def check_review_event(
    store: Store, event: Mapping[str, Any], lookup: Lookup | None = None
) -> None:
    """The rules of a review decision: a known status, a reviewer, its time; an undo
    withdraws a decision of the same reviewer on the same generation."""
    _person(event, "reviewer")
    if event.get("status") not in REVIEW_STATUSES:
        raise EventProblem(
            "status",
            f"unknown status {event.get('status')!r} (one of {', '.join(REVIEW_STATUSES)})",
        )
    _check_time(event.get("created_at"))
    _optional_text(event, "note")
    undoes = event.get("undoes")
    if undoes is None:
        return
    undone = (lookup or _default_lookup(store, "reviews"))(str(undoes))
    if (
        undone is None
        or undone["reviewer"] != event["reviewer"]
        or undone["generation_key"] != event.get("generation_key")
    ):
        raise EventProblem(
            "undoes", f"{event['reviewer']} has no review decision {undoes} on this generation"
        )


CHECKS: dict[str, Callable[..., None]] = {
    "labels": check_label_event,
    "reviews": check_review_event,
}


def check_event(
    store: Store, table: str, event: Mapping[str, Any], lookup: Lookup | None = None
) -> None:
    """Check one event of `table` ('labels' or 'reviews') against the rules."""
    CHECKS[table](store, event, lookup)
