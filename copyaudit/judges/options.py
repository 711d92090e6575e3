"""JudgeOptions: what the user chose about judging, made once at the edge (CLI, launcher,
demo) and carried unchanged to `build_judges`.

Its stored part (`config`) is the judge part of a run's configuration exactly as runs
have stored it all along, so config hashes do not move and older runs still resume.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from typing import Any

# Stored in every run's configuration, and stored only when set (added later: a run
# made before them has no key, and must still resume).
ALWAYS_STORED = ("judges", "judge_model", "event_model")
STORED_WHEN_SET = ("notice_embedding_model", "notice_multilingual_model")


@dataclass(frozen=True)
class Calibration:
    """A judge's score threshold fitted to people's labels (copyaudit.verification.
    calibration); `provenance` is JSON text (labels, run, annotators, folds, figures)."""

    judge: str
    threshold: float
    provenance: str = "{}"

    def record(self) -> dict[str, Any]:
        return json.loads(self.provenance)


@dataclass(frozen=True)
class JudgeOptions:
    """The judges to run and the models they use (None: the preset's choice)."""

    judges: str = "offline"  # a preset (copyaudit.judges.registry.PRESETS) or "name,name"
    judge_model: str | None = None  # instruct model for the fluency / LM refusal judges
    event_model: str | None = None  # entailment model for the events judge (path or hub id)
    notice_embedding_model: str | None = None  # notice judge, paraphrase (default: preset's)
    notice_multilingual_model: str | None = None  # notice judge, translate (none: not computed)
    device: str = "auto"  # where judge models load
    allow_download: bool = False  # hub models load from the local cache only unless set
    # thresholds fitted to labels, applied to the judges they name (not stored in the
    # run's configuration: each judge's own stored configuration records its calibration)
    calibrations: tuple[Calibration, ...] = ()

    @property
    def paper(self) -> bool:
        """The paper preset: the source studies' models and settings."""
        return self.judges == "paper"

    def config(self) -> dict[str, Any]:
        """The judge part of a run's stored configuration."""
        stored = {name: getattr(self, name) for name in ALWAYS_STORED}
        for name in STORED_WHEN_SET:
            if getattr(self, name) is not None:
                stored[name] = getattr(self, name)
        return stored


OFFLINE = JudgeOptions()  # the default: the offline preset, no judge models named


def stored_defaults() -> dict[str, Any]:
    """Each stored option and the value a stored configuration without it means."""
    defaults = {f.name: f.default for f in fields(JudgeOptions)}
    return {name: defaults[name] for name in ALWAYS_STORED + STORED_WHEN_SET}
