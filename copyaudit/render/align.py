"""Two texts aligned passage by passage, as a diff viewer shows them side by side.

The texts are cut into words (each with the whitespace after it) and matched with
difflib.SequenceMatcher over the words (autojunk off: a frequent word is still a
word). Each opcode is a row: a stretch both texts share ("same"), a stretch each
has in its own words ("differs"), or a stretch only one of them has; the rows keep
both texts' order, so a shared passage sits on the same row on both sides. A shared
stretch of fewer than MIN_SHARED_WORDS words between differing ones (a lone "in" or
"the") is not a passage: it joins the differing stretch around it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from copyaudit.render.highlight import Segment

_WORD = re.compile(r"\S+")
MIN_SHARED_WORDS = 3
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
        for tag, i1, i2, j1, j2 in _passages(matcher.get_opcodes())
    ]


Opcode = tuple[str, int, int, int, int]


def _passages(opcodes: Sequence[Opcode]) -> list[Opcode]:
    """The opcodes with short shared stretches (fewer than MIN_SHARED_WORDS words, the
    texts differing beside them) folded into the differing stretches beside them."""
    out: list[Opcode] = []
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal" and i2 - i1 < MIN_SHARED_WORDS and len(opcodes) > 1:
            tag = "replace"
        if tag != "equal" and out and out[-1][0] != "equal":
            _, a1, _, b1, _ = out[-1]
            out[-1] = (_differing(i2 - a1, j2 - b1), a1, i2, b1, j2)
        else:
            out.append((tag if tag == "equal" else _differing(i2 - i1, j2 - j1), i1, i2, j1, j2))
    return out


def _differing(output_words: int, reference_words: int) -> str:
    if output_words and reference_words:
        return "replace"
    return "delete" if output_words else "insert"


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
