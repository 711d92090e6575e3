"""Whole-word alias matching (the CopyBench character rule), and which characters a model
was given: shared by the characters judge, the annotation checklist and the store (which
keeps the given characters of each case, so label progress does not ask for them).

Text and aliases are split on the Unicode-aware `\\W+` and lowercased; an alias is
present when its tokens occur as a contiguous run of the text's tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

_WORD = re.compile(r"\w+")  # the pieces re.split(r"\W+", text) keeps


def word_tokens(text: str) -> list[tuple[str, int, int]]:
    """(lowercased word, start, end) for every \\w+ run of `text`."""
    return [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


def find_alias(tokens: Sequence[tuple[str, int, int]], alias: str) -> list[tuple[int, int]]:
    """Character spans of every whole-word occurrence of `alias` in the tokens."""
    needle = [word for word, _, _ in word_tokens(alias)]
    if not needle:
        return []
    words = [word for word, _, _ in tokens]
    size = len(needle)
    return [
        (tokens[i][1], tokens[i + size - 1][2])
        for i in range(len(words) - size + 1)
        if words[i : i + size] == needle
    ]


def mentions(text: str, aliases: Sequence[str]) -> bool:
    """Whether any of `aliases` occurs in `text` as whole words."""
    tokens = word_tokens(text)
    return any(find_alias(tokens, alias) for alias in aliases)


def given_characters(payload: dict[str, Any], prompt: str) -> set[int]:
    """Indices of the reference characters named in what the model was given (the case
    input, else the prompt): not scored, as in the paper."""
    characters = payload.get("reference_characters")
    if not isinstance(characters, list):
        return set()
    case_input = payload.get("input")
    given_text = case_input if isinstance(case_input, str) else prompt
    return {
        index
        for index, aliases in enumerate(characters)
        if mentions(given_text, [aliases] if isinstance(aliases, str) else list(aliases))
    }
