"""Run launcher: choose suite, model, templates, mitigation (and a notice suite's notice
placement and mitigation) and judges; start the run in
the background and follow it (progress bar, count, rate, ETA). Esc cancels the run it
started (the run stops after the batch in flight); ctrl+b goes back and lets it run.
A DE-COP suite starts a DE-COP run (copyaudit.decop_run.execute_decop, as `copyaudit
decop`): suite, model, endpoint, limit (passages per work), calibration, length and name apply;
the rest is ignored."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Label, ProgressBar, Select, Static

from copyaudit.prompts import NOTICE_MITIGATIONS, NOTICE_POSITIONS
from screens.run_control import ActiveRun
from screens.widgets.plain import plain

MITIGATIONS = (
    ("none", "none"),
    ("system prompt reminder", "system"),
    ("MemFree decoding", "memfree"),
)
JUDGE_PRESETS = (("offline (runs here)", "offline"), ("paper (needs hub models)", "paper"))
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
        Binding("escape", "cancel_or_back", "Cancel run / back", id="launcher.escape"),
        Binding("ctrl+b", "back", "Back (run continues)", id="launcher.back"),
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
                with Vertical():
                    yield Label("Templates")
                    yield Input("1", id="templates", placeholder="1,2,3", compact=True)
                with Vertical():
                    yield Label("Limit (first N cases; DE-COP: of each work)")
                    yield Input("", id="limit", placeholder="all", compact=True)
            with Horizontal(classes="row"):
                with Vertical():
                    yield Label("Mitigation")
                    yield Select(
                        MITIGATIONS, id="mitigation", value="none", allow_blank=False, compact=True
                    )
                with Vertical():
                    yield Label("Judges")
                    yield Select(
                        JUDGE_PRESETS, id="judges", value="offline", allow_blank=False, compact=True
                    )
            with Horizontal(classes="row"):
                with Vertical():
                    yield Label("Notice placement (notice suites)")
                    yield Select(
                        NOTICE_PLACEMENTS,
                        id="notice_position",
                        value=NOTICE_POSITIONS[0],
                        allow_blank=False,
                        compact=True,
                    )
                with Vertical():
                    yield Label("Notice mitigation (notice suites)")
                    yield Select(
                        ((m, m) for m in NOTICE_MITIGATIONS),
                        id="notice_mitigation",
                        value=NOTICE_MITIGATIONS[0],
                        allow_blank=False,
                        compact=True,
                    )
            yield Label("DE-COP calibration (decop suites): auto, clean works (comma list), empty")
            yield Input("", id="calibrate_on", placeholder="none", compact=True)
            yield Label("DE-COP length (BookTection: small, medium or large; empty: the only one)")
            yield Input("", id="length", placeholder="all (one length)", compact=True)
            yield Label("Run name (empty: suite-model-mitigation; the same name resumes)")
            yield Input("", id="name", placeholder="automatic", compact=True)
            with Horizontal(classes="row buttons"):
                yield Button("Start (ctrl+s)", id="start", variant="primary")
                yield Button("Cancel run (Esc)", id="cancel", variant="error", disabled=True)
        with Vertical(id="progress-panel"):
            yield Static(Text("No run started from this screen yet.", style="dim"), id="run-line")
            bar = ProgressBar(id="run-bar", show_eta=False)
            bar.display = False  # shown once a run starts
            yield bar
        yield Footer()

    def on_mount(self) -> None:
        from db.queries import suites_summary

        app: Any = self.app
        # Generation suites first (in name order), then the DE-COP ones.
        suites = sorted(suites_summary(app.data.ui), key=lambda row: row["kind"] == "decop")
        self._kinds = {row["name"]: row["kind"] for row in suites}
        select = self.query_one("#suite", Select)
        select.set_options((plain(f"{row['name']} ({row['kind']})"), row["name"]) for row in suites)
        if self._initial_suite in self._kinds:
            select.value = self._initial_suite
        app.run_signal.subscribe(self, self._run_changed)
        (self.query_one("#model", Input) if select.value != Select.NULL else select).focus()

    def build_request(self) -> Any:
        """A copyaudit.runner.RunRequest (a DecopRequest for a DE-COP suite) from the
        form; ValueError names a bad field."""
        from copyaudit.runner import RunRequest

        suite = self.query_one("#suite", Select).value
        if suite == Select.NULL:
            raise ValueError("choose a suite")
        model = self.query_one("#model", Input).value.strip() or "default"
        base_url = self.query_one("#base_url", Input).value.strip() or None
        if self._kinds.get(str(suite)) == "decop":
            from copyaudit.decop_run import DecopRequest

            return DecopRequest(
                suite=str(suite),
                name=self.query_one("#name", Input).value.strip() or None,
                model=model,
                backend="openai" if base_url else "hf",
                base_url=base_url,
                calibrate_on=self.query_one("#calibrate_on", Input).value.strip() or None,
                passages_per_work=parse_limit(self.query_one("#limit", Input).value),
                length=self.query_one("#length", Input).value.strip() or None,
            )
        notice_options = {
            key: str(self.query_one(f"#{key}", Select).value)
            for key in ("notice_position", "notice_mitigation")
        }
        if self._kinds.get(str(suite)) != "notice":
            notice_options = {}  # the study's layout; the fields apply to notice suites only
        return RunRequest(
            suite=str(suite),
            name=self.query_one("#name", Input).value.strip() or None,
            model=model,
            backend="openai" if base_url else "hf",
            base_url=base_url,
            templates=parse_templates(self.query_one("#templates", Input).value),
            limit=parse_limit(self.query_one("#limit", Input).value),
            mitigation=str(self.query_one("#mitigation", Select).value),
            judges=str(self.query_one("#judges", Select).value),
            **notice_options,
        )

    def action_start(self) -> None:
        app: Any = self.app
        if self._run_name is not None and not app.active_runs[self._run_name].finished:
            self.notify("a run started here is still running", severity="warning")
            return
        try:
            request = self.build_request()
        except ValueError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        run = app.start_run(request)
        if run is not None:
            self._run_name = run.name
            self._show(run)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        elif event.button.id == "cancel":
            self._cancel()

    def _cancel(self) -> bool:
        app: Any = self.app
        return self._run_name is not None and app.cancel_run(self._run_name)

    def action_cancel_or_back(self) -> None:
        if not self._cancel():
            self.action_back()

    def action_back(self) -> None:
        self.app.pop_screen()

    def _run_changed(self, run: ActiveRun) -> None:
        if run.name == self._run_name:
            self._show(run)

    def _show(self, run: ActiveRun) -> None:
        line = Text.assemble(("run ", "bold"), plain(run.name, "bold"), " · ")
        line.append_text(plain(run.describe()))
        if run.error:
            line.append_text(plain(f" · {run.error}", "red"))
        self.query_one("#run-line", Static).update(line)
        bar = self.query_one("#run-bar", ProgressBar)
        bar.display = True
        progress = run.progress
        if progress is not None and progress.total:
            bar.update(total=progress.total, progress=progress.done)
        if run.state == "done" and progress is not None:
            bar.update(total=max(progress.total, 1), progress=max(progress.total, 1))
        self.query_one("#cancel", Button).disabled = run.finished or run.state == "cancelling"
        self.query_one("#start", Button).disabled = not run.finished
