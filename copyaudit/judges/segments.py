"""CoTaEval's longest common substring (LCS) and accumulated common substrings (ACS).

As boyiwei/CoTaEval `find_common_sequences` computes them (lib/utils.py on characters,
process.py on words): both texts are normalised into tokens, every common run that
cannot be extended to the left (one per cell of the longest-common-suffix table with a
run of at least `min_tokens`) is a candidate segment of the output, and the segments
are taken greedily from the start of the output — the earliest start first, the longest
at that start, then the next start after its end. LCS is the longest segment taken, ACS
the total length of the segments taken (both in tokens). Because the selection is
greedy, LCS can be shorter than the true longest common substring when an earlier
segment overlaps it; the metrics keep CoTaEval's numbers.

- characters: lowercased, whitespace and ASCII punctuation removed, min 1 character;
- words: lowercased, ASCII punctuation removed, split on whitespace, min 3 words (the
  threshold process.py passes).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


class Segments(NamedTuple):
    longest: int  # LCS: tokens in the longest segment taken
    total: int  # ACS: tokens in all segments taken


def char_tokens(text: str) -> list[str]:
    """CoTaEval's character normalisation: lowercase, no whitespace, no punctuation."""
    return list("".join(text.lower().split()).translate(_NO_PUNCTUATION))


def word_tokens(text: str) -> list[str]:
    """CoTaEval's word normalisation: lowercase, no punctuation, whitespace-split."""
    return text.lower().translate(_NO_PUNCTUATION).split()


def common_segments(output: Sequence[str], reference: Sequence[str], min_tokens: int) -> Segments:
    """LCS and ACS of `output` against `reference`, both token lists (see module doc)."""
    if not output or not reference:
        return Segments(0, 0)
    vocabulary: dict[str, int] = {}
    out = np.array([vocabulary.setdefault(t, len(vocabulary)) for t in output])
    ref = np.array([vocabulary.setdefault(t, len(vocabulary)) for t in reference])
    run = np.zeros(len(ref), dtype=np.int64)  # common-suffix lengths ending at (i, j)
    last_end: dict[int, int] = {}  # segment start -> its furthest end (inclusive)
    for i, token in enumerate(out):
        shifted = np.concatenate(([0], run[:-1]))
        run = np.where(ref == token, shifted + 1, 0)
        for start in set((i + 1 - run[run >= max(min_tokens, 1)]).tolist()):
            last_end[start] = i  # rows come in order: the later end is the longer
    longest = total = 0
    taken_until = -1
    for start in sorted(last_end):
        if start > taken_until:
            length = last_end[start] - start + 1
            longest = max(longest, length)
            total += length
            taken_until = last_end[start]
    return Segments(longest, total)


def char_segments(output: str, reference: str) -> Segments:
    """LCS(character) and ACS over characters, as CoTaEval."""
    return common_segments(char_tokens(output), char_tokens(reference), min_tokens=1)


def word_segments(output: str, reference: str) -> Segments:
    """LCS(word) and ACS(word), as CoTaEval."""
    return common_segments(word_tokens(output), word_tokens(reference), min_tokens=3)
