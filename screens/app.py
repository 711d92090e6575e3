"""The copyaudit terminal app: runs dashboard, run launcher, generation list and view.

Every worker is started here (App.start_worker) so that one handler,
`on_worker_state_changed`, turns any worker failure into a notification. Workers never
touch widgets: they post messages, which the screens handle on the UI thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import events
from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import ModalScreen
from textual.signal import Signal
from textual.worker import Worker, WorkerState

from copyaudit.errors import UserError
from copyaudit.identity import remember_annotator
from copyaudit.runs.lifecycle import FINISHED, RunnableRequest, RunOutcome
from db.browse import run_info
from db.pz import holds_pz
from db.run_owner import current_owner
from db.search_index import catch_up_in_background, has_backlog
from screens.commands import CopyauditCommands
from screens.connections import Connections
from screens.destinations import MemorisationMap
from screens.export_dialog import ExportScreen
from screens.generations.generation_list import GenerationListScreen
from screens.help import HelpScreen
from screens.line_input import LineInputScreen
from screens.review.agreement_view import AgreementScreen
from screens.review.queue_create import QueueFormScreen
from screens.review.queue_open import open_queue
from screens.router import screen_for
from screens.runs.dashboard import DashboardScreen
from screens.runs.launcher import LauncherScreen
from screens.runs.run_control import ActiveRun, RunProgressed
from screens.runs.run_dialogs import ChooseRunScreen, ConfirmCancelScreen, StoppingScreen
from screens.state.export_choices import ExportChoice, ExportRequest, write_export
from screens.terminal import CHECK_EVERY_S, hung_up, input_fd
from screens.widgets.annotator_tag import AnnotatorTag

if TYPE_CHECKING:
    from textual.screen import Screen

    from copyaudit.runs.progress import Progress
    from screens.destinations import Destination

RUN_GROUP = "runs"
SEARCH_INDEX_GROUP = "search-index"
PROGRESS_INTERVAL_S = 0.1
QUIT_CONFIRM_S = 4.0  # with a run in progress, a second q within this time quits


class ExportWritten(Message):
    def __init__(self, path: Path, written: str) -> None:
        super().__init__()
        self.path = path
        self.written = written


class CopyauditApp(App[None]):
    CSS_PATH = "app.tcss"
    TITLE = "copyaudit"
    COMMANDS: ClassVar = App.COMMANDS | {CopyauditCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", id="app.help"),
        Binding("q", "quit", "Quit", id="app.quit", show=False),
    ]

    def __init__(
        self,
        db_path: Path,
        annotator: str | None = None,
        *,
        ask_annotator: bool = False,
        read_only: bool = False,
        start_runs: Sequence[RunnableRequest] = (),
    ) -> None:
        """`ask_annotator`: ask for a name at start when `annotator` is None (the
        command line does; labelling asks anyway before the first label). `read_only`:
        browse only (the title says so); labels, reviews and runs are refused.
        `start_runs`: runs started in the background as the app opens (the demo's map)."""
        super().__init__()
        self.db_path = Path(db_path)
        self.annotator = annotator
        self.ask_annotator = ask_annotator
        self.read_only = read_only
        self.start_runs = tuple(start_runs)
        self.data = Connections(self.db_path, read_only=read_only)
        self.active_runs: dict[str, ActiveRun] = {}
        self.run_signal: Signal[ActiveRun] = Signal(self, "runs")
        self._quit_asked_at = -QUIT_CONFIRM_S
        self._quitting = False
        self._key_read_at: float | None = None  # the key whose bindings run now: when read
        self._search_indexing_stop = threading.Event()
        self._search_indexer: Worker[int] | None = None

    def on_mount(self) -> None:
        self.screen_change_signal.subscribe(self, self._tag_screen)
        self.push_screen(DashboardScreen())
        for request in self.start_runs:
            self.start_run(request)
        self.index_search_backlog()
        if self.annotator is None and self.ask_annotator:
            self.ensure_annotator()
        if not self.is_headless:
            self.set_interval(CHECK_EVERY_S, self.exit_if_terminal_gone)

    def exit_if_terminal_gone(self, fd: int | None = None) -> bool:
        """Exit when the terminal hung up (screens.terminal: else a left-behind app spins
        on it); True when it did. `fd`: the input's descriptor (default: the app's)."""
        fd = input_fd() if fd is None else fd
        if fd is None or not hung_up(fd):
            return False
        self.exit(return_code=1)  # nobody is left to read a message
        return True

    def on_unmount(self) -> None:
        self._search_indexing_stop.set()
        for run in self.active_runs.values():
            run.cancel.set()
        self.data.close()

    # --- who is labelling --------------------------------------------------------------

    def ensure_annotator(self, then: Callable[[str], Any] | None = None) -> None:
        """Call `then(name)` with the annotator's name, asking for it first (a small
        modal; the name is remembered) when there is none."""
        if self.annotator is not None:
            if then is not None:
                then(self.annotator)
            return

        def chosen(name: str | None) -> None:
            if not name:
                self.notify("no annotator name: labelling stays off", severity="warning")
                return
            self.set_annotator(name)
            if then is not None:
                then(name)

        prompt = LineInputScreen(
            "Who is labelling?",
            "Your name is stored with every label you make (and remembered next time).",
            placeholder="annotator name",
            required=True,
        )
        self.push_screen(prompt, chosen)

    def set_annotator(self, name: str) -> None:
        self.annotator = name.strip()
        try:
            remember_annotator(self.annotator)
        except UserError as error:
            self.notify(f"name not remembered: {error}", severity="warning", markup=False)
        for screen in self.screen_stack:
            for tag in screen.query(AnnotatorTag):
                tag.set_annotator(self.annotator)

    def _tag_screen(self, screen: Screen[Any]) -> None:
        """Put the "annotator: NAME" tag on a screen shown for the first time."""

        if isinstance(screen, ModalScreen) or screen.query(AnnotatorTag):
            return
        screen.mount(AnnotatorTag(self.annotator, self.read_only))

    # --- workers ---------------------------------------------------------------------

    def start_worker(
        self, work: Callable[[], Any], *, group: str, description: str, exclusive: bool = True
    ) -> Worker[Any]:
        """Run `work` in a thread worker owned by the app (the one failure handler)."""
        return self.run_worker(
            work,
            thread=True,
            exit_on_error=False,
            group=group,
            description=description,
            exclusive=exclusive,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.ERROR:
            error = worker.error
            message = f"{worker.description} failed: {type(error).__name__}: {error}"
            self.notify(message, title="Error", severity="error", timeout=10, markup=False)
            if worker.group == RUN_GROUP and worker.name in self.active_runs:
                run = self.active_runs[worker.name]
                run.state, run.error = "failed", f"{type(error).__name__}: {error}"
                self.run_signal.publish(run)
        elif event.state == WorkerState.SUCCESS and worker.group == RUN_GROUP:
            finished = self.active_runs.get(worker.name)
            if finished is not None:
                self._finish_run(finished, cast(RunOutcome, worker.result))
        if self._quitting and all(run.finished for run in self.active_runs.values()):
            self.exit()

    def index_search_backlog(self) -> None:
        """Index, in the background, the rows imports left out of the search index
        (db.search_index): as the app opens and after each run. Searches scan those rows
        meanwhile; a read-only app leaves them."""
        if self.read_only or not has_backlog(self.data.ui):
            return
        if self._search_indexer is not None and not self._search_indexer.is_finished:
            return  # it goes on to the rows that arrived meanwhile
        stop, path = self._search_indexing_stop, self.db_path
        self._search_indexer = self.start_worker(
            lambda: catch_up_in_background(path, stop),
            group=SEARCH_INDEX_GROUP,
            description="search index",
        )

    # --- runs --------------------------------------------------------------------------

    def start_run(self, request: RunnableRequest) -> ActiveRun | None:
        """Start a run request of any study (copyaudit.runs.lifecycle.RunnableRequest)
        in the background; None (and a warning) if that run is already running, in this
        app or in another process."""

        if self.read_only:
            self.notify("read-only: runs are not started", severity="warning")
            return None
        name = request.run_name()
        current = self.active_runs.get(name)
        if current is not None and not current.finished:
            self.notify(f"run {name} is already running", severity="warning", markup=False)
            return None
        holder = current_owner(self.data.ui, name)
        if holder is not None:  # another process (the engine would refuse it too)
            self.notify(
                f"run {name} is already being run by {holder.describe()}",
                severity="warning",
                markup=False,
            )
            return None
        run = ActiveRun(name)
        self.active_runs[name] = run

        last: list[Any] = [None, 0.0]  # (phase, time) of the last progress posted

        def on_progress(progress: Progress) -> None:
            """At most ten updates a second reach the UI, plus every phase change and
            the end of each phase."""
            now = time.monotonic()
            edge = progress.phase != last[0] or progress.done >= progress.total
            if edge or now - last[1] >= PROGRESS_INTERVAL_S:
                last[0], last[1] = progress.phase, now
                self.post_message(RunProgressed(name, progress))

        def work() -> RunOutcome:
            return request.execute(self.db_path, on_progress=on_progress, cancel=run.cancel)

        self.run_worker(
            work,
            name=name,
            thread=True,
            exit_on_error=False,
            group=RUN_GROUP,
            description=f"run {name}",
            exclusive=False,
        )
        self.run_signal.publish(run)
        return run

    def running_runs(self) -> list[str]:
        """Runs started in this app that are running and not yet asked to stop."""
        return [run.name for run in self.active_runs.values() if run.state == "running"]

    def ask_cancel_run(self, name: str | None = None) -> None:
        """Cancel run `name`, else the run that is running, else ask which (when several)
        — always after a confirmation (choosing from the list is one)."""

        running = self.running_runs()
        if name is not None:
            running = [name] if name in running else []
        if not running:
            self.notify("no run started in this app is running", severity="warning")
        elif len(running) > 1:
            self.push_screen(ChooseRunScreen(running), lambda chosen: self._cancel_if(chosen))
        else:
            only = running[0]
            self.push_screen(
                ConfirmCancelScreen(only), lambda yes: self._cancel_if(only if yes else None)
            )

    def _cancel_if(self, name: str | None) -> None:
        if name is not None:
            self.cancel_run(name)

    def cancel_run(self, name: str) -> bool:
        """Set the run's cancel flag (no question asked: see ask_cancel_run). The worker
        stops at the next decoding step; complete generations stay stored."""
        run = self.active_runs.get(name)
        if run is None or run.finished:
            return False
        run.cancel.set()
        run.state = "cancelling"
        self.notify(
            f"cancelling run {name} (stops at the next decoding step; complete generations "
            "are kept)",
            markup=False,
        )
        self.run_signal.publish(run)
        return True

    def on_run_progressed(self, message: RunProgressed) -> None:
        run = self.active_runs.get(message.name)
        if run is None or run.finished:
            return
        run.progress = message.progress
        self.run_signal.publish(run)

    def _finish_run(self, run: ActiveRun, outcome: RunOutcome) -> None:
        run.outcome = outcome
        run.state = outcome.status if outcome.status in FINISHED else "done"
        run.error = outcome.error
        self.notify(outcome.summary(), severity="information", timeout=8, markup=False)
        self.run_signal.publish(run)
        self.index_search_backlog()

    # --- actions -----------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        """Keep the time a key was read while its bindings run: a busy app handles a key
        late (behind a long queue of messages), and the q q window is between presses."""
        if not isinstance(event, events.Key):
            await super().on_event(event)
            return
        self._key_read_at = event.time
        try:
            await super().on_event(event)
        finally:
            self._key_read_at = None

    async def action_quit(self) -> None:
        """Quit; while a run started here is in progress, only on a second q within
        QUIT_CONFIRM_S of the first (as pressed, however late the app handles it), which
        cancels the runs, shows "stopping the run…" and exits once their workers have
        stopped (at the next decoding step; starting a run again resumes it)."""
        running = [run.name for run in self.active_runs.values() if not run.finished]
        now = time.monotonic() if self._key_read_at is None else self._key_read_at
        if self._quitting:
            return
        if running and now - self._quit_asked_at > QUIT_CONFIRM_S:
            self._quit_asked_at = now
            self.notify(
                f"run {', '.join(running)} is in progress: press q again to stop it and quit "
                "(starting the same run again resumes it)",
                severity="warning",
                timeout=QUIT_CONFIRM_S,
                markup=False,
            )
            return
        if not running:
            self.exit()
            return

        self._quitting = True  # on_worker_state_changed exits once every run stopped
        for name in running:
            self.cancel_run(name)
        self.push_screen(StoppingScreen(running))

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(type(self.screen)))

    def action_new_run(self, suite: str | None = None) -> None:
        self.push_screen(LauncherScreen(suite=suite))

    def action_new_queue(self, run: str | None = None) -> None:
        """The new-queue form (`run` chosen at first); the queue made opens for labelling."""

        def created(name: str | None) -> None:
            if name:
                open_queue(self, name)

        self.push_screen(QueueFormScreen(run), created)

    def export(self, choices: Sequence[ExportChoice]) -> None:
        """The export dialog over `choices`; the file is written in a worker through the
        safe output file of `-o` (screens.state.export_choices.write_export)."""

        def chosen(request: ExportRequest | None) -> None:
            if request is None:
                return

            def work() -> None:
                with self.data.background() as store:
                    written = write_export(store, request, self.db_path)
                self.post_message(ExportWritten(request.path, written))

            self.notify(f"writing {request.path}…", timeout=2, markup=False)
            self.start_worker(work, group="export", description="the export", exclusive=False)

        self.push_screen(ExportScreen(choices, self.db_path), chosen)

    def on_export_written(self, message: ExportWritten) -> None:
        self.notify(f"wrote {message.written} to {message.path}", timeout=10, markup=False)

    def action_agreement(self) -> None:
        if not isinstance(self.screen, AgreementScreen):
            self.push_screen(AgreementScreen())

    def action_dashboard(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, DashboardScreen):
            self.pop_screen()

    def open(self, destination: Destination, *, replace: bool = False) -> None:
        """Show a screens.destinations value, pushed or (`replace`) in place of this
        screen: the one way a screen opens another."""

        screen = screen_for(destination, self.screen)
        if screen is not None:
            (self.switch_screen if replace else self.push_screen)(screen)

    def open_run(self, name: str, *, as_list: bool = False) -> None:
        """The generation list of a run; unless `as_list`, the DE-COP view for a DE-COP
        run and the memorisation map for a p_z run (g there opens its list)."""

        info = run_info(self.data.ui, name)
        if info is None:
            self.notify(f"no run named {name}", severity="error", markup=False)
            return
        if not as_list and holds_pz(self.data.ui, int(info["id"])):
            self.open(MemorisationMap(name))
            return
        if info["kind"] == "decop":
            # deferred: loads scipy, textual_plotext, plotext
            from screens.decop.run_view import DecopScreen

            self.push_screen(DecopScreen(info))
            return

        self.push_screen(GenerationListScreen(info))


def run_app(
    db_path: Path,
    annotator: str | None,
    *,
    read_only: bool = False,
    start_runs: Sequence[RunnableRequest] = (),
) -> None:
    """Open the app on the database at `db_path` (created if missing; `read_only`: it
    must exist, and nothing is written), starting `start_runs` in the background."""
    CopyauditApp(
        db_path,
        annotator=annotator,
        ask_annotator=not read_only,
        read_only=read_only,
        start_runs=start_runs,
    ).run()
