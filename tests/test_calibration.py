"""Calibration from people's labels: grouped cross-validation, the new judge
configuration and its provenance, re-judging with the fitted threshold, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.verification import stats
from copyaudit.verification.calibration import (
    MIN_LABELS,
    CalibrationError,
    LabelledScore,
    cross_validate,
    grouped_folds,
)
from db import Store
from db.case_file import run_judges
from tests.conftest import database_fingerprint
from tests.label_fixtures import (
    LITERAL_JUDGE,
    judge,
    label,
    literal_copies_run,
    literal_score,
)

# Four stories, three labelled items each: (score, people say yes).
STORIES = {
    "A": [(0.9, True), (0.6, True), (0.2, False)],
    "B": [(0.8, True), (0.5, False), (0.1, False)],
    "C": [(0.7, True), (0.4, False), (0.3, False)],
    "D": [(0.65, True), (0.55, True), (0.35, False)],
}


def _items() -> list[LabelledScore]:
    return [LabelledScore(s, g, story) for story, rows in STORIES.items() for s, g in rows]


def test_cross_validation_on_a_known_label_set() -> None:
    """All twelve items sort yes above no, so the best threshold on all of them is 0.55
    (F1 1 in-sample). Held out story by story (4 folds, one story each): without D the
    lowest yes is A's 0.6, so the threshold fitted on A, B, C is 0.6 and D's 0.55 yes is
    missed; every other fold keeps D's 0.55 and fits 0.55, predicting its story right.
    Cross-validated: TP 5, FN 1, FP 0, TN 6 -> P 1, R 5/6, F1 10/11, accuracy 11/12."""
    fitted = cross_validate(_items(), folds=4, seed=0)
    assert fitted["threshold"] == 0.55
    fold_of = grouped_folds([i.group for i in _items()], 4, 0)
    thresholds = {story: fitted["per_fold"][fold_of[story]]["threshold"] for story in STORIES}
    assert thresholds == {"A": 0.55, "B": 0.55, "C": 0.55, "D": 0.6}
    held_out = fitted["cross_validated"]
    assert held_out["confusion"] == {"tp": 5, "fp": 0, "fn": 1, "tn": 6}
    assert held_out["precision"] == 1.0
    assert held_out["recall"] == pytest.approx(5 / 6)
    assert held_out["f1"] == pytest.approx(10 / 11)
    assert held_out["accuracy"] == pytest.approx(11 / 12)
    assert held_out["n"] == 12 and held_out["ci"]["f1"] is not None
    assert fitted["in_sample"]["f1"] == 1.0  # optimistic: kept apart, named as such


def test_folds_keep_a_story_together_and_follow_the_seed() -> None:
    groups = ["s1"] * 5 + ["s2"] * 3 + ["s3"] * 3 + ["s4"] * 2 + ["s5"] + ["s6"]
    folds = grouped_folds(groups, 3, seed=7)
    assert set(folds) == set(groups) and set(folds.values()) == {0, 1, 2}
    load = [sum(1 for g in groups if folds[g] == f) for f in range(3)]
    assert sorted(load) == [5, 5, 5]  # largest first, each to the lightest fold
    assert grouped_folds(groups, 3, seed=7) == folds


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (_items()[: MIN_LABELS - 1], "calibration needs at least 10"),
        ([LabelledScore(0.5, True, f"s{i}") for i in range(12)], "all 12 labels are 'yes'"),
        (_items(), "the labels come from 4 stories; 5-fold"),
    ],
)
def test_too_few_labels_or_one_class_are_refused(items: list[LabelledScore], message: str) -> None:
    with pytest.raises(CalibrationError, match=message):
        cross_validate(items, folds=5)


# ---------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------


def _scores(store: Store) -> dict[int, tuple[float, bool, str]]:
    rows = store.conn.execute(
        "SELECT generation_id, value, flagged, judge_hash FROM judgments WHERE metric = 'rougeL'"
    )
    return {r["generation_id"]: (r["value"], bool(r["flagged"]), r["judge_hash"]) for r in rows}


def test_calibrate_stores_a_new_configuration_and_rejudges(
    cli, tmp_path: Path, db_path: Path
) -> None:
    keys = literal_copies_run(cli, tmp_path)
    assert cli("judge", "r", "--judges", "literal").code == 0
    store = Store(db_path)
    before = _scores(store)
    (old_hash,) = {h for _, _, h in before.values()}
    # People call a copy of four words or more "copied"; bob disagrees once.
    copied = {key: i % 7 + 1 >= 4 for i, key in enumerate(keys)}
    for key, yes in copied.items():
        label(store, key, "ann", "literal", 0, "yes" if yes else "no")
    label(store, keys[3], "bob", "literal", 0, "no")
    label(store, keys[3], "adjudicator", "literal", 0, "yes")

    result = cli("judge", "r", "--judges", "literal", "--calibrate-from-labels", "--folds", "3")
    assert result.code == 0, result.err
    assert "cross-validated (held out): n 12" in result.out
    assert "in-sample (fitted and measured on the same labels, optimistic)" in result.out

    configs = {row["judge_hash"]: row for row in run_judges(store, "r")}
    (new_hash,) = configs
    assert new_hash != old_hash and new_hash in result.out
    calibration = configs[new_hash]["config"]["calibration"]
    assert calibration["description"] == (
        "calibrated on 12 labels of run r by annotators adjudicator, ann, bob"
    )
    assert calibration["folds"] == 3 and calibration["seed"] == 0
    assert calibration["from_config"] == old_hash
    assert len(calibration["per_fold"]) == 3
    values = [before[gid][0] for gid in sorted(before)]
    best = stats.best_threshold(values, [copied[k] for k in keys])
    assert best is not None
    assert calibration["threshold"] == configs[new_hash]["config"]["threshold"] == best["threshold"]
    assert calibration["cross_validated"]["n"] == 12

    after = _scores(store)
    assert {h for _, _, h in after.values()} == {new_hash}
    for gid, (value, flagged, _) in after.items():
        assert value == before[gid][0]  # the same scores ...
        assert flagged == (value >= best["threshold"])  # ... flagged at the new threshold
    assert [after[g][1] for g in sorted(after)] != [before[g][1] for g in sorted(before)]


def test_calibrate_refuses_too_few_labels_and_changes_nothing(
    cli, tmp_path: Path, db_path: Path
) -> None:
    keys = literal_copies_run(cli, tmp_path)
    assert cli("judge", "r", "--judges", "literal").code == 0
    store = Store(db_path)
    for i, key in enumerate(keys[:4]):
        label(store, key, "ann", "literal", 0, "yes" if i % 2 else "no")
    store.conn.close()
    fingerprint = database_fingerprint(db_path)
    result = cli("judge", "r", "--judges", "literal", "--calibrate-from-labels")
    assert result.code == 2
    assert "literal: 4 labelled items with a judge score; calibration needs at least 10" in (
        result.err
    )
    assert database_fingerprint(db_path) == fingerprint


def test_calibrate_refuses_scores_another_configuration_made(
    cli, tmp_path: Path, db_path: Path
) -> None:
    keys = literal_copies_run(cli, tmp_path)
    store = Store(db_path)
    judge(store, LITERAL_JUDGE, {k: literal_score(0.1 * (i % 10)) for i, k in enumerate(keys)})
    for i, key in enumerate(keys):
        label(store, key, "ann", "literal", 0, "yes" if i % 10 >= 5 else "no")
    result = cli("judge", "r", "--judges", "literal", "--calibrate-from-labels", "--folds", "3")
    assert result.code == 2
    assert "the labelled scores come from configuration li1" in result.err
    assert {row["judge_hash"] for row in run_judges(store, "r")} == {"li1"}


def test_a_yes_no_judge_is_not_calibrated(cli, tmp_path: Path) -> None:
    literal_copies_run(cli, tmp_path)
    result = cli("judge", "r", "--judges", "refusal_lm", "--calibrate-from-labels")
    assert result.code == 2
    assert "refusal_lm: answers yes/no" in result.err
    assert len(result.err.strip().splitlines()) == 1  # one line, no traceback


def test_reports_and_dossier_show_measured_quality_or_not_verified(
    cli, tmp_path: Path, db_path: Path
) -> None:
    keys = literal_copies_run(cli, tmp_path)
    assert cli("judge", "r", "--judges", "literal").code == 0
    before = json.loads(cli("report", "r", "--format", "json").out)["judge_quality"]
    assert [(q["judge"], q["metric"], q["verified"]) for q in before] == [
        ("literal", "rougeL", False)
    ]
    markdown = cli("report", "r").out
    assert "- literal/rougeL: not verified against people (no labels)" in markdown
    assert "not verified against people" in cli("dossier", keys[0]).out

    store = Store(db_path)
    for i, key in enumerate(keys):
        label(store, key, "ann", "literal", 0, "yes" if i % 7 + 1 >= 4 else "no")
    measured = json.loads(cli("report", "r", "--format", "json").out)["judge_quality"][0]
    agreement = json.loads(cli("agreement", "--run", "r", "--format", "json").out)["judges"][0]
    assert measured["verified"] and measured["basis"] == "against people's labels"
    assert {k: measured[k] for k in ("n", "precision", "recall", "f1", "ci")} == {
        k: agreement[k] for k in ("n", "precision", "recall", "f1", "ci")
    }
    assert agreement["calibration"] is None
    html = cli("report", "r", "--format", "html").out
    assert "Judges against people" in html and f"(n {measured['n']})" in html

    result = cli("judge", "r", "--judges", "literal", "--calibrate-from-labels", "--folds", "3")
    assert result.code == 0, result.err
    calibrated = json.loads(cli("report", "r", "--format", "json").out)["judge_quality"][0]
    agreement = json.loads(cli("agreement", "--run", "r", "--format", "json").out)["judges"][0]
    cross = agreement["calibration"]["cross_validated"]
    assert calibrated["basis"].startswith("cross-validated (3 folds by story): calibrated on 12")
    assert calibrated["f1"] == cross["f1"] and calibrated["n"] == cross["n"] == 12
    assert "its figures above are in-sample" in cli("agreement", "--run", "r").out
    dossier = cli("dossier", keys[5]).out
    assert "Measured against people" in dossier and "cross-validated" in dossier
