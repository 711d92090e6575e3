"""QAJudge: SQuAD normalisation, F1/EM, CopyBench's answer markers."""

from __future__ import annotations

import re
import string
from collections import Counter

import pytest

from copyaudit.judges.qa import QAJudge, exact_match, extract_answer, f1_score, normalize_answer
from copyaudit.types import JudgeInput, Score


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Denver Broncos", "denver broncos"),
        ("  Santa   Clara,\nCalifornia. ", "santa clara california"),
        ("an apple a day", "apple day"),
        ("$1,000,000", "1000000"),
        ("May 25, 1521", "may 25 1521"),
        ("Theatre of the absurd", "theatre of absurd"),  # "the" only as a whole word
        ("A", ""),
        ("Jaime Weston's", "jaime westons"),
    ],
)
def test_squad_normalisation(text: str, normalised: str) -> None:
    assert normalize_answer(text) == normalised


def test_f1_and_exact_match_squad_examples() -> None:
    assert exact_match("the Denver Broncos!", "Denver Broncos") == 1.0
    assert exact_match("Denver", "Denver Broncos") == 0.0
    # prediction [denver], reference [denver, broncos]: P 1, R 1/2
    assert f1_score("Denver", "Denver Broncos") == pytest.approx(2 / 3)
    # prediction [broncos, won, broncos], reference [broncos]: one match (counts clipped)
    assert f1_score("Broncos won, Broncos", "the Broncos") == pytest.approx(0.5)
    assert f1_score("Carolina Panthers", "Denver Broncos") == 0.0
    assert f1_score("", "Denver") == 0.0


def _scores(output: str, reference: object = "San Jose", **kwargs: str) -> dict[str, Score]:
    item = JudgeInput("qa", {"input": "Q?", "reference": reference}, "Q?", output)
    return {s.metric: s for s in QAJudge(**kwargs).judge([item])[0]}


def test_answer_between_markers_with_span() -> None:
    output = " [Output_Start] San Jose, California [Output_End]\n\nQuestion: next"
    scores = _scores(output)
    assert scores["qa_em"].value == 0.0
    assert scores["qa_f1"].value == pytest.approx(0.8)  # P 2/3, R 1
    [span] = scores["qa_f1"].spans
    assert output[span.start : span.end] == "San Jose, California"
    assert scores["qa_f1"].extra["answer"] == "San Jose, California"
    assert scores["qa_em"].spans == scores["qa_f1"].spans


def test_without_markers_the_whole_output_is_the_answer() -> None:
    scores = _scores("  San Jose.  ")
    assert scores["qa_em"].value == 1.0
    [span] = scores["qa_em"].spans
    assert (span.start, span.end) == (2, 11)


def test_missing_end_marker_scores_the_whole_output() -> None:
    output = "[Output_Start] San Jose\nQuestion: Who was it?"
    scores = _scores(output)
    # CopyBench's regex fails, so its scorer uses the whole output
    assert scores["qa_em"].value == 0.0
    assert scores["qa_f1"].value == pytest.approx(2 * (2 / 7) / (2 / 7 + 1))
    assert extract_answer(output) == (0, len(output))


def test_paper_regex_is_greedy_on_one_line() -> None:
    output = "[Output_Start] a [Output_End] b [Output_End]"
    start, end = extract_answer(output)
    assert output[start:end] == " a [Output_End] b "


def test_several_references_take_the_best() -> None:
    scores = _scores("[Output_Start] Surveyor 3 [Output_End]", reference=["Apollo", "Surveyor 3"])
    assert scores["qa_em"].value == 1.0 and scores["qa_f1"].value == 1.0


def test_missing_reference_is_an_error() -> None:
    item = JudgeInput("qa", {"input": "Q?"}, "Q?", "x")
    assert all(s.value is None and s.error for s in QAJudge().judge([item])[0])


def test_config_records_the_answer_rule() -> None:
    assert "Output_Start" in QAJudge().config()["answer"]


# --- CopyBench's scripts/eval_qa.py, transcribed (normalisation, F1/EM, markers) ---------


def _copybench_normalize(s: str) -> str:
    def remove_articles(text: str) -> str:
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text: str) -> str:
        return " ".join(text.split())

    def remove_punc(text: str) -> str:
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    return white_space_fix(remove_articles(remove_punc(s.lower())))


def _copybench_f1(prediction: str, ground_truth: str) -> float:
    prediction_tokens = _copybench_normalize(prediction).split()
    ground_truth_tokens = _copybench_normalize(ground_truth).split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    return (2 * precision * recall) / (precision + recall)


def _copybench_scores(output_text: str, label_text: str) -> tuple[float, float]:
    """(em, f1) as eval_qa.py's main loop computes them."""
    pattern = re.compile(r"\[Output_Start\](.*)\[Output_End\]")
    match = pattern.search(output_text)
    if match:
        output_text = match.group(1)
    em = float(_copybench_normalize(output_text) == _copybench_normalize(label_text))
    return em, _copybench_f1(output_text, label_text)


@pytest.mark.parametrize(
    "output",
    [
        "[Output_Start]\nhis little daughter\n[Output_End]",  # F1 0.75 in CopyBench
        "[Output_Start] his little daughter [Output_End]",
        "[Output_Start] his daughter\n[Output_End]",
        "[Output_Start]\nhis little daughter [Output_End]",
        "[Output_Start] his little daughter",  # no end marker
        "his little daughter [Output_End]",  # no start marker
        "His little daughter.",  # no markers
        "[Output_Start] the daughter [Output_End]\n[Output_Start] his son [Output_End]",
        "[Output_Start] a [Output_End] his [Output_End] daughter",
        "Answer:\n\n[Output_Start] His Little Daughter! [Output_End]\n\n\nQuestion: who?",
        "[output_start] his little daughter [output_end]",  # markers are case-sensitive
        "[Output_Start][Output_End]",
        "",
        "   \n  ",
        "\u201chis\u201d \u2014 little daughter\u2019s",  # non-ASCII punctuation is kept
    ],
)
def test_identical_to_copybench_eval_qa(output: str) -> None:
    reference = "his little daughter"
    em, f1 = _copybench_scores(output, reference)
    scores = _scores(output, reference=reference)
    assert (scores["qa_em"].value, scores["qa_f1"].value) == (em, f1)


def test_copybench_scores_markers_on_their_own_lines_as_text() -> None:
    scores = _scores("[Output_Start]\nhis little daughter\n[Output_End]", "his little daughter")
    assert scores["qa_f1"].value == pytest.approx(0.75)  # outputstart ... outputend: P 3/5
