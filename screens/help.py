"""Help (`?`): every key of every screen, generated from the bindings themselves; it
opens at the keys of the screen it was called from, the other screens below."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.keys import format_key
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from screens.export_dialog import ExportScreen
from screens.generations.case_view import CaseScreen
from screens.generations.generation_list import GenerationListScreen
from screens.generations.generation_view import GenerationScreen
from screens.line_input import LineInputScreen
from screens.plain import plain
from screens.pz.map_view import MemorisationMapScreen
from screens.pz.stretch_view import MapStretchScreen
from screens.review.agreement_view import AgreementScreen
from screens.review.annotation import AnnotationScreen
from screens.review.queue_create import QueueFormScreen
from screens.review.review_queue import ReviewQueueScreen
from screens.runs.dashboard import DashboardScreen
from screens.runs.launcher import LauncherScreen
from screens.runs.takedown_view import TakedownScreen
from screens.widgets.checklist import EvidenceChecklist
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import OpenTable

KEY_NAMES = {"esc": "Esc", "⏎": "Enter", "enter": "Enter", "tab": "Tab", "shift+tab": "Shift+Tab"}


def help_sections(app_class: type[DOMNode]) -> list[tuple[str, type[DOMNode]]]:
    """The screens and widgets whose keys the help lists, in the order shown; the app's
    own keys (`app_class`) first."""
    # deferred: the comparison loads textual_plotext
    from screens.compare.compare_view import CompareScreen

    # deferred: the DE-COP screens load scipy (studies.decop), the ROC plot textual_plotext
    from screens.decop.passage_list import DecopPassageListScreen
    from screens.decop.passage_view import DecopPassageScreen  # deferred: loads scipy

    # deferred: loads scipy, textual_plotext, plotext
    from screens.decop.run_view import DecopScreen, ReportScreen

    return [
        ("Everywhere", app_class),
        ("Every screen", Screen),
        ("Tables (runs, suites, generations)", OpenTable),
        ("Runs dashboard", DashboardScreen),
        ("Run launcher", LauncherScreen),
        ("Generation list", GenerationListScreen),
        ("Generation view", GenerationScreen),
        ("Evidence checklist (generation view)", EvidenceChecklist),
        ("Annotation mode (generation view, a)", AnnotationScreen),
        ("Agreement & judge quality (dashboard, a)", AgreementScreen),
        ("Reviewer queue (dashboard, v)", ReviewQueueScreen),
        ("Model comparison (dashboard, c)", CompareScreen),
        ("Case view (reviewer queue, Enter)", CaseScreen),
        ("One-line input (annotator name, label note)", LineInputScreen),
        ("New work queue (dashboard, w)", QueueFormScreen),
        ("Export (dashboard, e; case view, D)", ExportScreen),
        ("DE-COP run", DecopScreen),
        ("DE-COP text report", ReportScreen),
        ("DE-COP passages of a work", DecopPassageListScreen),
        ("DE-COP passage (24 prompts)", DecopPassageScreen),
        ("Takedown table (dashboard, t)", TakedownScreen),
        ("Memorisation map of a p_z run (dashboard, Enter or m)", MemorisationMapScreen),
        ("Windows of a map stretch (map, Enter)", MapStretchScreen),
        ("Help", HelpScreen),
    ]


MODES_NOTE = (
    "Esc goes back on every screen and never cancels a run. Keys that record something "
    "(y/n/u labels in annotation mode, 1-4 review decisions in the case view; z undoes) "
    "never move anywhere; N/P move between generations or cases, j/k and the arrows "
    "between items, ]/[ between evidence, Tab between panes. Labelling is a mode of the "
    "generation view (a): each label is saved at once and the cursor moves on, after the "
    "last item to the next generation (auto-advance, t turns it off)."
)


def own_bindings(cls: type[DOMNode]) -> list[Binding]:
    """The bindings a class declares itself or inherits from its own project classes
    (Screen's shared keys are listed once, under "Every screen")."""
    merged = cls._merged_bindings
    if merged is None:
        return []
    shared: set[tuple[str, str]] = set()
    if cls is not Screen and issubclass(cls, Screen):
        base = Screen._merged_bindings
        shared = {(b.key, b.action) for _, b in base} if base is not None else set()
    return [b for _, b in merged if not b.system and (b.key, b.action) not in shared]


def key_display(binding: Binding) -> str:
    if binding.key_display:
        return binding.key_display
    keys = (format_key(key.strip()) for key in binding.key.split(","))
    return "/".join(KEY_NAMES.get(key, key) for key in keys)


def ordered_sections(
    app_class: type[DOMNode], current: type[DOMNode] | None
) -> list[tuple[str, type[DOMNode]]]:
    """The help's sections, the one of `current` (the screen help was called from)
    first; a subclass's own screen wins over its base."""
    sections = help_sections(app_class)
    if current is None:
        return sections
    mine = [s for s in sections if s[1] is current] or [
        s for s in sections if s[1] is not Screen and issubclass(current, s[1])
    ][:1]
    return mine + [s for s in sections if s not in mine]


def help_table(app: App[Any], current: type[DOMNode] | None = None) -> Table:
    table = Table(show_edge=False, box=None, padding=(0, 2))
    table.add_column("Key", style="bold cyan", no_wrap=True, min_width=12)
    table.add_column("Does", min_width=30)
    palette = getattr(app, "COMMAND_PALETTE_BINDING", None)
    sections = ordered_sections(type(app), current)
    for number, (title, cls) in enumerate(sections):
        if number == 1 and current is not None:
            table.add_row(Text("Other screens", style="bold reverse"), Text(""))
            table.add_row(Text(""), Text(""))
        heading = f"This screen: {title}" if number == 0 and current is not None else title
        table.add_row(Text(heading, style="bold underline"), Text(""))
        bindings = own_bindings(cls)
        if cls is type(app) and palette:
            bindings.append(Binding(palette, "command_palette", "Command palette"))
        for binding in bindings:
            table.add_row(plain(key_display(binding)), plain(binding.description or binding.action))
        table.add_row(Text(""), Text(""))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("question_mark", "close", "Close", id="help.close_question", show=False),
    ]

    def __init__(self, current: type[DOMNode] | None = None) -> None:
        """`current`: the screen help was called from (its keys come first)."""
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys (generated from the bindings)"
            yield Static(Text(MODES_NOTE, style="italic"), id="help-modes")
            yield Static(help_table(self.app, self.current), id="help-table")
        yield KeysFooter()

    def action_close(self) -> None:
        self.app.pop_screen()
