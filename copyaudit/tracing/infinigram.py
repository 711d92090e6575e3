"""The trace judge's search answered by the infini-gram engine (the `infini-gram` package,
Liu et al. 2024; extra `infinigram`) over the library's words, written in the engine's
format beside the library's own index (`index/infinigram/`): `tokenized.0` (each work:
the separator 0xFFFF, then its word ids as little-endian u16), `offset.0` (each work's
first byte, u64) and `table.0`, the suffix array the package's own indexer (its
`rust_indexing` program) builds. The library's index (copyaudit.tracing.index) still
gives the vocabulary, the words and the character offsets; the engine gives the search:
the longest run from each word, its count and its suffix-array range, whose places are
read from `table.0` (a pointer of `ratio` bytes per rank).

Limits, measured with infini-gram 2.6.0: its indexer allocates 32 GiB for u32 tokens, so
only a library of fewer than 65,535 distinct words can be written (u16). An index built
elsewhere over a tokenizer's ids (a training corpus) is read by copyaudit.tracing.corpus:
its tokens are not these words, and its places are not characters of a registered text.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.tracing.index import LibraryIndex

FOLDER = "infinigram"  # inside the library's index folder
SEPARATOR = 0xFFFF  # the engine's document separator for u16 tokens
TOKEN_BYTES = 2
INDEXER_MEMORY_GIB = 4  # what the package's indexer is told it may use


def _engine_module() -> Any:
    try:
        from infini_gram import engine
    except ImportError:
        raise UserError(
            "the infini-gram engine is not installed: pip install 'copyaudit[infinigram]'"
        ) from None
    return engine


def write_infinigram(index: LibraryIndex, folder: Path) -> Path:
    """Write `index`'s word stream in infini-gram's format under `folder`/infinigram and
    build its suffix array with the package's indexer; the folder written."""
    if len(index.vocabulary) >= SEPARATOR:
        raise UserError(
            f"the library holds {len(index.vocabulary)} distinct words: the infini-gram "
            f"index is written with u16 ids (fewer than {SEPARATOR})"
        )
    from infini_gram import indexing

    target = folder / FOLDER
    target.mkdir(parents=True, exist_ok=True)
    for stale in ("tokenized.0", "offset.0", "table.0"):
        (target / stale).unlink(missing_ok=True)
    starts = [int(s) for s in index.work_starts]
    ends = [*(s - 1 for s in starts[1:]), len(index.tokens) - 1]  # before each work's 0
    offsets, written = [], 0
    with open(target / "tokenized.0", "wb") as out:
        for start, end in zip(starts, ends, strict=True):
            block = np.concatenate(([SEPARATOR], index.tokens[start:end])).astype("<u2")
            offsets.append(written)
            written += out.write(block.tobytes())
    (target / "offset.0").write_bytes(np.asarray(offsets, dtype="<u8").tobytes())
    args = argparse.Namespace(
        save_dir=str(target), temp_dir=str(target), worker_id=0, shards=1, workers=1,
        mem=INDEXER_MEMORY_GIB, cpus=1, token_width=TOKEN_BYTES,
    )  # fmt: skip
    here, said = os.getcwd(), io.StringIO()
    try:  # the indexer changes directory to run its program, and prints its progress
        with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
            indexing.build_sa(args)
    except SystemExit:
        raise UserError(f"{target}: infini-gram's indexer failed: {said.getvalue()}") from None
    finally:
        os.chdir(here)
    return target


class InfiniGramIndex(LibraryIndex):
    """A library index whose search is the infini-gram engine's (see the module)."""

    engine: Any
    _previous: tuple[Sequence[int] | None, int, int] = (None, 0, 0)  # ids, start, length
    table: np.ndarray
    doc_offsets: np.ndarray
    ratio: int

    @classmethod
    def open(cls, folder: Path) -> InfiniGramIndex:
        index = super().open(folder)
        assert isinstance(index, InfiniGramIndex)
        target = folder / FOLDER
        if not (target / "table.0").is_file():
            raise UserError(f"{target}: no infini-gram index: run library index --infinigram")
        engine = _engine_module()
        index.engine = engine.InfiniGramEngine(
            index_dir=str(target), eos_token_id=0, vocab_size=SEPARATOR, token_dtype="u16"
        )
        index.table = np.memmap(target / "table.0", dtype=np.uint8, mode="r")
        index.doc_offsets = np.fromfile(target / "offset.0", dtype="<u8").astype(np.int64)
        tokens = (target / "tokenized.0").stat().st_size // TOKEN_BYTES
        if tokens != len(index.tokens) or len(index.doc_offsets) != len(index.works):
            raise UserError(f"{target}: not the library's index: run library index --infinigram")
        index.ratio = len(index.table) // tokens
        return index

    def longest_from(self, ids: Sequence[int], start: int) -> tuple[int, int, int]:
        """(length, lo, hi) of the longest prefix of ids[start:] the library holds (lo:hi
        its ranks), by the engine's counts: a prefix held means every shorter one is, so
        the length is found by doubling then halving; and the run from the word before,
        less its first word, is held (tracing asks for each start in turn)."""
        limit = start
        while limit < len(ids) and ids[limit] > 0:
            limit += 1
        previous_ids, previous_start, previous_length = self._previous
        held = previous_length - 1 if ids is previous_ids and start == previous_start + 1 else 0
        best = self._find(ids[start : start + held]) if held > 0 else None
        failed, step = None, 1
        while held < limit - start:
            n = min(held + step, limit - start)
            found = self._find(ids[start : start + n])
            if found is None:
                failed = n
                break
            held, best, step = n, found, step * 2
        while failed is not None and failed - held > 1:
            middle = (held + failed) // 2
            found = self._find(ids[start : start + middle])
            held, best, failed = (middle, found, failed) if found else (held, best, middle)
        self._previous = (ids, start, held)
        return (held, *best) if best is not None else (0, 0, 0)

    def _find(self, words: Sequence[int]) -> tuple[int, int] | None:
        """The ranks holding `words`, None when none does."""
        found = self.engine.find(input_ids=[int(i) for i in words])
        if not found["cnt"]:
            return None
        lo, hi = found["segment_by_shard"][0]
        return int(lo), int(hi)

    def locations(self, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
        """(work number, position in the library's stream) of the ranks lo.. (up to
        `limit`), each read from the engine's suffix array, in stream order."""
        pointers = read_pointers(self.table, self.ratio, lo, min(hi, lo + limit))
        works = np.searchsorted(self.doc_offsets, pointers, side="right") - 1
        within = (pointers - self.doc_offsets[works]) // TOKEN_BYTES - 1  # after the separator
        positions = self.work_starts[works] + within
        return sorted((int(w), int(p)) for w, p in zip(works, positions, strict=True))


def read_pointers(table: np.ndarray, ratio: int, lo: int, hi: int) -> np.ndarray:
    """The byte offsets in `tokenized.N` of the suffixes at ranks lo:hi of an engine's
    suffix array (`table.N` as bytes, `ratio` little-endian bytes per rank)."""
    ranks = np.arange(lo, hi, dtype=np.int64)
    raw = table[ranks[:, None] * ratio + np.arange(ratio)].astype(np.int64)
    return (raw << (8 * np.arange(ratio, dtype=np.int64))).sum(axis=1)
