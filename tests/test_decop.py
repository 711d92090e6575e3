from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence

import numpy as np
import pytest
from scipy import stats

from copyaudit.models.base import ChoiceScorer
from copyaudit.studies.decop import method as decop
from copyaudit.studies.decop.format import parse_decop_id
from copyaudit.studies.decop.method import (
    DecopPassage,
    WorkResult,
    all_orders,
    apply_calibration,
    baseline_scores,
    bootstrap_auc,
    bootstrap_thresholded_auc,
    build_prompt,
    expand_prompts,
    fit_calibration,
    roc_auc,
    score_passages,
    summarize,
    summarize_baselines,
    welch_p_value,
    youden_balanced_accuracy,
)

V, P1, P2, P3 = "verbatim text", "first paraphrase", "second paraphrase", "third paraphrase"


# ---------------------------------------------------------------------------
# Orders, prompts, ids
# ---------------------------------------------------------------------------


def test_all_orders_are_the_24_permutations_with_the_verbatim_index() -> None:
    orders = all_orders(V, [P1, P2, P3])
    assert len(orders) == 24
    assert len({options for options, _ in orders}) == 24
    for options, answer in orders:
        assert sorted(options) == sorted([V, P1, P2, P3])
        assert options.count(V) == 1
        assert options[answer] == V
    # every letter holds the verbatim passage in exactly 6 of the 24 orders
    assert np.bincount([answer for _, answer in orders]).tolist() == [6, 6, 6, 6]
    # fixed order: identity first, full reversal last (itertools.permutations order)
    assert orders[0] == ((V, P1, P2, P3), 0)
    assert orders[-1] == ((P3, P2, P1, V), 3)
    assert all_orders(V, [P1, P2, P3]) == orders


def test_all_orders_needs_three_paraphrases() -> None:
    with pytest.raises(ValueError):
        all_orders(V, [P1, P2])


def test_book_prompt_format() -> None:
    prompt = build_prompt([V, P1, P2, P3], "The Salt Road", "Mira Okonkwo")
    assert prompt == (
        'Question: Which of the following passages is verbatim from the "The Salt Road" '
        "book by Mira Okonkwo?\n"
        "Options:\n"
        "A. verbatim text\n"
        "B. first paraphrase\n"
        "C. second paraphrase\n"
        "D. third paraphrase\n"
        "\n"
        "Answer:"
    )


def test_paper_prompt_and_missing_author() -> None:
    paper = build_prompt([V, P1, P2, P3], "Sparse Lanterns", doc_type="paper")
    assert paper.startswith(
        "Question: Which of the following passages is verbatim from the arXiv paper "
        '"Sparse Lanterns"?\nOptions:\nA. '
    )
    no_author = build_prompt([V, P1, P2, P3], "The Salt Road")
    assert '"The Salt Road" book?\nOptions:' in no_author
    with pytest.raises(ValueError):
        build_prompt([V, P1, P2, P3], "The Salt Road", doc_type="poem")
    with pytest.raises(ValueError):
        build_prompt([V, P1, P2], "The Salt Road")


def test_parse_decop_id() -> None:
    assert parse_decop_id("The_Salt_Road_-_Mira_Okonkwo") == ("The Salt Road", "Mira Okonkwo")
    assert parse_decop_id("Lanterns_-_A._B._Quill") == ("Lanterns", "A. B. Quill")
    assert parse_decop_id("Untitled_Notes") == ("Untitled Notes", None)


def test_passage_from_payload() -> None:
    passage = DecopPassage.from_payload(
        {"options": [P1, P2, V, P3], "answer": 2}, title="T", author="A"
    )
    assert passage.verbatim == V
    assert passage.paraphrases == (P1, P2, P3)
    with pytest.raises(ValueError):
        DecopPassage.from_payload({"options": [P1, V], "answer": 1}, title="T")


class RecordingScorer:
    """Returns a distinct probability row per call position and records batch sizes."""

    def __init__(self) -> None:
        self.batches: list[list[str]] = []

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        assert list(choices) == [" A", " B", " C", " D"]
        self.batches.append(list(prompts))
        return np.tile([0.1, 0.2, 0.3, 0.4], (len(prompts), 1))


def test_score_passages_batches_every_prompt_in_order() -> None:
    passages = [DecopPassage(f"{V} {i}", (P1, P2, P3), "T", "A") for i in range(3)]
    scorer = RecordingScorer()
    assert isinstance(scorer, ChoiceScorer)
    probs = score_passages(scorer, passages, batch_size=10)
    assert probs.shape == (72, 4)
    assert [len(b) for b in scorer.batches] == [10] * 7 + [2]
    prompts, answers = expand_prompts(passages)
    assert [p for batch in scorer.batches for p in batch] == prompts
    assert len(answers) == 72 and set(answers) == {0, 1, 2, 3}
    assert f"{V} 0" in prompts[0] and f"{V} 2" in prompts[-1]


def test_score_passages_rejects_a_bad_scorer_shape() -> None:
    class Broken:
        def choice_probabilities(self, prompts, choices):  # type: ignore[no-untyped-def]
            return np.ones((len(prompts), 3)) / 3

    with pytest.raises(ValueError):
        score_passages(Broken(), [DecopPassage(V, (P1, P2, P3), "T")], batch_size=8)


# ---------------------------------------------------------------------------
# Calibration on a synthetic scorer biased toward "A"
# ---------------------------------------------------------------------------

OPTION_LINE = re.compile(r"^([ABCD])\. (.*)$", re.MULTILINE)


class BiasedScorer:
    """A model that knows the memorized passages (weight 0.4 vs 0.2 for the verbatim
    option), otherwise spreads 0.25 with a little deterministic noise, and always adds
    +0.3 to the letter A before normalising: a pure selection bias."""

    def __init__(self, memorized: set[str]) -> None:
        self.memorized = memorized

    def choice_probabilities(self, prompts: Sequence[str], choices: Sequence[str]) -> np.ndarray:
        rows = []
        for prompt in prompts:
            options = [text for _, text in OPTION_LINE.findall(prompt)]
            known = any(text in self.memorized for text in options)
            weights = []
            for letter, text in zip("ABCD", options, strict=True):
                if known:
                    w = 0.4 if text in self.memorized else 0.2
                else:
                    noise = (zlib.crc32(f"{prompt}|{letter}".encode()) % 1000) / 1000
                    w = 0.25 + 0.04 * (noise - 0.5)
                weights.append(w + (0.3 if letter == "A" else 0.0))
            rows.append(np.array(weights) / sum(weights))
        return np.array(rows)


def _work(name: str, label: int, scorer: BiasedScorer, memorize: bool) -> WorkResult:
    passages = [
        DecopPassage(
            f"{name} verbatim {i}",
            tuple(f"{name} paraphrase {i}.{j}" for j in range(3)),
            title=name,
            author="Someone",
        )
        for i in range(3)
    ]
    if memorize:
        scorer.memorized.update(p.verbatim for p in passages)
    probs = score_passages(scorer, passages, batch_size=32)
    _, answers = expand_prompts(passages)
    return WorkResult(name, label, probs, answers)


@pytest.fixture(scope="module")
def biased_works() -> dict[str, list[WorkResult]]:
    scorer = BiasedScorer(set())
    suspect = [_work(f"Suspect {i}", 1, scorer, memorize=True) for i in range(4)]
    clean = [_work(f"Clean {i}", 0, scorer, memorize=False) for i in range(4)]
    held_out = [_work(f"Held out {i}", 0, scorer, memorize=False) for i in range(3)]
    return {"suspect": suspect, "clean": clean, "held_out": held_out}


def test_calibration_removes_the_letter_bias(biased_works: dict[str, list[WorkResult]]) -> None:
    suspect, held_out = biased_works["suspect"], biased_works["held_out"]
    # Before: the bias toward A wins every prompt, so accuracy is the 6/24 with answer A.
    for work in suspect:
        assert work.accuracy() == pytest.approx(0.25)
    delta = fit_calibration(np.concatenate([w.probs for w in held_out]))
    assert delta[0] < -0.15 and all(d > 0.04 for d in delta[1:])
    assert delta.sum() == pytest.approx(0.0)  # rows sum to 1, so the adjustments cancel
    for work in suspect:
        assert work.accuracy(delta) == pytest.approx(1.0)
    calibrated_clean = apply_calibration(np.concatenate([w.probs for w in held_out]), delta)
    assert calibrated_clean.mean(axis=0) == pytest.approx([0.25] * 4)


def test_summarize_reports_before_and_after(biased_works: dict[str, list[WorkResult]]) -> None:
    works = biased_works["suspect"] + biased_works["clean"]
    report = summarize(works, calibration_works=biased_works["held_out"], n_bootstrap=200)
    # uncalibrated: every work scores 0.25, the groups cannot be told apart
    assert report["auc"] == pytest.approx(0.5)
    assert report["balanced_accuracy_youden"] == pytest.approx(0.5)
    assert report["p_value"] is None  # zero variance in both groups
    assert report["auc_calibrated"] == pytest.approx(1.0)
    assert report["calibrated"]["balanced_accuracy_youden"] == pytest.approx(1.0)
    assert report["calibrated"]["p_value"] < 1e-3
    assert report["calibrated"]["auc_ci"] == (1.0, 1.0)
    before = report["label_position_bias"]["before"]
    after = report["label_position_bias"]["after"]
    assert before == [1.0, 0.0, 0.0, 0.0]
    assert sum(after) == pytest.approx(1.0)
    assert max(abs(share - 0.25) for share in after) < 0.08
    by_work = {row["work"]: row for row in report["per_work"]}
    assert by_work["Suspect 0"]["accuracy"] == pytest.approx(0.25)
    assert by_work["Suspect 0"]["accuracy_calibrated"] == pytest.approx(1.0)
    assert by_work["Clean 0"]["label"] == 0 and by_work["Clean 0"]["n_prompts"] == 72
    assert report["n_suspect"] == 4 and report["n_clean"] == 4


def test_summarize_guards_against_calibration_leakage(
    biased_works: dict[str, list[WorkResult]],
) -> None:
    works = biased_works["suspect"] + biased_works["clean"]
    with pytest.raises(ValueError):
        summarize(works, calibration_works=biased_works["clean"][:1])
    with pytest.raises(ValueError):
        summarize(works[4:], calibration_works=biased_works["suspect"][:1])
    plain = summarize(works, n_bootstrap=50)
    assert plain["auc_calibrated"] is None and plain["label_position_bias"]["after"] is None


def test_unknown_works_are_listed_but_not_counted(
    biased_works: dict[str, list[WorkResult]],
) -> None:
    suspect = biased_works["suspect"][0]
    unknown = WorkResult("Unknown", None, suspect.probs, suspect.answers)
    report = summarize([*biased_works["clean"], unknown], n_bootstrap=50)
    assert report["auc"] is None and report["n_suspect"] == 0
    assert [row["work"] for row in report["per_work"]][-1] == "Unknown"


def test_grouped_calibration_averages_works_first() -> None:
    probs = np.array([[0.4, 0.2, 0.2, 0.2]] + [[0.25] * 4] * 3)
    groups = ["w1", "w2", "w2", "w2"]
    # pooled: mean p_A = (0.4 + 3 * 0.25) / 4 = 0.2875 -> delta_A = -0.0375
    assert fit_calibration(probs)[0] == pytest.approx(-0.0375)
    # per work first (Algorithm 1): (0.4 + 0.25) / 2 = 0.325 -> delta_A = -0.075
    assert fit_calibration(probs, groups)[0] == pytest.approx(-0.075)
    with pytest.raises(ValueError):
        fit_calibration(np.zeros((0, 4)))


# ---------------------------------------------------------------------------
# Separation statistics
# ---------------------------------------------------------------------------


def test_roc_auc_hand_checked() -> None:
    assert roc_auc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0]) == 1.0
    assert roc_auc([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == 0.0
    assert roc_auc([0.5, 0.5, 0.5], [1, 0, 0]) == 0.5
    # positives 0.9, 0.3; negatives 0.6, 0.5, 0.4, 0.1
    # 0.9 beats all 4; 0.3 beats only 0.1 -> 5 of 8 pairs
    assert roc_auc([0.9, 0.3, 0.6, 0.5, 0.4, 0.1], [1, 1, 0, 0, 0, 0]) == pytest.approx(5 / 8)
    # a tie counts half: pos 0.8, 0.4 vs neg 0.4, 0.2, 0.6 -> 3 + (0.5 + 1 + 0) = 4.5 of 6
    assert roc_auc([0.8, 0.4, 0.4, 0.2, 0.6], [1, 1, 0, 0, 0]) == pytest.approx(0.75)
    assert roc_auc([0.8, 0.4], [1, 1]) is None


def test_youden_balanced_accuracy_hand_checked() -> None:
    scores = [0.9, 0.3, 0.6, 0.5, 0.4, 0.1]
    labels = [1, 1, 0, 0, 0, 0]
    # threshold 0.9: TPR 1/2, FPR 0 -> J 0.5 (best); 0.3: TPR 1, FPR 3/4 -> J 0.25
    # balanced accuracy = (TPR + TNR) / 2 = (0.5 + 1) / 2 = 0.75 (the AUC is 0.625)
    assert youden_balanced_accuracy(scores, labels) == pytest.approx(0.75)
    assert youden_balanced_accuracy([0.1, 0.2, 0.9, 0.8], [1, 1, 0, 0]) == pytest.approx(0.5)
    assert youden_balanced_accuracy([0.9, 0.8, 0.1], [1, 1, 0]) == pytest.approx(1.0)
    assert youden_balanced_accuracy([0.9], [1]) is None


def test_welch_p_value_matches_the_formula() -> None:
    suspect = np.array([0.9, 0.7, 0.8, 0.6])
    clean = np.array([0.3, 0.5, 0.2])
    v1, v2 = suspect.var(ddof=1) / len(suspect), clean.var(ddof=1) / len(clean)
    t = (suspect.mean() - clean.mean()) / math.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1**2 / (len(suspect) - 1) + v2**2 / (len(clean) - 1))
    assert welch_p_value(suspect, clean) == pytest.approx(2 * stats.t.sf(abs(t), df))
    assert welch_p_value(suspect, clean, "greater") == pytest.approx(stats.t.sf(t, df))
    # swapped groups: t changes sign, so "greater" is the other tail
    assert welch_p_value(clean, suspect, "greater") == pytest.approx(stats.t.sf(-t, df))
    assert welch_p_value(clean, suspect, "greater") == pytest.approx(1 - stats.t.sf(t, df))
    # one constant group is still a defined test: the variance comes from the other
    constant, spread = np.array([1.0, 1.0, 1.0]), np.array([0.2, 0.3, 0.25])
    t2 = (1.0 - spread.mean()) / math.sqrt(spread.var(ddof=1) / 3)
    assert welch_p_value(constant, spread) == pytest.approx(2 * stats.t.sf(t2, 2))
    assert welch_p_value([0.5], clean) is None
    assert welch_p_value([0.5, 0.5], [0.2, 0.2]) is None
    with pytest.raises(ValueError):
        welch_p_value(suspect, clean, "less")


def test_bootstrap_auc_is_deterministic_and_brackets_the_estimate() -> None:
    rng = np.random.default_rng(7)
    scores = np.concatenate([rng.normal(1.0, 1.0, 12), rng.normal(0.0, 1.0, 12)])
    labels = [1] * 12 + [0] * 12
    point = roc_auc(scores, labels)
    low, high = bootstrap_auc(scores, labels, n=500, seed=3)
    assert 0.0 <= low <= point <= high <= 1.0
    assert low < high
    assert bootstrap_auc(scores, labels, n=500, seed=3) == (low, high)
    assert bootstrap_auc([0.9, 0.8, 0.1, 0.2], [1, 1, 0, 0], n=100) == (1.0, 1.0)
    assert bootstrap_auc([0.9, 0.8], [1, 1]) is None


def _authors_thresholded_auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """3_get_results_blackbox.py, written out without sklearn: roc_curve's thresholds
    (inf, then the distinct scores from high to low), optimal_idx = argmax(tpr - fpr)
    (the first maximum), binary = scores >= threshold, roc_auc_score(labels, binary)
    counted pair by pair (ties half)."""
    y, s = np.asarray(labels), np.asarray(scores, dtype=float)
    thresholds = [math.inf, *sorted(set(s.tolist()), reverse=True)]
    j = [np.mean(s[y == 1] >= t) - np.mean(s[y == 0] >= t) for t in thresholds]
    binary = (s >= thresholds[int(np.argmax(j))]).astype(int)
    pairs = [(p, n) for p in binary[y == 1] for n in binary[y == 0]]
    return sum(1.0 if p > n else 0.5 if p == n else 0.0 for p, n in pairs) / len(pairs)


def test_thresholded_auc_by_hand() -> None:
    # suspect 0.9 0.6 0.4, clean 0.5 0.3. Threshold 0.6: TPR 2/3, FPR 0 (J 2/3, best);
    # 0.4: TPR 1, FPR 1/2 (J 1/2). Predictions 1 1 0 | 0 0 -> AUC (1 + 2/3) / 2 = 5/6.
    scores, labels = [0.9, 0.6, 0.4, 0.5, 0.3], [1, 1, 1, 0, 0]
    assert _authors_thresholded_auc(labels, scores) == pytest.approx(5 / 6)
    assert youden_balanced_accuracy(scores, labels) == pytest.approx(5 / 6)


def test_bootstrap_thresholded_auc_is_the_papers_table_2_procedure() -> None:
    suspect = [0.92, 0.71, 0.55, 0.40, 0.83, 0.30, 0.66]
    clean = [0.35, 0.52, 0.20, 0.61, 0.28]
    figure = bootstrap_thresholded_auc(suspect + clean, [1] * 7 + [0] * 5, seed=4)
    assert figure is not None and figure["resamples"] == 10 and figure["seed"] == 4
    # the same draws by hand: per resample 7 suspect indices, then 5 clean ones
    rng = np.random.default_rng(4)
    expected = []
    for _ in range(10):
        pos = [suspect[i] for i in rng.integers(0, 7, size=7)]
        neg = [clean[i] for i in rng.integers(0, 5, size=5)]
        expected.append(_authors_thresholded_auc([1] * 7 + [0] * 5, pos + neg))
    assert figure["values"] == pytest.approx(expected)
    mean = sum(expected) / 10
    assert figure["mean"] == pytest.approx(mean)
    assert figure["std"] == pytest.approx(math.sqrt(sum((v - mean) ** 2 for v in expected) / 10))
    assert len(set(expected)) > 1  # the resamples differ, so the std is not trivially 0
    assert bootstrap_thresholded_auc(suspect + clean, [1] * 7 + [0] * 5, seed=4) == figure
    separated = bootstrap_thresholded_auc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0])
    assert separated is not None and (separated["mean"], separated["std"]) == (1.0, 0.0)
    assert bootstrap_thresholded_auc([0.9, 0.8], [1, 1]) is None


def test_summary_reports_the_table_2_figure_beside_the_continuous_auc() -> None:
    works = [
        WorkResult(f"w{i}", label, np.tile(row, (24, 1)), np.zeros(24, dtype=int))
        for i, (label, row) in enumerate(
            [
                (1, [0.9, 0.1, 0, 0]),
                (1, [0.2, 0.8, 0, 0]),
                (0, [0.1, 0.9, 0, 0]),
                (0, [0.6, 0.4, 0, 0]),
            ]
        )
    ]
    report = summarize(works)
    scores = [w.accuracy() for w in works]
    assert report["auc"] == pytest.approx(roc_auc(scores, [1, 1, 0, 0]))
    assert report["auc_thresholded_bootstrap"] == bootstrap_thresholded_auc(scores, [1, 1, 0, 0])


# ---------------------------------------------------------------------------
# Baselines
# ---------------------------------------------------------------------------


def _fixed_logprobs(table: dict[str, list[float]]):  # type: ignore[no-untyped-def]
    def token_logprobs(texts: list[str]) -> list[np.ndarray]:
        return [np.array(table[text], dtype=float) for text in texts]

    return token_logprobs


def test_min_k_prob_and_log_perplexity_by_hand() -> None:
    assert decop.min_k_prob(np.array([-1.0, -2.0, -3.0, -4.0, -5.0])) == -5.0
    # 10 tokens -> the lowest 2: mean(-10, -9)
    assert decop.min_k_prob(-np.arange(1.0, 11.0)) == pytest.approx(-9.5)
    # fewer than 5 tokens still keeps one
    assert decop.min_k_prob(np.array([-0.5, -2.5])) == -2.5
    assert decop.log_perplexity(np.array([-1.0, -3.0])) == pytest.approx(2.0)
    assert math.isnan(decop.min_k_prob(np.array([])))


def test_baseline_scores_by_hand() -> None:
    text = "Rain On Harrow Hill"
    table = {text: [-1.0, -1.0, -1.0], text.lower(): [-3.0, -3.0, -3.0], "x": [], "X": []}
    table["X".lower()] = []
    scores = baseline_scores(_fixed_logprobs(table), [text, "X"])
    assert scores["perplexity"][0] == pytest.approx(-1.0)  # −log PPL
    assert scores["zlib"][0] == pytest.approx(-1.0 / len(zlib.compress(text.encode())))
    assert scores["lowercase"][0] == pytest.approx(3.0)  # log PPL lower / log PPL
    assert scores["min_k_prob"][0] == pytest.approx(-1.0)
    assert all(math.isnan(scores[m][1]) for m in decop.BASELINES)  # no tokens


def test_baselines_are_oriented_higher_is_member() -> None:
    """Members: the model predicts the original casing well and the lowercased copy
    worse; non-members are equally hard either way. Every baseline must then rank
    member works above non-member works (AUC 1.0)."""
    works = {
        "Member A": ["Ada Walks Home.", "The Tin Bell Rang."],
        "Member B": ["Owls Over Dunmore.", "Quiet Harbour Lights."],
        "Other C": ["A Red Kite Fell.", "Seven Grey Doors."],
        "Other D": ["Lamps In The Fog.", "Bread At Midnight."],
    }
    labels = {"Member A": 1, "Member B": 1, "Other C": 0, "Other D": 0}
    table: dict[str, list[float]] = {}
    for work, passages in works.items():
        for passage in passages:
            member = labels[work] == 1
            table[passage] = [-0.5] * 5 if member else [-2.0] * 5
            table[passage.lower()] = [-2.0] * 5
    per_work = {w: baseline_scores(_fixed_logprobs(table), p) for w, p in works.items()}
    report = summarize_baselines(per_work, labels, n_bootstrap=100)
    assert set(report) == set(decop.BASELINES)
    for method in decop.BASELINES:
        assert report[method]["auc"] == 1.0, method
        assert report[method]["mean_suspect"] > report[method]["mean_clean"], method
    assert report["lowercase"]["per_work"]["Member A"] == pytest.approx(4.0)
    assert report["lowercase"]["per_work"]["Other C"] == pytest.approx(1.0)
