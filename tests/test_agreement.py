"""Judge quality against hand-made human labels, and agreement between annotators.

The label sets below are small enough to work out by hand; the expected numbers
are derived in the comments next to them.
"""

from __future__ import annotations

import json
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from copyaudit.types import Score
from copyaudit.verification import stats
from copyaudit.verification.agreement import agreement_report
from db import Store
from db.events import retract_label
from db.labels import current_labels, judge_verdicts, latest_label_event
from db.runs import JudgeIdentity
from tests.label_fixtures import (
    CHARACTERS_JUDGE,
    EVENTS_JUDGE,
    LITERAL_JUDGE,
    REFUSAL_JUDGE,
    character_score,
    event_score,
    judge,
    label,
    literal_score,
    make_run,
    refusal_score,
)

G1, G2, G3 = "r/nl-1/1", "r/nl-2/1", "r/nl-3/1"

# Event verdicts of the judge (verdict, item score), entailment threshold 0.5.
EVENT_VERDICTS = {
    G1: [(True, 0.9), (True, 0.7), (False, 0.4), (False, 0.1)],
    G2: [(True, 0.8), (False, 0.45), (False, 0.2), (True, 0.6)],
    G3: [(False, 0.3), (False, 0.35), (False, 0.05), (False, 0.0)],
}
# Human event labels: (generation, event) -> {annotator: label}.
EVENT_LABELS = {
    (G1, 0): {"ann": "yes", "bob": "yes", "cy": "yes"},  # ref yes, judge yes: TP
    (G1, 1): {"ann": "no", "bob": "no", "cy": "yes"},  # ref no (2-1), judge yes: FP
    (G1, 2): {"ann": "yes", "bob": "yes", "cy": "no"},  # ref yes (2-1), judge no: FN
    (G1, 3): {"ann": "no", "bob": "no"},  # ref no, judge no: TN (cy did not label it)
    (G2, 0): {"ann": "yes", "bob": "no"},  # tie: left out
    (G2, 1): {"ann": "unsure", "bob": "unsure"},  # no votes: left out
    # everyone says yes, the adjudicator says no: ref no (adjudicated), judge no: TN
    (G2, 2): {"ann": "yes", "bob": "yes", "cy": "yes", "adjudicator": "no"},
    (G2, 3): {"ann": "yes", "bob": "unsure"},  # ref yes (1-0), judge yes: TP
    # G3: nobody labelled it: its 4 verdicts are "unlabelled"
}


@pytest.fixture
def events_store(tmp_path: Path, cli, db_path: Path) -> Store:
    make_run(cli, tmp_path, "nonliteral", ["nl-1", "nl-2", "nl-3"])
    store = Store(db_path)
    judge(store, EVENTS_JUDGE, {key: event_score(v) for key, v in EVENT_VERDICTS.items()})
    # Characters: the judge finds character 0 in G1 and leaves character 1 out
    # (named in the prompt); ann labels both, bob labels character 0.
    judge(store, CHARACTERS_JUDGE, {G1: character_score([True, False], excluded=[1])})
    for (key, index), labels in EVENT_LABELS.items():
        for annotator, value in labels.items():
            label(store, key, annotator, "event", index, value)
    label(store, G1, "ann", "character", 0, "yes")
    label(store, G1, "bob", "character", 0, "yes")
    label(store, G1, "ann", "character", 1, "yes")
    return store


def _row(rows: list[dict], **match: object) -> dict:
    found = [r for r in rows if all(r[k] == v for k, v in match.items())]
    assert len(found) == 1, (match, rows)
    return found[0]


def test_event_judge_metrics_against_majority_and_adjudication(events_store: Store) -> None:
    report = agreement_report(events_store, "r")
    events = _row(report["judges"], target="event", judge="events")
    # TP = (G1,0), (G2,3); FP = (G1,1); FN = (G1,2); TN = (G1,3), (G2,2).
    assert events["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 2}
    assert events["n"] == 6
    assert events["accuracy"] == pytest.approx(4 / 6)
    assert events["precision"] == pytest.approx(2 / 3)
    assert events["recall"] == pytest.approx(2 / 3)
    assert events["f1"] == pytest.approx(2 * 2 / (2 * 2 + 1 + 1))
    assert events["excluded"] == {
        "unlabelled": 4,
        "tie": 1,
        "no_votes": 1,
        "judge_error": 0,
        "not_judged": 0,
    }
    assert events["paper"] == {"accuracy": 0.89, "precision": 0.68, "recall": 0.87, "f1": 0.76}
    reference = _row(report["references"], target="event")
    assert reference["items"] == 8 and reference["decided"] == 6
    assert reference["adjudicated"] == 1 and reference["overridden"] == 1
    assert reference["excluded"] == {"tie": 1, "no_votes": 1}


def test_without_the_adjudicator_the_majority_decides(events_store: Store) -> None:
    # Naming someone else as adjudicator makes "adjudicator" an ordinary annotator:
    # (G2,2) is then yes by 3-1 and the judge's "no" becomes a false negative.
    report = agreement_report(events_store, "r", adjudicators=("nobody",))
    events = _row(report["judges"], target="event")
    assert events["confusion"] == {"tp": 2, "fp": 1, "fn": 2, "tn": 1}
    assert events["accuracy"] == pytest.approx(0.5)
    assert events["recall"] == pytest.approx(0.5)
    assert events["f1"] == pytest.approx(4 / 7)
    assert _row(report["agreement"], target="event")["annotators"] == 4


def test_bootstrap_intervals_are_the_stats_ones_and_reproducible(events_store: Store) -> None:
    report = agreement_report(events_store, "r")
    events = _row(report["judges"], target="event")
    # The compared items in verdict order (generation, then event): G1 e0..e3, G2 e2, e3.
    pred = [True, True, False, False, False, True]
    gold = [True, False, True, False, False, True]
    for metric in stats.METRICS:
        low, high = stats.bootstrap_ci(pred, gold, metric, n=1000, seed=0)
        assert events["ci"][metric] == [low, high]
        assert low <= events[metric] <= high
    assert agreement_report(events_store, "r")["judges"] == report["judges"]


def test_characters_left_out_by_the_judge_are_counted_not_compared(events_store: Store) -> None:
    characters = _row(agreement_report(events_store, "r")["judges"], target="character")
    assert characters["confusion"] == {"tp": 1, "fp": 0, "fn": 0, "tn": 0}
    assert characters["excluded"]["not_judged"] == 1
    assert characters["threshold"] is None  # alias matching has no score to tune


def test_alpha_matches_the_krippendorff_package(events_store: Store) -> None:
    agreement = _row(agreement_report(events_store, "r")["agreement"], target="event")
    nan = np.nan
    # Annotators ann, bob, cy (the adjudicator is not one) x the 8 labelled event items
    # in order G1 e0..e3, G2 e0..e3; yes = 1, no = 0, unsure or missing = nan.
    matrix = np.array(
        [
            [1, 0, 1, 0, 1, nan, 1, 1],
            [1, 0, 1, 0, 0, nan, 1, nan],
            [1, 1, 0, nan, nan, nan, 1, nan],
        ]
    )
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal")
    assert agreement["alpha"] == pytest.approx(expected)
    # Items with two or more yes/no labels: every one but (G2,1) and (G2,3).
    assert agreement["items"] == 6 and agreement["labelled_items"] == 8
    assert agreement["annotators"] == 3
    # ann-bob share 6 items: ann 1,0,1,0,1,1 and bob 1,0,1,0,0,1. p_o = 5/6;
    # p_e = (4*3 + 2*3) / 36 = 1/2; kappa = (5/6 - 1/2) / (1/2) = 2/3.
    ann_bob = _row(agreement["kappa"], a="ann", b="bob")
    assert ann_bob["n"] == 6 and ann_bob["kappa"] == pytest.approx(2 / 3)


def test_threshold_advice_for_event_scores(events_store: Store) -> None:
    advice = _row(agreement_report(events_store, "r")["judges"], target="event")["threshold"]
    # (score, reference) of the compared items: .9 Y, .7 N, .4 Y, .1 N, .2 N, .6 Y.
    # Threshold .4 flags .9 .7 .6 .4: TP 3, FP 1, FN 0 -> F1 6/7, the best (at .6: 4/6,
    # at .2: 6/8).
    assert advice["current"] == 0.5 and advice["n_scored"] == 6
    assert advice["best"] == pytest.approx(
        {"threshold": 0.4, "f1": 6 / 7, "precision": 0.75, "recall": 1.0}
    )


def test_disagreements_most_disputed_first(events_store: Store) -> None:
    rows = agreement_report(events_store, "r")["disagreements"]
    order = [(r["generation"], r["target"], r["item"]) for r in rows]
    # (G2,0) 1-1 split first; then the 2-1 splits the judge also gets wrong; then
    # (G2,2), 3 yes against the adjudicator's no (one minority label, wider split).
    assert order == [(G2, "event", 0), (G1, "event", 1), (G1, "event", 2), (G2, "event", 2)]
    first = rows[0]
    assert first["labels"] == {"ann": "yes", "bob": "no"} and first["reference"] is None
    assert first["kind"] == "people" and first["judges"][0]["verdict"] is True
    assert rows[1]["kind"] == "people+judge" and rows[1]["judges_against"] == 1
    assert rows[3]["adjudicated"] == {"adjudicator": "no"}
    assert rows[3]["reference_source"] == "adjudicated"


def test_literal_and_refusal_judges(tmp_path: Path, cli, db_path: Path) -> None:
    keys = [f"r/lit-{i}/1" for i in range(1, 5)]
    make_run(cli, tmp_path, "literal", [f"lit-{i}" for i in range(1, 5)])
    store = Store(db_path)
    judge(
        store,
        LITERAL_JUDGE,
        dict(zip(keys, map(literal_score, [0.95, 0.85, 0.5, 0.3]), strict=True)),
    )
    judge(
        store, REFUSAL_JUDGE, dict(zip(keys, map(refusal_score, [1.0, 0.2, 0.1, 0.7]), strict=True))
    )
    copied_labels, refused_labels = ["yes", "no", "yes", "no"], ["yes", "no", "no", "no"]
    for key, copied, refused in zip(keys, copied_labels, refused_labels, strict=True):
        label(store, key, "ann", "literal", 0, copied)
        label(store, key, "ann", "refusal", 0, refused)
    report = agreement_report(store)
    literal = _row(report["judges"], target="literal")
    # flags T T F F against yes no yes no: one of each cell.
    assert literal["confusion"] == {"tp": 1, "fp": 1, "fn": 1, "tn": 1}
    assert literal["f1"] == pytest.approx(0.5) and literal["paper"] is None
    # At .5 the flags are T T T F: TP 2, FP 1 -> F1 0.8, better than .95 (2/3) or .3 (2/3).
    assert literal["threshold"]["current"] == 0.8
    assert literal["threshold"]["best"]["threshold"] == 0.5
    assert literal["threshold"]["best"]["f1"] == pytest.approx(0.8)
    refusal = _row(report["judges"], target="refusal")
    # flags T F F T against yes no no no: TP 1, FP 1, TN 2.
    assert refusal["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 2}
    assert refusal["accuracy"] == pytest.approx(0.75)
    assert refusal["precision"] == pytest.approx(0.5) and refusal["recall"] == 1.0
    # One annotator: no agreement can be measured.
    assert _row(report["agreement"], target="literal")["alpha"] is None


def test_no_threshold_advice_for_a_yes_no_judge(tmp_path: Path, cli, db_path: Path) -> None:
    """The LM refusal judge answers yes/no (scores 1.0 / 0.0): advising "threshold 0.0"
    would mean "flag everything"; the judge registry says it has no score threshold."""
    keys = [f"r/lit-{i}/1" for i in range(1, 4)]
    make_run(cli, tmp_path, "literal", [f"lit-{i}" for i in range(1, 4)])
    store = Store(db_path)
    answers = {
        key: Score("refusal", float(yes), flagged=yes, target="refusal")
        for key, yes in zip(keys, [True, False, False], strict=True)
    }
    judge(store, JudgeIdentity("refusal_lm", "1", {}, "rl1"), answers)
    judge(store, REFUSAL_JUDGE, dict(zip(keys, map(refusal_score, [0.9, 0.7, 0.1]), strict=True)))
    for key, refused in zip(keys, ["yes", "yes", "no"], strict=True):
        label(store, key, "ann", "refusal", 0, refused)
    rows = agreement_report(store, "r")["judges"]
    assert _row(rows, judge="refusal_lm")["threshold"] is None
    assert _row(rows, judge="refusal_lm")["recall"] == 0.5  # still measured
    scored = _row(rows, judge="refusal")["threshold"]
    assert scored["current"] == 0.6 and scored["best"]["threshold"] == 0.7


def test_retraction_restores_the_previous_label(events_store: Store) -> None:
    store = events_store

    def current() -> str | None:
        labels = [
            c.label
            for c in current_labels(store, annotator="dee")
            if (c.generation_key, c.target, c.item_index) == (G3, "event", 0)
        ]
        return labels[0] if labels else None

    first = label(store, G3, "dee", "event", 0, "yes")
    second = label(store, G3, "dee", "event", 0, "no")
    assert current() == "no"
    assert latest_label_event(store, "dee").uuid == second
    retract_label(store, label_uuid=second, annotator="dee")
    assert current() == "yes"
    assert latest_label_event(store, "dee").uuid == first
    retract_label(store, label_uuid=first, annotator="dee")
    assert current() is None and latest_label_event(store, "dee") is None
    # ann's labels are untouched by dee's undo.
    assert len(current_labels(store, annotator="ann")) == 10


def test_failed_judgments_are_counted(tmp_path: Path, cli, db_path: Path) -> None:
    make_run(cli, tmp_path, "literal", ["lit-1", "lit-2"])
    store = Store(db_path)
    failed = literal_score(0.0)
    failed = type(failed)("rougeL", None, threshold=0.8, target="literal", error="no reference")
    judge(store, LITERAL_JUDGE, {"r/lit-1/1": literal_score(0.9), "r/lit-2/1": failed})
    label(store, "r/lit-1/1", "ann", "literal", 0, "yes")
    label(store, "r/lit-2/1", "ann", "literal", 0, "yes")
    verdicts = judge_verdicts(store, run="r")
    assert [v.verdict for v in verdicts] == [True, None]
    literal = _row(agreement_report(store, "r")["judges"], target="literal")
    assert literal["n"] == 1 and literal["excluded"]["judge_error"] == 1


def test_agreement_command_json_and_markdown(events_store: Store, cli) -> None:
    result = cli("agreement", "--run", "r", "--format", "json")
    assert result.code == 0, result.err
    report = json.loads(result.out)
    for row in report["judges"]:
        assert {
            "run",
            "target",
            "judge",
            "n",
            "accuracy",
            "precision",
            "recall",
            "f1",
            "ci",
        } <= set(row)
    for row in report["agreement"]:
        assert {"run", "target", "alpha", "items", "annotators"} <= set(row)
    assert _row(report["judges"], target="event")["f1"] == pytest.approx(2 / 3)
    # The command shows exactly what the function computes, and the audit anchor.
    assert report.pop("anchor")["format"].startswith("copyaudit-anchor")
    assert report == json.loads(json.dumps(agreement_report(events_store, "r")))
    md = cli("agreement", "--run", "r")
    assert md.code == 0
    assert "| r | event | events (events) | 6 | 0.667 [" in md.out
    assert "| event | 0.890 | 0.680 | 0.870 | 0.760 |" in md.out
    assert "## Disagreements (4, most disputed first)" in md.out
    other = cli("agreement", "--run", "r", "--adjudicator", "nobody", "--format", "json")
    assert _row(json.loads(other.out)["judges"], target="event")["f1"] == pytest.approx(4 / 7)
    unknown = cli("agreement", "--run", "nope")
    assert unknown.code == 2 and "no run named 'nope'" in unknown.err


def test_annotator_name_is_remembered(cli, tmp_path: Path) -> None:
    from copyaudit.identity import config_path, resolve_annotator

    assert resolve_annotator(None) is None
    assert "no annotator remembered" in cli("annotator").out
    assert resolve_annotator("  ana ") == "ana"
    assert resolve_annotator(None) == "ana"
    assert config_path() == tmp_path / "config" / "config.json"
    assert json.loads(config_path().read_text()) == {"annotator": "ana"}
    assert "annotator: bo " in cli("annotator", "bo").out  # the command line wins
    assert resolve_annotator(None) == "bo"
    config_path().write_text("{broken")
    bad = cli("annotator")
    assert bad.code == 2 and "not valid JSON" in bad.err
