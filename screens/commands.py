"""The command palette (ctrl+p): open a run, start a new run, continue labelling, create
a work queue, dashboard, help, quit, agreement & judge quality, reviewer queue, compare
models, export, label a work queue, the memorisation map of a p_z run.

Run names come from the database, so hits are built as plain Content with the fuzzy
match highlighted by offset (Matcher.highlight would parse the name as markup).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

from db.pz import pz_runs
from db.queries import runs_summary
from db.queues import list_queues
from screens.app_link import copyaudit_app
from screens.destinations import Comparison, MemorisationMap, ReviewQueue
from screens.plain import visible
from screens.review.queue_open import continue_labelling, open_queue
from screens.state.export_choices import run_choices


class CopyauditCommands(Provider):
    async def startup(self) -> None:
        app = copyaudit_app(self)
        self._runs = [row["name"] for row in runs_summary(app.data.ui)]
        self._queues = [(row["name"], row["items"]) for row in list_queues(app.data.ui)]
        self._pz_runs = pz_runs(app.data.ui)

    def _commands(self) -> list[tuple[str, Callable[[], Any], str]]:
        app = copyaudit_app(self)
        commands: list[tuple[str, Callable[[], Any], str]] = [
            ("New run", app.action_new_run, "Open the run launcher"),
            (
                "Continue labelling",
                partial(continue_labelling, app),
                "Your most recent unfinished queue, at your first item without a label",
            ),
            (
                "Create a work queue",
                app.action_new_queue,
                "Draw generations of a run to label: design, size, seed",
            ),
            (
                "Export",
                lambda: app.export(run_choices(runs_summary(app.data.ui))),
                "Labels, a run's generations or report, to a file you name",
            ),
            ("Runs dashboard", app.action_dashboard, "Back to the list of suites and runs"),
            ("Help: keys", app.action_help, "Every key of every screen"),
            ("Quit", app.action_quit, "Leave copyaudit"),
            (
                "Agreement & judge quality",
                app.action_agreement,
                "Judges against human labels, annotator agreement, disagreements",
            ),
            (
                "Reviewer queue",
                partial(app.open, ReviewQueue()),
                "Flagged cases by severity: status, note, case view, dossier",
            ),
            (
                "Compare models",
                partial(app.open, Comparison()),
                "CopyBench, notice and DE-COP tables, one row per model",
            ),
        ]
        for name in getattr(self, "_runs", []):
            commands.append((f"Open run {name}", partial(app.open_run, name), "Generations"))
        for name in getattr(self, "_pz_runs", []):
            commands.append(
                (
                    f"Memorisation map of {name}",
                    partial(app.open, MemorisationMap(name)),
                    "p_z over each work's length; Enter on a stretch: its windows",
                )
            )
        for name, items in getattr(self, "_queues", []):
            label = partial(open_queue, app, name)
            commands.append((f"Label queue {name}", label, f"{items} generations, in order"))
        return commands

    def _display(self, text: str, query: str) -> Content:
        content = Content(visible(text))
        score, offsets = self.matcher(query).fuzzy_search.match(query, text)
        if score:
            for offset in offsets:
                content = content.stylize("bold reverse", offset, offset + 1)
        return content

    async def discover(self) -> Hits:
        for text, callback, help_text in self._commands()[:9]:
            yield DiscoveryHit(Content(text), callback, text=text, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, callback, help_text in self._commands():
            score = matcher.match(text)
            if score > 0:
                yield Hit(score, self._display(text, query), callback, text=text, help=help_text)
