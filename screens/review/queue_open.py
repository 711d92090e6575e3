"""Labelling a work queue (db.queues): annotation mode over the queue's generations in
their stored order, starting at the first one you have not fully labelled (a partly
labelled one included); the title shows the position ("13 of 40"), the mode line your
progress, and N/P walk the queue. "Continue labelling" (dashboard l) opens the queue you
labelled in most recently that you have not finished (db.queues.unfinished_queue)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from copyaudit.errors import UserError
from db.labels import label_progress
from db.queues import queue_items, unfinished_queue
from screens.destinations import Annotation
from screens.state.id_pager import IdPager

if TYPE_CHECKING:
    from screens.app_link import CopyauditApp


def open_queue(app: CopyauditApp, name: str) -> None:
    """Ask who is labelling if needed, then open annotation mode on queue `name`."""
    app.ensure_annotator(lambda annotator: _open(app, name, annotator))


def continue_labelling(app: CopyauditApp) -> None:
    """Ask who is labelling if needed, then open their most recent unfinished queue at
    its first generation they have not fully labelled (its first item without their
    label: annotation mode starts there)."""
    app.ensure_annotator(lambda annotator: _continue(app, annotator))


def _continue(app: CopyauditApp, annotator: str) -> None:
    name = unfinished_queue(app.data.ui, annotator)
    if name is None:
        app.notify(
            f"no unfinished work queue for {annotator}: w (or ctrl+p) creates one",
            severity="warning",
            markup=False,
        )
        return
    _open(app, name, annotator)


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
