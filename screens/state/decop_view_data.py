"""What the DE-COP screens show, computed off the UI thread: the run's report, one row
per work (with its database id, to browse its passages), the ROC curve of the per-work
accuracies, and per-passage figures (accuracy, chosen letters before and after the
label calibration)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from copyaudit.studies.decop.method import ANSWER_LETTERS
from copyaudit.studies.decop.orders import OrderRow, order_rows
from copyaudit.studies.decop.report import decop_markdown, decop_report
from copyaudit.studies.decop.works import SuiteWork, work_names
from copyaudit.verification.roc import roc_points
from db.decop import suite_works
from db.runs import run_row

if TYPE_CHECKING:
    from db.connection import Store


@dataclass(frozen=True)
class WorkRow:
    name: str  # as in the report: the title, or "title (author)" when titles clash
    work_id: int | None
    label: int | None  # 1 suspect, 0 clean, None unknown
    held_out: bool  # a clean work the calibration was fitted on (not evaluated)
    accuracy: float | None
    accuracy_calibrated: float | None
    n_prompts: int
    n_passages: int | None


@dataclass(frozen=True)
class Roc:
    fpr: list[float]
    tpr: list[float]


@dataclass(frozen=True)
class DecopView:
    report: dict[str, Any]
    markdown: str
    works: list[WorkRow]
    roc: Roc | None
    roc_calibrated: Roc | None


def _roc(per_work: Sequence[dict[str, Any]], key: str) -> Roc | None:
    known = [w for w in per_work if w["label"] in (0, 1) and w.get(key) is not None]
    try:
        fpr, tpr, _ = roc_points([w[key] for w in known], [w["label"] for w in known])
    except ValueError:  # one class only
        return None
    return Roc(fpr, tpr)


def work_rows(report: dict[str, Any], ids: dict[str, int]) -> list[WorkRow]:
    """Evaluated works (suspect first, then by accuracy), then the held-out ones."""
    evaluated = sorted(
        report["per_work"], key=lambda w: (-(w["label"] or 0), -w["accuracy"], w["work"])
    )
    rows = [
        WorkRow(
            w["work"],
            ids.get(w["work"]),
            w["label"],
            False,
            w["accuracy"],
            w.get("accuracy_calibrated"),
            w["n_prompts"],
            w.get("n_passages"),
        )
        for w in evaluated
    ]
    rows += [
        WorkRow(
            w["work"],
            ids.get(w["work"]),
            w["label"],
            True,
            w["accuracy"],
            None,
            w["n_prompts"],
            None,
        )
        for w in report["calibration"]["works"]
    ]
    return rows


def load_decop_view(store: Store, run: str) -> DecopView:
    """Everything the DE-COP screen shows for `run` (one full report computation)."""
    report = decop_report(store, run)
    works = suite_works(store, int(run_row(store, run)["suite_id"]))
    names = work_names([SuiteWork(w["title"], w["author"], w["membership"]) for w in works])
    ids = {names[(w["title"], w["author"])]: int(w["work_id"]) for w in works}
    per_work = report["per_work"]
    return DecopView(
        report=report,
        markdown=decop_markdown(report),
        works=work_rows(report, ids),
        roc=_roc(per_work, "accuracy"),
        roc_calibrated=_roc(per_work, "accuracy_calibrated"),
    )


# ---------------------------------------------------------------------------
# Passages
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PassageFigures:
    accuracy: float | None
    accuracy_calibrated: float | None
    verbatim_probability: float | None  # mean p given to the true letter
    unread: int


def options_of(payload: dict[str, Any]) -> list[str]:
    """[verbatim, paraphrase 1, 2, 3]: the verbatim option, then the others in imported
    order (as copyaudit.studies.decop.method.DecopPassage.from_payload)."""
    options, answer = list(payload["options"]), int(payload["answer"])
    return [options[answer], *(t for i, t in enumerate(options) if i != answer)]


def passage_figures(rows: Sequence[OrderRow]) -> PassageFigures:
    readable = [r for r in rows if r.chosen is not None]
    if not readable:
        return PassageFigures(None, None, None, len(rows))
    calibrated = [r for r in readable if r.chosen_calibrated is not None]
    return PassageFigures(
        accuracy=float(np.mean([r.chosen == r.answer for r in readable])),
        accuracy_calibrated=(
            float(np.mean([r.chosen_calibrated == r.answer for r in calibrated]))
            if calibrated
            else None
        ),
        verbatim_probability=float(np.mean([r.probs[r.answer] for r in readable])),
        unread=len(rows) - len(readable),
    )


def letter(index: int | None) -> str:
    return "—" if index is None else ANSWER_LETTERS[index]


@dataclass(frozen=True)
class PassageEntry:
    passage: dict[str, Any]  # db.decop_browse.work_passages row
    orders: list[OrderRow] | None  # None: not scored yet
    figures: PassageFigures | None


def passage_entries(
    passages: list[dict[str, Any]], delta: list[float] | None
) -> list[PassageEntry]:
    entries = []
    for passage in passages:
        if passage["probs"] is None:
            entries.append(PassageEntry(passage, None, None))
            continue
        orders = order_rows(passage, delta)
        entries.append(PassageEntry(passage, orders, passage_figures(orders)))
    return entries
