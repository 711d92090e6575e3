"""Labelling a work queue (db.queues): annotation mode over the queue's generations in
their stored order, starting at the first one you have not fully labelled (a partly
labelled one included); the title shows the position ("13 of 40"), the mode line your
progress, and N/P walk the queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from copyaudit.errors import UserError
from db.labels import label_progress
from db.queues import queue_items
from screens.destinations import Annotation
from screens.state.id_pager import IdPager

if TYPE_CHECKING:
    from screens.app_link import CopyauditApp


def open_queue(app: CopyauditApp, name: str) -> None:
    """Ask who is labelling if needed, then open annotation mode on queue `name`."""
    app.ensure_annotator(lambda annotator: _open(app, name, annotator))


def _open(app: CopyauditApp, name: str, annotator: str) -> None:
    try:
        ids = queue_items(app.data.ui, name)
    except UserError as error:
        app.notify(str(error), severity="error", markup=False)
        return
    if not ids:
        app.notify(f"queue {name} is empty", severity="warning", markup=False)
        return
    progress = label_progress(app.data.ui, ids, annotator)
    complete = {gid for gid, (done, total) in progress.items() if done >= total}
    start = next((i for i, gid in enumerate(ids) if gid not in complete), 0)
    app.notify(
        f"queue {name}: {len(complete)} of {len(ids)} generations fully labelled by you; "
        f"starting at {start + 1}",
        markup=False,
    )
    app.open(Annotation(ids[start], IdPager(ids), queue=name))
