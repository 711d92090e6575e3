"""The verbatim judge's sources: each study's `verbatim_sources` (copyaudit.judges.verbatim)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from copyaudit.judges.verbatim import DEFAULT_VERBATIM_CHARS, VerbatimJudge
from copyaudit.studies.registry import STUDIES

if TYPE_CHECKING:
    from copyaudit.judges.context import BuildContext


def verbatim_source(kind: str, payload: Mapping[str, Any]) -> str | None:
    """The text a `kind` case's output is compared with; None: none (not literal-style)."""
    spec = STUDIES.get(kind)
    source = None if spec is None else spec.verbatim_sources.get(kind)
    return None if source is None else source(payload)


def verbatim_kinds() -> frozenset[str]:
    """The kinds whose study names a verbatim source."""
    return frozenset(k for k, spec in STUDIES.items() if k in spec.verbatim_sources)


def verbatim_judge(ctx: BuildContext) -> VerbatimJudge:
    """The verbatim judge at the chosen threshold (JudgeOptions.verbatim_chars)."""
    chosen = ctx.options.verbatim_chars
    return VerbatimJudge(verbatim_source, DEFAULT_VERBATIM_CHARS if chosen is None else chosen)
