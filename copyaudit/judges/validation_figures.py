"""The event judges' figures on the shipped validation set (samples/judge_validation),
as `python -m copyaudit.verification.event_validation --write-figures` measured them: what
the app and reports show beside a judge's rate when a run has no labels of its own.

The file: {judge name: {version, config_hash, threshold, accuracy, precision, recall,
f1, auc, n_pairs, n_stories, ci: {metric: [low, high]}, run_level_right},
"validation_sha256": the validation file's hash}; the baselines ("always yes", "always
no") have no config_hash. `config_hash` is the measuring machine's (the embedder's
provenance holds its install path), so a figure is matched to a judge by name, version,
score threshold and being uncalibrated (`figures_for`): a calibrated judge is another
judge.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from copyaudit.judges.base import Judge
from copyaudit.judges.registry import score_threshold

FIGURES_FILE = Path(__file__).with_name("validation_figures.json")
DIGEST_KEY = "validation_sha256"


def shipped_figures(path: Path = FIGURES_FILE) -> dict[str, dict[str, Any]]:
    """Judge (or baseline) name -> its figures; empty when the file is not there."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for name, value in data.items() if name != DIGEST_KEY}


def figures_for(judge: Judge, path: Path = FIGURES_FILE) -> dict[str, Any] | None:
    """The shipped figures of this judge as it was measured: same name and version, not
    calibrated, the same score threshold; None for any other judge."""
    return figures_for_config(judge.name, judge.version, judge.config(), path)


def figures_for_config(
    name: str, version: str | None, config: dict[str, Any] | None, path: Path = FIGURES_FILE
) -> dict[str, Any] | None:
    """`figures_for` from a stored judge configuration (its name, version and config, as
    a run's judgments record them)."""
    found = shipped_figures(path).get(name)
    config = config or {}
    if found is None or config.get("calibration") is not None or found.get("version") != version:
        return None
    key = score_threshold(name)
    if key is not None and config.get(key) != found.get("threshold"):
        return None
    return found


def baseline_f1(path: Path = FIGURES_FILE) -> float | None:
    """The always-yes baseline's F1 on the same set: what a judge must beat."""
    return shipped_figures(path).get("always yes", {}).get("f1")
