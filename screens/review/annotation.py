"""Annotation mode of the generation view: label every reference event and character
("in the story?") and the whole output ("refusal?", "verbatim copy?").

A separate mode, so the label keys are the obvious ones: y yes, n no, u unsure (the
cursor then moves to the next item; after the last item of a generation, to the next
generation of the list or queue when auto-advance is on — `t` toggles it, remembered),
z undo, m note, b blind mode, U the next item not labelled by you; j/k or the arrows move
between items, Tab between panes, N/P between generations (as in the view: the label
keys move nothing anywhere, screens.keymap); `a` switches to the view, Esc goes back to
where annotation mode was opened from (the view, a work queue's caller, the agreement
screen). A generation opens on its first item without your label.

Every label key is committed by the key handler itself, on the UI thread, through
screens.state.labelling (one small SQLite transaction) before the next key is handled; undo
appends a retract event. A note typed on an item you have not labelled yet is kept
pending (the mode line says so) and stored with that item's label; moving to another
generation with a pending note asks once, then drops it saying so. Blind mode (on by
default) hides the judges: scores, verdicts, evidence highlights and the reference
marks, and the view reached with `a` hides them too. Adjudicating (from the agreement
screen) labels under the adjudicator name copyaudit.verification.agreement reads, with everyone's
labels and the judges shown and "by NAME" in each label's note.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Static

from copyaudit.errors import UserError
from copyaudit.identity import remember_setting, setting
from copyaudit.items import WHOLE_OUTPUT_TARGETS, item_name
from db.events import append_label
from db.labels import CurrentLabel, label_progress
from screens.app_link import copyaudit_app
from screens.destinations import Generation
from screens.generations.generation_view import GenerationScreen, evidence_keys
from screens.line_input import LineInputScreen
from screens.plain import plain
from screens.state.labelling import ItemKey, labels_by_item, undo_latest
from screens.state.paging import GenerationPager
from screens.widgets.evidence import EvidenceItem
from screens.widgets.label_checklist import LabelChecklist
from screens.widgets.label_items import LabelItem, label_items
from screens.widgets.scores import scores_text

if TYPE_CHECKING:
    from screens.destinations import Origin

AUTO_ADVANCE_SETTING = "auto_advance"
SCAN_BATCH = 200  # generations checked per query by "next unlabelled"


class AnnotationScreen(GenerationScreen):
    """Inherits the view's moving keys (Esc, N/P, ]/[, o/e/c, l) and adds the label keys."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "label('yes')", "Yes", id="annotate.yes"),
        Binding("n", "label('no')", "No", id="annotate.no"),
        Binding("u", "label('unsure')", "Unsure", id="annotate.unsure"),
        Binding("z", "undo", "Undo", id="annotate.undo"),
        Binding("m", "note", "Note", id="annotate.note"),
        Binding("b", "blind", "Blind", id="annotate.blind"),
        Binding("U", "next_unlabelled", "Next open", id="annotate.next_unlabelled"),
        Binding("t", "auto_advance", "Auto-advance on/off", id="annotate.auto_advance", show=False),
        Binding("j", "item(1)", "Next item", id="annotate.item_down", show=False),
        Binding("k", "item(-1)", "Previous item", id="annotate.item_up", show=False),
        Binding("a", "leave", "View", id="annotate.leave"),
        Binding("escape", "back", "Back", id="annotate.back"),
        *evidence_keys(show=False),  # the view's keys, out of the crowded footer
    ]

    def __init__(
        self,
        generation_id: int,
        pager: GenerationPager,
        origin: Origin | None = None,
        *,
        adjudicate_as: str | None = None,
        start_item: str | None = None,
        from_view: bool = False,
        queue: str | None = None,
    ) -> None:
        """`adjudicate_as`: label under that name (the agreement report's adjudicator);
        `start_item`: the label item key ("event:3") the cursor starts on; `from_view`:
        Esc returns to the generation view (else to the screen below); `queue`: the
        work queue whose progress the mode line shows."""
        super().__init__(generation_id, pager, origin, queue=queue)
        self.adjudicate_as = adjudicate_as
        self.start_item = start_item
        self.from_view = from_view
        self.blind = adjudicate_as is None
        self.auto_advance = bool(setting(AUTO_ADVANCE_SETTING, True))
        self.label_items: list[LabelItem] = []
        self.labels: dict[ItemKey, list[CurrentLabel]] = {}
        self.pending_notes: dict[str, str] = {}  # item key -> note typed before a label
        self._leave_warned = False

    # --- who -------------------------------------------------------------------------

    @property
    def person(self) -> str | None:
        app = copyaudit_app(self)
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
        self.pending_notes, self._leave_warned = {}, False
        checklist = self.query_one("#checklist", LabelChecklist)
        checklist.set_items(self.label_items)
        self.reload_labels()
        first_open = self._first_unlabelled()
        if self.start_item is not None:
            checklist.select_item(self.start_item)
            self.start_item = None
        elif first_open is not None:
            checklist.select_item(first_open.key)

    def _first_unlabelled(self, after: LabelItem | None = None) -> LabelItem | None:
        """Your first unlabelled item (after `after`, when given) on this generation."""
        items = self.label_items
        if after is not None:
            items = items[items.index(after) + 1 :]
        return next((i for i in items if self._mine(i.target, i.index) is None), None)

    def scores_line(self) -> Text:
        assert self.detail is not None
        line = self._mode_text()
        if not self.blind:
            line.append("\n")
            line.append_text(scores_text(self.detail.judgments))
        return line

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
        line.append(f"  ·  auto-advance {'on' if self.auto_advance else 'off'} (t)", style="dim")
        if self.queue is not None and self.writer is not None:
            line.append("\n")
            line.append_text(self._queue_progress())
        if self.pending_notes:
            names = ", ".join(self._item_name(key) for key in self.pending_notes)
            line.append(f"\nnote pending on {names}: label it (y/n/u) to store it", "bold yellow")
        return line

    def _queue_progress(self) -> Text:
        """ "queue NAME: g/G generations, i/I items labelled by you (p%)"."""
        app = copyaudit_app(self)
        assert self.queue is not None and self.writer is not None
        ids = getattr(self.pager, "ids", [])
        progress = label_progress(app.data.ui, ids, self.writer)
        done = sum(d for d, _ in progress.values())
        total = sum(t for _, t in progress.values())
        complete = sum(1 for d, t in progress.values() if d >= t)
        percent = 100 * done / total if total else 100.0
        return plain(
            f"queue {self.queue}: {complete}/{len(ids)} generations, {done}/{total} items "
            f"labelled by you ({percent:.0f}%)",
            "bold cyan",
        )

    def _item_name(self, key: str) -> str:
        target, _, index = key.partition(":")
        return item_name(target, int(index))

    def _mine(self, target: str, index: int) -> CurrentLabel | None:
        return next(
            (c for c in self.labels.get((target, index), ()) if c.annotator == self.writer),
            None,
        )

    def reload_labels(self) -> None:
        """Read the current labels back from the database and redraw them."""
        app = copyaudit_app(self)
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
            app = copyaudit_app(self)
            app.ensure_annotator(lambda _: self.refresh_panes())
            return
        item = self._current()
        if item is None:
            return
        mine = self._mine(item.target, item.index)
        if item.key in self.pending_notes:
            note = self._note(self.pending_notes[item.key])
        else:
            note = self._note(self._bare_note(mine.note) if mine is not None else None)
        if not self._commit(item, value, note):
            return
        self.pending_notes.pop(item.key, None)
        self.reload_labels()
        if not self.query_one("#checklist", LabelChecklist).step(1) and self.auto_advance:
            self._advance()

    def _advance(self) -> None:
        """After the last item: on to the next generation of the list or queue."""
        left = sum(1 for i in self.label_items if self._mine(i.target, i.index) is None)
        app = copyaudit_app(self)
        target = self.pager.neighbour(self.generation_id, 1, app.data.ui)
        if target is None:
            where = f"queue {self.queue}" if self.queue else "list"
            self.notify(f"last generation of the {where}", timeout=4, markup=False)
            return
        if not self._may_leave():
            return
        self.show(target)
        if left:
            self.notify(f"{left} item(s) of the previous generation left unlabelled (P)")

    def _commit(self, item: LabelItem, value: str, note: str | None) -> bool:
        app = copyaudit_app(self)
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
        app = copyaudit_app(self)
        try:
            undone = undo_latest(
                app.data.ui, generation_id=self.generation_id, annotator=self.writer
            )
        except UserError as error:  # a read-only store, say
            self.notify(str(error), severity="error", markup=False)
            return
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

        generation = self.generation_id

        def save(text: str | None) -> None:
            if text is None or self.detail is None or self.generation_id != generation:
                return
            if mine is None:
                self.pending_notes[item.key] = text
                self._leave_warned = False
                self.reload_labels()
                self.notify("note kept: label the item (y/n/u) to store it with the label")
                return
            if self._commit(item, mine.label, self._note(text)):
                self.reload_labels()

        title = f"Note on {item_name(item.target, item.index)}"
        existing = self.pending_notes.get(item.key, self._bare_note(mine.note) if mine else "")
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

    def action_auto_advance(self) -> None:
        """Turn auto-advance on or off (remembered for the next session)."""
        self.auto_advance = not self.auto_advance
        try:
            remember_setting(AUTO_ADVANCE_SETTING, self.auto_advance)
        except UserError as error:
            self.notify(f"setting not remembered: {error}", severity="warning", markup=False)
        self.reload_labels()

    def action_next_unlabelled(self) -> None:
        """Your next unlabelled item: later on this generation, else the first one on the
        next generation of the list or queue that you have not fully labelled."""
        checklist = self.query_one("#checklist", LabelChecklist)
        current = checklist.current_item
        here = self._first_unlabelled(current) or self._first_unlabelled()
        if here is not None:
            checklist.select_item(here.key)
            return
        target = self._next_unlabelled_generation()
        if target is None:
            self.notify("nothing after this generation is left unlabelled by you", timeout=4)
            return
        if self._may_leave():
            self.show(target)

    def _next_unlabelled_generation(self) -> int | None:
        app = copyaudit_app(self)
        if self.writer is None:
            return None
        current: int | None = self.generation_id
        while current is not None:
            batch: list[int] = []
            while current is not None and len(batch) < SCAN_BATCH:
                current = self.pager.neighbour(current, 1, app.data.ui)
                if current is not None:
                    batch.append(current)
            progress = label_progress(app.data.ui, batch, self.writer)
            found = next((g for g in batch if _open_items(progress.get(g))), None)
            if found is not None:
                return found
        return None

    def _may_leave(self) -> bool:
        """False (and a warning) the first time a move would leave a pending note."""
        if not self.pending_notes:
            return True
        names = ", ".join(self._item_name(key) for key in self.pending_notes)
        if not self._leave_warned:
            self._leave_warned = True
            self.notify(
                f"the note on {names} is not stored yet: label the item (y/n/u) to store it, "
                "or press the key again to leave without it",
                severity="warning",
                timeout=6,
                markup=False,
            )
            return False
        self.notify(f"note on {names} not stored (left unlabelled)", severity="warning")
        self.pending_notes = {}
        return True

    def action_step(self, step: int) -> None:
        if self._may_leave():
            super().action_step(step)

    def action_leave(self) -> None:
        """The generation view on the same generation (judges hidden while blind)."""
        if not self._may_leave():
            return
        view = Generation(
            self.generation_id, self.pager, self.origin, blind=self.blind, queue=self.queue
        )
        app = copyaudit_app(self)
        app.open(view, replace=True)

    def action_annotate(self) -> None:  # already annotating
        self.action_leave()

    def action_back(self) -> None:
        """Esc: back to the view annotation mode came from, else to the screen below."""
        if self.from_view:
            self.action_leave()
            return
        if not self._may_leave():
            return
        if self.origin is not None:
            self.origin.focus_generation = self.generation_id
        self.app.pop_screen()


def _open_items(progress: tuple[int, int] | None) -> bool:
    """Whether a generation's (labelled, total) leaves items to label."""
    return progress is not None and progress[0] < progress[1]
