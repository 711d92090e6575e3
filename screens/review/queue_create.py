"""New work queue (dashboard w, or "Create a work queue" in ctrl+p): a modal form of
name, run, design, target, size, seed and bin width. Enter checks every field (each
wrong one says why under it), draws and stores the queue (db.queues.create_queue, as
`copyaudit queue create`) and dismisses with its name, which the App opens for
labelling; Esc creates nothing."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select, Static

from copyaudit.errors import UserError
from db.case_file import run_judges
from db.queries import runs_summary
from db.queue_designs import DESIGNS
from screens.app_link import copyaudit_app
from screens.plain import plain
from screens.state.queue_form import (
    DEFAULT_DESIGN,
    DEFAULT_SIZE,
    DESIGN_NOTES,
    SIZE_LABELS,
    Target,
    read_form,
    run_targets,
)

FIELDS = ("name", "run", "design", "target", "size", "seed", "bin_width")
KEYS_LINE = "Enter: create the queue and label it · Tab: next field · Esc: cancel"


def _error_line(field: str) -> Static:
    line = Static(id=f"{field}-error", classes="field-error")
    line.display = False
    return line


class QueueFormScreen(ModalScreen[str | None]):
    """Dismisses with the new queue's name, or None (Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="queue_form.cancel"),
        Binding("ctrl+s", "create", "Create", id="queue_form.create"),
    ]

    def __init__(self, run: str | None = None) -> None:
        """`run`: the run chosen at first (the dashboard's highlighted one)."""
        super().__init__()
        self.first_run = run
        self._targets: list[Target] = []

    def compose(self) -> ComposeResult:
        app = copyaudit_app(self)
        runs = [row["name"] for row in runs_summary(app.data.ui)]
        first = self.first_run if self.first_run in runs else (runs[0] if runs else None)
        with VerticalScroll(classes="dialog-box", id="queue-form") as box:
            box.border_title = "New work queue"
            yield Label("Name")
            yield Input(id="name", placeholder="e.g. nonliteral-sample-1", compact=True)
            yield _error_line("name")
            with Horizontal(classes="row"):
                with Vertical():
                    yield Label("Run")
                    options = [(plain(run), run) for run in runs]
                    yield Select(options, id="run", value=first or Select.BLANK, compact=True)
                    yield _error_line("run")
                with Vertical():
                    yield Label("Design")
                    yield Select(
                        [(d, d) for d in DESIGNS],
                        id="design",
                        value=DEFAULT_DESIGN,
                        allow_blank=False,
                        compact=True,
                    )
                    yield _error_line("design")
            yield Static(id="design-note", classes="dim-note")
            yield Label("Target (the judge metric drawn by; not used by random)")
            yield Select([], id="target", prompt="no judged metric", compact=True)
            yield _error_line("target")
            with Horizontal(classes="row"):
                with Vertical():
                    yield Label(SIZE_LABELS[DEFAULT_DESIGN], id="size-label")
                    yield Input(DEFAULT_SIZE[DEFAULT_DESIGN], id="size", compact=True)
                    yield _error_line("size")
                with Vertical():
                    yield Label("Seed (same seed, same draw)")
                    yield Input("0", id="seed", compact=True)
                    yield _error_line("seed")
            yield Label("Bin width (a continuous target such as rougeL; empty: none)")
            yield Input(id="bin_width", placeholder="none", compact=True)
            yield _error_line("bin_width")
            yield Static(id="form-error", classes="field-error")
            yield Static(Text(KEYS_LINE, style="dim"))

    def on_mount(self) -> None:
        self.query_one("#form-error").display = False
        self._show_design(DEFAULT_DESIGN)
        self._load_targets()
        self.query_one("#name", Input).focus()

    # --- fields that follow others -------------------------------------------------------

    def _show_design(self, design: str) -> None:
        self.query_one("#design-note", Static).update(plain(DESIGN_NOTES[design], "dim"))
        self.query_one("#size-label", Label).update(SIZE_LABELS[design])
        self.query_one("#target", Select).disabled = design == "random"
        size = self.query_one("#size", Input)
        if size.value in DEFAULT_SIZE.values():  # not typed by the person: follow the design
            size.value = DEFAULT_SIZE[design]

    def _load_targets(self) -> None:
        """The run's judged metrics as the target's choices (events first when judged)."""
        app = copyaudit_app(self)
        run = self.query_one("#run", Select).value
        self._targets = run_targets(run_judges(app.data.ui, run)) if isinstance(run, str) else []
        target = self.query_one("#target", Select)
        target.set_options([(plain(f"{m} ({j})"), (m, j)) for m, j in self._targets])
        preferred = [t for t in self._targets if t[0] == "events"] or self._targets[:1]
        if preferred:
            target.value = preferred[0]

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "run":
            self._load_targets()
        elif event.select.id == "design" and event.value in DESIGNS:
            self._show_design(str(event.value))

    # --- creating --------------------------------------------------------------------------

    def _values(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for field in FIELDS:
            widget = self.query_one(f"#{field}")
            value = widget.value  # type: ignore[attr-defined]
            values[field] = None if value is Select.BLANK else value
        return values

    def _show_errors(self, errors: dict[str, str], general: str = "") -> None:
        for field in FIELDS:
            line = self.query_one(f"#{field}-error", Static)
            line.update(plain(errors.get(field, ""), "red"))
            line.display = field in errors
        form_error = self.query_one("#form-error", Static)
        form_error.update(plain(general, "red"))
        form_error.display = bool(general)
        if errors:
            self.query_one(f"#{next(f for f in FIELDS if f in errors)}").focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_create()

    def action_create(self) -> None:
        app = copyaudit_app(self)
        if app.read_only:
            self._show_errors({}, "read-only: queues are not created")
            return
        request, errors = read_form(self._values(), self._targets)
        if request is None:
            self._show_errors(errors)
            return
        try:
            summary = request.create(app.data.ui)
        except UserError as error:
            self._show_errors({}, str(error))
            return
        app.notify(
            f"queue {summary.name}: {summary.items} generations of {summary.run} "
            f"({summary.design}, seed {request.seed})",
            markup=False,
        )
        self.dismiss(summary.name)

    def action_cancel(self) -> None:
        self.dismiss(None)
