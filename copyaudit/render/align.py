"""Two texts aligned passage by passage, as a diff viewer shows them side by side.

The texts are cut into words (each with the whitespace after it) and matched with
difflib.SequenceMatcher over the words (autojunk off: a frequent word is still a
word). Each opcode is a row: a stretch both texts share ("same"), a stretch each
has in its own words ("differs"), or a stretch only one of them has; the rows keep
both texts' order, so a shared passage sits on the same row on both sides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from copyaudit.render.highlight import Segment

_WORD = re.compile(r"\S+")
ROW_KINDS = {
    "equal": "same",
    "replace": "differs",
    "delete": "output only",
    "insert": "reference only",
}


@dataclass(frozen=True)
class AlignedRow:
    kind: str  # a value of ROW_KINDS
    output: tuple[int, int]  # character span in the output (empty when it has none),
    reference: tuple[int, int]  # whitespace around the passage left out


def _words(text: str) -> tuple[list[str], list[int]]:
    """The words and where each piece starts: a word owns the whitespace after it, the
    first piece any whitespace before it; starts end with len(text)."""
    matches = list(_WORD.finditer(text))
    starts = [m.start() for m in matches]
    if starts:
        starts[0] = 0
    return [m.group() for m in matches], [*starts, len(text)]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace at its ends (empty spans collapse to start)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def align(output: str, reference: str) -> list[AlignedRow]:
    """The rows aligning `output` with `reference` (empty when both have no words)."""
    out_words, out_starts = _words(output)
    ref_words, ref_starts = _words(reference)
    matcher = SequenceMatcher(None, out_words, ref_words, autojunk=False)
    return [
        AlignedRow(
            ROW_KINDS[tag],
            _trimmed(output, out_starts[i1], out_starts[i2]),
            _trimmed(reference, ref_starts[j1], ref_starts[j2]),
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]


def slice_segments(segments: list[Segment], span: tuple[int, int]) -> list[Segment]:
    """The part of a text's segments (copyaudit.render.highlight.segments) within the
    character `span`, each piece keeping its marks."""
    start, end = span
    out: list[Segment] = []
    offset = 0
    for segment in segments:
        lo, hi = max(start, offset), min(end, offset + len(segment.text))
        if lo < hi:
            out.append(Segment(segment.text[lo - offset : hi - offset], segment.marks))
        offset += len(segment.text)
    return out
