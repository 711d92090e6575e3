"""STUDIES: every task kind -> the spec of the study that defines it. Generic code (import,
export, prompts, MemFree, the dossier, the label items, the demo, the launcher) looks a
kind up here; a new study is one folder with a `spec.py`, one line below, and its kinds
named in copyaudit.vocabulary (TASK_KINDS; GENERATION_KINDS when its runs generate text),
which the layers below the studies read. What its spec declares reaches the rest: its
`verbatim_sources` make the verbatim judge score its kinds, its `headlines` appear in its
run reports, on the dashboard and in a comparison table of their own."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from copyaudit.errors import UserError
from copyaudit.judges.metric_facts import judge_headlines
from copyaudit.metrics_spec import Headline, in_report_order
from copyaudit.runs.launch_plan import RunSize
from copyaudit.studies.copybench.spec import COPYBENCH
from copyaudit.studies.decop.spec import DECOP
from copyaudit.studies.extraction.spec import EXTRACTION
from copyaudit.studies.notice.spec import NOTICE
from copyaudit.studies.spec import StudySpec
from copyaudit.types import Case

# in the order kinds are listed to people
STUDIES: dict[str, StudySpec] = {
    kind: spec for spec in (COPYBENCH, DECOP, NOTICE, EXTRACTION) for kind in spec.kinds
}


def headlines() -> tuple[Headline, ...]:
    """Every headline figure in the report's column order: the judges' (declared beside
    them, copyaudit.judges.metric_facts) by their place, then each study's own, in
    registry order."""
    studies = {id(spec): spec for spec in STUDIES.values()}  # a study of several kinds once
    own = (h for spec in studies.values() for h in spec.headlines)
    return in_report_order((*judge_headlines(), *own))


def task_kinds() -> tuple[str, ...]:
    """Every task kind, in registry order."""
    return tuple(STUDIES)


def prompt_kinds() -> tuple[str, ...]:
    """The kinds whose cases are prompted for a generation (not DE-COP's own loop)."""
    return tuple(kind for kind, spec in STUDIES.items() if spec.prompter is not None)


def study(kind: str) -> StudySpec:
    """The spec of `kind`'s study; an unknown kind is the user's error."""
    spec = STUDIES.get(kind)
    if spec is None:
        raise UserError(f"unknown kind '{kind}' (one of {', '.join(STUDIES)})")
    return spec


def protected_texts(case: Case) -> list[str]:
    """The texts MemFree must not let the model complete 10-grams of."""
    spec = STUDIES.get(case.kind)
    return spec.protected_texts(case) if spec else []


def whole_output_targets(kind: str, payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The one-item label targets asked on a generation of a `kind` case."""
    return study(kind).whole_output_targets(kind, payload)


def run_size(
    kind: str,
    cases: int,
    templates: Sequence[int] = (1,),
    limit: int | None = None,
    stored: int = 0,
) -> RunSize:
    """The size of a run over `cases` cases with `stored` units already stored. For a
    generation suite `limit` keeps the first N cases; a study with its own loop asks
    each case `prompts_per_case` times (DE-COP: `cases` is already the passages kept per
    work, the limit applying per work: db.pending.run_case_count)."""
    per_case = STUDIES[kind].prompts_per_case if kind in STUDIES else None
    if per_case is not None:
        return RunSize(cases, per_case, "prompt", stored)
    kept = cases if limit is None else min(cases, limit)
    return RunSize(kept, len(templates), "generation", stored)
