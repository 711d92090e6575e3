"""The judge interface: a named, versioned, configured scorer of generations."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from copyaudit.types import JudgeInput, Score


class Judge(ABC):
    """Scores generations. Subclasses set `name` and `version`; the task kinds a judge
    scores are its entry in `copyaudit.judges.registry`.

    `judge` takes a batch so that model-backed judges can batch across
    generations; pure judges simply loop.
    """

    name: str = ""
    version: str = "1"

    def config(self) -> dict[str, Any]:
        """Everything that changes the judge's numbers (stored as provenance)."""
        return {}

    def config_hash(self) -> str:
        blob = json.dumps(
            {"name": self.name, "version": self.version, "config": self.config()},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @abstractmethod
    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        """Return, for each input, the scores it gets (same order as `items`)."""
