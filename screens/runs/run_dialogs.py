"""The modals of stopping runs: confirm a cancel, choose which run to cancel when
several run, and "stopping the run…" while quitting waits for the worker.

Cancelling asks first: y (or Enter) cancels, n or Esc keeps the run going. With several
runs, Enter on one of the list cancels that one, Esc keeps them all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static

from screens.plain import plain

KEPT = "complete generations are kept; starting the same run again resumes it"


class ConfirmCancelScreen(ModalScreen[bool]):
    """Cancel run NAME? Dismisses with True (y / Enter) or False (n / Esc)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes, cancel it", id="confirm_cancel.yes"),
        Binding("n,escape", "answer(False)", "No, keep it running", id="confirm_cancel.no"),
    ]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.run_name = name

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box") as box:
            box.border_title = "Cancel run"
            yield Static(Text.assemble("Cancel run ", plain(self.run_name, "bold"), "?"))
            yield Static(plain(f"It stops at its next decoding step; {KEPT}."))
            yield Static(Text("y / Enter: cancel it · n / Esc: keep it running", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


class ChooseRunScreen(ModalScreen[str | None]):
    """Which of several running runs to cancel: Enter cancels the highlighted one,
    Esc none."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Keep them running", id="choose_run.none"),
    ]

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = list(names)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box") as box:
            box.border_title = "Cancel which run?"
            yield OptionList(*(plain(name) for name in self.names), id="runs-to-cancel")
            yield Static(plain(f"Enter: cancel the highlighted run ({KEPT}) · Esc: none"))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.names[event.option_index])

    def action_dismiss_none(self) -> None:
        self.dismiss(None)


class StoppingScreen(ModalScreen[None]):
    """Shown while quitting waits for the runs to stop; the app exits when they have."""

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__()
        self.names = list(names)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box") as box:
            box.border_title = "Quitting"
            runs = ", ".join(self.names)
            yield Static(plain(f"stopping the run… ({runs}); the app quits once it has stopped"))
            yield Static(plain(f"{KEPT[0].upper()}{KEPT[1:]}."))
