"""The list's search string marked where it occurs in a shown text, matched as the list
matched it (db.search: SQL LIKE, ASCII letters case-folded, every other character
exactly), left to right, without overlaps. Styles only: the text stays plain."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.style import Style
from rich.text import Text

SEARCH_STYLE = Style(color="#000000", bgcolor="#ffd75f", bold=True)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def match_ranges(text: str, needle: str) -> list[tuple[int, int]]:
    """(start, end) of each occurrence of `needle` in `text`."""
    if not needle:
        return []
    haystack, wanted = text.translate(_ASCII_LOWER), needle.translate(_ASCII_LOWER)
    ranges: list[tuple[int, int]] = []
    at = haystack.find(wanted)
    while at >= 0:
        ranges.append((at, at + len(wanted)))
        at = haystack.find(wanted, at + len(wanted))
    return ranges


def mark_matches(
    shown: Text,
    source: str,
    needle: str,
    place: Callable[[int, int], Iterable[tuple[int, int]]] | None = None,
) -> int:
    """Style each occurrence of `needle` in `source` within `shown`, the text that shows
    it (`place` maps a range of `source` to its ranges in `shown`; default: the same
    offsets). Returns how many occurrences there are."""
    ranges = match_ranges(source, needle)
    for start, end in ranges:
        for shown_start, shown_end in place(start, end) if place else [(start, end)]:
            shown.stylize(SEARCH_STYLE, shown_start, shown_end)
    return len(ranges)
