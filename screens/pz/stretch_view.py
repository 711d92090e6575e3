"""The windows of one stretch of a work on the memorisation map (screens.pz.map_view):
each window's prefix, reference suffix and greedy continuation, p_z per scheme, and the
suffix's tokens with their probabilities under the chosen scheme, the lowest one
highlighted (copyaudit.reports.pz_window). All of it is text from the store and the
model: shown as plain Text, never markup."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from copyaudit.reports.pz import MAP_WIDTH, stretch_windows
from copyaudit.reports.pz_window import PzWindow, SchemeFigures, pz_window, scheme_cells
from db.case_file import generation_record, judgments_with_provenance
from db.connection import Store
from screens.app_link import copyaudit_app
from screens.plain import plain
from screens.widgets.footer import KeysFooter

LOWEST_STYLE = "bold white on red"


def load_windows(store: Store, run_id: int, title: str, cell: int) -> list[PzWindow]:
    out = []
    for gid in stretch_windows(store, run_id, title, cell, MAP_WIDTH):
        window = pz_window(generation_record(store, gid), judgments_with_provenance(store, gid))
        if window is not None:
            out.append(window)
    return out


def token_line(figures: SchemeFigures) -> Text:
    """The suffix's tokens, each followed by its probability under the scheme; the
    lowest-probability token in LOWEST_STYLE."""
    text = Text(end="")
    for index in range(len(figures.token_log_probs)):
        token = figures.tokens[index] or f"#{index}"
        style = LOWEST_STYLE if index == figures.lowest_token else ""
        text.append_text(plain(token, style))
        text.append(f"⁽{figures.token_probability(index):.2f}⁾ ", style="dim")
    return text


def scheme_line(figures: SchemeFigures) -> Text:
    scheme, pz, log, tries = scheme_cells(figures)
    return Text(f"{scheme:>14}: p_z {pz:<10} log p_z {log:<9} tries for p {tries}", end="")


def window_text(window: PzWindow, scheme: str) -> Text:
    chars = "" if window.chars is None else f" · characters {window.chars[0]:,}–{window.chars[2]:,}"
    text = Text.assemble(plain(window.case_id, "bold"), chars, "\n")
    for label, body, style in (
        ("prefix   ", window.prefix, "dim"),
        ("reference", window.reference, "green"),
        ("greedy   ", window.greedy_output, "cyan"),
    ):
        text.append(f"{label} ", style="bold")
        text.append_text(plain(body, style))
        text.append("\n")
    for figures in window.schemes:
        text.append_text(scheme_line(figures))
        text.append("\n")
    chosen = next((f for f in window.schemes if f.judge == scheme), window.schemes[0])
    text.append(f"tokens under {chosen.scheme}: ", style="bold")
    text.append_text(token_line(chosen))
    return text


class WindowsLoaded(Message):
    def __init__(self, windows: list[PzWindow]) -> None:
        super().__init__()
        self.windows = windows


class MapStretchScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back", id="pzstretch.back"),
        Binding("s", "next_scheme", "Scheme", id="pzstretch.scheme"),
    ]

    DEFAULT_CSS = """
    MapStretchScreen .pz-window { height: auto; padding: 0 1 1 1; }
    """

    def __init__(self, run: str, run_id: int, work: str, cell: int, scheme: str) -> None:
        super().__init__()
        self.run, self.run_id, self.work, self.cell = run, run_id, work, cell
        self.scheme = scheme
        self.windows: list[PzWindow] = []

    def compose(self) -> ComposeResult:
        stretch = f"{self.cell / MAP_WIDTH:.0%}–{(self.cell + 1) / MAP_WIDTH:.0%}"
        title = Text.assemble(("Windows", "bold"), " · ", plain(self.work), f" · {stretch} · ")
        title.append_text(plain(self.run))
        yield Static(title, classes="title-bar")
        yield VerticalScroll(id="pz-windows")
        yield KeysFooter()

    def on_mount(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                windows = load_windows(store, self.run_id, self.work, self.cell)
            self.post_message(WindowsLoaded(windows))

        app.start_worker(work, group="pzstretch", description="loading the stretch's windows")

    def on_windows_loaded(self, message: WindowsLoaded) -> None:
        self.windows = message.windows
        self.show()

    def texts(self) -> list[Text]:
        return [window_text(w, self.scheme) for w in self.windows]

    def show(self) -> None:
        box = self.query_one("#pz-windows", VerticalScroll)
        box.remove_children()
        box.mount_all([Static(t, classes="pz-window") for t in self.texts()])
        box.focus()

    def action_next_scheme(self) -> None:
        schemes = [f.judge for f in self.windows[0].schemes] if self.windows else []
        if self.scheme in schemes:
            self.scheme = schemes[(schemes.index(self.scheme) + 1) % len(schemes)]
            self.show()
