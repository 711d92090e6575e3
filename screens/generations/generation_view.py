"""One generation: scores and thresholds on top, the output with its evidence
highlighted, the prompt and reference below it, and the checklist of events,
characters and scores beside it, and a legend of the highlights under the output.
Highlighting a checklist item scrolls the output to its evidence; N/P move through the
list's filter and sort; `a` switches to annotation mode (screens.review.annotation, a subclass
that overrides the hooks marked below). Keys follow screens.keymap: no key here writes
anything, and none of the label keys (y/n/u) is bound here.

`blind`: reached from blind annotation mode, the view hides the judges too."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import OptionList, Static

from copyaudit.errors import UserError
from copyaudit.tracing.library import library_folder, read_text
from db.browse import GenerationDetail, generation_detail
from screens.app_link import copyaudit_app
from screens.destinations import Annotation
from screens.generations.library_text import LibraryTextScreen
from screens.plain import plain
from screens.state.paging import GenerationPager
from screens.widgets.checklist import EvidenceChecklist
from screens.widgets.evidence import (
    EvidenceItem,
    RenderedOutput,
    evidence_items,
    legend,
    line_of_offset,
    render_output,
)
from screens.widgets.footer import KeysFooter
from screens.widgets.label_checklist import LabelChecklist
from screens.widgets.matches import mark_matches
from screens.widgets.reference import context_text
from screens.widgets.scores import scores_text

if TYPE_CHECKING:
    from screens.destinations import Origin

CONTEXT_LINES = 2  # lines shown above the evidence when scrolling to it
PANE_TITLES = {"output-pane": "Output", "context-pane": "Prompt & reference"}


def evidence_keys(*, show: bool) -> list[BindingType]:
    """]/[ through the evidence and l for the legend (annotation mode hides them from its
    crowded footer)."""
    return [
        Binding("right_square_bracket", "span(1)", "Next evidence", id="view.next_span", show=show),
        Binding(
            "left_square_bracket", "span(-1)", "Prev evidence", id="view.previous_span", show=show
        ),
        Binding("l", "legend", "Legend", id="view.legend", show=show),
    ]


class Placed(Protocol):
    """What the title needs of a pager (GenerationPager, ReviewPager)."""

    total: int | None
    at_least: int

    @property
    def rows(self) -> Sequence[object]: ...

    def index_of(self, generation_id: int) -> int | None: ...


def generation_title(detail: GenerationDetail, pager: Placed, counted: str = "") -> Text:
    """The header line: the generation's key, its place in the pager ("3 of 40", after
    `counted`), the work, the kind and where the output came from."""
    title = plain(detail.key, "bold")
    index = pager.index_of(detail.generation_id)
    if index is not None:
        if pager.total is not None:
            total = f"{pager.total:,}"
        elif pager.at_least > len(pager.rows):  # counted no further than a quick count
            total = f"{pager.at_least:,}+"
        else:
            total = f"{len(pager.rows):,}"
        title.append(f"  {counted}{index + 1} of {total}", style="bold cyan")
    work = detail.work_title + (f" — {detail.work_author}" if detail.work_author else "")
    title.append_text(plain(f"  ·  {work}  ·  {detail.kind}  ·  {detail.source}"))
    return title


class GenerationScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="view.back"),
        Binding("N", "step(1)", "Next gen", id="view.next"),
        Binding("P", "step(-1)", "Prev gen", id="view.previous"),
        *evidence_keys(show=True),
        Binding("o", "focus_pane('output-pane')", "Output pane", id="view.output", show=False),
        Binding("e", "focus_pane('checklist')", "List pane", id="view.evidence", show=False),
        Binding(
            "c", "focus_pane('context-pane')", "Prompt/ref pane", id="view.context", show=False
        ),
        Binding("a", "annotate", "Label", id="view.annotate"),
    ]

    def __init__(
        self,
        generation_id: int,
        pager: GenerationPager,
        origin: Origin | None = None,
        *,
        blind: bool = False,
        queue: str | None = None,
    ) -> None:
        super().__init__()
        self.generation_id = generation_id
        self.pager = pager
        self.origin = origin  # the list screen, told where the cursor should be on return
        self.blind = blind  # judges hidden (reached from blind annotation mode)
        self.queue = queue  # the work queue being labelled, if any
        self.detail: GenerationDetail | None = None
        self.items: list[EvidenceItem] = []
        self.selected: EvidenceItem | None = None
        self.span_index = 0
        self.rendered: RenderedOutput | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="title", classes="title-bar")
        yield Static(id="scores")
        with Horizontal(id="panes"):
            with Vertical(id="left"):
                with VerticalScroll(id="output-pane") as output_pane:
                    output_pane.border_title = PANE_TITLES["output-pane"]
                    yield Static(id="output")
                yield Static(id="legend")
                with VerticalScroll(id="context-pane") as context_pane:
                    context_pane.border_title = PANE_TITLES["context-pane"]
                    yield Static(id="context")
            yield self.make_checklist()
        yield KeysFooter()

    def on_mount(self) -> None:
        self.show(self.generation_id)
        self.query_one("#checklist").focus()

    # --- showing a generation ----------------------------------------------------------

    def show(self, generation_id: int) -> None:
        app = copyaudit_app(self)
        detail = generation_detail(app.data.ui, generation_id)
        if detail is None:
            self.notify(f"generation {generation_id} no longer exists", severity="error")
            return
        self.generation_id, self.detail = generation_id, detail
        self.items = evidence_items(detail)
        self.selected, self.span_index = None, 0
        self.refresh_panes()
        self.query_one("#output-pane", VerticalScroll).scroll_to(y=0, animate=False)
        self.query_one("#context-pane", VerticalScroll).scroll_to(y=0, animate=False)
        self.fill_checklist()

    def refresh_panes(self) -> None:
        """Title, score line, prompt & reference and output of the current generation."""
        self.query_one("#title", Static).update(self._title())
        self.query_one("#scores", Static).update(self.scores_line())
        context = context_text(self.shown_detail())
        found = mark_matches(context, context.plain, self.search)
        self._count_matches("context-pane", found)
        self.query_one("#context", Static).update(context)
        self._render_output()
        self.query_one("#legend", Static).update(self._legend())

    @property
    def search(self) -> str:
        """The list's search string (marked in the output and the context; "" if none)."""
        return getattr(getattr(self.pager, "filter", None), "search", "") or ""

    def _count_matches(self, pane_id: str, found: int) -> None:
        """The pane's title says how often the search string occurs in it."""
        title = plain(PANE_TITLES[pane_id])
        if self.search:
            title.append_text(plain(f" · {self.search!r}: {found}"))
        self.query_one(f"#{pane_id}", VerticalScroll).border_title = title

    def _legend(self) -> Text:
        assert self.detail is not None
        if self.blind:
            return Text("blind: judges and their highlights hidden", style="dim italic")
        return legend(self.highlighted_items())

    # --- hooks (annotation mode overrides these) ----------------------------------------

    def make_checklist(self) -> OptionList:
        checklist = EvidenceChecklist(id="checklist")
        checklist.border_title = "Evidence"
        return checklist

    def fill_checklist(self) -> None:
        assert self.detail is not None
        shown = [] if self.blind else self.items
        self.query_one("#checklist", EvidenceChecklist).set_items(shown, self.detail.labels)

    def scores_line(self) -> Text:
        assert self.detail is not None
        if self.blind:
            return Text("BLIND: judges hidden (annotation mode's b shows them)", style="bold green")
        return scores_text(self.detail.judgments)

    def shown_detail(self) -> GenerationDetail:
        """The generation as the context pane shows it (blind mode drops the judges)."""
        assert self.detail is not None
        return replace(self.detail, judgments=[]) if self.blind else self.detail

    def highlighted_items(self) -> list[EvidenceItem]:
        """The items whose evidence the output highlights."""
        return [] if self.blind else self.items

    def evidence_for(self, option_id: str | None) -> EvidenceItem | None:
        """The evidence item behind a checklist option."""
        return next((i for i in self.items if i.key == option_id), None)

    def _title(self) -> Text:
        assert self.detail is not None
        return generation_title(self.detail, self.pager)

    def _render_output(self) -> None:
        detail = self.detail
        assert detail is not None
        key = None if self.selected is None else self.selected.key
        width = self.query_one("#output", Static).content_size.width or None
        self.rendered = render_output(detail.output, self.highlighted_items(), key, width)
        text = self.rendered.text
        found = mark_matches(text, detail.output, self.search, self.rendered.shown_ranges)
        self._count_matches("output-pane", found)
        if not detail.output:
            text = Text("(empty output)", style="italic dim")
            if detail.error:
                text.append_text(plain(f"\n{detail.error}", "red"))
        self.query_one("#output", Static).update(text)
        if width is None:  # not laid out yet: wrap with the gutter once it is
            self.call_after_refresh(self._render_when_sized)

    def _render_when_sized(self) -> None:
        if self.detail is not None and self.query_one("#output", Static).content_size.width:
            self._render_output()

    def on_resize(self) -> None:
        if self.detail is not None:
            self._render_output()

    # --- evidence ----------------------------------------------------------------------

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        item = self.evidence_for(event.option_id)
        if item is None or item is self.selected:
            return
        self.selected, self.span_index = item, 0
        self._render_output()
        self._scroll_to_span()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        item = self.evidence_for(event.option_id)
        if item is not None and item.place is not None:
            self.open_library_text(item)
            return
        self.action_span(1)

    def open_library_text(self, item: EvidenceItem) -> None:
        """The library's text of a traced span, at the place that holds it (the texts
        beside the database: copyaudit.tracing.library)."""
        assert item.place is not None and self.detail is not None
        library = library_folder(copyaudit_app(self).db_path)  # the folder, not the database
        try:
            text = read_text(library, str(item.place.get("sha256")))
        except UserError as error:
            self.notify(str(error), severity="error", timeout=6)
            return
        start, end = item.spans[0]
        self.app.push_screen(LibraryTextScreen(item.place, self.detail.output[start:end], text))

    def action_span(self, step: int) -> None:
        """The next (previous) span of the selected item; with nothing selected, select
        the first item with evidence in the output, or say why there is none."""
        if self.selected is None or not self.selected.spans:
            first = next((i for i in self.highlighted_items() if i.spans), None)
            if first is None:
                why = "blind mode hides the judges" if self.blind else "no judge marked a span"
                self.notify(f"no evidence to show in this output: {why}", timeout=3)
                return
            self.select_evidence(first)
            return
        self.span_index = (self.span_index + step) % len(self.selected.spans)
        self._scroll_to_span()

    def select_evidence(self, item: EvidenceItem) -> None:
        """Highlight `item` in the list (its evidence shows and scrolls into view)."""
        checklist = self.query_one("#checklist")
        if isinstance(checklist, EvidenceChecklist | LabelChecklist):
            checklist.select_item(item.key)
        self.selected, self.span_index = item, 0
        self._render_output()
        self._scroll_to_span()

    def _scroll_to_span(self) -> None:
        if self.selected is None or not self.selected.spans:
            return
        self.call_after_refresh(self.scroll_to_evidence)

    def scroll_to_evidence(self) -> None:
        """Scroll the output pane so the current span of the selected item is in view."""
        if self.selected is None or not self.selected.spans or self.rendered is None:
            return
        start = self.selected.spans[self.span_index][0]
        line = self.rendered.line_of(start)
        if line is None:
            width = self.query_one("#output", Static).size.width
            line = line_of_offset(self.rendered.text.plain, start, width)
        pane = self.query_one("#output-pane", VerticalScroll)
        pane.scroll_to(y=max(0, line - CONTEXT_LINES), animate=False)

    # --- moving ------------------------------------------------------------------------

    def action_legend(self) -> None:
        legend_line = self.query_one("#legend", Static)
        legend_line.display = not legend_line.display

    def action_step(self, step: int) -> None:
        app = copyaudit_app(self)
        target = self.pager.neighbour(self.generation_id, step, app.data.ui)
        if target is None:
            self.app.bell()
            self.notify("no more generations in this list", severity="warning", timeout=2)
            return
        self.show(target)

    def action_annotate(self) -> None:
        """Annotation mode on this generation (asks who is labelling first, if unknown)."""
        app = copyaudit_app(self)

        def start(_: str) -> None:
            if app.screen is self:
                mode = Annotation(
                    self.generation_id, self.pager, self.origin, from_view=True, queue=self.queue
                )
                app.open(mode, replace=True)

        app.ensure_annotator(start)

    def action_focus_pane(self, pane_id: str) -> None:
        self.query_one(f"#{pane_id}").focus()

    def action_back(self) -> None:
        if self.origin is not None:
            self.origin.focus_generation = self.generation_id
        self.app.pop_screen()
