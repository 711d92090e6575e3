"""The event judges' figures on the shipped validation set (samples/judge_validation),
as `python -m copyaudit.verification.event_validation --write-figures` measured them: what
the app and reports show beside a judge's rate when a run has no labels of its own.

The file: {judge name: {version, config_hash, accuracy, precision, recall, f1, auc,
n_pairs, n_stories, ci: {metric: [low, high]}, run_level_right}, "validation_sha256":
the validation file's hash}; the baselines ("always yes", "always no") have no
config_hash. A figure belongs to a judge only when its version and configuration hash
match (a calibrated or re-weighted judge is another judge).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIGURES_FILE = Path(__file__).with_name("validation_figures.json")
DIGEST_KEY = "validation_sha256"


def shipped_figures(path: Path = FIGURES_FILE) -> dict[str, dict[str, Any]]:
    """Judge (or baseline) name -> its figures; empty when the file is not there."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {name: value for name, value in data.items() if name != DIGEST_KEY}


def figures_for(
    name: str, version: str, config_hash: str, path: Path = FIGURES_FILE
) -> dict[str, Any] | None:
    """The shipped figures of exactly this judge (name, version and configuration), or
    None when the judge measured was another one."""
    found = shipped_figures(path).get(name)
    if found is None or found.get("version") != version or found.get("config_hash") != config_hash:
        return None
    return found
