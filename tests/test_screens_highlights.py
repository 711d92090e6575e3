"""Highlights: every character of a case has its own colour, the legend names every
highlight shown, event markers stand in a gutter outside the output, and ]/[ with no
evidence selected select the first item with evidence or say why not."""

from __future__ import annotations

from pathlib import Path

import pytest

from screens.app import CopyauditApp
from screens.widgets.evidence import (
    CHARACTER_COLOURS,
    character_colour,
    render_output,
    wrap_ranges,
)
from tests.test_screens_data import settle
from tests.test_screens_view import _open

pytestmark = pytest.mark.anyio
SIZE = (120, 40)


def test_no_two_characters_of_a_case_share_a_colour() -> None:
    colours = [character_colour(i) for i in range(300)]
    assert colours[: len(CHARACTER_COLOURS)] == list(CHARACTER_COLOURS)
    assert len(set(colours)) == len(colours)


def test_wrapping_keeps_every_character_once_and_fits_the_width() -> None:
    text = "one two three\n\nfour five-six-seven-eight-nine-ten eleven twelve"
    ranges = wrap_ranges(text, 10)
    assert "".join(text[s:e] for s, e in ranges) == text.replace("\n", "")
    assert all(e - s <= 10 for s, e in ranges)
    assert [text[s:e] for s, e in ranges][:3] == ["one two ", "three", ""]


def test_event_markers_are_beside_the_text_not_in_it() -> None:
    output = "alpha beta gamma delta epsilon zeta eta theta iota kappa"

    class Item:  # the fields render_output reads of an EvidenceItem
        kind, number, key = "event", 3, "event:2"
        spans = ((17, 30),)

    rendered = render_output(output, [Item()], width=30)  # type: ignore[list-item]
    rows = rendered.text.plain.split("\n")
    assert "".join(row[rendered.gutter :] for row in rows) == output
    marked = rendered.line_of(17)
    assert rows[marked].startswith("[3]") and all(
        not row.startswith("[") for n, row in enumerate(rows) if n != marked
    )


async def test_legend_names_the_highlights_and_l_hides_it(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open(pilot, 1)  # a nonliteral generation: events, characters
        legend = screen.query_one("#legend")
        text = str(legend.render())
        assert "event window" in text and "characters:" in text
        names = [i.label.split(" / ")[0] for i in screen.items if i.kind == "character" and i.spans]
        assert names and all(name in text for name in names[:3])
        await pilot.press("l")
        assert not legend.display
        await pilot.press("l")
        assert legend.display
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        app.open_run("demo-literal")
        await settle(pilot)
        await pilot.press("enter")  # a literal generation: the overlap
        await settle(pilot)
        assert "literal overlap" in str(app.screen.query_one("#legend").render())


async def test_brackets_with_no_evidence_selected(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await _open(pilot, 1)
        first = next(i for i in screen.items if i.spans)
        bare = next(i for i in screen.items if not i.spans)
        screen.query_one("#checklist").select_item(bare.key)
        await settle(pilot)
        assert screen.selected is None or not screen.selected.spans
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.selected == first and screen.span_index == 0
        await pilot.press("a")  # annotation mode, blind: nothing to select, and it says why
        await settle(pilot)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        toasts = [str(t.render()) for t in app.screen.query("Toast")]
        assert any("blind mode hides the judges" in t for t in toasts)
