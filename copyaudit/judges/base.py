"""The judge interface: a named, versioned, configured scorer of generations."""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
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
    calibration: dict[str, Any] | None = None  # set by `calibrate`

    def config(self) -> dict[str, Any]:
        """Everything that changes the judge's numbers (stored as provenance)."""
        return {}

    def stored_config(self) -> dict[str, Any]:
        """`config()` and, for a calibrated judge, where its threshold came from (an
        uncalibrated judge's stored configuration and hash are `config()`'s, as ever)."""
        config = self.config()
        return config if self.calibration is None else {**config, "calibration": self.calibration}

    def set_score_threshold(self, value: float) -> None:
        """Set the score threshold that decides a verdict; judges with one (the judge
        registry's `score_threshold`) override this."""
        raise TypeError(f"judge {self.name!r} has no score threshold")

    def set_count_threshold(self, value: int) -> None:
        """Set how many items flag a generation; counting judges (the registry's
        `count_threshold`) override this."""
        raise TypeError(f"judge {self.name!r} has no count threshold")

    def calibrate(
        self, threshold: float, provenance: Mapping[str, Any], count: int | None = None
    ) -> None:
        """Use `threshold` (and, fitted to the story decision, the count threshold
        `count`), fitted to people's labels; `provenance` says how."""
        self.set_score_threshold(threshold)
        if count is not None:
            self.set_count_threshold(count)
        self.calibration = {**provenance, "threshold": threshold}
        if count is not None:
            self.calibration["count"] = count

    def config_hash(self) -> str:
        blob = json.dumps(
            {"name": self.name, "version": self.version, "config": self.stored_config()},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @abstractmethod
    def judge(self, items: Sequence[JudgeInput]) -> list[list[Score]]:
        """Return, for each input, the scores it gets (same order as `items`)."""
