"""Calibration that serves the story decision: the count threshold k fitted with the
item threshold to run-level agreement, refused when it would flag every story, and a
calibrated configuration carried to another run (--save-config FILE, --judge-config)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from copyaudit.verification.calibration import CalibrationError, _decision, _decision_fit
from copyaudit.verification.decision import (
    DecisionConfig,
    LabelledStory,
    evaluate,
    fit_decision,
    flags_everything,
)
from tests.conftest import write_jsonl
from tests.factories import nonliteral_record
from tests.test_models_openai import (  # the fake server and its fixture
    Behaviour,
    FakeServer,
    chat_completion,
    serve,  # noqa: F401
)

DECIDE_AT = 2
# Per story: how many of its events people call supported. Every story also has one
# event people call absent that the judge scores 0.9 (a decoy, as topical reuse of a
# book's people), its supported events score 0.8, its absent ones 0.3: the judge's count
# at t = 0.8 is people's count + 1, so the best decision is k = 3 at t = 0.8 (t = 0.9
# counts 1 everywhere, t = 0.3 counts 5 everywhere; k = 2 at 0.8 flags the one-event
# stories too).
PRESENT = {"A": 3, "B": 2, "C": 1, "D": 0, "E": 2, "F": 1}


def _story(group: str, present: int) -> LabelledStory:
    scores = (0.9, *[0.8] * present, *[0.3] * (4 - present))
    golds = (False, *[True] * present, *[False] * (4 - present))
    return LabelledStory(scores, golds, group)


STORIES = [_story(group, present) for group, present in PRESENT.items()]


def test_the_known_best_count_and_threshold_are_recovered() -> None:
    assert fit_decision(STORIES, DECIDE_AT) == DecisionConfig(3, 0.8)


def test_held_out_story_agreement_is_reported_beside_item_figures() -> None:
    """Leave one story out (6 folds): every training set still fits k 3 at 0.8 (ties on
    agreement go to k nearest 2, and k 4 misses B or E whenever they train), so every
    held-out story is decided as people decide; the current k 2 at 0.8 flags C and F too."""
    fold_of = {group: i for i, group in enumerate(PRESENT)}
    current = DecisionConfig(2, 0.8)
    fit = _decision_fit(DECIDE_AT)
    result = evaluate(STORIES, fit, fold_of, 6, DECIDE_AT, 0, current)
    held = result["cross_validated"]["decision"]
    assert (held["agreed"], held["stories"], held["judge_flags"], held["people_flag"]) == (
        6,
        6,
        3,
        3,
    )
    assert [f["count"] for f in result["per_fold"]] == [3] * 6
    assert result["current"]["decision"]["agreed"] == 4  # C and F flagged wrongly
    items = result["cross_validated"]["items"]  # item P/R/F1 beside: 9 yes, 6 decoys
    assert items["confusion"] == {"tp": 9, "fp": 6, "fn": 0, "tn": 15}
    assert "run-level agreement" in result["objective"]


def test_advice_that_flags_every_story_is_refused() -> None:
    """Uninformative scores and people flagging 3 of 4 stories: flagging everything has
    the best agreement (3/4), so the fit flags all four; that advice is refused."""
    stories = [
        LabelledStory((0.5, 0.5, 0.5), golds, group)
        for golds, group in (
            ((True, True, False), "w"),
            ((True, True, True), "x"),
            ((True, True, False), "y"),
            ((False, False, False), "z"),
        )
    ]
    fold_of = {"w": 0, "x": 1, "y": 0, "z": 1}
    result = evaluate(stories, _decision_fit(2), fold_of, 2, 2, 0, None)
    assert flags_everything(result) == (
        "this threshold flags 4 of 4 stories (people flag 3): advice that flags "
        "everything is not applied"
    )
    with pytest.raises(CalibrationError, match="flags 4 of 4 stories"):
        _decision(stories, _decision_fit(2), 2, 0, 2, None)


# ---------------------------------------------------------------------------
# The command: an endpoint events judge that counts one event too many
# ---------------------------------------------------------------------------

CASES = ("nl-1", "nl-2", "nl-3", "nl-4", "nl-5", "nl-6")
SUPPORTED = dict(zip(CASES, (3, 2, 1, 0, 2, 1), strict=True))
_CLAIM = re.compile(r"Claim: Event (\d) of (nl-\d)\.")


def _answers(path: str, body: dict[str, Any], attempt: int) -> tuple[int, Any, float]:
    """Event 0 (people: absent) and events 1..p (people: supported) are attributable."""
    event, case = _CLAIM.search(body["messages"][-1]["content"]).groups()  # type: ignore[union-attr]
    attributable = int(event) <= SUPPORTED[case]
    return 200, chat_completion("attributable" if attributable else "not attributable"), 0.0


def _setup(cli: Any, tmp_path: Path) -> None:
    records = [
        nonliteral_record(
            int(c[-1]), id=c, reference_events=[f"Event {e} of {c}." for e in range(4)]
        )
        for c in CASES
    ]
    assert (
        cli(
            "import", "nonliteral", str(write_jsonl(tmp_path / "c.jsonl", records)), "--suite", "s"
        ).code
        == 0
    )
    stories = [{"case_id": c, "output": f"A story for {c}."} for c in CASES]
    for run in ("r1", "r2"):
        gens = write_jsonl(tmp_path / f"{run}.jsonl", stories)
        assert cli("import-generations", str(gens), "--run", run, "--suite", "s").code == 0
    labels = [
        {"annotator": "ann", "generation": f"r1/{c}/1", "target": "event", "index": e}
        | {"label": "yes" if 1 <= e <= SUPPORTED[c] else "no"}
        for c in CASES
        for e in range(4)
    ]
    assert cli("import-labels", str(write_jsonl(tmp_path / "l.jsonl", labels))).code == 0


def _events(db_path: Path, run: str) -> dict[str, tuple[float, bool, dict[str, Any]]]:
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute(
            "SELECT c.case_id, j.value, j.flagged, jc.config FROM judgments j "
            "JOIN generations g ON g.id = j.generation_id JOIN runs r ON r.id = g.run_id "
            "JOIN cases c ON c.id = g.case_pk JOIN judge_configs jc ON jc.hash = j.judge_hash "
            "WHERE r.name = ? AND j.judge = 'events'",
            (run,),
        ).fetchall()
    return {
        case: (value, bool(flagged), json.loads(config)) for case, value, flagged, config in rows
    }


@pytest.fixture
def judging(
    cli: Callable[..., Any],
    tmp_path: Path,
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> list[str]:
    """Runs r1 (labelled) and r2 judged by the endpoint events judge; its options."""
    server = serve(_answers)
    _setup(cli, tmp_path)
    options = ["--judges", "events", "--event-model", "m", "--judge-backend", "openai"]
    options += ["--judge-base-url", server.url]
    for run in ("r1", "r2"):
        assert cli("judge", run, *options).code == 0
    return options


def test_decision_fit_on_one_run_carried_to_another_changes_its_verdicts(
    cli: Callable[..., Any], tmp_path: Path, db_path: Path, judging: list[str]
) -> None:
    before = _events(db_path, "r2")
    assert {case: flagged for case, (_, flagged, _) in before.items()} == dict.fromkeys(
        CASES, False
    )

    saved = tmp_path / "events-config.json"
    calibrate = ["--calibrate-from-labels", "--objective", "decision", "--decide-at", "2"]
    result = cli("judge", "r1", *judging, *calibrate, "--folds", "3", "--save-config", str(saved))
    assert result.code == 0, result.err
    assert "count threshold 3" in result.out
    assert "held out 6/6 stories decided as people decide (judge flags 3, people 3)" in result.out
    assert "before (count 5, threshold 0.500): 3/6 stories decided" in result.out

    applied = cli("judge", "r2", *judging, "--rejudge", "--judge-config", str(saved))
    assert applied.code == 0, applied.err
    after = _events(db_path, "r2")
    flagged = {case: flag for case, (_, flag, _) in after.items()}
    assert flagged == {c: SUPPORTED[c] + 1 >= 3 for c in CASES}  # nl-1, nl-2, nl-5
    config = after["nl-1"][2]
    assert config["threshold"] == 3 and config["entailment_threshold"] == 1.0
    provenance = config["calibration"]
    assert provenance["run"] == "r1" and provenance["annotators"] == ["ann"]
    assert provenance["labels"] == 24 and provenance["objective"] == "decision"
    assert provenance["description"] == "calibrated on 24 labels of run r1 by annotators ann"

    # the same configuration by NAME: its hash in this database
    (name,) = json.loads(saved.read_text())["judges"]
    assert (
        cli("judge", "r2", *judging, "--rejudge", "--judge-config", name["config_hash"]).code == 0
    )
    assert {c: f for c, (_, f, _) in _events(db_path, "r2").items()} == flagged


def test_judge_config_refuses_other_options_and_bad_files(
    cli: Callable[..., Any], tmp_path: Path, judging: list[str]
) -> None:
    saved = tmp_path / "events-config.json"
    calibrate = ["--calibrate-from-labels", "--objective", "decision", "--decide-at", "2"]
    assert (
        cli("judge", "r1", *judging, *calibrate, "--folds", "3", "--save-config", str(saved)).code
        == 0
    )
    other = [*judging[:3], "other-model", *judging[4:]]
    refused = cli("judge", "r2", *other, "--judge-config", str(saved))
    assert refused.code != 0 and "pass the judge options it was fitted with" in refused.err
    broken = tmp_path / "broken.json"
    broken.write_text(
        json.dumps({"format": "copyaudit judge config", "judges": [{"judge": "events"}]})
    )
    refused = cli("judge", "r2", *judging, "--judge-config", str(broken))
    assert refused.code != 0 and "judges[0]: field 'config_hash' must be a str" in refused.err
    unknown = cli("judge", "r2", *judging, "--judge-config", "nosuchhash")
    assert unknown.code != 0 and "neither a file nor a judge configuration hash" in unknown.err


def test_too_few_fully_labelled_stories_leave_the_decision_unmeasured() -> None:
    with pytest.raises(CalibrationError, match="needs at least 5 stories with every event"):
        _decision(STORIES[:4], _decision_fit(DECIDE_AT), 5, 0, DECIDE_AT, None)
