"""The works of a DE-COP suite: their names (a title, or "title (author)" when two
works share one), the calibration hold-out, and a run's stored results grouped by work.
Shared by the run (which fits the calibration) and the report."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from copyaudit.errors import UserError
from copyaudit.studies.decop.method import ANSWER_CHOICES, WorkResult, membership_label
from db.decop import decop_score_rows, scored_passages, suite_works

if TYPE_CHECKING:
    from db.connection import Store

AUTO = "auto"
AUTO_RULE = "every other clean work in title order, n_clean // 2 of them"


# ---------------------------------------------------------------------------
# Works and calibration
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SuiteWork:
    title: str
    author: str | None
    membership: str  # suspect | clean | unknown
    passages: int = 0


def work_names(works: Sequence[SuiteWork]) -> dict[tuple[str, str | None], str]:
    """The name each work goes by in reports and in `calibrate_on`: its title, or
    "title (author)" where two works of the suite share a title."""
    counts: dict[str, int] = defaultdict(int)
    for work in works:
        counts[work.title] += 1
    return {
        (w.title, w.author): (
            w.title if counts[w.title] == 1 else f"{w.title} ({w.author or 'unknown author'})"
        )
        for w in works
    }


def _match_names(requested: Sequence[str], names: Sequence[str]) -> list[str]:
    """Exact names first, then case-insensitive; unknown names raise UserError."""
    by_fold: dict[str, str] = {}
    for name in names:
        by_fold.setdefault(name.casefold(), name)
    matched: list[str] = []
    unknown: list[str] = []
    for item in requested:
        found = item if item in names else by_fold.get(item.strip().casefold())
        (matched if found else unknown).append(found or item)
    if unknown:
        raise UserError(
            f"--calibrate-on: no work named {', '.join(repr(u) for u in unknown)} in this "
            f"suite (works: {', '.join(sorted(names))})"
        )
    return list(dict.fromkeys(matched))


def split_work_list(value: str, names: Sequence[str]) -> list[str]:
    """Split a comma list of work names; a title that itself contains commas is kept
    whole when it matches a work (the longest match wins)."""
    pieces = value.split(",")
    folded = {n.casefold() for n in names}
    out: list[str] = []
    i = 0
    while i < len(pieces):
        for j in range(len(pieces), i, -1):
            candidate = ",".join(pieces[i:j]).strip()
            if candidate.casefold() in folded:
                out.append(candidate)
                i = j
                break
        else:
            if pieces[i].strip():
                out.append(pieces[i].strip())
            i += 1
    return out


def _title_order(name: str) -> tuple[str, str]:
    return name.casefold(), name


def resolve_calibration(
    works: Sequence[SuiteWork], calibrate_on: str | Sequence[str] | None
) -> tuple[str, list[str]]:
    """(mode, held-out work names). mode: none | auto | explicit. Raises UserError when
    a named work is unknown or not clean, or when no clean work would be left to
    evaluate."""
    names = work_names(works)
    membership = {names[(w.title, w.author)]: w.membership for w in works}
    clean = sorted(
        (n for n, m in membership.items() if m == "clean"), key=lambda n: (n.casefold(), n)
    )
    if calibrate_on is None or (isinstance(calibrate_on, str) and not calibrate_on.strip()):
        return "none", []
    if isinstance(calibrate_on, str) and calibrate_on.strip().casefold() == AUTO:
        if len(clean) < 2:
            raise UserError(
                f"--calibrate-on auto needs at least 2 clean works (one to calibrate on, one "
                f"to evaluate); this suite has {len(clean)}"
            )
        return AUTO, clean[0::2][: len(clean) // 2]
    requested = (
        split_work_list(calibrate_on, list(membership))
        if isinstance(calibrate_on, str)
        else list(calibrate_on)
    )
    chosen = _match_names(requested, list(membership))
    not_clean = [n for n in chosen if membership[n] != "clean"]
    if not_clean:
        described = ", ".join(f"'{n}' is {membership[n]}" for n in not_clean)
        raise UserError(
            f"--calibrate-on needs clean works (label 0, published after the model's "
            f"training cut-off): {described}. Clean works: {', '.join(clean) or 'none'}"
        )
    if len(chosen) >= len(clean):
        raise UserError(
            "--calibrate-on holds out every clean work; leave at least one clean work to "
            "evaluate on"
        )
    return "explicit", sorted(chosen, key=_title_order)


# ---------------------------------------------------------------------------
# Reading results back
# ---------------------------------------------------------------------------


@dataclass
class WorkRows:
    label: int | None
    probs: list[list[float]] = field(default_factory=list)
    answers: list[int] = field(default_factory=list)
    baselines: list[dict[str, float]] = field(default_factory=list)
    passages: int = 0
    failed_prompts: int = 0


def _names(store: Store, sid: int) -> dict[tuple[str, str | None], str]:
    works = [SuiteWork(w["title"], w["author"], w["membership"]) for w in suite_works(store, sid)]
    return work_names(works)


def grouped_rows(store: Store, run_id: int, sid: int) -> dict[str, WorkRows]:
    names = _names(store, sid)
    grouped: dict[str, WorkRows] = {}
    for row in decop_score_rows(store, run_id):
        name = names[(row["title"], row["author"])]
        group = grouped.setdefault(name, WorkRows(membership_label(row["membership"])))
        group.passages += 1
        for probs, answer in zip(row["probs"], row["answers"], strict=True):
            if all(math.isfinite(p) for p in probs):
                group.probs.append(probs)
                group.answers.append(answer)
            else:
                group.failed_prompts += 1
        if row["baselines"] is not None:
            group.baselines.append(row["baselines"])
    return grouped


def scored_verbatims(
    store: Store, run_id: int, sid: int
) -> tuple[list[tuple[str, str]], dict[str, int | None]]:
    """(work name, verbatim passage) of every passage the run scored, and each work's
    year (None where unknown)."""
    names = _names(store, sid)
    rows = scored_passages(store, run_id)
    passages = [(names[(r["title"], r["author"])], r["verbatim"]) for r in rows]
    years = {names[(r["title"], r["author"])]: r["year"] for r in rows}
    return passages, years


def to_result(name: str, rows: WorkRows) -> WorkResult:
    return WorkResult(
        name,
        rows.label,
        np.asarray(rows.probs, dtype=float).reshape(-1, len(ANSWER_CHOICES)),
        np.asarray(rows.answers, dtype=int),
    )


def work_results(store: Store, run_id: int, sid: int) -> list[WorkResult]:
    return [to_result(n, rows) for n, rows in grouped_rows(store, run_id, sid).items()]
