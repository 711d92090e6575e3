"""Every maximal span of an output that occurs in the library (copyaudit.tracing.index):
for each word of the output, the longest run from it that the library holds; a run of at
least `min_tokens` words not inside an earlier one is a traced span, with how often the
library holds it and where (up to `max_places` places)."""

from __future__ import annotations

from dataclasses import dataclass

from copyaudit.tracing.index import LibraryIndex
from copyaudit.tracing.tokens import word_spans

DEFAULT_MIN_TOKENS = 20  # ~110 characters of English prose; 30 words reach 160 easily
MAX_PLACES = 20


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


def trace(
    index: LibraryIndex,
    text: str,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    max_places: int = MAX_PLACES,
) -> list[TracedSpan]:
    spans = word_spans(text)
    ids = index.ids([word for word, _, _ in spans])
    found: list[TracedSpan] = []
    reach = 0  # the end (in words) of the spans found so far
    for start in range(len(ids)):
        if len(ids) - start < min_tokens or start + (len(ids) - start) <= reach:
            break
        length, lo, hi = index.longest_from(ids, start)
        if length < min_tokens or start + length <= reach:
            continue
        reach = start + length
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
