"""Help (`?`): every key of every screen, generated from the bindings themselves."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from screens.widgets.plain import plain


def help_sections() -> list[tuple[str, type[DOMNode]]]:
    """The screens and widgets whose keys the help lists, in the order shown."""
    from screens.agreement_view import AgreementScreen
    from screens.annotation import AnnotationScreen
    from screens.app import CopyauditApp
    from screens.case_view import CaseScreen
    from screens.dashboard import DashboardScreen
    from screens.decop_passage import DecopPassageScreen
    from screens.decop_passages import DecopPassagesScreen
    from screens.decop_view import DecopScreen, ReportScreen
    from screens.generation_list import GenerationListScreen
    from screens.generation_view import GenerationScreen
    from screens.launcher import LauncherScreen
    from screens.line_input import LineInputScreen
    from screens.review_queue import ReviewQueueScreen
    from screens.widgets.checklist import EvidenceChecklist
    from screens.widgets.tables import OpenTable

    return [
        ("Everywhere", CopyauditApp),
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
        ("Case view (reviewer queue, Enter)", CaseScreen),
        ("One-line input (annotator name, label note)", LineInputScreen),
        ("DE-COP run", DecopScreen),
        ("DE-COP text report", ReportScreen),
        ("DE-COP passages of a work", DecopPassagesScreen),
        ("DE-COP passage (24 prompts)", DecopPassageScreen),
        ("Help", HelpScreen),
    ]


MODES_NOTE = (
    "Labelling is a mode of the generation view. In the view, n/p move between "
    "generations. Press a for annotation mode: y yes, n no, u unsure (each is saved at once "
    "and the cursor moves to the next item), z undo, m note, b blind mode (judges hidden, "
    "on by default), j/k or arrows between items, Tab between panes, N/P (and p) between "
    "generations; a or Esc go back to the view. The yellow ANNOTATING line shows the mode."
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


def help_table(app: Any) -> Table:
    table = Table(show_edge=False, box=None, padding=(0, 2))
    table.add_column("Key", style="bold cyan", no_wrap=True, min_width=12)
    table.add_column("Does", min_width=30)
    table.add_column("Binding id", style="dim")
    palette = getattr(app, "COMMAND_PALETTE_BINDING", None)
    for title, cls in help_sections():
        table.add_row(Text(title, style="bold underline"), Text(""), Text(""))
        bindings = own_bindings(cls)
        if cls.__name__ == "CopyauditApp" and palette:
            bindings.append(Binding(palette, "command_palette", "Command palette"))
        for binding in bindings:
            table.add_row(
                plain(app.get_key_display(binding)),
                plain(binding.description or binding.action),
                plain(binding.id or ""),
            )
        table.add_row(Text(""), Text(""), Text(""))
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="help.close"),
        Binding("question_mark", "close", "Close", id="help.close_question", show=False),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body") as body:
            body.border_title = "Keys (generated from the bindings)"
            yield Static(Text(MODES_NOTE, style="italic"), id="help-modes")
            yield Static(help_table(self.app), id="help-table")
        yield Footer()

    def action_close(self) -> None:
        self.app.pop_screen()
