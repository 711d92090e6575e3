"""The 24 stored prompts of a scored DE-COP passage, one row per option order: which
option stands at each letter, the true letter, the probabilities and the letter chosen
before and after calibration. Shared by the passage screens and `export decop`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from copyaudit.studies.decop.method import all_orders, predict

OPTION_TAGS: tuple[str, ...] = ("V", "P1", "P2", "P3")  # verbatim, paraphrases 1-3


@dataclass(frozen=True)
class OrderRow:
    """One of a passage's 24 prompts."""

    index: int
    tags: tuple[str, ...]  # which option (V, P1..P3) stands at A..D
    answer: int  # index of the verbatim option (the true letter)
    probs: list[float]  # p(A)..p(D), NaN where unread
    calibrated: list[float] | None  # p + Δ, or None without calibration
    chosen: int | None  # argmax of probs; None when unread
    chosen_calibrated: int | None
    error: str | None


def order_rows(passage: dict[str, Any], delta: Sequence[float] | None) -> list[OrderRow]:
    """The 24 orders of a scored passage, in the stored order (studies.decop.method.all_orders)."""
    orders = all_orders(OPTION_TAGS[0], OPTION_TAGS[1:])
    errors = passage.get("errors") or {}
    rows = []
    for i, ((tags, answer), probs, stored_answer) in enumerate(
        zip(orders, passage["probs"], passage["answers"], strict=True)
    ):
        if answer != stored_answer:
            raise ValueError(f"order {i}: stored answer {stored_answer}, expected {answer}")
        readable = all(math.isfinite(p) for p in probs)
        row = np.asarray([probs], dtype=float)
        calibrated = None if delta is None else (row[0] + np.asarray(delta)).tolist()
        rows.append(
            OrderRow(
                index=i,
                tags=tuple(tags),
                answer=answer,
                probs=list(probs),
                calibrated=calibrated,
                chosen=int(predict(row)[0]) if readable else None,
                chosen_calibrated=(
                    int(predict(row, np.asarray(delta))[0])
                    if readable and delta is not None
                    else None
                ),
                error=errors.get(str(i)) if not readable else None,
            )
        )
    return rows
