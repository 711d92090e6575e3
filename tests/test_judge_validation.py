"""The event judges' validation set (samples/judge_validation), the command that measures
every event judge on it, and the figures it ships (issue 31)."""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from copyaudit.errors import InputError
from copyaudit.judges import event_training, window_training
from copyaudit.judges.validation_figures import FIGURES_FILE, figures_for, shipped_figures
from copyaudit.verification import event_validation as ev
from tests.test_judges_presets import ConstantEmbedder

TWO_STORIES = ("carol-retold", "clockwork-fox")


@pytest.fixture(scope="module")
def valset() -> ev.ValidationSet:
    return ev.load_validation()


def test_the_set_has_the_shape_of_real_stories(valset: ev.ValidationSet) -> None:
    # load_validation itself refuses a story outside 300-1,000 words or 15-20 events
    stories = valset.stories
    assert len(stories) >= 16
    assert sum(len(s.events) for s in stories) >= 300
    assert all(300 <= s.words <= 1000 and 15 <= len(s.events) <= 20 for s in stories)
    kinds = Counter(k for s in stories for k in s.kinds)
    assert set(kinds) == set(ev.KINDS)  # every kind, each with its label
    assert {s.copied for s in stories} == {True, False}  # ">= 5 events" has both answers
    assert len({s.source_work for s in stories}) >= 8


def test_a_bad_record_is_named_by_line_and_field(tmp_path: Path) -> None:
    lines = ev.VALIDATION_FILE.read_text(encoding="utf-8").splitlines()[:2]
    record = json.loads(lines[1])
    record["events"][3]["label"] = 1 - record["events"][3]["label"]
    bad = tmp_path / "stories.jsonl"
    bad.write_text(lines[0] + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        ev.load_validation(bad)
    assert (error.value.line, error.value.field) == (2, "events[3].label")


def test_training_never_opens_the_validation_set(tmp_path: Path) -> None:
    opened: list[str] = []
    recording = [True]

    def hook(event: str, args: tuple) -> None:
        if recording[0] and event == "open" and isinstance(args[0], str | Path):
            opened.append(str(args[0]))

    sys.addaudithook(hook)  # a hook cannot be removed: it stops recording below
    try:
        event_training.train(ConstantEmbedder(), tmp_path / "weights.safetensors")
        window_training.train(ConstantEmbedder(), tmp_path / "window.safetensors")
    finally:
        recording[0] = False
    assert any("judge_training" in path for path in opened)  # the hook saw training read
    assert not any("judge_validation" in path for path in opened)


def test_the_command_scores_every_event_judge_and_the_baselines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], valset: ev.ValidationSet
) -> None:
    monkeypatch.setattr(ev, "load_embedder", lambda *args, **kwargs: ConstantEmbedder())
    ev.main(["--stories", ",".join(TWO_STORIES), "--no-demo", "--resamples", "50"])
    out = capsys.readouterr().out
    chosen = [s for s in valset.stories if s.story_id in TWO_STORIES]
    told = sum(sum(s.labels) for s in chosen)
    pairs = sum(len(s.labels) for s in chosen)
    always_yes = next(line for line in out.splitlines() if line.startswith("| always yes |"))
    assert f"| {told / pairs:.2f} [" in always_yes  # accuracy = precision = share told
    assert f"| {2 * told / (told + pairs):.2f} [" in always_yes  # F1
    assert any(line.startswith("| always no |") for line in out.splitlines())
    for name in ev.event_judge_names():
        assert f"| `{name}` |" in out
    assert f"{len(chosen)} stories, {pairs} pairs" in out


def test_event_judges_come_from_the_registry() -> None:
    assert set(ev.event_judge_names()) >= {"events", "events_entail"}


def test_shipped_figures_are_the_validation_sets_and_hold_the_baselines(
    valset: ev.ValidationSet,
) -> None:
    data = json.loads(FIGURES_FILE.read_text(encoding="utf-8"))
    assert data["validation_sha256"] == hashlib.sha256(ev.VALIDATION_FILE.read_bytes()).hexdigest()
    figures = shipped_figures()
    assert set(figures) == {*ev.event_judge_names(), *ev.BASELINES}
    pairs = [(s.events, s.text) for s in valset.stories]
    for name, answer in ev.BASELINES.items():  # recomputed: cheap and exact (seeded)
        recomputed = ev.overall(ev.baseline(name, answer, pairs), valset.stories, ev.RESAMPLES)
        assert json.loads(json.dumps(recomputed)) == figures[name]
    judges, skipped = ev.build_event_judges(ConstantEmbedder)
    assert not skipped and {j.name for j in judges} == set(ev.event_judge_names())
    for judge in judges:
        assert figures[judge.name]["n_pairs"] == sum(len(s.events) for s in valset.stories)
        assert figures_for(judge) == figures[judge.name]  # the judge as the presets build it
        judge.calibrate(0.99, {"labels": "elsewhere"})
        assert figures_for(judge) is None  # a calibrated judge is another judge
