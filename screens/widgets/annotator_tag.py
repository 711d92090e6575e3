"""The "annotator: NAME" tag in the top-right corner of every screen.

The app mounts one on each screen it shows (App.screen_change_signal); it sits on its
own layer, docked right, so it overlays the end of the screen's title bar without
moving anything."""

from __future__ import annotations

from textual.widgets import Static

from screens.plain import plain


def tag_text(annotator: str | None) -> object:
    return plain(f" annotator: {annotator} ", "bold")


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

    def __init__(self, annotator: str | None) -> None:
        super().__init__(tag_text(annotator), id="annotator-tag", markup=False)
        self.display = annotator is not None

    def set_annotator(self, annotator: str | None) -> None:
        self.update(tag_text(annotator))
        self.display = annotator is not None
