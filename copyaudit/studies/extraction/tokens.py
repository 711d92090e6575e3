"""The tokens the extraction study counts: nltk's TreebankWordTokenizer, the tokenizer
of HELM's copyright metrics (src/helm/benchmark/metrics/copyright_metrics.py).

HELM cuts its prefixes with the generating model's tokenizer; here one
model-independent tokenizer both cuts the prefix (`import extraction --prefix-tokens`)
and counts the judges' tokens, so a suite is cut before any model is chosen and the
figures of different models are counted in the same units.
"""

from __future__ import annotations

from functools import cache
from typing import Any

TOKENIZER = "nltk TreebankWordTokenizer (as HELM's copyright metrics)"
_SENTINEL = " x"  # a word after the text: Treebank splits a period off the last word only


@cache
def _treebank() -> Any:
    from nltk.tokenize.treebank import TreebankWordTokenizer  # deferred: nltk loads scipy

    return TreebankWordTokenizer()


def token_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) character offsets of each token of `text`, tokenized as if more text
    followed, so a text cut anywhere tokenizes as it does inside the whole ("home." is
    one token at the end of a text as in its middle)."""
    return [
        (start, end)
        for start, end in _treebank().span_tokenize(text + _SENTINEL)
        if end <= len(text)
    ]


def tokens(text: str) -> list[str]:
    """The tokens of `text`, as they stand in it (quotes unchanged)."""
    return [text[start:end] for start, end in token_spans(text)]


def treebank_tokens(text: str) -> list[str]:
    """Plain Treebank tokens, as HELM's copyright metrics count them: a period ending
    `text` is its own token and double quotes become `` and ''."""
    return _treebank().tokenize(text)
