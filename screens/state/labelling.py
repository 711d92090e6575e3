"""The app's label reads and undo, with no Textual in it; a label key writes through
`db.events.append_label`.

Each write is one small transaction (db.events), committed before it returns, so
the caller (a key handler on the UI thread) has the label stored before the next key is
handled. Tests drive this same path from several processes at once.
"""

from __future__ import annotations

from db.connection import Store
from db.events import retract_label
from db.labels import CurrentLabel, current_labels, latest_label_event

ItemKey = tuple[str, int]  # (target, item index)


def undo_latest(store: Store, *, generation_id: int, annotator: str) -> CurrentLabel | None:
    """Retract the annotator's newest live label on the generation (None: nothing to
    undo). The label it replaced, if any, becomes current again."""
    latest = latest_label_event(store, annotator, generation_id=generation_id)
    if latest is None:
        return None
    retract_label(store, label_uuid=latest.uuid, annotator=annotator)
    return latest


def labels_by_item(
    store: Store, generation_id: int, annotator: str | None = None
) -> dict[ItemKey, list[CurrentLabel]]:
    """Current labels on the generation (one annotator's, or everyone's), by item."""
    found: dict[ItemKey, list[CurrentLabel]] = {}
    for label in current_labels(store, generation_ids=[generation_id], annotator=annotator):
        found.setdefault((label.target, label.item_index), []).append(label)
    return found
