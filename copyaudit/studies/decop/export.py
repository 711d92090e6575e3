"""`copyaudit export decop --run NAME`: one row per prompt of a DE-COP run, the layout
the authors publish (their *_Paraphrases_Oversampling.xlsx), so anyone can recompute our
figures: work, passage, order, the prompt as sent, the true letter, the four answer-letter
probabilities and the chosen letter before and after calibration."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.studies.decop.method import ANSWER_LETTERS
from copyaudit.studies.decop.orders import order_rows
from db.decop import iter_export_rows, load_calibration, suite_doc_type
from db.runs import run_row, suite_kind

if TYPE_CHECKING:
    from db.connection import Store


def decop_export_rows(store: Store, run: str) -> Iterator[dict[str, Any]]:
    """The run's prompts in case order, the 24 orders of each passage in stored order.
    The prompt is rebuilt from the stored passage exactly as the run sent it: the
    question for the suite's doc type, inside the chat frame recorded with the run (an
    endpoint that applies its own template: the user turn, after `system`)."""
    from copyaudit.studies.decop.run import passage_from  # deferred: loads scipy

    row = run_row(store, run)
    run_id, sid = int(row["id"]), int(row["suite_id"])
    if suite_kind(store, sid) != "decop":
        raise UserError(f"run '{run}' is not a DE-COP run")
    config = json.loads(row["config"] or "{}")
    doc_type = config.get("doc_type") or suite_doc_type(store, sid)
    chat = config.get("prompt_format") or {}
    before, after = chat.get("frame") or ("", "")
    system = chat.get("system") if chat and not chat.get("frame") else None
    stored = load_calibration(store, run_id)
    delta = None if stored is None else stored["delta"]
    for passage in iter_export_rows(store, run_id):
        prompts = passage_from(
            passage["payload"], passage["title"], passage["author"], doc_type
        ).prompts()
        for (prompt, _), order in zip(prompts, order_rows(passage, delta), strict=True):
            yield {
                "run": run,
                "work": passage["title"],
                "author": passage["author"],
                "label": passage["membership"],
                "passage": passage["case_id"],
                "order": order.index,
                **({"system": system} if system else {}),
                "prompt": before + prompt + after,
                "true_letter": ANSWER_LETTERS[order.answer],
                **{
                    f"p_{letter}": (p if math.isfinite(p) else None)
                    for letter, p in zip(ANSWER_LETTERS, order.probs, strict=True)
                },
                "chosen": _letter(order.chosen),
                "chosen_calibrated": _letter(order.chosen_calibrated),
            }


def _letter(index: int | None) -> str | None:
    return None if index is None else ANSWER_LETTERS[index]
