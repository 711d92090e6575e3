"""The library's index: one token stream of every work (word ids, a 0 between works and at
the end), its suffix array (pydivsufsort: copyaudit.tracing.stream), and where each token
stands (its work and character offset). Saved as .npy files beside the library's texts and
memory-mapped when opened; its manifest lists the works' SHA-256 it was built from, so
an index older than the library is known as such.

Search: the suffixes starting with a pattern are one range of the suffix array; the first
word's range is read from `firsts` (the suffixes are sorted by their first word), and the
range for one more word is found inside the last by two binary searches on the word at
that depth (the range's suffixes share everything before it), until few suffixes remain:
those are compared with the rest of the pattern side by side. A 0 never occurs in a
pattern, so no match crosses from one work into the next."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from copyaudit.errors import UserError
from copyaudit.tracing.stream import suffix_array, word_arrays, word_ids

FILES = (
    "tokens.npy", "suffixes.npy", "offsets.npy", "ends.npy", "work_starts.npy", "firsts.npy"
)  # fmt: skip
SMALL_RANGE = 16  # suffixes few enough to compare with the pattern side by side
WINDOW = 64  # words compared at a time
MANIFEST = "manifest.json"


@dataclass(frozen=True)
class IndexedWork:
    key: str  # the library's id of the work (its SHA-256)
    text: str


class LibraryIndex:
    """A built index, in memory or memory-mapped from a folder."""

    def __init__(
        self,
        tokens: np.ndarray,
        suffixes: np.ndarray,
        offsets: np.ndarray,
        ends: np.ndarray,
        work_starts: np.ndarray,
        firsts: np.ndarray,
        works: list[str],
        vocabulary: dict[str, int],
    ) -> None:
        self.tokens, self.suffixes, self.offsets, self.ends = tokens, suffixes, offsets, ends
        self.work_starts = work_starts  # token position where each work begins
        self.firsts = firsts  # firsts[t]:firsts[t + 1], the suffixes that begin with word t
        self.works = works  # work keys, in the stream's order
        self.vocabulary = vocabulary
        self._spelled: list[str] | None = None  # id -> word, made when first needed

    @classmethod
    def build(cls, works: Sequence[IndexedWork]) -> LibraryIndex:
        """Tokenise each work with numpy (copyaudit.tracing.stream) and sort the suffixes
        of the whole stream once: no Python object per word survives a work."""
        vocabulary: dict[str, int] = {}
        widest = max([len(w.text) for w in works], default=0)
        places = np.uint32 if widest < 2**32 else np.int64  # character offsets in a work
        # room for the most words the texts could hold (every other character) and a 0
        # after each work: pages never written are never resident, and no word's entry
        # is copied from one array to another
        room = sum((len(w.text) + 1) // 2 + 1 for w in works) or 1
        tokens = np.empty(room, dtype=np.uint32)
        character_starts, character_ends = np.empty(room, places), np.empty(room, places)
        starts = np.zeros(len(works), dtype=np.int64)
        position = 0
        for number, work in enumerate(works):
            starts[number] = position
            words, first, last = word_arrays(work.text)
            end = position + len(words)
            tokens[position:end] = word_ids(words, vocabulary)
            character_starts[position:end], character_ends[position:end] = first, last
            tokens[end] = 0  # between works, and at the end
            character_starts[end] = character_ends[end] = len(work.text)
            position = end + 1
        if not works:
            tokens[0] = character_starts[0] = character_ends[0] = 0
            position = 1
        tokens = tokens[:position]
        character_starts, character_ends = character_starts[:position], character_ends[:position]
        counts = np.bincount(tokens, minlength=len(vocabulary) + 1)
        firsts = np.concatenate(([0], np.cumsum(counts)))  # the suffixes are sorted by word
        return cls(
            tokens,
            suffix_array(tokens),
            character_starts,
            character_ends,
            starts,
            firsts,
            [w.key for w in works],
            vocabulary,
        )

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        arrays = (
            self.tokens, self.suffixes, self.offsets, self.ends, self.work_starts, self.firsts
        )  # fmt: skip
        for name, array in zip(FILES, arrays, strict=True):
            np.save(folder / name, array)
        manifest = {"works": self.works, "vocabulary": self.vocabulary}
        (folder / MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")

    @classmethod
    def open(cls, folder: Path) -> LibraryIndex:
        missing = [name for name in (*FILES, MANIFEST) if not (folder / name).is_file()]
        if missing:
            raise UserError(
                f"{folder}: the index lacks {', '.join(missing)} (built by an older "
                "copyaudit?): run copyaudit library index"
            )
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        # plain arrays over the mapped files: a scalar read costs less than a memmap's
        tokens, suffixes, offsets, ends, starts, firsts = (
            np.load(folder / name, mmap_mode="r").view(np.ndarray) for name in FILES
        )
        return cls(
            tokens,
            suffixes,
            offsets,
            ends,
            starts,
            firsts,
            manifest["works"],
            manifest["vocabulary"],
        )

    # --- search ---------------------------------------------------------------------

    def _bound(self, lo: int, hi: int, depth: int, token: int, upper: bool) -> int:
        """The first suffix in [lo, hi) whose token at `depth` is >= `token` (> when
        `upper`); the suffixes in the range share their first `depth` tokens."""
        tokens, suffixes = self.tokens, self.suffixes
        while lo < hi:
            mid = (lo + hi) // 2
            value = int(tokens[int(suffixes[mid]) + depth])
            if value < token or (upper and value == token):
                lo = mid + 1
            else:
                hi = mid
        return lo

    def narrow(self, lo: int, hi: int, depth: int, token: int) -> tuple[int, int]:
        """The range of suffixes in [lo, hi) whose token at `depth` is `token`."""
        first = self._bound(lo, hi, depth, token, upper=False)
        return first, self._bound(first, hi, depth, token, upper=True)

    def longest_from(self, ids: Sequence[int], start: int) -> tuple[int, int, int]:
        """(length, lo, hi): the longest prefix of ids[start:] in the library and the
        suffix-array range of its occurrences. The first word's range is read from
        `firsts`; once a range holds SMALL_RANGE suffixes or fewer, they are compared
        with the rest of the pattern a window at a time (_extend)."""
        lo, hi = 0, len(self.suffixes)
        length = 0
        for token in ids[start:]:
            if token <= 0:
                break
            if hi - lo <= SMALL_RANGE:
                return self._extend(ids, start, length, lo, hi)
            if length == 0:
                new_lo, new_hi = int(self.firsts[token]), int(self.firsts[token + 1])
            else:
                new_lo, new_hi = self.narrow(lo, hi, length, token)
            if new_lo >= new_hi:
                break
            lo, hi, length = new_lo, new_hi, length + 1
        return length, lo, hi

    def _extend(
        self, ids: Sequence[int], start: int, length: int, lo: int, hi: int
    ) -> tuple[int, int, int]:
        """longest_from's answer for a range of few suffixes sharing `length` words with
        the pattern: each suffix's next words compared with the pattern's, WINDOW at a
        time; the suffixes that match furthest are one range (they share a prefix)."""
        pattern = np.asarray(ids[start + length :], dtype=np.int64)
        unknown = np.flatnonzero(pattern <= 0)  # no place holds a word the library lacks
        pattern = pattern[: unknown[0]] if len(unknown) else pattern
        positions = np.asarray(self.suffixes[lo:hi], dtype=np.int64) + length
        last = len(self.tokens) - 1  # the stream's final 0, which no pattern word matches
        while len(pattern):
            width = min(len(pattern), WINDOW)
            at = np.minimum(positions[:, None] + np.arange(width), last)
            same = self.tokens[at] == pattern[:width]
            matched = np.where(same.all(axis=1), width, same.argmin(axis=1))
            best = int(matched.max())
            if best == 0:
                break
            rows = np.flatnonzero(matched == best)
            lo, hi, length = lo + int(rows[0]), lo + int(rows[-1]) + 1, length + best
            if best < width:
                break
            positions, pattern = positions[rows[0] : rows[-1] + 1] + width, pattern[width:]
        return length, lo, hi

    def locations(self, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
        """(work number, token position) of up to `limit` occurrences, in stream order.
        When more than `limit` occur, which ones are kept is the suffix array's order (the
        words that follow the span decide), not the first `limit` in the library."""
        positions = np.sort(np.asarray(self.suffixes[lo : min(hi, lo + limit)]))
        works = np.searchsorted(self.work_starts, positions, side="right") - 1
        return [(int(w), int(p)) for w, p in zip(works, positions, strict=True)]

    def words_of(self, work: int, start: int, end: int) -> list[str]:
        """The words of work number `work` from its word `start` to `end` (clipped)."""
        if self._spelled is None:
            spelled = [""] * (len(self.vocabulary) + 1)
            for word, number in self.vocabulary.items():
                spelled[number] = word
            self._spelled = spelled
        spelled = self._spelled
        first = int(self.work_starts[work])
        last = (
            int(self.work_starts[work + 1]) - 1 if work + 1 < len(self.work_starts)
            else len(self.tokens) - 1
        )  # fmt: skip
        ids = self.tokens[first + max(start, 0) : first + min(end, last - first)]
        return [spelled[int(i)] for i in ids]

    def ids(self, words: Sequence[str]) -> list[int]:
        """Each word's id in the library (0: a word the library does not hold)."""
        return [self.vocabulary.get(w, 0) for w in words]
