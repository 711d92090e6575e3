"""Whole works cut into token windows for p_z (`import extraction WORK.txt --stride S`).

The work is tokenised once, whole, in the scoring model's tokenizer (no special tokens);
a window is `prefix_tokens + continuation_tokens` consecutive token ids of it, starting
every `stride` tokens. The case keeps those ids, so scoring reads exactly the work's
tokens (never a re-tokenised string: a string cut at a window edge can tokenise
differently on its own), and the character span they cover, for display and for the
extraction judges, which read `prefix` and `reference` as text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.records import LocatedCase
from copyaudit.rows import Loaded
from copyaudit.types import Case, Work

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

KIND = "extraction"
PAYLOAD_KEY = "window"  # the payload entry holding a window's token ids and its cutting


@dataclass(frozen=True)
class Cutting:
    """How windows are cut, recorded with every window (and so with the suite)."""

    prefix_tokens: int
    continuation_tokens: int
    stride: int
    tokenizer: str  # the model spec the tokenizer came from
    tokenizer_digest: str  # tokenizer_digest(): the same ids for the same text

    def check(self) -> None:
        for name in ("prefix_tokens", "continuation_tokens", "stride"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name.replace('_', '-')} must be at least 1")


def tokenizer_digest(tokenizer: PreTrainedTokenizerBase) -> str:
    """A digest of the tokenizer's vocabulary and rules: two tokenizers with the same
    digest cut a text into the same ids."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    blob = backend.to_str() if backend is not None else repr(sorted(tokenizer.get_vocab().items()))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def work_token_spans(
    text: str, tokenizer: PreTrainedTokenizerBase
) -> tuple[list[int], list[tuple[int, int]]]:
    """(ids, [start, end) character offsets) of `text` tokenised whole, no special tokens."""
    if not getattr(tokenizer, "is_fast", False):
        raise UserError("cutting windows needs a fast tokenizer (character offsets)")
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    return list(encoded["input_ids"]), [tuple(o) for o in encoded["offset_mapping"]]


def _window_case(
    title: str,
    text: str,
    ids: Sequence[int],
    offsets: Sequence[tuple[int, int]],
    start: int,
    cutting: Cutting,
) -> Case:
    cut = start + cutting.prefix_tokens
    end = cut + cutting.continuation_tokens
    first, boundary, last = offsets[start][0], offsets[cut - 1][1], offsets[end - 1][1]
    return Case(
        case_id=f"{title}@{start}",
        kind=KIND,
        work=Work(title=title),
        payload={
            "prefix": text[first:boundary],
            "reference": text[boundary:last],
            PAYLOAD_KEY: {
                "prefix_ids": list(ids[start:cut]),
                "suffix_ids": list(ids[cut:end]),
                "start_token": start,
                "chars": [first, boundary, last],
                "work_chars": len(text),
                "prefix_tokens": cutting.prefix_tokens,
                "continuation_tokens": cutting.continuation_tokens,
                "stride": cutting.stride,
                "tokenizer": cutting.tokenizer,
                "tokenizer_digest": cutting.tokenizer_digest,
            },
        },
    )


def cut_windows(
    title: str, text: str, tokenizer: PreTrainedTokenizerBase, cutting: Cutting
) -> Iterator[Case]:
    """The work's windows, one case each, in order (none when it is shorter than one)."""
    ids, offsets = work_token_spans(text, tokenizer)
    size = cutting.prefix_tokens + cutting.continuation_tokens
    for start in range(0, len(ids) - size + 1, cutting.stride):
        yield _window_case(title, text, ids, offsets, start, cutting)


def work_files(path: Path) -> list[Path]:
    """The plain-text works at `path`: the file, or a folder's *.txt files by name."""
    if path.is_dir():
        files = sorted(p for p in path.glob("*.txt") if p.is_file())
        if not files:
            raise UserError(f"{path}: no .txt files in this folder")
        return files
    if not path.is_file():
        raise UserError(f"{path}: no such file")
    return [path]


def read_work(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{path}: not UTF-8 text (byte {error.start})") from None


def window_cases(
    path: Path, tokenizer: PreTrainedTokenizerBase, cutting: Cutting
) -> Loaded[LocatedCase]:
    """Every work at `path` cut into windows; the work's title is its file name without
    the extension. A work shorter than one window is an error naming it."""
    cutting.check()
    size = cutting.prefix_tokens + cutting.continuation_tokens

    def located() -> Iterator[LocatedCase]:
        for file in work_files(path):
            cases = list(cut_windows(file.stem, read_work(file), tokenizer, cutting))
            if not cases:
                raise UserError(f"{file}: shorter than one window of {size} tokens")
            for number, case in enumerate(cases, start=1):
                yield LocatedCase(number, case)

    return Loaded(str(path), located())


def window_of(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The window entry of a case payload cut by cut_windows, else None."""
    window = payload.get(PAYLOAD_KEY)
    return window if isinstance(window, dict) else None
