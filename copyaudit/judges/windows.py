"""Story windows for the event judge, exactly as CopyBench builds them.

CopyBench (scripts/eval_event_copying.py, `to_chunks`) replaces newlines by spaces,
tokenizes with spaCy's English tokenizer (`en_core_web_sm`; its tokenizer rules are
those of `spacy.blank("en")`, which needs no model download), and takes windows of
128 tokens with stride 128. A window's text is the slice of the text from its first
token's start to its last token's end, so the spaces between tokens are the text's
own; spaCy's whitespace tokens (the extra spaces of a run of spaces) count as tokens.

When spaCy is not installed, a regex tokenizer (a run of word characters or one
other non-space character) stands in; it splits contractions, "Mr." and repeated
punctuation differently, so window borders move. The judge records which one it used.
spaCy is imported on first use, never at import time.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from typing import Any

SPACY = "spacy"
REGEX = "regex"
WINDOW_TOKENIZERS: tuple[str, ...] = (SPACY, REGEX)
REGEX_TOKEN_PATTERN = r"\w+|[^\w\s]"
_REGEX_TOKEN = re.compile(REGEX_TOKEN_PATTERN)


@dataclass(frozen=True)
class Window:
    start: int  # character offsets [start, end) in the output
    end: int
    text: str  # the output slice, newlines replaced by spaces


def default_window_tokenizer() -> str:
    """spaCy's tokenizer when spaCy is installed (found without importing it), else regex."""
    return SPACY if importlib.util.find_spec("spacy") is not None else REGEX


def describe_window_tokenizer(tokenizer: str) -> str:
    """What the judge config records: the tokenizer and, for spaCy, its version."""
    if tokenizer == SPACY:
        return f'spacy {version("spacy")} blank("en") tokenizer'
    if tokenizer == REGEX:
        return f"regex {REGEX_TOKEN_PATTERN}"
    raise ValueError(f"unknown window tokenizer {tokenizer!r}; expected one of {WINDOW_TOKENIZERS}")


@lru_cache(maxsize=1)
def _spacy_tokenizer() -> Any:
    import spacy  # deferred: loads torch, spacy

    return spacy.blank("en").tokenizer


def token_bounds(text: str, tokenizer: str) -> list[tuple[int, int]]:
    """[start, end) of every token of `text`."""
    if tokenizer == SPACY:
        return [(token.idx, token.idx + len(token.text)) for token in _spacy_tokenizer()(text)]
    if tokenizer == REGEX:
        return [(m.start(), m.end()) for m in _REGEX_TOKEN.finditer(text)]
    raise ValueError(f"unknown window tokenizer {tokenizer!r}; expected one of {WINDOW_TOKENIZERS}")


def split_windows(
    output: str, window_tokens: int = 128, tokenizer: str | None = None
) -> list[Window]:
    """Non-overlapping windows of `window_tokens` tokens (window = stride); the
    tokenizer is "spacy" or "regex", by default spaCy when installed.

    Replacing "\\n" by " " keeps every offset, so window spans index the original
    output directly.
    """
    text = output.replace("\n", " ")
    bounds = token_bounds(text, tokenizer or default_window_tokenizer())
    windows: list[Window] = []
    for first in range(0, len(bounds), window_tokens):
        chunk = bounds[first : first + window_tokens]
        start, end = chunk[0][0], chunk[-1][1]
        windows.append(Window(start, end, text[start:end]))
    return windows
