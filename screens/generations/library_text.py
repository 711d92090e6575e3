"""The library's text of a traced span (copyaudit.tracing), opened from the generation
view: the output's span above, the work's text around the place that holds it below,
the span highlighted there and scrolled into view. Both are untrusted: plain Text.

The text is read through copyaudit.tracing.library.read_text, so a text changed since
it was added is refused, not shown. Only a window around the span is shown (a work may
be megabytes long); the header says which characters of the work it is."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from screens.plain import plain
from screens.widgets.evidence import line_of_offset

CONTEXT_CHARS = 2000  # of the work shown before and after the span
SPAN_STYLE = "bold reverse"


def work_window(text: str, start: int, end: int) -> tuple[int, int, Text]:
    """The window of the work's `text` around `start`..`end` (its first and last
    offsets in the work, and the window as plain Text with the span highlighted)."""
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    first, last = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    shown = plain(text[first:last])
    shown.stylize(SPAN_STYLE, start - first, end - first)
    return first, last, shown


class LibraryTextScreen(ModalScreen[None]):
    """One traced span: the output's words and the work's, aligned one above the other."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", id="library_text.close"),
    ]

    def __init__(self, place: dict[str, Any], output_span: str, text: str) -> None:
        super().__init__()
        self.place, self.output_span, self.text = place, output_span, text
        self.first, self.last, self.window = work_window(
            text, int(place["start"]), int(place["end"])
        )

    def compose(self) -> ComposeResult:
        place = self.place
        with Vertical(id="library-text-box") as box:
            box.border_title = plain(f"{place.get('work')} ({place.get('status')})")
            header = plain(
                f"characters {place['start']}–{place['end']} of {len(self.text):,} · "
                f"SHA-256 {place.get('sha256')} · shown: {self.first}–{self.last}",
                "dim",
            )
            yield Static(header, id="library-text-header")
            yield Static(Text("The output's span", style="bold"))
            yield Static(plain(self.output_span), id="library-text-output")
            yield Static(Text("The work's text (the span reversed)", style="bold"))
            with VerticalScroll(id="library-text-pane"):
                yield Static(self.window, id="library-text")
            yield Static(Text("Esc: close", style="dim"))

    def on_mount(self) -> None:
        self.call_after_refresh(self._scroll_to_span)

    def _scroll_to_span(self) -> None:
        """Scroll the work's pane so the span's first line is in view."""
        body = self.query_one("#library-text", Static)
        offset = int(self.place["start"]) - self.first
        line = line_of_offset(self.window.plain, offset, body.size.width)
        self.query_one("#library-text-pane", VerticalScroll).scroll_to(
            y=max(0, line - 2), animate=False
        )

    def action_close(self) -> None:
        self.dismiss(None)
