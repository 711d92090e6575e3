"""Opening the terminal app (`copyaudit` without a command, and after `demo`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from copyaudit.cli.output import print_table
from copyaudit.identity import resolve_annotator
from db.queries import table_counts

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from copyaudit.runs.lifecycle import RunnableRequest


def open_app(obj: AppContext, start_runs: Sequence[RunnableRequest] = ()) -> None:
    """Open the Textual app on the database (or print its summary where there is none),
    `start_runs` started in the app's background (not run without the app)."""
    try:
        from screens.app import run_app  # deferred: loads textual
    except ImportError:
        with obj.store(read_only=True) as store:
            counts = table_counts(store)
        print_table(
            [{"table": k, "rows": v} for k, v in counts.items()],
            ["table", "rows"],
            f"copyaudit database {obj.db_path}",
        )
        return

    # --annotator wins and is remembered; else the remembered name; else the app asks
    # (served: each browser tab is its own reviewer, so only --annotator, else it asks)
    # read_only is passed only when asked for (a stand-in run_app need not know it)
    extra: dict[str, Any] = {"read_only": True} if getattr(obj, "read_only", False) else {}
    if start_runs:  # passed only when given, as read_only
        extra["start_runs"] = start_runs
    given = getattr(obj, "annotator", None)
    annotator = given if getattr(obj, "served", False) else resolve_annotator(given)
    run_app(obj.db_path, annotator=annotator, **extra)
