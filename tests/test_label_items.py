"""What annotation asks: content items for notice paraphrase / translate, characters
named in the prompt shown but not asked; and how the agreement report treats both."""

from __future__ import annotations

from typing import Any

from copyaudit.studies.notice.judge import NoticeJudge
from copyaudit.studies.notice.metrics import BERTSCORE, COSINE, LCS_RATIO, ROUGE, XLING_COSINE
from copyaudit.types import JudgeInput
from copyaudit.verification.agreement import compute_report
from db.browse import GenerationDetail, JudgmentView
from db.labels import CurrentLabel, JudgeVerdict
from screens.widgets.label_items import NOT_SCORED, label_items
from tests.test_notice_metrics import BagOfWords


def _detail(kind: str, payload: dict[str, Any], judgments: list[JudgmentView] = ()) -> Any:
    return GenerationDetail(
        generation_id=1,
        run="r",
        suite="s",
        kind=kind,
        case_id="c1",
        template=1,
        work_title="W",
        work_author=None,
        membership="unknown",
        prompt="the prompt",
        output="an output",
        error=None,
        tokens=None,
        source="generated",
        payload=payload,
        judgments=list(judgments),
    )


def _notice(task: str) -> dict[str, Any]:
    return {"task": task, "snippet": "a b c", "notice": "", "query": "q"}


def test_notice_paraphrase_and_translate_ask_whether_the_content_is_reproduced() -> None:
    for task in ("paraphrase", "translate"):
        targets = [item.target for item in label_items(_detail("notice", _notice(task)))]
        assert targets == ["refusal", "literal", "content"], task
    for task in ("repeat", "extract"):
        targets = [item.target for item in label_items(_detail("notice", _notice(task)))]
        assert targets == ["refusal", "literal"], task
    literal = {"input": "x", "reference": "y"}
    assert "content" not in [item.target for item in label_items(_detail("literal", literal))]


def test_the_content_item_carries_the_notice_judges_verdicts() -> None:
    judgments = [
        JudgmentView("notice", "2", BERTSCORE, 0.9, True, {"target": "content"}),
        JudgmentView("notice", "2", COSINE, 0.5, False, {"target": "content"}),
    ]
    items = label_items(_detail("notice", _notice("paraphrase"), judgments))
    content = next(item for item in items if item.target == "content")
    assert [(m.metric, m.verdict) for m in content.judges] == [(BERTSCORE, True), (COSINE, False)]


def test_every_flagged_notice_metric_names_a_label_target() -> None:
    model = BagOfWords()
    judge = NoticeJudge(model, model, model)
    cases = [
        JudgeInput("notice", _notice(task), "prompt", "a b")
        for task in ("repeat", "paraphrase", "translate")
    ]
    targets = {s.metric: s.target for scores in judge.judge(cases) for s in scores}
    assert targets[ROUGE] == "literal"
    assert targets[BERTSCORE] == targets[COSINE] == targets[XLING_COSINE] == "content"
    assert targets[LCS_RATIO] is None  # no threshold, no verdict to check


def test_characters_named_in_the_prompt_are_shown_not_asked() -> None:
    payload = {
        "input": "Once, Harry walked in.",
        "reference_events": ["an event"],
        "reference_characters": [["Harry", "Harry Potter"], ["Hermione"]],
    }
    items = label_items(_detail("nonliteral", payload))
    characters = [item for item in items if item.target == "character"]
    assert [(c.index, c.asked, c.note) for c in characters] == [
        (0, False, NOT_SCORED),
        (1, True, ""),
    ]
    assert all(item.asked for item in items if item.target != "character")


def _label(annotator: str, target: str, index: int, value: str) -> CurrentLabel:
    return CurrentLabel("u", "r", 1, "r/c1/1", annotator, target, index, value, None, "t")


def _verdict(target: str, index: int, verdict: bool, **extra: Any) -> JudgeVerdict:
    judge, metric = ("characters", "characters") if target == "character" else ("notice", COSINE)
    key = ("r", 1, "r/c1/1", judge, metric, target, index)
    return JudgeVerdict(*key, verdict, None, None, **extra)


def test_agreement_compares_content_judges_and_ignores_labels_on_unscored_items() -> None:
    labels = [
        _label("ana", "content", 0, "yes"),
        _label("ben", "content", 0, "yes"),
        _label("ana", "character", 0, "yes"),  # named in the prompt: not scored
        _label("ben", "character", 0, "no"),
        _label("ana", "character", 1, "yes"),
        _label("ben", "character", 1, "yes"),
    ]
    verdicts = [
        _verdict("content", 0, False),
        _verdict("character", 0, False, excluded=True),
        _verdict("character", 1, True),
    ]
    report = compute_report(labels, verdicts, resamples=10)
    content = next(row for row in report["judges"] if row["target"] == "content")
    assert content["confusion"] == {"tp": 0, "fp": 0, "fn": 1, "tn": 0}
    assert content["recall"] == 0.0
    assert content["threshold"] is not None  # a thresholded similarity: advice offered
    characters = next(row for row in report["references"] if row["target"] == "character")
    assert characters["items"] == 1  # the unscored character is not a reference item
    assert not [d for d in report["disagreements"] if d["target"] == "character"]


def test_agreement_report_checks_the_notice_judges_against_people(tmp_path, cli, db_path) -> None:
    from copyaudit.formats import LocatedGeneration
    from copyaudit.verification.agreement import agreement_report
    from db import Store
    from db.events import append_label
    from db.runs import JudgeIdentity, import_generations, save_judgments
    from tests.conftest import write_jsonl
    from tests.factories import notice_record

    records = [
        notice_record(1, task="paraphrase", snippet="a b c d"),
        notice_record(2, task="translate", snippet="a b c d"),
        notice_record(3, task="repeat", snippet="a b c d"),
    ]
    path = write_jsonl(tmp_path / "n.jsonl", records)
    assert cli("import", "notice", str(path), "--suite", "notice").code == 0
    outputs = ["a b c d", "c d", "a b c d"]
    rows = [LocatedGeneration(i, f"nt-{i}", 1, out) for i, out in enumerate(outputs, 1)]
    model = BagOfWords()
    judge = NoticeJudge(model, model, model)
    with Store(db_path) as store:
        import_generations(store, run="n", suite="notice", model="m", rows=rows, source="t")
        ids = [int(r[0]) for r in store.query("SELECT id FROM generations ORDER BY id")]
        inputs = [
            JudgeInput("notice", r, "prompt", o) for r, o in zip(records, outputs, strict=True)
        ]
        identity = JudgeIdentity(judge.name, judge.version, judge.config(), judge.config_hash())
        save_judgments(store, identity, zip(ids, judge.judge(inputs), strict=True))
        for gid, target in ((ids[0], "content"), (ids[1], "content"), (ids[2], "literal")):
            append_label(
                store, generation_id=gid, annotator="ana", target=target, item_index=0, label="yes"
            )
        report = agreement_report(store, "n", resamples=10)
    rows_by_metric = {(r["target"], r["metric"]): r for r in report["judges"]}
    assert set(rows_by_metric) == {
        ("content", BERTSCORE),
        ("content", COSINE),
        ("content", XLING_COSINE),
        ("literal", ROUGE),
    }
    assert rows_by_metric[("content", COSINE)]["n"] == 1  # the paraphrase, labelled
    assert rows_by_metric[("literal", ROUGE)]["confusion"]["tp"] == 1  # verbatim, flagged
