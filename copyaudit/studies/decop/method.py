"""DE-COP (paper 001): verbatim-vs-paraphrase multiple choice over all 24 option orders.

Pure functions and small dataclasses. Models come in through the `ChoiceScorer`
protocol (next-token probabilities over " A".." D", one forward pass per prompt) and,
for the baselines, a callable returning per-token log-probabilities.

Prompt and option orders follow the authors' code (DE-COP_Method, 2_decop_hf.py and
oversample_labels_fn.py): orders are `itertools.permutations` of (verbatim, p1, p2,
p3); the answer is where the verbatim passage landed.

Labels: 1 = suspect (possibly in the training data), 0 = clean (published after the
cut-off), None = unknown (reported per work, left out of every group statistic).
"""

from __future__ import annotations

import itertools
import math
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats

from copyaudit.models.base import ChoiceScorer
from copyaudit.studies.decop.baselines import MIN_K_RATIO

ANSWER_LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
ANSWER_CHOICES: tuple[str, ...] = (" A", " B", " C", " D")  # space-prefixed answer tokens
N_OPTIONS = 4
N_ORDERS = math.factorial(N_OPTIONS)  # 24
DOC_TYPES: tuple[str, ...] = ("book", "paper")
Alternative = Literal["two-sided", "greater"]  # the Welch test's alternatives offered
TABLE2_RESAMPLES = 10  # the paper's Table 2: mean ± std over 10 bootstrap resamples
TABLE2_SEED = 0  # the authors published no seed; ours, fixed so a report is reproducible

# Paper 001 Appendix C.2 / the authors' code: the system prompt for open models. Backends
# that apply a chat template may use it; `build_prompt` returns the user turn only.
DECOP_SYSTEM_PROMPT = (
    "You are entering a multiple choice questions exam. You should directly answer each "
    "question by choosing the correct option. Be concise and straight to the point in your "
    "answer. Output only the letter corresponding to the correct answer.\n\n"
    "Format your answer as '<correct letter>'."
)


# ---------------------------------------------------------------------------
# Prompts
# ---------------------------------------------------------------------------


def all_orders(verbatim: str, paraphrases: Sequence[str]) -> list[tuple[tuple[str, ...], int]]:
    """The 24 option orders with the index of the verbatim option, in a fixed order."""
    if len(paraphrases) != N_OPTIONS - 1:
        raise ValueError(f"DE-COP needs exactly {N_OPTIONS - 1} paraphrases")
    base = (verbatim, *paraphrases)
    return [
        (tuple(base[i] for i in perm), perm.index(0))
        for perm in itertools.permutations(range(N_OPTIONS))
    ]


def build_prompt(
    options: Sequence[str], title: str, author: str | None = None, doc_type: str = "book"
) -> str:
    """The DE-COP question, as in the authors' code.

    book:  Question: Which of the following passages is verbatim from the "<title>" book
           by <author>?
    paper: Question: Which of the following passages is verbatim from the arXiv paper
           "<title>"?   (arXivTection)
    then "Options:", one "A. ..." line per option, a blank line and "Answer:".
    """
    if len(options) != N_OPTIONS:
        raise ValueError(f"DE-COP needs exactly {N_OPTIONS} options")
    if doc_type == "book":
        by = f" by {author}" if author else ""
        question = f'Which of the following passages is verbatim from the "{title}" book{by}?'
    elif doc_type == "paper":
        question = f'Which of the following passages is verbatim from the arXiv paper "{title}"?'
    else:
        raise ValueError(f"unknown doc_type {doc_type!r}; expected one of {DOC_TYPES}")
    lines = [f"{letter}. {text}" for letter, text in zip(ANSWER_LETTERS, options, strict=True)]
    return f"Question: {question}\nOptions:\n" + "\n".join(lines) + "\n\nAnswer:"


def question_names(raw_id: str, doc_type: str) -> tuple[str, str | None]:
    """The title and author the authors' code names in the question for a dataset ID
    (2_decop_hf.py, 2_decop_blackbox.py). book: `ID.split("_-_")`, title = part 0 and
    author = part 1, each with "_" -> " " and nothing else changed (no author when the ID
    has no "_-_"); paper (arXivTection): the raw ID unchanged, no author."""
    if doc_type == "paper":
        return raw_id, None
    if doc_type != "book":
        raise ValueError(f"unknown doc_type {doc_type!r}; expected one of {DOC_TYPES}")
    parts = raw_id.split("_-_")
    return parts[0].replace("_", " "), (parts[1].replace("_", " ") if len(parts) > 1 else None)


@dataclass(frozen=True)
class DecopPassage:
    """One verbatim passage with its three paraphrases and the work it names."""

    verbatim: str
    paraphrases: tuple[str, ...]
    title: str
    author: str | None = None
    doc_type: str = "book"

    @classmethod
    def from_payload(
        cls,
        payload: Mapping[str, Any],
        title: str,
        author: str | None = None,
        doc_type: str = "book",
    ) -> DecopPassage:
        """From a `decop` case payload: options (4) and answer (index of the verbatim)."""
        options = list(payload["options"])
        answer = int(payload["answer"])
        if len(options) != N_OPTIONS or not 0 <= answer < N_OPTIONS:
            raise ValueError("a decop payload needs 4 options and an answer index 0-3")
        paraphrases = tuple(text for i, text in enumerate(options) if i != answer)
        return cls(options[answer], paraphrases, title, author, doc_type)

    def prompts(self) -> list[tuple[str, int]]:
        return [
            (build_prompt(options, self.title, self.author, self.doc_type), answer)
            for options, answer in all_orders(self.verbatim, self.paraphrases)
        ]


def expand_prompts(passages: Sequence[DecopPassage]) -> tuple[list[str], np.ndarray]:
    """All prompts (passage-major, then the 24 orders) and their true answer indices."""
    pairs = [pair for passage in passages for pair in passage.prompts()]
    return [p for p, _ in pairs], np.array([a for _, a in pairs], dtype=int)


def score_passages(
    scorer: ChoiceScorer,
    passages: Sequence[DecopPassage],
    batch_size: int = 16,
    choices: Sequence[str] = ANSWER_CHOICES,
) -> np.ndarray:
    """Answer-letter probabilities, shape (len(passages) * 24, 4), rows as `expand_prompts`."""
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    prompts, _ = expand_prompts(passages)
    blocks = []
    for start in range(0, len(prompts), batch_size):
        batch = prompts[start : start + batch_size]
        probs = np.asarray(scorer.choice_probabilities(batch, list(choices)), dtype=float)
        if probs.shape != (len(batch), len(choices)):
            raise ValueError(f"scorer returned shape {probs.shape}, expected {(len(batch), 4)}")
        blocks.append(probs)
    return np.concatenate(blocks) if blocks else np.zeros((0, len(choices)))


# ---------------------------------------------------------------------------
# Calibration and accuracy
# ---------------------------------------------------------------------------


def fit_calibration(probs: np.ndarray, groups: Sequence[Any] | None = None) -> np.ndarray:
    """Label adjustment Δ_l = 0.25 − mean p_l over held-out clean prompts (Appendix E).

    With `groups` (the work of each row), the mean is taken per work first and then
    across works, as in Algorithm 1; without, over all rows pooled.
    """
    probs = np.asarray(probs, dtype=float)
    if probs.ndim != 2 or probs.shape[1] != N_OPTIONS or len(probs) == 0:
        raise ValueError("calibration needs a non-empty (n, 4) probability array")
    if groups is None:
        mean = probs.mean(axis=0)
    else:
        keys = np.asarray(groups)
        if len(keys) != len(probs):
            raise ValueError("groups must have one entry per row")
        mean = np.mean([probs[keys == key].mean(axis=0) for key in dict.fromkeys(keys)], axis=0)
    return 1.0 / N_OPTIONS - mean


def apply_calibration(probs: np.ndarray, delta: np.ndarray | None) -> np.ndarray:
    probs = np.asarray(probs, dtype=float)
    return probs if delta is None else probs + np.asarray(delta, dtype=float)


def predict(probs: np.ndarray, delta: np.ndarray | None = None) -> np.ndarray:
    """Chosen option index per prompt: argmax of (probs + delta); ties go to the first."""
    return np.argmax(apply_calibration(probs, delta), axis=1)


def accuracy(probs: np.ndarray, answers: np.ndarray, delta: np.ndarray | None = None) -> float:
    """Fraction of prompts whose chosen option is the verbatim one."""
    answers = np.asarray(answers)
    if len(answers) == 0:
        raise ValueError("no prompts to score")
    return float(np.mean(predict(probs, delta) == answers))


def label_distribution(probs: np.ndarray, delta: np.ndarray | None = None) -> list[float]:
    """How often each letter A..D is chosen (selection bias); sums to 1."""
    chosen = predict(probs, delta)
    counts = np.bincount(chosen, minlength=N_OPTIONS)[:N_OPTIONS]
    return [float(c) for c in counts / max(len(chosen), 1)]


@dataclass(frozen=True)
class WorkResult:
    """All scored prompts of one work: probs (n, 4) and true answer indices (n,)."""

    work: str
    label: int | None  # 1 suspect, 0 clean, None unknown
    probs: np.ndarray
    answers: np.ndarray

    def accuracy(self, delta: np.ndarray | None = None) -> float:
        return accuracy(self.probs, self.answers, delta)


def membership_label(membership: str) -> int | None:
    return {"suspect": 1, "clean": 0}.get(membership)


# ---------------------------------------------------------------------------
# Separation statistics (suspect vs clean works)
# ---------------------------------------------------------------------------


def _split(
    scores: Sequence[float] | np.ndarray, labels: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    scores_arr = np.asarray(scores, dtype=float)
    labels_arr = np.asarray(labels)
    if scores_arr.shape != labels_arr.shape:
        raise ValueError("scores and labels must have the same length")
    return scores_arr[labels_arr == 1], scores_arr[labels_arr == 0]


def _auc_from_groups(positive: np.ndarray, negative: np.ndarray) -> float:
    ranks = stats.rankdata(np.concatenate([positive, negative]))
    n1 = len(positive)
    u_statistic = ranks[:n1].sum() - n1 * (n1 + 1) / 2
    return float(u_statistic / (n1 * len(negative)))


def roc_auc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """Continuous ROC-AUC = Mann–Whitney U / (n1 n0): the chance that a random suspect
    work scores above a random clean one, ties counted half. None without both classes."""
    positive, negative = _split(scores, labels)
    if len(positive) == 0 or len(negative) == 0:
        return None
    return _auc_from_groups(positive, negative)


def youden_balanced_accuracy(
    scores: Sequence[float] | np.ndarray, labels: Sequence[int]
) -> float | None:
    """Balanced accuracy (TPR + TNR) / 2 at the threshold maximising Youden's J.

    This is the number the DE-COP reference code printed as "AUC" (roc_auc_score of
    the thresholded predictions). Predicted suspect = score >= threshold.
    """
    positive, negative = _split(scores, labels)
    if len(positive) == 0 or len(negative) == 0:
        return None
    best_j = 0.0  # a threshold above every score: TPR = FPR = 0
    for threshold in np.unique(np.concatenate([positive, negative])):
        tpr = np.mean(positive >= threshold)
        fpr = np.mean(negative >= threshold)
        best_j = max(best_j, float(tpr - fpr))
    return (1.0 + best_j) / 2.0


def welch_p_value(
    suspect_scores: Sequence[float] | np.ndarray,
    clean_scores: Sequence[float] | np.ndarray,
    alternative: Alternative = "two-sided",
) -> float | None:
    """Welch's unequal-variance t-test of H0: mean(suspect) = mean(clean).

    alternative: "two-sided" (default) or "greater" (suspect mean above clean mean).
    None with fewer than two works in a group or when the test is undefined.
    """
    if alternative not in ("two-sided", "greater"):
        raise ValueError("alternative must be 'two-sided' or 'greater'")
    suspect = np.asarray(suspect_scores, dtype=float)
    clean = np.asarray(clean_scores, dtype=float)
    if len(suspect) < 2 or len(clean) < 2:
        return None
    if suspect.var() == 0 and clean.var() == 0:
        return None  # t is undefined (0/0 or x/0)
    with warnings.catch_warnings():
        # scipy warns about precision loss when one group is constant (e.g. all 1.0);
        # Welch's test is still defined then (the other group gives the variance).
        warnings.filterwarnings("ignore", "Precision loss occurred", RuntimeWarning)
        result = stats.ttest_ind(suspect, clean, equal_var=False, alternative=alternative)
    p_value = float(result.pvalue)
    return None if math.isnan(p_value) else p_value


def bootstrap_auc(
    scores: Sequence[float],
    labels: Sequence[int],
    n: int = 2000,
    seed: int = 0,
    alpha: float = 0.05,
) -> tuple[float, float] | None:
    """Percentile interval of the ROC-AUC, resampling works with replacement within
    each class (class sizes kept). None without both classes."""
    positive, negative = _split(scores, labels)
    if len(positive) == 0 or len(negative) == 0:
        return None
    rng = np.random.default_rng(seed)
    pos = positive[rng.integers(0, len(positive), size=(n, len(positive)))]
    neg = negative[rng.integers(0, len(negative), size=(n, len(negative)))]
    ranks = stats.rankdata(np.concatenate([pos, neg], axis=1), axis=1)
    n1 = len(positive)
    aucs = (ranks[:, :n1].sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * len(negative))
    low, high = np.quantile(aucs, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bootstrap_thresholded_auc(
    scores: Sequence[float],
    labels: Sequence[int],
    n: int = TABLE2_RESAMPLES,
    seed: int = TABLE2_SEED,
) -> dict[str, Any] | None:
    """The paper's Table 2 figure (Section 5.1): `n` resamples of the works with
    replacement within each class (class sizes kept); in each, the threshold that best
    separates the classes (Youden's J, as `3_get_results_blackbox.py` picks it from
    `roc_curve`) and the AUC of the thresholded predictions (`roc_auc_score` of 0/1
    predictions, i.e. `youden_balanced_accuracy`); then the mean and the standard
    deviation (numpy's, ddof = 0) of the `n` values. Draws: `numpy.random.default_rng(seed)`,
    per resample first the suspect then the clean indices. None without both classes."""
    positive, negative = _split(scores, labels)
    if len(positive) == 0 or len(negative) == 0:
        return None
    rng = np.random.default_rng(seed)
    resample_labels = [1] * len(positive) + [0] * len(negative)
    values: list[float] = []
    for _ in range(n):
        pos = positive[rng.integers(0, len(positive), size=len(positive))]
        neg = negative[rng.integers(0, len(negative), size=len(negative))]
        value = youden_balanced_accuracy(np.concatenate([pos, neg]), resample_labels)
        assert value is not None  # both classes are in every resample
        values.append(value)
    return {
        "mean": float(np.mean(values)),
        "std": float(np.std(values)),
        "resamples": n,
        "seed": seed,
        "values": [float(v) for v in values],
    }


def separation_report(
    work_scores: Mapping[str, float],
    labels: Mapping[str, int | None],
    n_bootstrap: int = 2000,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> dict[str, Any]:
    """AUC, Youden balanced accuracy, Welch p-value, bootstrap interval and the paper's
    Table 2 thresholded AUC (mean ± std over 10 resamples) over works with a known label
    (works labelled None are ignored)."""
    known = [w for w in work_scores if labels.get(w) in (0, 1)]
    scores = [work_scores[w] for w in known]
    label_list = [int(labels[w]) for w in known]  # type: ignore[arg-type]
    suspect, clean = _split(scores, label_list)
    return {
        "auc": roc_auc(scores, label_list),
        "balanced_accuracy_youden": youden_balanced_accuracy(scores, label_list),
        "p_value": welch_p_value(suspect, clean, alternative),
        "p_value_alternative": alternative,
        "auc_ci": bootstrap_auc(scores, label_list, n=n_bootstrap, seed=seed),
        "auc_thresholded_bootstrap": bootstrap_thresholded_auc(scores, label_list),
        "n_suspect": len(suspect),
        "n_clean": len(clean),
        "mean_suspect": float(suspect.mean()) if len(suspect) else None,
        "mean_clean": float(clean.mean()) if len(clean) else None,
    }


def summarize(
    per_work: Sequence[WorkResult],
    calibration_works: Sequence[WorkResult] | None = None,
    delta: np.ndarray | None = None,
    n_bootstrap: int = 2000,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> dict[str, Any]:
    """The DE-COP report over per-work accuracies.

    Calibration: pass held-out clean works (`calibration_works`, fitted as in
    Algorithm 1) or a ready `delta`; they must not overlap the evaluated works.
    Top-level auc / balanced_accuracy_youden / p_value / auc_ci use uncalibrated
    accuracies; the `calibrated` block repeats them after calibration.
    """
    if calibration_works:
        if delta is not None:
            raise ValueError("give calibration_works or delta, not both")
        overlap = {w.work for w in calibration_works} & {w.work for w in per_work}
        if overlap:
            raise ValueError(f"calibration works must be held out: {sorted(overlap)}")
        if any(w.label != 0 for w in calibration_works):
            raise ValueError("calibration works must be clean (label 0)")
        delta = fit_calibration(
            np.concatenate([w.probs for w in calibration_works]),
            groups=[w.work for w in calibration_works for _ in range(len(w.probs))],
        )
    labels = {w.work: w.label for w in per_work}
    if len(labels) != len(per_work):
        raise ValueError("work names must be unique")
    raw = {w.work: w.accuracy() for w in per_work}
    report = separation_report(raw, labels, n_bootstrap, seed, alternative)
    calibrated = None
    if delta is not None:
        cal = {w.work: w.accuracy(delta) for w in per_work}
        calibrated = separation_report(cal, labels, n_bootstrap, seed, alternative)
    all_probs = (
        np.concatenate([w.probs for w in per_work]) if per_work else np.zeros((0, N_OPTIONS))
    )
    return {
        **report,
        "auc_calibrated": calibrated["auc"] if calibrated else None,
        "calibrated": calibrated,
        "delta": None if delta is None else [float(d) for d in delta],
        "per_work": [
            {
                "work": w.work,
                "label": w.label,
                "n_prompts": len(w.answers),
                "accuracy": raw[w.work],
                "accuracy_calibrated": None if delta is None else w.accuracy(delta),
            }
            for w in per_work
        ],
        "label_position_bias": {
            "before": label_distribution(all_probs),
            "after": None if delta is None else label_distribution(all_probs, delta),
        },
    }


# ---------------------------------------------------------------------------
# Baselines with token log-probabilities (perplexity, zlib, lowercase, Min-K%)
# ---------------------------------------------------------------------------

TokenLogprobs = Callable[[list[str]], list[np.ndarray]]
BASELINES: tuple[str, ...] = ("perplexity", "zlib", "lowercase", "min_k_prob")


def log_perplexity(token_logprobs: np.ndarray) -> float:
    """log PPL = −mean token log-prob (natural log); nan for an empty array."""
    values = np.asarray(token_logprobs, dtype=float)
    return float(-values.mean()) if values.size else math.nan


def zlib_entropy(text: str) -> int:
    """Carlini et al. (2021): length in bytes of the zlib-compressed UTF-8 text."""
    return len(zlib.compress(text.encode("utf-8")))


def min_k_prob(token_logprobs: np.ndarray, ratio: float = MIN_K_RATIO) -> float:
    """Min-K% Prob (Shi et al. 2023): mean of the lowest `ratio` share of token
    log-probs (at least one token)."""
    values = np.sort(np.asarray(token_logprobs, dtype=float))
    if not values.size:
        return math.nan
    k = max(1, int(len(values) * ratio))
    return float(values[:k].mean())


def baseline_scores(
    token_logprobs: TokenLogprobs, passages: list[str], ratio: float = MIN_K_RATIO
) -> dict[str, np.ndarray]:
    """Per-passage membership scores, all oriented so that HIGHER = more likely member.

    perplexity  −log PPL (the mean token log-prob)
    zlib        −log PPL / zlib entropy            (Carlini: log PPL / zlib, low = member)
    lowercase   log PPL(lowercased) / log PPL      (Carlini: lowercase vs original)
    min_k_prob  mean of the lowest 20% token log-probs
    A score is nan where undefined (no tokens, or log PPL = 0 for `lowercase`).
    `token_logprobs` maps texts to arrays of each token's log-probability given the
    tokens before it; it is called twice (original and lowercased passages).
    """
    original = token_logprobs(list(passages))
    lowered = token_logprobs([p.lower() for p in passages])
    if len(original) != len(passages) or len(lowered) != len(passages):
        raise ValueError("token_logprobs must return one array per text")
    log_ppl = np.array([log_perplexity(lp) for lp in original])
    log_ppl_lower = np.array([log_perplexity(lp) for lp in lowered])
    zlib_sizes = np.array([zlib_entropy(p) for p in passages], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lowercase = np.where(log_ppl == 0, math.nan, log_ppl_lower / log_ppl)
    return {
        "perplexity": -log_ppl,
        "zlib": -log_ppl / zlib_sizes,
        "lowercase": lowercase,
        "min_k_prob": np.array([min_k_prob(lp, ratio) for lp in original]),
    }


def summarize_baselines(
    per_work_scores: Mapping[str, Mapping[str, np.ndarray]],
    labels: Mapping[str, int | None],
    n_bootstrap: int = 2000,
    seed: int = 0,
    alternative: Alternative = "two-sided",
) -> dict[str, Any]:
    """For each baseline: per-work mean score (nan passages ignored) and the same
    separation report as DE-COP. `per_work_scores[work]` is `baseline_scores` output."""
    out: dict[str, Any] = {}
    for method in BASELINES:
        means: dict[str, float] = {}
        for work, scores in per_work_scores.items():
            values = np.asarray(scores[method], dtype=float)
            values = values[~np.isnan(values)]
            if values.size:
                means[work] = float(values.mean())
        report = separation_report(means, labels, n_bootstrap, seed, alternative)
        out[method] = {**report, "per_work": means}
    return out
