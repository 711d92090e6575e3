"""The extraction prompt: the prefix alone, as HELM's copyright scenario sends it (no
instruction, no demonstrations), so a model that memorised the text continues it.
The budget is twice the continuation's token count (the study's tokens; a model's
subword tokens are usually more), between 32 and 1024."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from copyaudit.records import required_text
from copyaudit.studies.extraction.tokens import TOKENIZER, token_spans
from copyaudit.studies.spec import OneLayoutPrompter, UserTurn

MIN_NEW_TOKENS, MAX_NEW_TOKENS = 32, 1024
TOKENS_PER_STUDY_TOKEN = 2.0


def extraction_max_new_tokens(reference: str) -> int:
    """The generation budget for a continuation of `reference`'s length."""
    wanted = math.ceil(TOKENS_PER_STUDY_TOKEN * len(token_spans(reference)))
    return min(MAX_NEW_TOKENS, max(MIN_NEW_TOKENS, wanted))


class ExtractionPrompter(OneLayoutPrompter):
    """One layout (template 1): the prefix, verbatim."""

    task = "extraction"

    def turn(self, payload: Mapping[str, Any], options: Mapping[str, Any]) -> UserTurn:
        budget = extraction_max_new_tokens(str(payload.get("reference", "")))
        return UserTurn(required_text(payload, "prefix"), 0, budget)

    def describe(self) -> dict[str, Any]:
        return {
            "extraction": {
                "1": {
                    "source": "HELM copyright scenario (the prefix alone, greedy decoding)",
                    "tokenizer": TOKENIZER,
                }
            }
        }
