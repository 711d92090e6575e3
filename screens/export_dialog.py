"""Export (dashboard e, the case view's D, ctrl+p "Export"): choose what, type where.

The path is prefilled with the choice's default name in the current directory (it
follows the choice until you edit it); its extension picks the format. Enter checks it
as `-o` does (screens.state.export_choices.destination: never the database, a link or a
directory; each refusal said under the field) and, when the file exists, asks before
replacing it (y / Enter replace, n / Esc keep it). The dialog dismisses with an
ExportRequest, which the App writes in a worker."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, Static

from copyaudit.errors import UserError
from screens.plain import plain
from screens.state.export_choices import ExportChoice, ExportRequest, destination

KEYS_LINE = "Enter: write the file · Tab: what / where · Esc: cancel"


class ExportScreen(ModalScreen[ExportRequest | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="export.cancel"),
    ]

    def __init__(self, choices: Sequence[ExportChoice], database: Path) -> None:
        super().__init__()
        self.choices = list(choices)
        self.database = Path(database)
        self._choice = self.choices[0]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box", id="export-box") as box:
            box.border_title = "Export"
            yield Label("What")
            yield OptionList(*(plain(c.title) for c in self.choices), id="export-what")
            yield Label(Text.assemble("File (relative to ", plain(str(Path.cwd())), ")"))
            yield Input(self._choice.default_name, id="export-path", compact=True)
            yield Static(id="export-format")
            yield Static(id="export-error", classes="field-error")
            yield Static(Text(KEYS_LINE, style="dim"))

    def on_mount(self) -> None:
        self.query_one("#export-error").display = False
        self._show_format()
        if len(self.choices) > 1:
            self.query_one("#export-what", OptionList).focus()
        else:
            self.query_one("#export-path", Input).focus()

    def _show_format(self) -> None:
        formats = ", ".join(f".{f}" for f in self._choice.formats)
        line = f"format from the extension: {formats}; written whole or not at all"
        self.query_one("#export-format", Static).update(plain(line, "dim"))

    def _show_error(self, message: str) -> None:
        error = self.query_one("#export-error", Static)
        error.update(plain(message, "red"))
        error.display = bool(message)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        chosen = self.choices[event.option_index]
        path = self.query_one("#export-path", Input)
        if path.value == self._choice.default_name:  # not edited: follow the choice
            path.value = chosen.default_name
        self._choice = chosen
        self._show_format()
        self._show_error("")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.query_one("#export-path", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            path, fmt, exists = destination(self._choice, event.value, self.database)
        except UserError as error:
            self._show_error(str(error))
            return
        if not exists:
            self.dismiss(ExportRequest(self._choice, path, fmt, overwrite=False))
            return
        request = ExportRequest(self._choice, path, fmt, overwrite=True)

        def answered(replace: bool | None) -> None:
            if replace:
                self.dismiss(request)
            else:
                self._show_error(f"{path} exists: kept; type another name")

        self.app.push_screen(ConfirmOverwriteScreen(path), answered)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmOverwriteScreen(ModalScreen[bool]):
    """Replace FILE? y / Enter replace it, n / Esc keep it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Yes, replace it", id="confirm_overwrite.yes"),
        Binding("n,escape", "answer(False)", "No, keep it", id="confirm_overwrite.no"),
    ]

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog-box") as box:
            box.border_title = "Replace the file?"
            yield Static(Text.assemble(plain(str(self.path), "bold"), " exists. Replace it?"))
            yield Static(plain("The new file replaces it whole once written (atomically)."))
            yield Static(Text("y / Enter: replace it · n / Esc: keep it", style="dim"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
