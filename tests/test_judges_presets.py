"""build_judges: presets per task kind, skip reasons, factories called lazily."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from copyaudit.errors import UserError
from copyaudit.judges.entailment_aligned import AlignedEntailment
from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment
from copyaudit.judges.events import EventJudge
from copyaudit.judges.fluency import FluencyJudge
from copyaudit.judges.literal import LiteralJudge
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.judges.qa import QAJudge
from copyaudit.judges.refusal import LMRefusalJudge, RefusalJudge
from copyaudit.judges.refusal_reader import RefusalReader
from copyaudit.models.base import GenerationRequest, GenerationResult


class ConstantEmbedder:
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 4)) / 2.0

    def provenance(self) -> dict[str, Any]:
        return {"model": "constant"}


class Counter:
    def __init__(self, make: Any) -> None:
        self.make = make
        self.calls = 0

    def __call__(self) -> Any:
        self.calls += 1
        return self.make()


class EchoGenerator:
    def generate(
        self, requests: Sequence[GenerationRequest], logits_processor_factory: Any = None
    ) -> list[GenerationResult]:
        return [GenerationResult("[RESULT] 3", 2, 0.0) for _ in requests]

    def provenance(self) -> dict[str, Any]:
        return {"model": "echo"}


def _names(judges: list) -> list[str]:
    return [j.name for j in judges]


def test_offline_preset_per_kind() -> None:
    embedder = Counter(ConstantEmbedder)
    expected = {
        "literal": ["literal", "refusal_reader", "verbatim"],
        "nonliteral": ["characters", "events", "refusal_reader"],
        "qa": ["qa", "refusal_reader"],
        "notice": ["notice", "refusal_reader", "verbatim"],
        "extraction": ["refusal_reader", "verbatim", "extraction"],
        "decop": [],
    }
    for kind, names in expected.items():
        judges, skipped = build_judges(JudgeOptions("offline"), kind, embedder_factory=embedder)
        assert _names(judges) == names, kind
        fluency_skipped = kind in ("literal", "nonliteral")
        # the notice judge runs without token vectors (BERTScore) or a multilingual model
        notice_parts = ["notice (BERTScore)", "notice (translate similarity)"]
        assert [n for n, _ in skipped] == (["fluency"] if fluency_skipped else []) + (
            notice_parts if kind == "notice" else []
        )
    judges, _ = build_judges(JudgeOptions("offline"), "nonliteral", embedder_factory=embedder)
    events = next(j for j in judges if isinstance(j, EventJudge))
    assert isinstance(events.model, EmbeddingLexicalEntailment)  # the offline event judge
    assert any(isinstance(j, RefusalReader) for j in judges)  # the offline refusal judge
    by_name = build_judges(
        JudgeOptions("events_entail,refusal"), "nonliteral", embedder_factory=embedder
    )[0]
    refusal = next(j for j in by_name if isinstance(j, RefusalJudge))  # the old one, by name
    events = next(j for j in by_name if isinstance(j, EventJudge))
    assert isinstance(events.model, AlignedEntailment)  # selectable by name
    assert refusal.embedder is events.model.extractor.embedder  # one embedder per call
    qa = build_judges(JudgeOptions("offline"), "qa", embedder_factory=embedder)[0][0]
    assert isinstance(qa, QAJudge)


def test_factories_are_called_only_when_needed() -> None:
    embedder = Counter(ConstantEmbedder)
    build_judges(JudgeOptions("offline"), "literal,qa,characters", embedder_factory=embedder)
    assert embedder.calls == 0
    build_judges(JudgeOptions("offline"), "nonliteral", embedder_factory=embedder)
    assert embedder.calls == 1  # the event judge's; the refusal reader needs none


def test_offline_fluency_with_a_generator() -> None:
    generator = Counter(EchoGenerator)
    judges, skipped = build_judges(
        JudgeOptions("offline"),
        "literal",
        embedder_factory=ConstantEmbedder,
        generator_factory=generator,
    )
    assert _names(judges) == ["literal", "refusal_reader", "fluency", "verbatim"]
    assert skipped == []
    assert isinstance(judges[2], FluencyJudge)
    assert generator.calls == 1


def test_paper_preset() -> None:
    literal, skipped = build_judges(
        JudgeOptions("paper"), "literal", embedder_factory=ConstantEmbedder
    )
    assert _names(literal) == ["literal", "verbatim"]
    assert isinstance(literal[0], LiteralJudge) and literal[0].tokenizer == "rouge"
    assert "Prometheus" in dict(skipped)["fluency"]
    qa, _ = build_judges(JudgeOptions("paper"), "qa", embedder_factory=ConstantEmbedder)
    assert isinstance(qa[0], QAJudge)  # the same judge in both presets
    notice, skipped = build_judges(
        JudgeOptions("paper"), "notice", embedder_factory=ConstantEmbedder
    )
    assert _names(notice) == ["notice", "verbatim"] and "GPT-4" in dict(skipped)["refusal_lm"]
    notice, skipped = build_judges(
        JudgeOptions("paper"),
        "notice",
        embedder_factory=ConstantEmbedder,
        generator_factory=EchoGenerator,
    )
    assert _names(notice) == ["notice", "refusal_lm", "verbatim"]
    assert isinstance(notice[1], LMRefusalJudge)
    assert [n for n, _ in skipped if not n.startswith("notice (")] == []
    # the notice study's LM refusal judge is not part of the paper preset for CopyBench kinds
    judges, _ = build_judges(
        JudgeOptions("paper"),
        "qa",
        embedder_factory=ConstantEmbedder,
        generator_factory=EchoGenerator,
    )
    assert _names(judges) == ["qa"]


def test_comma_list_and_kind_mismatch() -> None:
    judges, skipped = build_judges(
        JudgeOptions("literal_unicode, qa ,characters"),
        "literal",
        embedder_factory=ConstantEmbedder,
    )
    assert _names(judges) == ["literal"]
    assert judges[0].config()["tokenizer"] == "unicode"
    assert dict(skipped) == {
        "qa": "does not apply to task kind 'literal'",
        "characters": "does not apply to task kind 'literal'",
    }
    judges, skipped = build_judges(
        JudgeOptions("literal,qa,events"), "all", embedder_factory=ConstantEmbedder
    )
    assert _names(judges) == ["literal", "qa", "events"] and skipped == []


def test_unknown_names_are_user_errors() -> None:
    with pytest.raises(UserError, match="unknown judge"):
        build_judges(JudgeOptions("literal,rouge9"), "literal", embedder_factory=ConstantEmbedder)
    with pytest.raises(UserError):
        build_judges(JudgeOptions(""), "literal", embedder_factory=ConstantEmbedder)


def test_failed_loads_become_skip_reasons() -> None:
    def broken_embedder() -> Any:
        raise OSError("model files missing")

    def broken_generator() -> Any:
        raise RuntimeError("no GPU")

    judges, skipped = build_judges(
        JudgeOptions("offline"),
        "nonliteral",
        embedder_factory=broken_embedder,
        generator_factory=broken_generator,
    )
    assert _names(judges) == ["characters", "refusal_reader"]
    reasons = dict(skipped)
    assert "model files missing" in reasons["events"]
    assert "no GPU" in reasons["fluency"]
    judges, skipped = build_judges(
        JudgeOptions("refusal"), "nonliteral", embedder_factory=broken_embedder
    )
    assert "phrases only" in dict(skipped)["refusal (embedding part)"]
    refusal = judges[0]
    assert isinstance(refusal, RefusalJudge) and refusal.embedder is None


def test_event_model_that_does_not_exist_is_skipped(tmp_path: Any) -> None:
    judges, skipped = build_judges(
        JudgeOptions("offline", event_model=str(tmp_path / "no-such-model")),
        "nonliteral",
        embedder_factory=ConstantEmbedder,
    )
    assert "events" not in _names(judges)
    assert "no-such-model" in dict(skipped)["events"]
