"""The tokens tracing compares: words (runs of letters and digits), casefolded, each with
its place in the text. Punctuation, spacing and case do not break a span, so a copy
re-punctuated or re-spaced by a model is still found; the span's characters are the
output's own, from its first word to its last."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+")


def word_spans(text: str) -> list[tuple[str, int, int]]:
    """(casefolded word, start, end) of every word of `text`."""
    return [(m.group().casefold(), m.start(), m.end()) for m in WORD.finditer(text)]
