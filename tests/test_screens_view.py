"""Generation view: evidence highlighting and scrolling, n/p through the list, plain text
for hostile outputs (markup, ANSI escapes), snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from copyaudit.formats import LocatedCase, LocatedGeneration
from copyaudit.types import Case, Score, Span, Work
from db import Store
from db.cases import import_cases
from db.runs import JudgeIdentity, import_generations, save_judgments
from screens.app import CopyauditApp
from screens.generations.generation_list import GenerationListScreen
from screens.generations.generation_view import GenerationScreen
from screens.widgets.evidence import GUTTER, SELECTED_STYLE, character_style
from screens.widgets.matches import SEARCH_STYLE
from tests.test_screens_data import copy_demo_like_db, settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


async def _open(pilot, run_row: int, *keys: str) -> GenerationScreen:
    """Dashboard -> run in row `run_row` -> keys in the list -> Enter on the cursor row."""
    await settle(pilot)
    await pilot.press(*(["down"] * run_row), "enter")
    await settle(pilot)
    await pilot.press(*keys)
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, GenerationScreen)
    return screen


def _lines(widget) -> list[str]:
    """What the widget really draws, line by line (Textual's own wrapping)."""
    return [widget.render_line(y).text for y in range(widget.size.height)]


def _styled(text, style) -> set[int]:
    """Character offsets of `text` carrying `style`."""
    return {i for span in text.spans if span.style == style for i in range(span.start, span.end)}


async def test_selecting_an_event_scrolls_the_output_to_its_window(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, 1)  # demo-nonliteral, first generation
        pane = screen.query_one("#output-pane")
        output = screen.query_one("#output")
        supported = [i for i in screen.items if i.kind == "event" and i.spans]
        last = max(supported, key=lambda item: item.spans[0][0])
        assert pane.scroll_y == 0
        # the checklist starts on event 1; walk down to the last supported event
        await pilot.press(*(["down"] * last.index))
        await settle(pilot)
        assert screen.selected is not None and screen.selected.key == last.key
        # its marker stands in the gutter beside the line where its window starts,
        # outside the output text (which is shown unchanged after the gutters)
        start, end = last.spans[0]
        line = screen.rendered.line_of(start)
        drawn = _lines(output)[line]
        width = screen.rendered.gutter
        assert width >= GUTTER
        gutter, text = drawn[:width], drawn[width:]
        assert str(last.number) in gutter and gutter.startswith("[")
        rows = screen.rendered.text.plain.split("\n")
        without_gutters = "".join(row[width:] for row in rows)
        assert without_gutters == screen.detail.output.replace("\n", "")
        assert text.rstrip() in screen.detail.output
        assert line > pane.scrollable_content_region.height  # it was out of view
        assert pane.scroll_y > 0
        assert pane.scroll_y <= line < pane.scroll_y + pane.scrollable_content_region.height
        # the selected window is reversed, and only it
        shown = screen.rendered.text
        reversed_chars = _styled(shown, SELECTED_STYLE)
        window = {screen.rendered.display_offset(p) for p in range(start, end)}
        assert reversed_chars == window


async def test_characters_are_coloured_and_enter_walks_their_mentions(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, 1)
        character = next(i for i in screen.items if i.kind == "character" and len(i.spans) > 2)
        coloured = _styled(screen.rendered.text, character_style(character.index))
        for start, end in character.spans:
            first = screen.rendered.display_offset(start)
            assert set(range(first, first + end - start)) <= coloured
        options = screen.query_one("#checklist")
        options.highlighted = options.get_option_index(character.key)
        await settle(pilot)
        assert screen.selected.key == character.key and screen.span_index == 0
        await pilot.press("enter", "enter")
        await settle(pilot)
        assert screen.span_index == 2
        await pilot.press("left_square_bracket")
        assert screen.span_index == 1


async def test_next_and_previous_follow_the_list_filter_and_sort(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("enter")  # demo-literal
        await settle(pilot)
        await pilot.press("f", "down", "enter")  # flagged by any judge
        await settle(pilot)
        await pilot.press("s", "down", "down", "enter")  # sort by rougeL, highest first
        await settle(pilot)
        listing = app.screen
        assert isinstance(listing, GenerationListScreen)
        order = [row.generation_id for row in listing.pager.rows]
        await pilot.press("enter")
        await settle(pilot)
        view = app.screen
        assert view.generation_id == order[0]
        await pilot.press("N")
        assert view.generation_id == order[1]
        assert view.detail.generation_id == order[1]
        await pilot.press("N", "P")
        assert view.generation_id == order[1]
        await pilot.press(*(["N"] * (len(order) + 2)))  # past the end: stays on the last
        assert view.generation_id == order[-1]
        await pilot.press("escape")
        await settle(pilot)
        table = listing.query_one("#generations")
        assert app.screen is listing and table.cursor_row == len(order) - 1


HOSTILE = (
    "[bold]not bold[/] [link=https://example.com]click[/link] [/] "
    "\x1b[31mred?\x1b[0m \x1b]8;;https://x.y\x07osc\x1b]8;;\x07 \u202eevil\r\n"
    "[red on white]:warning: [[/]]"
)


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.db"
    payload = {"input": "[b]prompt[/b] \x1b[2J", "reference": "[i]ref[/i]"}
    with Store(path) as store:
        case = Case("[u]case[/u]", "literal", Work("[blink]Title[/blink]"), payload)
        import_cases(store, "s", "literal", [LocatedCase(1, case)], source="t")
        import_generations(
            store,
            run="[red]run[bold]",  # markup; run names cannot hold "/"
            suite="s",
            model="[bold]model",
            rows=[LocatedGeneration(1, "[u]case[/u]", 1, HOSTILE)],
            source="t",
        )
        score = Score("rougeL", 0.5, flagged=False, threshold=0.8, spans=(Span(0, 14),))
        save_judgments(store, JudgeIdentity("[b]judge", "1", {}, "h"), [(1, [score])])
    return path


async def test_markup_and_escape_sequences_are_shown_literally(hostile_db: Path) -> None:
    app = CopyauditApp(hostile_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.screen.query_one("#runs")
        assert str(runs.get_row("[red]run[bold]")[0]) == "[red]run[bold]"
        screen = await _open(pilot, 0)
        shown = screen.query_one("#output").render()
        plain_output = str(shown)
        # same length as the stored output: one visible character per control character
        assert len(plain_output) == len(HOSTILE)
        assert plain_output.startswith("[bold]not bold[/] [link=https://example.com]click[/link]")
        assert "␛[31mred?␛[0m" in plain_output and "\x1b" not in plain_output
        assert "␇" in plain_output and "\ufffdevil␍" in plain_output
        assert "[red on white]:warning: [[/]]" in plain_output
        drawn = "\n".join(_lines(screen.query_one("#output")))
        assert "[bold]not bold[/]" in drawn and "\x1b" not in drawn
        context = str(screen.query_one("#context").render())
        assert "[b]prompt[/b] ␛[2J" in context and "[i]ref[/i]" in context
        assert "[red]run[bold]/[u]case[/u]/1" in str(screen.query_one("#title").render())
        await pilot.press("escape")
        await settle(pilot)
        listing = app.screen.query_one("#generations")
        row = [str(cell) for cell in listing.get_row_at(0)]
        assert row[0] == "[u]case[/u]" and row[-1].startswith("[bold]not bold[/]")


def test_generation_view_snapshot(demo_db: Path, snap_compare) -> None:
    async def open_view(pilot) -> None:
        screen = await _open(pilot, 1)
        await pilot.press("down", "down")  # event 3
        await settle(pilot)
        assert screen.selected is not None

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=open_view)


@pytest.fixture
def notice_db(tmp_path: Path) -> Path:
    path = tmp_path / "notice.db"
    copy_demo_like_db(path, kinds=("notice",))
    return path


async def test_notice_view_shows_snippet_notice_query_and_the_copied_spans(
    notice_db: Path,
) -> None:
    """A repeat of a snippet under "All rights reserved.": the context pane has the
    snippet, its notice and the query; the output highlights what was copied."""
    app = CopyauditApp(notice_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_run("demo-notice")
        await settle(pilot)
        listing = app.screen
        assert isinstance(listing, GenerationListScreen)
        row = next(i for i, r in enumerate(listing.pager.rows) if r.case_id == "ledger-arr-repeat")
        await pilot.press(*(["down"] * row), "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, GenerationScreen)
        assert screen.detail is not None and screen.detail.case_id == "ledger-arr-repeat"
        context = str(screen.query_one("#context").render())
        payload = screen.detail.payload
        assert "Snippet" in context and payload["snippet"][:60] in context
        assert "Notice (all_rights_reserved)\nAll rights reserved." in context
        assert f"Query (repeat)\n{payload['query']}" in context
        copied = [i for i in screen.items if i.spans and i.judgment.judge == "notice"]
        assert copied, "the notice judge's copied spans are in the checklist"
        output = screen.query_one("#output").render()
        highlighted = {offset for span in output.spans for offset in range(span.start, span.end)}
        # the output copies the snippet's opening: its first 40 characters are highlighted
        start = str(output).index("Wren kept two books")
        assert set(range(start, start + 40)) <= highlighted


async def _open_searched(pilot, text: str) -> GenerationScreen:
    """demo-nonliteral's list searched for `text` (/, typed, Enter), its first row opened."""
    return await _open(pilot, 1, "slash", *text, "enter")


def _marked(shown) -> list[str]:
    """The shown text under each search mark, in order."""
    spans = sorted((s.start, s.end) for s in shown.spans if s.style == SEARCH_STYLE)
    return [shown.plain[start:end] for start, end in spans]


async def test_the_search_is_marked_in_the_output_and_the_context(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_searched(pilot, "THE")
        assert screen.search == "THE"
        detail = screen.detail
        output = screen.query_one("#output").content
        # wrapped here with the event gutter: each mark is one line's part of a match
        assert screen.rendered is not None and screen.rendered.gutter > 0
        occurrences = detail.output.lower().count("the")
        assert occurrences > 1
        assert "".join(_marked(output)).lower() == "the" * occurrences
        title = str(screen.query_one("#output-pane").border_title)
        assert title == f"Output · 'THE': {occurrences}"
        context = screen.query_one("#context").content
        assert _marked(context) and {m.lower() for m in _marked(context)} == {"the"}
        await pilot.press("N")  # the next generation of the searched list is marked too
        await settle(pilot)
        shown = screen.query_one("#output").content
        assert "".join(_marked(shown)).lower() == "the" * screen.detail.output.lower().count("the")


async def test_without_a_search_nothing_is_marked(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, 1)
        assert screen.search == ""
        assert _marked(screen.query_one("#output").content) == []
        assert str(screen.query_one("#output-pane").border_title) == "Output"


def test_generation_view_with_a_search_snapshot(demo_db: Path, snap_compare) -> None:
    async def open_view(pilot) -> None:
        await _open_searched(pilot, "the")

    assert snap_compare(CopyauditApp(demo_db), terminal_size=SIZE, run_before=open_view)
