"""The generation list's search: a literal substring of the output, the prompt, the case
text (payload) or the case id, matched as SQL LIKE matches it (case-insensitive for
ASCII letters only, every other character exactly).

From MIN_INDEXED_CHARS characters the trigram FTS5 indexes (migration
migrate_search_index) pick the candidates and LIKE confirms them, so a search costs its
matches, not a scan of the run, and finds exactly what LIKE finds: the index folds case
for every letter, a superset of LIKE's ASCII folding. A shorter search cannot use a
trigram index and falls back to LIKE over the run's rows.

What a person types is always a literal string, never FTS5 query syntax: it is passed to
MATCH as one double-quoted phrase.
"""

from __future__ import annotations

from typing import Any

MIN_INDEXED_CHARS = 3  # the trigram tokenizer matches nothing shorter

_LIKE = (
    "(g.output LIKE :pattern ESCAPE '\\' OR g.prompt LIKE :pattern ESCAPE '\\' "
    "OR c.payload LIKE :pattern ESCAPE '\\' OR c.case_id LIKE :pattern ESCAPE '\\')"
)

# Generations whose own text or whose case's text holds every trigram of the phrase.
_CANDIDATES = (
    "g.id IN (SELECT rowid FROM generations_fts WHERE generations_fts MATCH :phrase "
    "UNION ALL SELECT gc.id FROM generations gc WHERE gc.case_pk IN "
    "(SELECT rowid FROM cases_fts WHERE cases_fts MATCH :phrase))"
)


def like_pattern(text: str) -> str:
    """`text` as a LIKE pattern matching it anywhere (with ESCAPE '\\')."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def fts_phrase(text: str) -> str:
    """`text` as one FTS5 phrase: double-quoted, its double quotes doubled, so operators
    (AND, OR, NOT, NEAR, *, ^, column filters) are read as plain characters."""
    return '"' + text.replace('"', '""') + '"'


def uses_index(text: str) -> bool:
    """Whether a search for `text` is served by the trigram indexes (else LIKE scans)."""
    return len(text) >= MIN_INDEXED_CHARS


def search_condition(text: str) -> tuple[str, dict[str, Any]]:
    """The WHERE condition (over `generations g JOIN cases c`) and its parameters."""
    params: dict[str, Any] = {"pattern": like_pattern(text)}
    if not uses_index(text):
        return _LIKE, params
    params["phrase"] = fts_phrase(text)
    return f"{_CANDIDATES} AND {_LIKE}", params
