"""How a judged or labelled item is named for people.

Events and characters are stored by their 0-based place in the case's reference list
and shown by their 1-based number, as the reference lists and the highlights number
them ("event 3" is the list's [3]); refusal, literal and content have one item per
generation and are named by the target alone.
"""

from __future__ import annotations

from copyaudit.vocabulary import EVERY_OUTPUT_TARGETS as EVERY_OUTPUT_TARGETS

# re-exported: the label targets are copyaudit.vocabulary's
from copyaudit.vocabulary import LABEL_TARGETS as LABEL_TARGETS
from copyaudit.vocabulary import NUMBERED_TARGETS as NUMBERED_TARGETS
from copyaudit.vocabulary import WHOLE_OUTPUT_TARGETS as WHOLE_OUTPUT_TARGETS


def item_number(target: str, index: int | None) -> int | None:
    """The number people see for an item, or None for a one-item target."""
    if target not in NUMBERED_TARGETS or index is None:
        return None
    return index + 1


def item_name(target: str, index: int | None) -> str:
    """'event 3', 'character 1', 'refusal'."""
    number = item_number(target, index)
    return target if number is None else f"{target} {number}"


def item_label(target: str, index: int | None, payload: dict | None) -> str:
    """'event 3 “The wolf eats her”', 'character 1 “Red / Riding Hood”', 'refusal': the
    item's name with its reference text from the case payload, where there is one."""
    name = item_name(target, index)
    field = {"event": "reference_events", "character": "reference_characters"}.get(target)
    reference = (payload or {}).get(field) if field else None
    if not isinstance(reference, list) or index is None or not 0 <= index < len(reference):
        return name
    value = reference[index]
    text = " / ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return f"{name} “{text}”"


CONTENT_TASKS = ("paraphrase", "translate")  # notice tasks whose judges read the content
