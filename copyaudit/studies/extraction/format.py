"""The extraction study's case files, JSON array or JSON Lines, in two layouts:

- `{id, title, prefix, reference[, author, year]}`: the prefix the model continues and
  the true continuation, cut by the user;
- `{id, title, text[, author, year]}` with `import extraction FILE --prefix-tokens K
  [--continuation-tokens M]`: the text is cut after its first K tokens (the
  study's tokenizer, copyaudit.studies.extraction.tokens); the continuation is the next
  M tokens, or the rest of the text. `prefix + reference` is the text's start,
  whitespace included.
"""

from __future__ import annotations

from pathlib import Path

from copyaudit.errors import UserError
from copyaudit.records import (
    LocatedCase,
    Record,
    collect_cases,
    id_field,
    string_field,
    work_field,
)
from copyaudit.rows import Loaded
from copyaudit.sources import read_records
from copyaudit.studies.extraction.tokens import token_spans
from copyaudit.types import Case

KIND = "extraction"
REQUIRED = ("id", "title", "prefix", "reference")
TEXT_REQUIRED = ("id", "title", "text")


def _case(record: Record, prefix: str, reference: str) -> Case:
    return Case(
        case_id=id_field(record, "id"),
        kind=KIND,
        work=work_field(record, string_field(record, "title")),
        payload={"prefix": prefix, "reference": reference},
    )


def _parse(record: Record) -> Case:
    if "prefix" not in record.data and "text" in record.data:
        raise record.error("prefix", "missing (a record with 'text' needs --prefix-tokens K)")
    return _case(record, string_field(record, "prefix"), string_field(record, "reference"))


def split_text(text: str, prefix_tokens: int, continuation_tokens: int | None) -> tuple[str, str]:
    """(prefix, continuation): the first `prefix_tokens` tokens of `text`, then the next
    `continuation_tokens` (None: the rest); ValueError when no continuation is left."""
    spans = token_spans(text)
    if len(spans) <= prefix_tokens:
        count = f"{len(spans)} token{'' if len(spans) == 1 else 's'}"
        raise ValueError(f"has {count}; {prefix_tokens} prefix tokens leave no continuation")
    cut = spans[prefix_tokens - 1][1]
    last = len(spans) if continuation_tokens is None else prefix_tokens + continuation_tokens
    end = spans[min(last, len(spans)) - 1][1]
    return text[:cut], text[cut:end]


def read_cases(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    """The file's `{id, title, prefix, reference}` cases and the other records' problems."""
    return collect_cases(path, read_records(path), _parse, REQUIRED)


def split_cases(
    path: str | Path, prefix_tokens: int, continuation_tokens: int | None
) -> Loaded[LocatedCase]:
    """The file's `{id, title, text}` records cut into prefix and continuation."""
    if prefix_tokens < 1 or (continuation_tokens is not None and continuation_tokens < 1):
        raise UserError("--prefix-tokens and --continuation-tokens must be at least 1")

    def parse(record: Record) -> Case:
        text = string_field(record, "text")
        try:
            prefix, reference = split_text(text, prefix_tokens, continuation_tokens)
        except ValueError as exc:
            raise record.error("text", str(exc)) from None
        return _case(record, prefix, reference)

    return collect_cases(path, read_records(path), parse, TEXT_REQUIRED)
