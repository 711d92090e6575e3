"""Run launcher: choose suite, model, templates, mitigation (and a notice suite's notice
placement and mitigation) and judges; start the run in the background and follow it
(progress bar, count, tokens/s, ETA). Esc goes back and the run goes on (Esc never
cancels); ctrl+x or the Cancel button cancels the run started here, after a confirmation
(it stops at the next decoding step).

Only the fields of the chosen suite's kind are shown (FIELD_KINDS): a DE-COP suite
starts a DE-COP run (copyaudit.studies.decop.run.execute_decop, as `copyaudit decop`) with
suite, model, endpoint, passages per work, calibration, length and name. The form says how big
the run is before it starts (copyaudit.runs.launch_plan.run_size), refuses a run name that
holds a run of another configuration before any model loads, naming the field, and
remembers its last values in this database (db.settings, scope "launcher"). A generation
suite's judges may use a judge model and an event model, loaded here or, with the
judges' endpoint URL, asked at an OpenAI-compatible server (the key is read from the
named environment variable; only its name is stored)."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Any, ClassVar, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Input, Label, ProgressBar, Select, Static
from textual.widgets.select import InvalidSelectValueError

from copyaudit.engine.runner import RunRequest
from copyaudit.errors import UserError
from copyaudit.judges.options import JudgeOptions, stored_defaults
from copyaudit.judges.registry import PRESETS
from copyaudit.prompts import NOTICE_MITIGATIONS, NOTICE_POSITIONS
from copyaudit.runs.launch_plan import configuration_conflicts
from copyaudit.studies.registry import run_size
from copyaudit.vocabulary import MITIGATIONS as MITIGATION_LABELS
from db.decop import suite_works
from db.pending import run_case_count
from db.queries import suites_summary
from db.runs import stored_configuration, suite_id
from db.settings import load_settings, save_settings
from screens.app_link import copyaudit_app
from screens.plain import plain
from screens.runs.launcher_form import (
    FIELD_KINDS,
    FIELDS,
    LIMIT_LABELS,
    REMEMBERED,
    SETTINGS_SCOPE,
    conflict_message,
    for_the_form,
)
from screens.runs.run_control import ActiveRun
from screens.widgets.footer import KeysFooter

if TYPE_CHECKING:
    from copyaudit.runs.launch_plan import RunSize

MITIGATIONS = tuple((label, name) for name, label in MITIGATION_LABELS.items())
JUDGE_PRESETS = tuple((f"{name} ({where})", name) for name, where in PRESETS.items())
JUDGE_KEY_ENV_DEFAULT = stored_defaults()["judge_api_key_env"]
NOTICE_PLACEMENTS = (
    ("before the query (the study's)", "before_query"),
    ("at the start", "start"),
    ("at the end", "end"),
)


def parse_templates(value: str) -> tuple[int, ...]:
    try:
        templates = tuple(int(t) for t in value.replace(" ", "").split(",") if t)
    except ValueError:
        raise ValueError(f"templates: '{value}' is not a comma list of numbers") from None
    if not templates or any(t < 1 for t in templates):
        raise ValueError("templates: give template numbers such as 1 or 1,2,3")
    return templates


def parse_limit(value: str) -> int | None:
    value = value.strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"limit: '{value}' is not a positive whole number")
    return int(value)


class LauncherScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "start", "Start run", id="launcher.start", priority=True),
        Binding("escape", "back", "Back (a run continues)", id="launcher.escape"),
        # priority: a text field binds ctrl+x to "cut", and the key must cancel from any
        # field (shown in the footer whatever has focus)
        Binding("ctrl+x", "cancel_run", "Cancel run", id="launcher.cancel_run", priority=True),
    ]

    def __init__(self, suite: str | None = None) -> None:
        super().__init__()
        self._initial_suite = suite
        self._run_name: str | None = None
        self._kinds: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text("New run", style="bold"), classes="title-bar")
        with VerticalScroll(id="form"):
            yield Label("Suite")
            yield Select[str]([], id="suite", prompt="choose a suite", compact=True)
            yield Label("Model: 'default' (embedded SmolLM2), a hub id, a local path")
            yield Input("default", id="model", compact=True)
            yield Label("Endpoint URL (OpenAI-compatible; empty: run the model here)")
            yield Input("", id="base_url", placeholder="http://127.0.0.1:8000/v1", compact=True)
            with Horizontal(classes="row"):
                with Vertical(id="templates-field"):
                    yield Label("Templates")
                    yield Input("1", id="templates", placeholder="1,2,3", compact=True)
                with Vertical(id="limit-field"):
                    yield Label(LIMIT_LABELS[None], id="limit-label")
                    yield Input("", id="limit", placeholder="all", compact=True)
            with Horizontal(classes="row"):
                with Vertical(id="mitigation-field"):
                    yield Label("Mitigation")
                    yield Select(
                        MITIGATIONS, id="mitigation", value="none", allow_blank=False, compact=True
                    )
                with Vertical(id="judges-field"):
                    yield Label("Judges")
                    yield Select(
                        JUDGE_PRESETS, id="judges", value="offline", allow_blank=False, compact=True
                    )
            with Vertical(id="judge-models-field"):
                with Horizontal(classes="row"):
                    with Vertical():
                        yield Label("Judge model (fluency, LM refusal; empty: none)")
                        yield Input("", id="judge_model", placeholder="none", compact=True)
                    with Vertical():
                        yield Label("Event model (empty: the preset's)")
                        yield Input("", id="event_model", placeholder="preset", compact=True)
                with Horizontal(classes="row"):
                    with Vertical():
                        yield Label("Judges' endpoint URL (empty: judge models run here)")
                        yield Input(
                            "",
                            id="judge_base_url",
                            placeholder="http://127.0.0.1:8000/v1",
                            compact=True,
                        )
                    with Vertical():
                        yield Label("Judges' key: environment variable name")
                        yield Input(JUDGE_KEY_ENV_DEFAULT, id="judge_api_key_env", compact=True)
            with Horizontal(classes="row"):
                with Vertical(id="notice_position-field"):
                    yield Label("Notice placement")
                    yield Select(
                        NOTICE_PLACEMENTS,
                        id="notice_position",
                        value=NOTICE_POSITIONS[0],
                        allow_blank=False,
                        compact=True,
                    )
                with Vertical(id="notice_mitigation-field"):
                    yield Label("Notice mitigation")
                    yield Select(
                        ((m, m) for m in NOTICE_MITIGATIONS),
                        id="notice_mitigation",
                        value=NOTICE_MITIGATIONS[0],
                        allow_blank=False,
                        compact=True,
                    )
            with Vertical(id="calibrate_on-field", classes="single"):
                yield Label("DE-COP calibration: auto, clean works (comma list), empty: none")
                yield Input("", id="calibrate_on", placeholder="none", compact=True)
            with Vertical(id="length-field", classes="single"):
                yield Label(
                    "DE-COP length (BookTection: small, medium or large; empty: the only one)"
                )
                yield Input("", id="length", placeholder="all (one length)", compact=True)
            yield Label("Run name (empty: suite-model-mitigation; the same name resumes)")
            yield Input("", id="name", placeholder="automatic", compact=True)
            yield Static("", id="estimate")
            with Horizontal(classes="row buttons"):
                yield Button("Start (ctrl+s)", id="start", variant="primary")
                yield Button("Cancel run (ctrl+x)", id="cancel", variant="error", disabled=True)
        with Vertical(id="progress-panel"):
            yield Static(Text("No run started from this screen yet.", style="dim"), id="run-line")
            bar = ProgressBar(id="run-bar", show_eta=False)
            bar.display = False  # shown once a run starts
            yield bar
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)
        # Generation suites first (in name order), then the DE-COP ones.
        suites = sorted(suites_summary(app.data.ui), key=lambda row: row["kind"] == "decop")
        self._kinds = {row["name"]: row["kind"] for row in suites}
        select = self.query_one("#suite", Select)
        select.set_options((plain(f"{row['name']} ({row['kind']})"), row["name"]) for row in suites)
        self._restore()
        if self._initial_suite in self._kinds:
            select.value = self._initial_suite
        self._fit_to_kind()
        app.run_signal.subscribe(self, self._run_changed)
        (self.query_one("#model", Input) if select.value != Select.NULL else select).focus()

    # --- remembered values -------------------------------------------------------------

    def _restore(self) -> None:
        """Put the last values used in this database back (those still valid)."""

        app = copyaudit_app(self)
        for key, value in load_settings(app.data.ui, SETTINGS_SCOPE).items():
            if key not in REMEMBERED:
                continue
            widget = cast("Input | Select[Any]", self.query_one(f"#{key}"))
            with suppress(InvalidSelectValueError):  # a suite or option no longer offered
                widget.value = value

    def form_values(self) -> dict[str, str]:
        """The remembered fields as text, as the form holds them now."""
        out = {}
        for key in REMEMBERED:
            widget = cast("Input | Select[Any]", self.query_one(f"#{key}"))
            value = widget.value
            if isinstance(widget, Select) and value == Select.NULL:
                continue
            out[key] = str(value)
        return out

    def _remember(self) -> None:
        app = copyaudit_app(self)
        if not app.read_only:
            save_settings(app.data.ui, SETTINGS_SCOPE, self.form_values())

    # --- the form follows the suite's kind ------------------------------------------------

    def _kind(self) -> str | None:
        suite = self.query_one("#suite", Select).value
        return None if suite == Select.NULL else self._kinds.get(str(suite))

    def _fit_to_kind(self) -> None:
        """Show the fields of the chosen suite's kind (with no suite: the common ones)."""
        kind = self._kind()
        for field_id, kinds in FIELD_KINDS.items():
            self.query_one(f"#{field_id}").display = kind in kinds
        label = LIMIT_LABELS.get(kind, LIMIT_LABELS[None])
        self.query_one("#limit-label", Label).update(label)
        self._show_estimate()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "suite":
            self._fit_to_kind()
        else:
            self._show_estimate()

    def on_input_changed(self, event: Input.Changed) -> None:
        self._show_estimate()

    def _show_estimate(self) -> None:
        """'Size: 120 generations (40 cases x 3 templates)'; or what stops the form."""
        estimate = self.query_one("#estimate", Static)
        try:
            request = self.build_request()
        except ValueError as error:
            estimate.update(plain(f"Size: — ({error})", "dim"))
            return
        line = Text("Size: ", style="bold")
        line.append_text(plain(self.estimate(request).describe(request.run_name())))
        estimate.update(line)

    def estimate(self, request: Any) -> RunSize:
        """The run's copyaudit.runs.launch_plan.RunSize, counted in the database."""

        app = copyaudit_app(self)
        store = app.data.ui
        kind = self._kinds[request.suite]
        stored = stored_configuration(store, request.run_name())
        sid = suite_id(store, request.suite)
        if kind == "decop":
            cases = run_case_count(store, sid, request.passages_per_work)
            done = 0 if stored is None else stored["passages_scored"] * 24
            return run_size(kind, cases, stored=done)
        cases = run_case_count(store, sid)
        done = 0 if stored is None else stored["generations"]
        return run_size(kind, cases, request.templates, request.limit, stored=done)

    # --- the request -------------------------------------------------------------------

    def build_request(self) -> Any:
        """A copyaudit.engine.runner.RunRequest (a DecopRequest for a DE-COP suite) from the
        form; ValueError names a bad field."""

        suite = self.query_one("#suite", Select).value
        if suite == Select.NULL:
            raise ValueError("choose a suite")
        base_url = self.query_one("#base_url", Input).value.strip() or None
        run_fields: dict[str, Any] = {  # what every run request names (ModelRequest)
            "suite": str(suite),
            "name": self.query_one("#name", Input).value.strip() or None,
            "model": self.query_one("#model", Input).value.strip() or "default",
            "backend": "openai" if base_url else "hf",
            "base_url": base_url,
        }
        if self._kinds.get(str(suite)) == "decop":
            from copyaudit.studies.decop.run import DecopRequest  # deferred: loads scipy

            return DecopRequest(
                **run_fields,
                calibrate_on=self.query_one("#calibrate_on", Input).value.strip() or None,
                passages_per_work=parse_limit(self.query_one("#limit", Input).value),
                length=self.query_one("#length", Input).value.strip() or None,
            )
        notice_options: dict[str, Any] = {
            key: str(self.query_one(f"#{key}", Select).value)
            for key in ("notice_position", "notice_mitigation")
        }
        if self._kinds.get(str(suite)) != "notice":
            notice_options = {}  # the study's layout; the fields apply to notice suites only
        return RunRequest(
            **run_fields,
            templates=parse_templates(self.query_one("#templates", Input).value),
            limit=parse_limit(self.query_one("#limit", Input).value),
            mitigation=str(self.query_one("#mitigation", Select).value),
            judging=self.judging(),
            **notice_options,
        )

    def judging(self) -> JudgeOptions:
        """The judge options of the form; ValueError names a bad field."""

        def text(field: str) -> str | None:
            return self.query_one(f"#{field}", Input).value.strip() or None

        base_url = text("judge_base_url")
        try:
            return JudgeOptions(
                judges=str(self.query_one("#judges", Select).value),
                judge_model=text("judge_model"),
                event_model=text("event_model"),
                judge_backend="openai" if base_url else "hf",
                judge_base_url=base_url,
                judge_api_key_env=text("judge_api_key_env") or JUDGE_KEY_ENV_DEFAULT,
            )
        except UserError as error:
            raise ValueError(for_the_form(str(error))) from None

    def check(self, request: Any) -> tuple[str, str] | None:
        """Before any model loads: (the form field to fix, why) when the run's name
        holds a run of another configuration or a DE-COP calibration is refused."""

        app = copyaudit_app(self)
        store = app.data.ui
        calibration = None
        if self._kinds.get(request.suite) == "decop":
            # deferred: loads scipy
            from copyaudit.studies.decop.works import SuiteWork, resolve_calibration

            works = [
                SuiteWork(w["title"], w["author"], w["membership"], w["passages"])
                for w in suite_works(store, suite_id(store, request.suite))
            ]
            try:
                calibration = resolve_calibration(works, request.calibrate_on)
            except UserError as error:
                return "calibrate_on", for_the_form(str(error))
        name = request.run_name()
        stored = stored_configuration(store, name)
        if stored is None:
            return None
        conflicts = configuration_conflicts(stored, request, calibration=calibration)
        if not conflicts:
            return None
        return conflicts[0].field, conflict_message(name, conflicts)

    def action_start(self) -> None:
        app = copyaudit_app(self)
        if self._run_name is not None and not app.active_runs[self._run_name].finished:
            self.notify("a run started here is still running", severity="warning")
            return
        try:
            request = self.build_request()
        except ValueError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        problem = self.check(request)
        if problem is not None:
            field, message = problem
            self.notify(message, severity="error", markup=False, timeout=12)
            if field in FIELDS:
                self.query_one(f"#{FIELDS[field][0]}").focus()
            return
        self._remember()
        run = app.start_run(request)
        if run is not None:
            self._run_name = run.name
            self._show(run)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        elif event.button.id == "cancel":
            self.action_cancel_run()

    def action_cancel_run(self) -> None:
        """The run started here (after a confirmation), else the one running."""
        app = copyaudit_app(self)
        mine = self._run_name in app.running_runs()
        app.ask_cancel_run(self._run_name if mine else None)

    def action_back(self) -> None:
        self.app.pop_screen()

    def _run_changed(self, run: ActiveRun) -> None:
        if run.name == self._run_name:
            self._show(run)

    def _show(self, run: ActiveRun) -> None:
        line = Text.assemble(("run ", "bold"), plain(run.name, "bold"), " · ")
        line.append_text(plain(run.describe()))
        if run.error:
            line.append_text(plain(f" · {for_the_form(run.error)}", "red"))
        self.query_one("#run-line", Static).update(line)
        bar = self.query_one("#run-bar", ProgressBar)
        bar.display = True
        progress = run.progress
        if progress is not None and progress.total:
            bar.update(total=progress.total, progress=progress.done + progress.partial)
        if run.state == "done" and progress is not None:
            bar.update(total=max(progress.total, 1), progress=max(progress.total, 1))
        self.query_one("#cancel", Button).disabled = run.finished or run.state == "cancelling"
        self.query_one("#start", Button).disabled = not run.finished
