"""Every maximal span of an output that occurs in the library (copyaudit.tracing.index):
for each word of the output, the longest run from it that the library holds; a run of at
least `min_tokens` words not inside an earlier one is a traced span, with how often the
library holds it and where (up to `max_places` places)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from copyaudit.tracing.index import LibraryIndex
from copyaudit.tracing.near import near_matches
from copyaudit.tracing.tokens import word_spans

DEFAULT_MIN_TOKENS = 20  # ~110 characters of English prose; 30 words reach 160 easily
MAX_PLACES = 20
SEED_WORDS = 4  # near-verbatim matches are looked for around exact runs this long
SEED_PLACES = 20  # places of one seed looked at


@dataclass(frozen=True)
class Place:
    work: str  # the work's library key (its SHA-256)
    start: int  # character offsets in the work's text
    end: int


@dataclass(frozen=True)
class TracedSpan:
    start: int  # character offsets in the output (first word's start, last word's end)
    end: int
    words: int
    count: int  # how many times the library holds it
    places: tuple[Place, ...]  # the first MAX_PLACES of them, in library order

    @property
    def chars(self) -> int:
        return self.end - self.start


def _maximal_runs(
    index: LibraryIndex, ids: list[int], min_tokens: int
) -> Iterator[tuple[int, int, int, int]]:
    """(start, length, lo, hi) of every run of at least `min_tokens` words from `start`
    that the library holds and no earlier run contains; lo:hi its suffix-array range."""
    reach = 0  # the end (in words) of the runs found so far
    for start in range(len(ids)):
        if len(ids) - start < min_tokens or len(ids) <= reach:
            return
        length, lo, hi = index.longest_from(ids, start)
        if length < min_tokens or start + length <= reach:
            continue
        reach = start + length
        yield start, length, lo, hi


def trace(
    index: LibraryIndex,
    text: str,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    max_places: int = MAX_PLACES,
) -> list[TracedSpan]:
    spans = word_spans(text)
    ids = index.ids([word for word, _, _ in spans])
    found: list[TracedSpan] = []
    for start, length, lo, hi in _maximal_runs(index, ids, min_tokens):
        places = tuple(
            Place(
                index.works[work],
                int(index.offsets[position]),
                int(index.ends[position + length - 1]),
            )
            for work, position in index.locations(lo, hi, max_places)
        )
        found.append(
            TracedSpan(spans[start][1], spans[start + length - 1][2], length, hi - lo, places)
        )
    return found


@dataclass(frozen=True)
class NearSpan:
    """A near-verbatim match (copyaudit.tracing.near) of the output in one work."""

    start: int  # character offsets in the output
    end: int
    words: int
    chars: int  # the reference's count: matched letters and the spaces between words
    slips: int
    work: str
    work_start: int  # character offsets in the work
    work_end: int


def trace_near(index: LibraryIndex, text: str, min_words: int) -> list[NearSpan]:
    """Near-verbatim matches of at least `min_words` words that are not exact, found in
    the stretch of each work around an exact run of SEED_WORDS words (the first
    SEED_PLACES places of each): the whole library is not scanned word by word."""
    spans = word_spans(text)
    words = [w for w, _, _ in spans]
    windows: set[tuple[int, int]] = set()
    found: dict[tuple[int, tuple[tuple[int, int], ...]], NearSpan] = {}
    ids = index.ids(words)
    for start, _, lo, hi in _maximal_runs(index, ids, SEED_WORDS):
        for work, position in index.locations(lo, hi, SEED_PLACES):
            at = position - int(index.work_starts[work])
            windows.add((work, at - start - len(words) - 2))
    for work, first in sorted(windows):
        first = max(first, 0)
        stretch = index.words_of(work, first, first + 2 * len(words) + 4)
        for match in near_matches(words, stretch, min_words):
            if match.exact:
                continue
            pairs = tuple((i, j + first) for i, j in match.pairs)
            key = (work, pairs)
            if key in found:
                continue
            begin = int(index.work_starts[work]) + pairs[0][1]
            end = int(index.work_starts[work]) + pairs[-1][1]
            found[key] = NearSpan(
                spans[pairs[0][0]][1],
                spans[pairs[-1][0]][2],
                match.words,
                match.chars,
                sum(b != (a[0] + 1, a[1] + 1) for a, b in itertools.pairwise(pairs)),
                index.works[work],
                int(index.offsets[begin]),
                int(index.ends[end]),
            )
    whole = [  # a match cut at the edge of one stretch is inside the same match of another
        near
        for key, near in found.items()
        if not any(
            other[0] == key[0] and len(other[1]) > len(key[1]) and set(key[1]) <= set(other[1])
            for other in found
        )
    ]
    return sorted(whole, key=lambda n: (n.start, n.work))
