"""The "annotator: NAME" tag in the top-right corner of every screen (with "read-only"
before it when the app was opened read-only, and then shown even without a name).

The app mounts one on each screen it shows (App.screen_change_signal); it sits on its
own layer, docked right, so it overlays the end of the screen's title bar without
moving anything."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widgets import Static

from screens.plain import plain

if TYPE_CHECKING:
    from rich.text import Text

READ_ONLY = "read-only: nothing is written"


def tag_text(annotator: str | None, read_only: bool = False) -> Text:
    parts = ([READ_ONLY] if read_only else []) + ([f"annotator: {annotator}"] if annotator else [])
    return plain(f" {' · '.join(parts)} ", "bold")


class AnnotatorTag(Static):
    DEFAULT_CSS = """
    AnnotatorTag {
        layer: annotator;
        dock: right;
        width: auto;
        height: 1;
        background: $accent-darken-2;
        color: $text;
    }
    """

    def __init__(self, annotator: str | None, read_only: bool = False) -> None:
        super().__init__(tag_text(annotator, read_only), id="annotator-tag", markup=False)
        self.read_only = read_only
        self.display = annotator is not None or read_only

    def set_annotator(self, annotator: str | None) -> None:
        self.update(tag_text(annotator, self.read_only))
        self.display = annotator is not None or self.read_only
