"""A small modal asking for one line of text (the annotator's name, a label note).

Enter submits, Escape cancels (the result is then None). An empty answer is refused
when `required` is set."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from screens.plain import plain


class LineInputScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="line_input.cancel"),
    ]

    def __init__(
        self,
        title: str,
        explanation: str = "",
        *,
        value: str = "",
        placeholder: str = "",
        required: bool = False,
        max_length: int = 500,
    ) -> None:
        super().__init__()
        self._title = title
        self._explanation = explanation
        self._value = value
        self._placeholder = placeholder
        self._required = required
        self._max_length = max_length

    def compose(self) -> ComposeResult:
        with Vertical(id="line-input-box") as box:
            box.border_title = self._title
            if self._explanation:
                yield Static(plain(self._explanation), id="line-input-explanation")
            yield Input(
                value=self._value,
                placeholder=self._placeholder,
                max_length=self._max_length,
                id="line-input",
            )
            yield Static(Text("Enter: save · Esc: cancel", style="dim"), id="line-input-keys")

    def on_mount(self) -> None:
        self.query_one("#line-input", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = " ".join(event.value.split())
        if self._required and not value:
            self.notify("please type a name", severity="warning", timeout=3)
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)
