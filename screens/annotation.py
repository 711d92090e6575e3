"""Annotation mode of the generation view: label every reference event and character
("in the story?") and the whole output ("refusal?", "verbatim copy?").

A separate mode, so the label keys are the obvious ones: y yes, n no, u unsure (the
cursor then moves to the next item), z undo, m note, b blind mode; j/k or the arrows
move between items, Tab between panes, N/P (and p) between generations; `a` or Esc go
back to the view, where n/p move between generations as before.

Every label key is committed by the key handler itself, on the UI thread, through
screens.labelling (one small SQLite transaction) before the next key is handled; undo
appends a retract event. Blind mode (on by default) hides the judges: scores, verdicts,
evidence highlights and the reference marks. Adjudicating (from the agreement screen)
labels under the adjudicator name copyaudit.agreement reads, with everyone's labels and
the judges shown and "by NAME" in each label's note.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Static

from copyaudit.errors import UserError
from copyaudit.items import WHOLE_OUTPUT_TARGETS, item_name
from db.browse import GenerationDetail
from db.events import append_label
from db.labels import CurrentLabel
from screens.generation_view import GenerationScreen
from screens.labelling import ItemKey, labels_by_item, undo_latest
from screens.line_input import LineInputScreen
from screens.paging import GenerationPager
from screens.widgets.evidence import EvidenceItem
from screens.widgets.label_checklist import LabelChecklist
from screens.widgets.label_items import LabelItem, label_items
from screens.widgets.plain import plain
from screens.widgets.scores import scores_text


class AnnotationScreen(GenerationScreen, inherit_bindings=False):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "label('yes')", "Yes", id="annotate.yes"),
        Binding("n", "label('no')", "No", id="annotate.no"),
        Binding("u", "label('unsure')", "Unsure", id="annotate.unsure"),
        Binding("z", "undo", "Undo", id="annotate.undo"),
        Binding("m", "note", "Note", id="annotate.note"),
        Binding("b", "blind", "Blind on/off", id="annotate.blind"),
        Binding("N", "step(1)", "Next gen", id="annotate.next"),
        Binding("P", "step(-1)", "Prev gen", id="annotate.previous"),
        Binding("p", "step(-1)", "Previous generation (as P)", id="annotate.p", show=False),
        Binding("j", "item(1)", "Next item", id="annotate.item_down", show=False),
        Binding("k", "item(-1)", "Previous item", id="annotate.item_up", show=False),
        Binding("a", "leave", "View mode", id="annotate.leave"),
        Binding("escape", "leave", "View mode", id="annotate.escape", show=False),
        Binding(
            "right_square_bracket", "span(1)", "Next span", id="annotate.next_span", show=False
        ),
        Binding(
            "left_square_bracket", "span(-1)", "Prev span", id="annotate.previous_span", show=False
        ),
        Binding("o", "focus_pane('output-pane')", "Output pane", id="annotate.output", show=False),
        Binding("e", "focus_pane('checklist')", "Label list", id="annotate.labels", show=False),
        Binding(
            "c", "focus_pane('context-pane')", "Prompt/ref pane", id="annotate.context", show=False
        ),
        # inherit_bindings=False drops Screen's own keys: Tab / Shift+Tab come back here
        Binding("tab", "app.focus_next", "Focus Next", show=False),
        Binding("shift+tab", "app.focus_previous", "Focus Previous", show=False),
    ]

    def __init__(
        self,
        generation_id: int,
        pager: GenerationPager,
        origin: Any = None,
        *,
        adjudicate_as: str | None = None,
        start_item: str | None = None,
    ) -> None:
        """`adjudicate_as`: label under that name (the agreement report's adjudicator);
        `start_item`: the label item key ("event:3") the cursor starts on."""
        super().__init__(generation_id, pager, origin)
        self.adjudicate_as = adjudicate_as
        self.start_item = start_item
        self.blind = adjudicate_as is None
        self.label_items: list[LabelItem] = []
        self.labels: dict[ItemKey, list[CurrentLabel]] = {}
        self.pending_note: tuple[str, str] | None = None  # (item key, note) before a label

    # --- who -------------------------------------------------------------------------

    @property
    def person(self) -> str | None:
        app: Any = self.app
        return app.annotator

    @property
    def writer(self) -> str | None:
        """The annotator name the labels are stored under."""
        return self.adjudicate_as or self.person

    def _note(self, text: str | None) -> str | None:
        if self.adjudicate_as is None:
            return text or None
        return f"by {self.person}" + (f": {text}" if text else "")

    def _bare_note(self, stored: str | None) -> str:
        """The free text of a stored note (an adjudication note loses its "by NAME")."""
        prefix = f"by {self.person}"
        if self.adjudicate_as and stored and stored.startswith(prefix):
            return stored[len(prefix) :].removeprefix(": ")
        if self.adjudicate_as and stored and stored.startswith("by "):
            return stored.partition(": ")[2]  # another adjudicator's note
        return stored or ""

    # --- hooks of the generation view --------------------------------------------------

    def make_checklist(self) -> LabelChecklist:
        checklist = LabelChecklist(id="checklist")
        checklist.border_title = "Labels"
        return checklist

    def fill_checklist(self) -> None:
        assert self.detail is not None
        self.label_items = label_items(self.detail)
        self.pending_note = None
        checklist = self.query_one("#checklist", LabelChecklist)
        checklist.set_items(self.label_items)
        if self.start_item is not None:
            checklist.select_item(self.start_item)
            self.start_item = None
        self.reload_labels()

    def scores_line(self) -> Text:
        assert self.detail is not None
        line = self._mode_text()
        if not self.blind:
            line.append("\n")
            line.append_text(scores_text(self.detail.judgments))
        return line

    def shown_detail(self) -> GenerationDetail:
        assert self.detail is not None
        return replace(self.detail, judgments=[]) if self.blind else self.detail

    def highlighted_items(self) -> list[EvidenceItem]:
        return [] if self.blind else self.items

    def evidence_for(self, option_id: str | None) -> EvidenceItem | None:
        if self.blind or option_id is None:
            return None
        target = option_id.split(":", 1)[0]
        if target in WHOLE_OUTPUT_TARGETS:
            return next(
                (i for i in self.items if i.kind == "score" and i.judgment.target == target),
                None,
            )
        return super().evidence_for(option_id)

    # --- what is shown -------------------------------------------------------------------

    def _mode_text(self) -> Text:
        if self.adjudicate_as:
            line = plain(f" ADJUDICATING as {self.adjudicate_as} ", "bold white on dark_magenta")
            line.append_text(plain(f" (by {self.person})", "bold"))
        else:
            line = plain(f" ANNOTATING as {self.person} ", "bold black on yellow")
        if self.blind:
            line.append("  blind: ON", style="bold green")
            line.append(" (judges hidden; b shows them)", style="dim")
        else:
            line.append("  blind: OFF", style="bold red")
            line.append(" (judges shown; b hides them)", style="dim")
        asked = [item for item in self.label_items if item.asked]
        done = sum(1 for item in asked if self._mine(item.target, item.index) is not None)
        line.append(f"  ·  {done}/{len(asked)} labelled", style="bold")
        return line

    def _mine(self, target: str, index: int) -> CurrentLabel | None:
        return next(
            (c for c in self.labels.get((target, index), ()) if c.annotator == self.writer),
            None,
        )

    def reload_labels(self) -> None:
        """Read the current labels back from the database and redraw them."""
        app: Any = self.app
        everyone = self.adjudicate_as is not None
        self.labels = labels_by_item(
            app.data.ui, self.generation_id, None if everyone else self.writer
        )
        self.query_one("#checklist", LabelChecklist).show_labels(
            self.labels, self.writer or "", blind=self.blind, show_others=everyone
        )
        self.query_one("#scores", Static).update(self.scores_line())

    # --- actions -----------------------------------------------------------------------

    def _current(self) -> LabelItem | None:
        item = self.query_one("#checklist", LabelChecklist).current_item
        if item is None:
            self.app.bell()
        return item

    def action_label(self, value: str) -> None:
        """Store `value` for the highlighted item now (before the next key), then move on."""
        if self.writer is None:
            app: Any = self.app
            app.ensure_annotator(lambda _: self.refresh_panes())
            return
        item = self._current()
        if item is None:
            return
        mine = self._mine(item.target, item.index)
        if self.pending_note is not None and self.pending_note[0] == item.key:
            note = self._note(self.pending_note[1])
            self.pending_note = None
        else:
            note = self._note(self._bare_note(mine.note) if mine is not None else None)
        if not self._commit(item, value, note):
            return
        self.reload_labels()
        self.query_one("#checklist", LabelChecklist).step(1)

    def _commit(self, item: LabelItem, value: str, note: str | None) -> bool:
        app: Any = self.app
        assert self.writer is not None
        try:
            append_label(
                app.data.ui,
                generation_id=self.generation_id,
                annotator=self.writer,
                target=item.target,
                item_index=item.index,
                label=value,
                note=note or None,
            )
        except UserError as error:
            self.notify(str(error), severity="error", markup=False)
            return False
        return True

    def action_undo(self) -> None:
        """Retract your newest live label on this generation (the one before returns)."""
        if self.writer is None:
            return
        app: Any = self.app
        undone = undo_latest(app.data.ui, generation_id=self.generation_id, annotator=self.writer)
        if undone is None:
            self.notify("nothing of yours to undo on this generation", timeout=3)
            return
        self.reload_labels()
        self.query_one("#checklist", LabelChecklist).select_item(
            f"{undone.target}:{undone.item_index}"
        )
        name = item_name(undone.target, undone.item_index)
        self.notify(f"undone: {name} {undone.label}", timeout=3, markup=False)

    def action_note(self) -> None:
        """A one-line note on the highlighted item, stored with its label."""
        item = self._current()
        if item is None or self.writer is None:
            return
        mine = self._mine(item.target, item.index)

        def save(text: str | None) -> None:
            if text is None or self.detail is None:
                return
            if mine is None:
                self.pending_note = (item.key, text)
                self.notify("note kept: label the item (y/n/u) to store it with the label")
                return
            if self._commit(item, mine.label, self._note(text)):
                self.reload_labels()

        title = f"Note on {item_name(item.target, item.index)}"
        existing = self._bare_note(mine.note) if mine else ""
        self.app.push_screen(
            LineInputScreen(title, item.text, value=existing, placeholder="note"), save
        )

    def action_blind(self) -> None:
        self.blind = not self.blind
        self.selected, self.span_index = None, 0
        self.refresh_panes()
        self.reload_labels()
        if not self.blind:
            checklist = self.query_one("#checklist", LabelChecklist)
            item = checklist.current_item
            self.selected = self.evidence_for(item.key if item else None)
            self._render_output()
            self._scroll_to_span()

    def action_item(self, step: int) -> None:
        self.query_one("#checklist", LabelChecklist).step(step)

    def action_leave(self) -> None:
        """Back to the generation view on the same generation."""
        self.app.switch_screen(GenerationScreen(self.generation_id, self.pager, self.origin))
