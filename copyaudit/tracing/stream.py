"""The index's token stream built with numpy, so that a library of a gigabyte is indexed
without a Python object per word: each work's words and their character offsets
(the same as copyaudit.tracing.tokens.word_spans gives), their ids, and the suffix array
of the whole stream."""

from __future__ import annotations

import numpy as np
from pydivsufsort import divsufsort

from copyaudit.tracing.tokens import WORD

_ASCII_WORD = np.array([WORD.fullmatch(chr(c)) is not None for c in range(128)])
_FILTER_CHUNK = 1 << 24  # tokens or suffixes handled at a time (bounded temporaries)


def _word_chars(codes: np.ndarray) -> np.ndarray:
    """Whether each code point is a word character (WORD's class, asked of each distinct
    code point beyond ASCII once)."""
    ascii_ = codes < 128
    inside = np.zeros(len(codes), dtype=bool)
    inside[ascii_] = _ASCII_WORD[codes[ascii_]]
    others = codes[~ascii_]
    if len(others):
        distinct, where = np.unique(others, return_inverse=True)
        wordy = np.array([WORD.fullmatch(chr(c)) is not None for c in distinct.tolist()])
        inside[~ascii_] = wordy[where]
    return inside


def word_arrays(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The casefolded words of `text` and each one's start and end (character offsets):
    word_spans' answer, as a list and two arrays."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    inside = _word_chars(codes)
    edges = np.diff(inside.view(np.int8), prepend=0, append=0)
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    # the text with every other character a \0, casefolded (character by character, so
    # the words fold as they would one by one) and split at the \0s
    spaced = np.where(inside, codes, 0).astype("<u4").tobytes()
    words = list(filter(None, spaced.decode("utf-32-le", "surrogatepass").casefold().split("\0")))
    if len(words) != len(starts):
        raise AssertionError("a casefolded word holds a \\0")
    return words, starts, ends


def word_ids(words: list[str], vocabulary: dict[str, int]) -> np.ndarray:
    """Each word's id (uint32), a word new to `vocabulary` numbered in the order it is
    first seen (1, 2, ...)."""
    new = [w for w in dict.fromkeys(words) if w not in vocabulary]
    numbers = range(len(vocabulary) + 1, len(vocabulary) + 1 + len(new))
    vocabulary.update(zip(new, numbers, strict=True))
    return np.fromiter(map(vocabulary.__getitem__, words), dtype=np.uint32, count=len(words))


def suffix_array(tokens: np.ndarray) -> np.ndarray:
    """The suffix array of `tokens` (int32 below 2**31 tokens, else int64): libdivsufsort
    over the tokens written big-endian in as few bytes as the largest needs, keeping the
    suffixes that start on a token (the bytes' order is the tokens' order)."""
    width = max(1, (int(tokens.max(initial=0)).bit_length() + 7) // 8)
    data = np.empty((len(tokens), width), dtype=np.uint8)
    for begin in range(0, len(tokens), _FILTER_CHUNK):  # a chunk at a time: no copy of all
        chunk = tokens[begin : begin + _FILTER_CHUNK]
        for byte in range(width):  # most significant first
            data[begin : begin + len(chunk), byte] = (chunk >> (8 * (width - 1 - byte))) & 0xFF
    ordered = divsufsort(data.reshape(-1))
    del data
    if width == 1:
        return ordered
    out = np.empty(len(tokens), dtype=np.int32 if len(tokens) < 2**31 else np.int64)
    filled = 0
    for begin in range(0, len(ordered), _FILTER_CHUNK):
        chunk = ordered[begin : begin + _FILTER_CHUNK]
        kept = chunk[chunk % width == 0] // width
        out[filled : filled + len(kept)] = kept
        filled += len(kept)
    return out
