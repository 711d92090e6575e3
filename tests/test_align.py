"""Output and reference aligned passage by passage (copyaudit.render.align)."""

from __future__ import annotations

from copyaudit.render.align import align, slice_segments
from copyaudit.render.highlight import Mark, segments

OUTPUT = "Alice said: the quick brown fox jumps over the lazy dog. Then she left."
REFERENCE = "The quick brown fox jumps over the lazy dog, and nothing more."


def _rows(output: str, reference: str) -> list[tuple[str, str, str]]:
    return [
        (row.kind, output[slice(*row.output)], reference[slice(*row.reference)])
        for row in align(output, reference)
    ]


def test_a_shared_passage_lines_up_on_one_row_between_the_differing_ones() -> None:
    assert _rows(OUTPUT, REFERENCE) == [
        ("differs", "Alice said: the", "The"),  # words compare exactly: case counts
        ("same", "quick brown fox jumps over the lazy", "quick brown fox jumps over the lazy"),
        ("differs", "dog. Then she left.", "dog, and nothing more."),
    ]


def test_a_stretch_only_one_text_has_gets_its_own_row() -> None:
    output, reference = "one two three four five six", "one two three extra words four five six"
    assert _rows(output, reference) == [
        ("same", "one two three", "one two three"),
        ("reference only", "", "extra words"),
        ("same", "four five six", "four five six"),
    ]
    assert _rows("  lead in here\nand more  ", "lead in here") == [
        ("same", "lead in here", "lead in here"),  # the spans leave whitespace out
        ("output only", "and more", ""),
    ]
    assert _rows("", "") == []
    assert [row.kind for row in align("", "a b")] == ["reference only"]


def test_a_row_keeps_the_highlights_of_its_characters() -> None:
    text = "abc def ghi"
    marked = segments(text, [Mark(2, 6, "verbatim", "run")])
    piece = slice_segments(marked, (4, 11))
    assert [(s.text, s.kinds) for s in piece] == [("de", ("verbatim",)), ("f ghi", ())]


def test_a_lone_shared_word_is_no_passage_of_its_own() -> None:
    """'in' shared after the texts part ways joins the differing stretch (the demo's
    pride-lit-03 case showed it as a row of its own)."""
    output = "and spent the rest of the evening walking about in the world"
    reference = "and spent the rest of the evening in"
    assert _rows(output, reference) == [
        ("same", "and spent the rest of the evening", "and spent the rest of the evening"),
        ("differs", "walking about in the world", "in"),
    ]
    assert _rows("one two", "one two") == [("same", "one two", "one two")]  # all there is
    assert [r.kind for r in align("a b c x y z", "a b c q y z")] == ["same", "differs"]
