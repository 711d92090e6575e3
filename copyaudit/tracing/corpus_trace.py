"""Every maximal span of an output, in the tokenizer's tokens, that a corpus indexed
elsewhere holds (copyaudit.tracing.corpus): for each token, the longest run from it the
corpus holds; a run of at least `min_tokens` tokens not inside an earlier one is a span.
The longest `max_spans` spans are looked up (count, first `max_places` places); the rest
keep only their length, so the work per generation is bounded."""

from __future__ import annotations

from dataclasses import dataclass

from copyaudit.tracing.corpus import CorpusIndex, CorpusPlace

# 160 characters (the flag) is about 40 tokens of English prose for the tokenizers of
# infini-gram's prebuilt indexes (Llama-2, GPT-2, OLMo: about 4 characters a token), so a
# span of 160 characters is found with room to spare
DEFAULT_MIN_TOKENS = 32
MAX_SPANS = 50  # spans looked up per generation, longest first
MAX_PLACES = 5  # places read per span


@dataclass(frozen=True)
class CorpusSpan:
    start: int  # characters of the output: its first token's start, its last token's end
    end: int
    first_token: int  # in the output's tokens
    tokens: int
    text: str  # the span's tokens decoded: the text the corpus holds
    count: int | None  # how many times the corpus holds it (None: not looked up)
    places: tuple[CorpusPlace, ...]

    @property
    def chars(self) -> int:
        return len(self.text)


def maximal_runs(lengths: list[int], min_tokens: int) -> list[tuple[int, int]]:
    """(start, length) of every run of at least `min_tokens` tokens that no earlier run
    contains, given the longest run from each token."""
    runs, reach = [], 0
    for start, length in enumerate(lengths):
        if length >= min_tokens and start + length > reach:
            runs.append((start, length))
            reach = start + length
    return runs


def trace_corpus(
    corpus: CorpusIndex,
    text: str,
    min_tokens: int = DEFAULT_MIN_TOKENS,
    max_spans: int = MAX_SPANS,
    max_places: int = MAX_PLACES,
) -> list[CorpusSpan]:
    """The output's maximal spans in output order; the longest `max_spans` with their
    count and places."""
    ids, offsets = corpus.encode(text)
    runs = maximal_runs(corpus.longest_from_each(ids), min_tokens)
    looked_up = set(sorted(runs, key=lambda run: (-run[1], run[0]))[:max_spans])
    spans = []
    for start, length in runs:
        needle = ids[start : start + length]
        count: int | None = None
        places: tuple[CorpusPlace, ...] = ()
        if (start, length) in looked_up:
            count, segments = corpus.find(needle)
            places = tuple(corpus.places(segments, length, max_places))
        spans.append(
            CorpusSpan(
                offsets[start][0],
                offsets[start + length - 1][1],
                start,
                length,
                corpus.decode(needle),
                count,
                places,
            )
        )
    return spans
