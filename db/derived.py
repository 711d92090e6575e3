"""Columns the store derives from a case's payload when it stores the case (and the
migration that added them fills for existing cases)."""

from __future__ import annotations

import json
from typing import Any

from copyaudit.mentions import given_characters


def given_character_indices(payload: dict[str, Any]) -> str:
    """The reference characters the case's input names, as a JSON list of indices:
    annotation does not ask them (the characters judge does not score them), so label
    progress and the list's "not fully labelled by me" filter do not wait for them. A
    case with no input string stores [] (its prompt, per generation, decides in the
    annotation screen)."""
    if not isinstance(payload.get("input"), str):
        return "[]"
    return json.dumps(sorted(given_characters(payload, "")))
