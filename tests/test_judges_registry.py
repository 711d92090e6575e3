"""The judge registry, the build context and JudgeOptions: the presets' judges in
order, every factory builds its judge, and the options store today's configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copyaudit.engine.demo import DemoSummary
from copyaudit.judges.base import Judge
from copyaudit.judges.context import BuildContext
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.registry import JUDGES, selected
from tests.factories import tiny_corpus, tiny_library
from tests.test_judges_presets import ConstantEmbedder, EchoGenerator


def test_presets_run_the_studies_judges_in_their_order() -> None:
    names = {preset: [s.name for s in selected(preset)[0]] for preset in ("paper", "offline")}
    assert names == {
        "paper": [
            *("literal", "characters", "events", "qa", "notice", "fluency", "refusal_lm"),
            *("verbatim", "extraction"),
        ],
        "offline": [
            *(
                "literal",
                "characters",
                "events",
                "qa",
                "notice",
                "refusal_reader",
                "fluency",
            ),
            *("verbatim", "extraction"),
        ],
    }
    assert selected("qa, literal") == ((JUDGES["qa"], JUDGES["literal"]), True)


def test_every_registered_factory_builds_its_judge(tmp_path: Path) -> None:
    library = tiny_library(tmp_path / "library")  # what the trace judge searches
    index, tokenizer = tiny_corpus(tmp_path / "corpus")  # what trace_corpus searches
    ctx = BuildContext(
        JudgeOptions(
            trace_library=str(library), corpus_index=str(index), corpus_tokenizer=str(tokenizer)
        ),
        embedder_factory=ConstantEmbedder,
        generator_factory=EchoGenerator,
    )
    for name, spec in JUDGES.items():
        judge = spec.build(ctx)
        assert isinstance(judge, Judge), name
        assert name.startswith(judge.name), name  # literal_unicode stores as "literal"
    # what the constant embedder cannot give the notice judge, nothing else
    assert [part for part, _ in ctx.skipped] == [
        "notice (BERTScore)",
        "notice (translate similarity)",
    ]


def test_the_paper_preset_narrows_the_lm_refusal_judge_to_the_notice_task() -> None:
    spec = JUDGES["refusal_lm"]
    assert spec.applies("notice", paper=True) and not spec.applies("qa", paper=True)
    assert spec.applies("qa", paper=False) and spec.applies("all", paper=True)


def test_judge_options_store_exactly_the_configuration_runs_stored_before() -> None:
    assert JudgeOptions().config() == {
        "judges": "offline",
        "judge_model": None,
        "event_model": None,
    }
    chosen = JudgeOptions("paper", judge_model="j", notice_multilingual_model="m", device="cpu")
    assert chosen.config() == {
        "judges": "paper",
        "judge_model": "j",
        "event_model": None,
        "notice_multilingual_model": "m",  # only when set: older runs have no such key
    }


def test_the_cli_hands_the_command_one_judge_options(
    cli: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    received: list[JudgeOptions] = []

    def fake_build_demo(store: Any, judging: JudgeOptions, **_: Any) -> DemoSummary:
        received.append(judging)
        return DemoSummary()

    monkeypatch.setattr("copyaudit.cli.demo.build_demo", fake_build_demo)  # where it is used
    args = ("--judges", "paper", "--event-model", "E", "--notice-multilingual-model", "M")
    result = cli("demo", "--no-tui", "--no-pz-map", *args, db=tmp_path / "demo.db")
    assert result.code == 0, result.err
    assert received == [JudgeOptions("paper", event_model="E", notice_multilingual_model="M")]
