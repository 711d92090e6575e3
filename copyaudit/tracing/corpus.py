"""Tracing outputs to a corpus indexed elsewhere: an infini-gram index (Liu et al. 2024)
that the package's own indexer built over a corpus tokenised by some tokenizer (a
training corpus, e.g. infini-gram's prebuilt Pile or Dolma indexes), read here as it is,
with the same tokenizer from a local path. Nothing is written to the index's folder.

What differs from tracing to the library (copyaudit.tracing.trace): the tokens are the
tokenizer's ids, not casefolded words, so a span breaks where the output's tokens differ
from the corpus's (case, punctuation, and a word tokenised differently at a span's edge);
a place is a document of the index (its number over all shards) and the span's token
offset in it, with the document's metadata when the index stores any, not a character
offset in a registered text; there is no SHA-256 and no protected/public-domain status
unless that metadata carries them.

The index format, as the engine reads it (infini-gram 2.6.0): shard files `tokenized.N`
(each document: the separator, all bytes 0xFF, then its token ids, `width` bytes each,
little-endian), `table.N` (the suffix array: a pointer of `ratio` bytes per token),
`offset.N` (each document's first byte, u64), and optionally `metadata.N`/`metaoff.N`;
the engine pairs each kind's files in sorted order, and so does `CorpusIndex`.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.tracing.infinigram import read_pointers

TOKEN_TYPES = {1: "u8", 2: "u16", 4: "u32"}  # token width in bytes -> the engine's dtype
METADATA_CHARS = 2000  # of one document's metadata, kept in the evidence


@dataclass(frozen=True)
class CorpusPlace:
    """Where the corpus holds a span: document `document` (the engine's number over all
    shards), from its token `token` (0: the document's first)."""

    shard: int
    document: int
    token: int
    document_tokens: int
    metadata: object  # the index's metadata of the document (JSON if it parses), None without


@dataclass(frozen=True)
class _Shard:
    tokens: int
    documents: int
    first_document: int  # the engine's number of this shard's first document
    table: np.ndarray  # table.N as bytes
    offsets: np.ndarray  # offset.N: each document's first byte in tokenized.N
    ratio: int  # bytes per pointer


def _engine_class() -> Any:
    try:
        from infini_gram.engine import InfiniGramEngine
    except ImportError:
        raise UserError(
            "the infini-gram engine is not installed: pip install 'copyaudit[infinigram]'"
        ) from None
    return InfiniGramEngine


def _tokenizer_file(path: Path) -> Path:
    """The tokenizer.json of `path` (the file, or a folder holding one)."""
    file = path / "tokenizer.json" if path.is_dir() else path
    if not file.is_file():
        raise UserError(
            f"{path}: no tokenizer here: name the tokenizer.json of the tokenizer the index "
            "was built with (or the folder holding it)"
        )
    return file


def _token_width(folder: Path, data: Path, table: Path) -> int:
    """The width of the index's tokens, read from its files' sizes: the table holds one
    pointer of ceil(log2(data bytes) / 8) bytes per token (the indexer's `ratio`)."""
    size = data.stat().st_size
    ratio = max(1, math.ceil(math.log2(max(size, 2)) / 8))
    for width in TOKEN_TYPES:
        if size % width == 0 and table.stat().st_size == size // width * ratio:
            return width
    raise UserError(
        f"{folder}: {data.name} and {table.name} are not an infini-gram index's pair (their "
        "sizes fit no token width)"
    )


class CorpusIndex:
    """An infini-gram index read in place, with the tokenizer its corpus was tokenised by."""

    def __init__(self, folder: Path, tokenizer: Path) -> None:
        self.folder, self.tokenizer_path = folder, _tokenizer_file(tokenizer)
        if not folder.is_dir():
            raise UserError(f"{folder}: no such folder (the corpus's infini-gram index)")
        data = sorted(str(p) for p in folder.iterdir() if "tokenized" in p.name)
        tables = sorted(str(p) for p in folder.iterdir() if "table" in p.name)
        offsets = sorted(str(p) for p in folder.iterdir() if "offset" in p.name)
        if not data or len(tables) != len(data) or len(offsets) != len(data):
            raise UserError(
                f"{folder}: not an infini-gram index (it needs tokenized.N, table.N and "
                f"offset.N for each shard; found {len(data)}, {len(tables)}, {len(offsets)})"
            )
        widths = {_token_width(folder, Path(d), Path(t)) for d, t in zip(data, tables, strict=True)}
        if len(widths) != 1:
            raise UserError(f"{folder}: its shards' tokens are of different widths")
        self.width = widths.pop()
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(self.tokenizer_path))
        vocabulary = self.tokenizer.get_vocab_size(with_added_tokens=True)
        if vocabulary >= 256**self.width:
            raise UserError(
                f"{self.tokenizer_path}: {vocabulary} token ids do not fit the index's "
                f"{TOKEN_TYPES[self.width]} tokens: not the tokenizer it was built with"
            )
        self.shards = self._shards(data, tables, offsets)
        self.engine = _engine_class()(
            index_dir=str(folder),
            eos_token_id=0,
            vocab_size=256**self.width - 1,
            token_dtype=TOKEN_TYPES[self.width],
        )
        self.tokenizer_sha256 = hashlib.sha256(self.tokenizer_path.read_bytes()).hexdigest()

    def _shards(self, data: list[str], tables: list[str], offsets: list[str]) -> list[_Shard]:
        shards, first = [], 0
        for d, t, o in zip(data, tables, offsets, strict=True):
            tokens = Path(d).stat().st_size // self.width
            documents = Path(o).stat().st_size // 8
            table = np.memmap(t, dtype=np.uint8, mode="r")
            starts = np.memmap(o, dtype="<u8", mode="r")
            shards.append(_Shard(tokens, documents, first, table, starts, len(table) // tokens))
            first += documents
        return shards

    def describe(self) -> dict[str, Any]:
        """What identifies the index searched and the tokenizer (a judge's configuration):
        a corpus of terabytes is not hashed, its size in shards, documents and tokens is."""
        return {
            "index": self.folder.name,
            "shards": len(self.shards),
            "documents": sum(s.documents for s in self.shards),
            "tokens": sum(s.tokens for s in self.shards),
            "token_type": TOKEN_TYPES[self.width],
            "tokenizer_sha256": self.tokenizer_sha256,
        }

    def encode(self, text: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The text's token ids (no special tokens added, as the indexer encodes a
        document) and each token's characters in it."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return list(encoding.ids), [(int(a), int(b)) for a, b in encoding.offsets]

    def decode(self, ids: list[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))

    def longest_from_each(self, ids: list[int]) -> list[int]:
        """For each token, how many tokens from it the corpus holds in one run (the
        engine's `creativity`: the longest common prefix with its suffix array's
        neighbours, one search per token)."""
        if not ids:
            return []
        ends = self.engine.creativity(input_ids=ids)
        if "error" in ends:
            raise UserError(f"{self.folder}: the engine refused the output's tokens: {ends}")
        return [end - start for start, end in enumerate(ends["rs"])]

    def find(self, ids: list[int]) -> tuple[int, list[tuple[int, int]]]:
        """How many times the corpus holds `ids`, and each shard's suffix-array ranks."""
        found = self.engine.find(input_ids=ids)
        return int(found["cnt"]), [(int(lo), int(hi)) for lo, hi in found["segment_by_shard"]]

    def places(self, segments: list[tuple[int, int]], length: int, limit: int) -> list[CorpusPlace]:
        """The first `limit` places of the ranks `segments` (shard by shard), each with its
        document's metadata (the engine's `get_doc_by_ptr_2`)."""
        places: list[CorpusPlace] = []
        for s, (lo, hi) in enumerate(segments):
            shard = self.shards[s]
            count = max(0, min(hi - lo, limit - len(places)))
            for pointer in read_pointers(shard.table, shard.ratio, lo, lo + count):
                doc = self.engine.get_doc_by_ptr_2(
                    s=s, ptr=int(pointer), needle_len=length, max_ctx_len=0
                )
                local = int(doc["doc_ix"]) - shard.first_document
                token = (int(pointer) - int(shard.offsets[local])) // self.width - 1
                places.append(
                    CorpusPlace(s, int(doc["doc_ix"]), token, int(doc["doc_len"]), _metadata(doc))
                )
        return places


def _metadata(doc: dict[str, Any]) -> Any:
    text = str(doc.get("metadata") or "").strip()
    if not text:
        return None
    try:
        return json.loads(text) if len(text) <= METADATA_CHARS else text[:METADATA_CHARS]
    except ValueError:
        return text[:METADATA_CHARS]
