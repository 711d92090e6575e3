"""A calibrated judge configuration carried to another run (`--judge-config FILE|NAME`).

A calibration is stored where every judge configuration is: in the database's
judge_configs, under its configuration hash, with its `calibration` entry (the run, the
annotators and the number of labels it was fitted on, the folds, the figures). So:
- NAME is that hash, as `judge RUN --calibrate-from-labels` prints it ("configuration
  OLD -> NEW"): a calibrated configuration of this database;
- FILE is a JSON file `--save-config FILE` wrote: the same entries, to carry to another
  database.
Either gives `Calibration`s for `JudgeOptions.calibrations`; each must rebuild to exactly
its hash (`presets.check_calibrated`), so a threshold is never applied to another judge's
scores, and the judged run's configuration records the calibration's provenance.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from copyaudit.errors import UserError
from copyaudit.judges.options import Calibration
from db.case_file import judge_config

if TYPE_CHECKING:
    from copyaudit.verification.calibration import CalibrationOutcome
    from db.connection import Store

FORMAT = "copyaudit judge config"
FORMAT_VERSION = 1


def write_judge_config(path: Path, outcomes: Sequence[CalibrationOutcome]) -> None:
    """The calibrated configurations, one entry per judge, as JSON."""
    entries = [
        {
            "judge": o.judge,
            "version": o.version,
            "config_hash": o.new_hash,
            "calibration": o.calibration,
        }
        for o in outcomes
    ]
    document = {"format": FORMAT, "format_version": FORMAT_VERSION, "judges": entries}
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _field(entry: Any, name: str, kind: type, where: str) -> Any:
    value = entry.get(name) if isinstance(entry, dict) else None
    if not isinstance(value, kind):
        raise UserError(f"{where}: field '{name}' must be a {kind.__name__}")
    return value


def _calibration(judge: str, entry: dict[str, Any], config_hash: str, where: str) -> Calibration:
    if not isinstance(entry.get("threshold"), int | float):
        raise UserError(f"{where}: field 'calibration.threshold' must be a number")
    count = entry.get("count")
    if count is not None and not (isinstance(count, int) and count >= 1):
        raise UserError(f"{where}: field 'calibration.count' must be a positive integer")
    calibration = Calibration.from_stored(judge, entry)
    return Calibration(
        calibration.judge,
        calibration.threshold,
        calibration.provenance,
        calibration.count,
        expected_hash=config_hash,
    )


def read_judge_config(path: Path) -> tuple[Calibration, ...]:
    """The calibrations a `--save-config` file holds (UserError naming the file and
    field when it is not one)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UserError(f"{path}: not a judge configuration file ({error})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise UserError(f"{path}: field 'format' must be {FORMAT!r}")
    entries = document.get("judges")
    if not isinstance(entries, list) or not entries:
        raise UserError(f"{path}: field 'judges' must be a non-empty list")
    out = []
    for index, entry in enumerate(entries):
        where = f"{path}: judges[{index}]"
        judge = _field(entry, "judge", str, where)
        config_hash = _field(entry, "config_hash", str, where)
        calibration = _field(entry, "calibration", dict, where)
        out.append(_calibration(judge, calibration, config_hash, where))
    return tuple(out)


def stored_judge_config(store: Store, name: str) -> Calibration:
    """The calibrated configuration stored under hash `name` in this database."""
    row = judge_config(store, name)
    if row is None:
        raise UserError(
            f"--judge-config {name}: neither a file nor a judge configuration hash of this "
            "database (`copyaudit judge RUN --calibrate-from-labels` prints the new hash)"
        )
    calibration = (row["config"] or {}).get("calibration")
    if not isinstance(calibration, dict):
        raise UserError(f"--judge-config {name}: configuration of {row['judge']} not calibrated")
    return _calibration(row["judge"], calibration, name, f"--judge-config {name}")
