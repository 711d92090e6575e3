"""The three LM judges (events, LM refusal, fluency) through an OpenAI-compatible endpoint:
a fake server on 127.0.0.1 (tests/test_models_openai.py's), the generation backend's
client with its timeouts and retries, every exchange in the evidence, and an
unparseable answer recorded as such."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from copyaudit.errors import UserError
from copyaudit.judges.answers import ATTRIBUTABLE, YES_NO, read_choice
from copyaudit.judges.base import Judge
from copyaudit.judges.context import load_judge_lm
from copyaudit.judges.entailment_endpoint import GeneratedAttributable
from copyaudit.judges.entailment_hf import ATTRIBUTION_PROMPT
from copyaudit.judges.events import EventJudge
from copyaudit.judges.fluency import FluencyJudge
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.judges.refusal import LM_REFUSAL_SYSTEM, LMRefusalJudge
from copyaudit.models.openai_compat import OpenAIGenerator
from copyaudit.types import JudgeInput, Score
from tests.conftest import write_jsonl
from tests.factories import nonliteral_record, notice_record
from tests.test_models_openai import (  # the fake server and its fixture
    Behaviour,
    FakeServer,
    chat_completion,
    serve,  # noqa: F401
)

EVENT = "The fox stole the bread."
STORY = "At dawn a red fox crept into the bakery and stole the bread from the shelf."


@dataclass(frozen=True)
class LMJudgeCase:
    """One LM judge: how it is built over a generator, what it judges, a good answer
    (and the value it gives) and an answer that does not parse."""

    name: str
    make: Callable[[OpenAIGenerator], Judge]
    item: JudgeInput
    good: str
    value: float
    bad: str


CASES = (
    LMJudgeCase(
        "events",
        lambda generator: EventJudge(GeneratedAttributable(generator), window_tokenizer="regex"),
        JudgeInput("nonliteral", {"reference_events": [EVENT]}, "Write a story.", STORY),
        "**Attributable**",
        1.0,
        "It could be either.",
    ),
    LMJudgeCase(
        "refusal_lm",
        LMRefusalJudge,
        JudgeInput("notice", {"query": "Repeat the text."}, "", "I'm sorry, I can't do that."),
        'The answer is "yes."',
        1.0,
        "Hmm.",
    ),
    LMJudgeCase(
        "fluency",
        FluencyJudge,
        JudgeInput("literal", {}, "Continue.", "A clear and fluent sentence."),
        "Feedback: clear. [RESULT] 4",
        4.0,
        "Feedback: clear, no grade.",
    ),
)
IDS = [case.name for case in CASES]


def _generator(server: FakeServer, **options: Any) -> OpenAIGenerator:
    settings = {"timeout": 0.4, "max_retries": 2, "backoff": 0.01, **options}
    return OpenAIGenerator(server.url, "judge-m", api_key_env="COPYAUDIT_TEST_NO_KEY", **settings)


def _answering(text: str, first: tuple[int, float] | None = None) -> Behaviour:
    """Answers `text`; the first attempt of each request is `first` (status, delay)."""

    def behaviour(path: str, body: dict[str, Any], attempt: int) -> tuple[int, Any, float]:
        if first is not None and attempt == 1:
            status, delay = first
            if status != 200:
                return status, {"error": {"message": "overloaded"}}, delay
            return 200, chat_completion("too late"), delay
        return 200, chat_completion(text), 0.0

    return behaviour


def _judge_one(case: LMJudgeCase, generator: OpenAIGenerator) -> Score:
    [[score]] = case.make(generator).judge([case.item])
    return score


def _raw_answers(case: LMJudgeCase, score: Score) -> list[str]:
    if case.name == "events":
        return [exchange["answer"] for exchange in score.extra["exchanges"]]
    return [score.extra["answer"]]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_normal_answer(case: LMJudgeCase, serve: Callable[[Behaviour], FakeServer]) -> None:  # noqa: F811
    server = serve(_answering(case.good))
    score = _judge_one(case, _generator(server))
    assert score.value == case.value and score.error is None
    assert _raw_answers(case, score) == [case.good]
    [(path, body, _headers)] = server.requests
    assert path == "/v1/chat/completions" and body["model"] == "judge-m"
    assert body["temperature"] == 0
    sent = body["messages"][-1]["content"]
    if case.name == "events":
        assert sent == ATTRIBUTION_PROMPT.format(claim=EVENT, passage=STORY)
        assert score.extra["exchanges"] == [{"item": 0, "window": 0, "answer": case.good}]
    else:
        assert score.extra["request"]["prompt"] == sent  # the request, as sent
    if case.name == "refusal_lm":
        assert body["messages"][0] == {"role": "system", "content": LM_REFUSAL_SYSTEM}


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("first", [(200, 1.0), (500, 0.0)], ids=["timeout", "http-500"])
def test_a_timeout_or_a_500_is_retried(
    case: LMJudgeCase,
    first: tuple[int, float],
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    server = serve(_answering(case.good, first=first))
    score = _judge_one(case, _generator(server))
    assert score.value == case.value and score.error is None
    assert len(server.requests) == 2  # the first attempt, then the retry that answered


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_out_of_retries_is_an_error_not_a_no(
    case: LMJudgeCase,
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    server = serve(lambda path, body, attempt: (200, chat_completion(case.good), 1.0))
    score = _judge_one(case, _generator(server, max_retries=1))
    assert score.value is None and score.flagged is None
    assert "timed out" in score.error and len(server.requests) == 2
    if case.name == "events":
        assert "timed out" in score.extra["exchanges"][0]["request_error"]
    else:
        assert "timed out" in score.extra["request_error"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_unparseable_answer_is_recorded_as_such(
    case: LMJudgeCase,
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    server = serve(_answering(case.bad))
    score = _judge_one(case, _generator(server))
    assert score.value is None and score.flagged is None
    assert score.error.startswith("unparseable")
    assert _raw_answers(case, score) == [case.bad]  # the raw answer, kept


def test_events_unreadable_window_is_asked_again_and_resolved_by_a_later_one(
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    """A garbled answer for one window does not decide the event: the next window is
    asked, and its support counts (the garbled answer stays in the evidence)."""

    def by_window(path: str, body: dict[str, Any], attempt: int) -> tuple[int, Any, float]:
        prompt = body["messages"][-1]["content"]
        return 200, chat_completion("Answer: attributable" if "bakery" in prompt else "??"), 0.0

    server = serve(by_window)
    story = "one two three four five six seven. " * 3 + STORY
    judge = EventJudge(GeneratedAttributable(_generator(server)), window_tokens=24)
    [[score]] = judge.judge([JudgeInput("nonliteral", {"reference_events": [EVENT]}, "", story)])
    assert score.value == 1.0 and score.error is None
    answers = [(e["window"], e["answer"]) for e in score.extra["exchanges"]]
    assert answers[0] == (0, "??") and answers[-1][1] == "Answer: attributable"


@pytest.mark.parametrize(
    ("text", "choices", "verdict"),
    [
        ('The answer is "yes."', YES_NO, True),
        ("Answer: Yes", YES_NO, True),
        ("**No**", YES_NO, False),
        ("   no.", YES_NO, False),
        ("'Yes'", YES_NO, True),
        ("attributable", ATTRIBUTABLE, True),
        ("Not attributable.", ATTRIBUTABLE, False),
        ("Output: **not attributable**", ATTRIBUTABLE, False),
        ('"Attributable"', ATTRIBUTABLE, True),
        ("non-attributable", ATTRIBUTABLE, None),
        ("attributable-ish", ATTRIBUTABLE, None),
        ("yes", ATTRIBUTABLE, None),
        ("I would say no", YES_NO, None),
    ],
)
def test_answer_phrasings(text: str, choices: dict[str, bool], verdict: bool | None) -> None:
    assert read_choice(text, choices) is verdict


# --- the options: validation, what is stored, the embedded model by name --------------


def test_options_refuse_credentials_and_keys() -> None:
    with pytest.raises(UserError, match="credentials"):
        JudgeOptions(judge_backend="openai", judge_base_url="http://me:sk-secret@host:8000/v1")
    with pytest.raises(UserError, match="NAME of an environment variable"):
        JudgeOptions(
            judge_backend="openai", judge_base_url="http://h/v1", judge_api_key_env="sk-abc-123"
        )
    with pytest.raises(UserError, match="needs --judge-base-url"):
        JudgeOptions(judge_backend="openai")
    with pytest.raises(UserError, match="only for --judge-backend openai"):
        JudgeOptions(judge_base_url="http://h/v1")


def test_only_a_chosen_endpoint_is_stored() -> None:
    """Older runs (hf judges) keep their stored configuration, hence their hash."""
    assert JudgeOptions().config() == {
        "judges": "offline",
        "judge_model": None,
        "event_model": None,
    }
    chosen = JudgeOptions(
        judge_model="m", judge_backend="openai", judge_base_url="http://h/v1"
    ).config()
    assert chosen["judge_backend"] == "openai" and chosen["judge_base_url"] == "http://h/v1"
    assert "judge_api_key_env" not in chosen  # the default variable name


def test_event_model_by_served_name_goes_to_the_endpoint(
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    server = serve(_answering("attributable"))
    options = JudgeOptions(
        judges="events",
        event_model="served-judge",
        judge_backend="openai",
        judge_base_url=server.url,
    )
    [judge], skipped = build_judges(options, "nonliteral")
    assert skipped == [] and isinstance(judge, EventJudge)
    entailment = judge.config()["entailment"]
    assert entailment["backend"] == "generated-attributable"
    assert entailment["generator"]["model"] == "served-judge"
    assert entailment["generator"]["api_key_env"] == "OPENAI_API_KEY"


def test_the_embedded_model_is_reachable_as_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--event-model default` and `--judge-model default` name the embedded SmolLM2
    (loaders replaced: no model is loaded here)."""
    import copyaudit.judges.loading as loading
    import copyaudit.models.smollm2 as smollm2

    loaded: list[str] = []

    class Loaded:
        model, tokenizer = object(), object()

    class FakeYesNo:
        def __init__(self, model: Any, tokenizer: Any, batch_size: int, source: str) -> None:
            loaded.append(source)

    monkeypatch.setattr(smollm2, "load_default_causal_lm", lambda device: Loaded())
    monkeypatch.setattr(loading, "CausalYesNo", FakeYesNo)
    for spec in ("default", "causal:default"):
        assert isinstance(loading.load_entailment_model(spec, device="cpu"), FakeYesNo)
    assert loaded == ["default (embedded HuggingFaceTB/SmolLM2-135M-Instruct)"] * 2
    monkeypatch.setattr(smollm2, "load_default_generator", lambda **options: "embedded")
    assert load_judge_lm(JudgeOptions(judge_model="default"), "default") == "embedded"


# --- the CLI end to end -------------------------------------------------------------------


def _judge_exchanges(db_path: Path) -> list[tuple[str, float | None, dict[str, Any]]]:
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute(
            "SELECT judge, value, evidence FROM judgments ORDER BY judge"
        ).fetchall()
    return [(judge, value, json.loads(evidence)) for judge, value, evidence in rows]


def _import(
    cli: Any, tmp_path: Path, kind: str, case: dict[str, Any], run: str, case_id: str, output: str
) -> None:
    """A suite of one case, and run `run` with one imported generation (no prompt)."""
    cases = write_jsonl(tmp_path / "cases.jsonl", [case])
    assert cli("import", kind, str(cases), "--suite", "s").code == 0
    generations = write_jsonl(tmp_path / "g.jsonl", [{"case_id": case_id, "output": output}])
    assert cli("import-generations", str(generations), "--run", run, "--suite", "s").code == 0


def test_cli_judge_through_the_endpoint(
    tmp_path: Path,
    cli: Any,
    db_path: Path,
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def answers(path: str, body: dict[str, Any], attempt: int) -> tuple[int, Any, float]:
        prompt = body["messages"][-1]["content"]
        if "[RESULT]" in prompt:
            return 200, chat_completion("Feedback: fine. [RESULT] 5"), 0.0
        if body["model"] == "events-m":
            return 200, chat_completion("Not attributable."), 0.0
        return 200, chat_completion("Answer: No"), 0.0

    server = serve(answers)
    monkeypatch.setenv("COPYAUDIT_JUDGE_KEY", "sk-never-stored")
    _import(cli, tmp_path, "nonliteral", nonliteral_record(), "stories", "nl-1", STORY)
    endpoint = ["--judge-backend", "openai", "--judge-base-url", server.url]
    key = ["--judge-api-key-env", "COPYAUDIT_JUDGE_KEY"]
    result = cli(
        "judge", "stories", "--judges", "events,fluency,refusal_lm",
        "--event-model", "events-m", "--judge-model", "grader-m", *endpoint, *key,
    )  # fmt: skip
    assert result.code == 0, result.err
    stored = {judge: (value, evidence) for judge, value, evidence in _judge_exchanges(db_path)}
    assert stored["events"][0] == 0.0 and len(stored["events"][1]["extra"]["exchanges"]) == 2
    assert stored["fluency"][0] == 5.0 and stored["refusal_lm"][0] == 0.0
    assert stored["refusal_lm"][1]["extra"]["answer"] == "Answer: No"
    assert {body["model"] for _, body, _ in server.requests} == {"events-m", "grader-m"}
    assert all(h["Authorization"] == "Bearer sk-never-stored" for _, _, h in server.requests)
    assert b"sk-never-stored" not in db_path.read_bytes()  # only the variable's name
    assert b"COPYAUDIT_JUDGE_KEY" in db_path.read_bytes()


def test_cli_refuses_a_base_url_with_credentials(tmp_path: Path, cli: Any, db_path: Path) -> None:
    _import(cli, tmp_path, "notice", notice_record(), "r", "nt-1", "No.")
    before = db_path.read_bytes()
    result = cli(
        "judge", "r", "--judges", "refusal_lm", "--judge-model", "m",
        "--judge-backend", "openai", "--judge-base-url", "http://u:sk-x@127.0.0.1:9/v1",
    )  # fmt: skip
    assert result.code == 2 and "credentials" in result.err
    assert db_path.read_bytes() == before


def test_cli_garbage_answers_are_judge_errors_for_every_event_in_agreement(
    tmp_path: Path,
    cli: Any,
    db_path: Path,
    serve: Callable[[Behaviour], FakeServer],  # noqa: F811
) -> None:
    """An endpoint judge that answers neither "attributable" nor "not attributable":
    each event item is stored undecided (verdict null), `agreement` counts every labelled
    event under judge_error (none judged "no"), and the report warns that the events
    metric is mostly unreadable."""
    server = serve(_answering("Purple monkey dishwasher."))
    cases = write_jsonl(tmp_path / "cases.jsonl", [nonliteral_record(i) for i in (1, 2, 3)])
    assert cli("import", "nonliteral", str(cases), "--suite", "s").code == 0
    stories = [{"case_id": f"nl-{i}", "output": STORY} for i in (1, 2, 3)]
    generations = write_jsonl(tmp_path / "g.jsonl", stories)
    assert cli("import-generations", str(generations), "--run", "garbled", "--suite", "s").code == 0
    endpoint = ["--judge-backend", "openai", "--judge-base-url", server.url]
    result = cli("judge", "garbled", "--judges", "events", "--event-model", "m", *endpoint)
    assert result.code == 0, result.err
    stored = _judge_exchanges(db_path)
    assert [value for _, value, _ in stored] == [None] * 3
    assert all(i["verdict"] is None for _, _, e in stored for i in e["items"])
    labels = [
        {"annotator": "ann", "generation": f"garbled/nl-{i}/1", "target": "event", "index": e}
        | {"label": "yes" if e == 0 else "no"}
        for i in (1, 2, 3)
        for e in (0, 1)
    ]
    assert cli("import-labels", str(write_jsonl(tmp_path / "l.jsonl", labels))).code == 0
    agreement = json.loads(cli("agreement", "--run", "garbled", "--format", "json").out)
    [row] = [r for r in agreement["judges"] if r["judge"] == "events"]
    assert row["n"] == 0 and row["excluded"]["judge_error"] == 6
    report = json.loads(cli("report", "garbled", "--format", "json").out)
    assert report["unreadable"] == {"events": 3}
    assert report["warnings"] == [
        "events: 3 of 3 judgments unreadable (the judge model's answers could not be read "
        "or its requests failed); its figures leave them out and rest on the rest"
    ]
    assert "**Warning:** events: 3 of 3" in cli("report", "garbled").out
