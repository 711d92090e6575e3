from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from copyaudit.verification.stats import (
    best_threshold,
    binary_metrics,
    bootstrap_ci,
    cohen_kappa,
    krippendorff_alpha,
    pairwise_kappa,
    reference_label,
    reference_labels,
    reliability_matrix,
)

T, F = True, False

# ---------------------------------------------------------------------------
# Judge vs reference
# ---------------------------------------------------------------------------


def test_binary_metrics_by_hand() -> None:
    pred = [T, T, F, F, T, F]
    gold = [T, F, T, F, T, F]
    # tp: items 0, 4; fp: item 1; fn: item 2; tn: items 3, 5
    m = binary_metrics(pred, gold)
    assert (m["n"], m["tp"], m["fp"], m["fn"], m["tn"]) == (6, 2, 1, 1, 2)
    assert m["accuracy"] == pytest.approx(4 / 6)
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 3)
    assert m["f1"] == pytest.approx(2 / 3)  # 2*2 / (2*2 + 1 + 1)


def test_binary_metrics_unequal_precision_and_recall() -> None:
    # tp 1, fp 3, fn 0, tn 1: precision 1/4, recall 1, F1 = 2PR/(P+R) = 0.5/1.25 = 0.4
    m = binary_metrics([T, T, T, T, F], [T, F, F, F, F])
    assert m["precision"] == pytest.approx(0.25)
    assert m["recall"] == pytest.approx(1.0)
    assert m["f1"] == pytest.approx(0.4)
    assert m["accuracy"] == pytest.approx(0.4)


def test_binary_metrics_undefined_cases_are_none() -> None:
    # no positive prediction: precision undefined; one gold positive missed: recall 0
    m = binary_metrics([F, F], [T, F])
    assert m["precision"] is None
    assert m["recall"] == 0.0
    assert m["f1"] == 0.0  # 2*0 / (0 + 0 + 1)
    assert m["accuracy"] == 0.5
    # no positive anywhere: precision, recall and F1 undefined, accuracy perfect
    m = binary_metrics([F, F, F], [F, F, F])
    assert (m["precision"], m["recall"], m["f1"]) == (None, None, None)
    assert m["accuracy"] == 1.0
    # positives predicted, none in gold: precision 0, recall undefined
    m = binary_metrics([T, F], [F, F])
    assert m["precision"] == 0.0 and m["recall"] is None and m["f1"] == 0.0
    empty = binary_metrics([], [])
    assert empty["n"] == 0 and empty["accuracy"] is None
    with pytest.raises(ValueError):
        binary_metrics([T], [T, F])


PRED = [T, T, F, F, T, F, T, F, F, T, T, F, F, F, T, F, T, T, F, F]
GOLD = [T, F, T, F, T, F, T, T, F, T, F, F, F, T, T, F, T, F, F, F]


@pytest.mark.parametrize("metric", ["accuracy", "precision", "recall", "f1"])
def test_bootstrap_ci_matches_a_loop_over_the_same_resamples(metric: str) -> None:
    low, high = bootstrap_ci(PRED, GOLD, metric, n=300, seed=5)
    rng = np.random.default_rng(5)
    index = rng.integers(0, len(PRED), size=(300, len(PRED)))
    values = []
    for row in index:
        value = binary_metrics([PRED[i] for i in row], [GOLD[i] for i in row])[metric]
        if value is not None:
            values.append(value)
    expected = np.quantile(values, [0.025, 0.975])
    assert (low, high) == pytest.approx(tuple(expected))
    point = binary_metrics(PRED, GOLD)[metric]
    assert 0.0 <= low <= point <= high <= 1.0
    assert bootstrap_ci(PRED, GOLD, metric, n=300, seed=5) == (low, high)


def test_bootstrap_ci_drops_undefined_resamples() -> None:
    # one positive prediction among 20 items: many resamples miss it (precision
    # undefined there) and are dropped; those that keep it have precision 1.0
    pred = [T] + [F] * 19
    gold = [T] + [F] * 19
    assert bootstrap_ci(pred, gold, "precision", n=200, seed=1) == (1.0, 1.0)
    assert bootstrap_ci([F, F, F], [T, F, F], "precision") is None
    assert bootstrap_ci([], [], "accuracy") is None
    with pytest.raises(ValueError):
        bootstrap_ci(PRED, GOLD, "auc")


# ---------------------------------------------------------------------------
# Reference labels
# ---------------------------------------------------------------------------


def test_reference_label_majority_ignoring_unsure() -> None:
    assert reference_label(["yes", "yes", "no"]) == "yes"
    assert reference_label(["YES", "no", " No "]) == "no"
    assert reference_label(["yes", "unsure", "unsure"]) == "yes"  # unsure does not vote
    assert reference_label(["yes", "no"]) is None  # tie
    assert reference_label(["yes", "no", "unsure"]) is None  # still a tie
    assert reference_label(["unsure", "unsure"]) is None
    assert reference_label([]) is None
    with pytest.raises(ValueError):
        reference_label(["maybe"])


def test_reference_labels_reports_exclusions() -> None:
    result = reference_labels(
        {
            "e1": ["yes", "yes"],
            "e2": ["yes", "no"],
            "e3": ["unsure"],
            "e4": ["no", "unsure", "no"],
            "e5": [],
        }
    )
    assert result["labels"] == {"e1": "yes", "e4": "no"}
    assert result["ties"] == ["e2"]
    assert result["no_votes"] == ["e3", "e5"]
    assert (result["n_items"], result["n_used"], result["n_ties"], result["n_no_votes"]) == (
        5,
        2,
        1,
        2,
    )


# ---------------------------------------------------------------------------
# Krippendorff's alpha
# ---------------------------------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
# nominal data, 4 observers, 12 units, missing data; alpha = 0.743.
#   unit:  1  2  3  4  5  6  7  8  9  10 11 12
#   A:     1  2  3  3  2  1  4  1  2  .  .  .
#   B:     1  2  3  3  2  2  4  1  2  5  .  3
#   C:     .  3  3  3  2  3  4  2  2  5  1  .
#   D:     1  2  3  3  2  4  4  1  2  5  1  .
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    "C": [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
}


def _units_from_rows(rows: dict[str, list]) -> dict[int, dict[str, object]]:  # type: ignore[type-arg]
    n_items = len(next(iter(rows.values())))
    return {
        item: {coder: values[item] for coder, values in rows.items() if values[item] is not None}
        for item in range(n_items)
    }


def test_alpha_reproduces_krippendorffs_published_example() -> None:
    alpha = krippendorff_alpha(_units_from_rows(KRIPPENDORFF_2011))
    assert alpha == pytest.approx(0.743, abs=5e-4)


# Three annotators, yes/no/unsure, with a missing label:
#   item:  i1   i2   i3      i4
#   A:     yes  yes  no      no
#   B:     yes  no   no      yes
#   C:     yes  .    unsure  no
# Coincidences (pairs within an item, each weighted 1 / (m_u - 1)):
#   i1 (yes,yes,yes): 6 ordered yes-yes pairs / 2      -> o_yy += 3
#   i2 (yes,no):      yes-no 1, no-yes 1 / 1          -> o_yn += 1, o_ny += 1
#   i3 (no,no) [C's unsure is missing]: 2 no-no / 1   -> o_nn += 2
#   i4 (no,yes,no):   no-no 2, no-yes 2, yes-no 2 / 2 -> o_nn += 1, o_ny += 1, o_yn += 1
# o_yy = 3, o_yn = o_ny = 2, o_nn = 3; n = 10, n_yes = n_no = 5
# D_o = (2 + 2) / 10 = 0.4; D_e = 2 * 5 * 5 / (10 * 9) = 5/9; alpha = 1 - 0.4 * 9/5 = 0.28
THREE_ANNOTATORS = {
    "i1": {"A": "yes", "B": "yes", "C": "yes"},
    "i2": {"A": "yes", "B": "no"},
    "i3": {"A": "no", "B": "no", "C": "unsure"},
    "i4": {"A": "no", "B": "yes", "C": "no"},
}


def test_alpha_three_annotators_with_missing_and_unsure() -> None:
    assert krippendorff_alpha(THREE_ANNOTATORS) == pytest.approx(0.28)


def test_alpha_equals_the_package_on_the_same_matrix() -> None:
    matrix, annotators, items, values = reliability_matrix(THREE_ANNOTATORS)
    assert annotators == ["A", "B", "C"] and items == ["i1", "i2", "i3", "i4"]
    assert values == ["no", "yes"]
    nan = np.nan
    expected = np.array([[1, 1, 0, 0], [1, 0, 0, 1], [1, nan, nan, 0]])
    np.testing.assert_array_equal(matrix, expected)
    direct = krippendorff.alpha(reliability_data=expected, level_of_measurement="nominal")
    assert krippendorff_alpha(THREE_ANNOTATORS) == pytest.approx(direct)


def test_alpha_treats_unsure_as_missing_and_ignores_case() -> None:
    without_unsure = {
        item: {a: v for a, v in labels.items() if v != "unsure"}
        for item, labels in THREE_ANNOTATORS.items()
    }
    shouting = {
        item: {a: v.upper() for a, v in labels.items()} for item, labels in THREE_ANNOTATORS.items()
    }
    assert krippendorff_alpha(without_unsure) == pytest.approx(0.28)
    assert krippendorff_alpha(shouting) == pytest.approx(0.28)


def test_alpha_undefined_cases() -> None:
    assert krippendorff_alpha({"i1": {"A": "yes"}, "i2": {"A": "no"}}) is None  # one annotator
    # two annotators who never label the same item: nothing to pair
    assert krippendorff_alpha({"i1": {"A": "yes"}, "i2": {"B": "no"}}) is None
    # only one value among the pairable labels: no expected disagreement, alpha undefined
    assert krippendorff_alpha({"i1": {"A": "yes", "B": "yes"}, "i2": {"C": "no"}}) is None
    assert krippendorff_alpha({}) is None
    # perfect agreement with both values in use
    perfect = {"i1": {"A": "yes", "B": "yes"}, "i2": {"A": "no", "B": "no"}}
    assert krippendorff_alpha(perfect) == pytest.approx(1.0)


# ---------------------------------------------------------------------------
# Cohen's kappa
# ---------------------------------------------------------------------------


def test_cohen_kappa_hand_computed_two_by_two() -> None:
    #             b yes  b no
    #   a yes       4      1
    #   a no        2      3
    # p_o = 7/10; p_e = (5/10)(6/10) + (5/10)(4/10) = 0.5; kappa = 0.2 / 0.5 = 0.4
    a = ["yes"] * 4 + ["yes"] + ["no"] * 2 + ["no"] * 3
    b = ["yes"] * 4 + ["no"] + ["yes"] * 2 + ["no"] * 3
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)


def test_cohen_kappa_drops_unsure_and_missing_and_handles_undefined() -> None:
    a = ["yes", "no", "unsure", None, "yes"]
    b = ["yes", "no", "yes", "no", "no"]
    # kept pairs: (yes,yes), (no,no), (yes,no): p_o = 2/3
    # a: yes 2/3, no 1/3; b: yes 1/3, no 2/3; p_e = 2/9 + 2/9 = 4/9
    # kappa = (2/3 - 4/9) / (5/9) = (2/9) / (5/9) = 0.4
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(["yes", "yes"], ["yes", "yes"]) is None  # p_e = 1
    assert cohen_kappa(["unsure"], ["yes"]) is None
    with pytest.raises(ValueError):
        cohen_kappa(["yes"], [])


def test_pairwise_kappa_on_common_items() -> None:
    rows = pairwise_kappa(THREE_ANNOTATORS)
    by_pair = {(r["a"], r["b"]): r for r in rows}
    assert set(by_pair) == {("A", "B"), ("A", "C"), ("B", "C")}
    # A vs B on i1-i4: A y,y,n,n  B y,n,n,y -> p_o 1/2, p_e 1/2 -> 0
    assert by_pair[("A", "B")]["n"] == 4
    assert by_pair[("A", "B")]["kappa"] == pytest.approx(0.0)
    # A vs C on i1, i4 (C is missing on i2, unsure on i3): y,n vs y,n -> 1
    assert by_pair[("A", "C")]["n"] == 2
    assert by_pair[("A", "C")]["kappa"] == pytest.approx(1.0)
    # B vs C on i1, i4: y,y vs y,n -> p_o 1/2; p_e = 1 * 1/2 + 0 * 1/2 = 1/2 -> 0
    assert by_pair[("B", "C")]["kappa"] == pytest.approx(0.0)


# ---------------------------------------------------------------------------
# Threshold search
# ---------------------------------------------------------------------------


def test_best_threshold_by_hand() -> None:
    scores = [0.9, 0.8, 0.7, 0.4, 0.3, 0.1]
    gold = [T, F, T, T, F, F]
    # >= 0.9: tp1 fp0 fn2 -> F1 2/4 = .5     >= 0.8: tp1 fp1 fn2 -> 2/5 = .4
    # >= 0.7: tp2 fp1 fn1 -> 4/6 = .667      >= 0.4: tp3 fp1 fn0 -> 6/7 = .857 (best)
    # >= 0.3: tp3 fp2 -> 6/8 = .75           >= 0.1: tp3 fp3 -> 6/9 = .667
    best = best_threshold(scores, gold)
    assert best == pytest.approx({"threshold": 0.4, "f1": 6 / 7, "precision": 0.75, "recall": 1.0})


def test_best_threshold_ties_prefer_the_higher_threshold() -> None:
    # >= 0.9: tp1 fn1 -> 2/3; >= 0.6: tp2 fp2 -> 4/6 = 2/3; the higher one wins
    best = best_threshold([0.9, 0.8, 0.7, 0.6], [T, F, F, T])
    assert best is not None
    assert best["threshold"] == 0.9 and best["f1"] == pytest.approx(2 / 3)
    assert best_threshold([0.2, 0.5], [F, F]) is None
    assert best_threshold([], []) is None
