"""A blind baseline for DE-COP's membership figures (Das, Zhang and Tramèr 2024, "Blind
Baselines Beat Membership Inference Attacks for Foundation Models"): how well the
passages alone, without the model, tell suspect works from clean ones.

A bag-of-words classifier (TF-IDF of each verbatim passage, logistic regression) is
fitted with cross-validation grouped by work: the works are split into folds
stratified by label, every passage of a work in the same fold, so no work is scored by
a classifier that saw it. A work's score is the mean out-of-fold P(suspect) of its
passages; its AUC and interval are DE-COP's own (method.roc_auc, method.bootstrap_auc).
Where every work carries a year, a date cue (older = suspect, nothing fitted) is a
second blind figure.

The flag (`blind_flag`): a membership AUC is flagged when a blind figure SEPARATES the
classes (its 95% interval lies wholly above 0.5) and the membership AUC is NOT CLEAR of
it: its AUC does not exceed the blind AUC, or its interval's lower bound does not exceed
the blind interval's upper bound (the intervals overlap). A blind figure at chance
raises no flag: it shows no difference between the works' texts for the membership
result to be confused with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from copyaudit.studies.decop.method import bootstrap_auc, roc_auc

MAX_FOLDS = 5
INVERSE_REGULARISATION = 10.0  # LogisticRegression's C: a stronger penalty (C = 1) missed
# a cue word planted in every clean passage (AUC 0.66 instead of 1.0 on tests' suites)
MIN_WORKS_PER_CLASS = 2  # a fold's training part needs works of both classes
CHANCE_AUC = 0.5
METHOD = (
    "bag of words: TF-IDF (words) of each verbatim passage, logistic regression (C = {c:g}); "
    "cross-validation over the works, stratified by label and grouped by "
    "work (min({max_folds}, works per class) folds, seed {seed}); a work's score is the mean "
    "out-of-fold P(suspect) of its passages"
)
DATE_METHOD = "date cue: the work's year, older = suspect (nothing fitted)"


def _fold_scores(
    texts: Sequence[str], work_of: Sequence[str], labels: Mapping[str, int], seed: int
) -> tuple[dict[str, float], int]:
    """Per-work mean out-of-fold P(suspect), and the number of folds."""
    from sklearn.feature_extraction.text import TfidfVectorizer  # deferred: loads scipy
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold
    from sklearn.pipeline import make_pipeline

    works = sorted(labels)
    work_labels = np.array([labels[w] for w in works])
    folds = min(MAX_FOLDS, int((work_labels == 1).sum()), int((work_labels == 0).sum()))
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    owner = np.asarray(work_of)
    documents = np.asarray(texts, dtype=object)
    passage_labels = np.array([labels[w] for w in work_of])
    scores = np.empty(len(texts))
    for train_works, test_works in splitter.split(np.zeros(len(works)), work_labels):
        train = np.isin(owner, [works[i] for i in train_works])
        test = np.isin(owner, [works[i] for i in test_works])
        model = make_pipeline(
            TfidfVectorizer(sublinear_tf=True),
            LogisticRegression(C=INVERSE_REGULARISATION, max_iter=1000),
        )
        model.fit(documents[train], passage_labels[train])
        scores[test] = model.predict_proba(documents[test])[:, 1]
    return {w: float(scores[owner == w].mean()) for w in works}, folds


def _figure(
    per_work: Mapping[str, float], labels: Mapping[str, int], n_bootstrap: int, seed: int
) -> dict[str, Any]:
    names = list(per_work)
    scores = [per_work[w] for w in names]
    classes = [labels[w] for w in names]
    auc = roc_auc(scores, classes)
    ci = bootstrap_auc(scores, classes, n=n_bootstrap, seed=seed)
    return {
        "auc": auc,
        "ci": None if ci is None else list(ci),
        "separates": ci is not None and ci[0] > CHANCE_AUC,
    }


def _date_cue(
    years: Mapping[str, int | None], labels: Mapping[str, int], n_bootstrap: int, seed: int
) -> dict[str, Any]:
    missing = sorted(w for w in labels if years.get(w) is None)
    if missing:
        return {"reason": f"{len(missing)} of {len(labels)} works carry no year"}
    per_work = {w: -float(years[w]) for w in labels}  # type: ignore[arg-type]
    return {"method": DATE_METHOD, **_figure(per_work, labels, n_bootstrap, seed)}


def blind_baseline(
    passages: Sequence[tuple[str, str]],
    labels: Mapping[str, int | None],
    years: Mapping[str, int | None] | None = None,
    n_bootstrap: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The blind baseline over (work, verbatim passage) pairs of works labelled 1
    (suspect) or 0 (clean); works labelled None and passages of unknown works are left
    out. Keys: method, n_suspect, n_clean, n_works, n_passages, then auc, ci, separates,
    folds, seed, per_work, date_cue; or `reason` instead of the figures when there are too
    few works per class for the folds."""
    known = {w: int(v) for w, v in labels.items() if v in (0, 1)}
    used = [(w, t) for w, t in passages if w in known]
    known = {w: known[w] for w in dict.fromkeys(w for w, _ in used)}
    n_suspect = sum(1 for v in known.values() if v == 1)
    counts = {
        "method": METHOD.format(seed=seed, c=INVERSE_REGULARISATION, max_folds=MAX_FOLDS),
        "n_suspect": n_suspect,
        "n_clean": len(known) - n_suspect,
        "n_works": len(known),
        "n_passages": len(used),
    }
    if min(n_suspect, len(known) - n_suspect) < MIN_WORKS_PER_CLASS:
        return {
            **counts,
            "reason": f"needs at least {MIN_WORKS_PER_CLASS} suspect and "
            f"{MIN_WORKS_PER_CLASS} clean works with passages for grouped cross-validation "
            f"(has {n_suspect} suspect, {len(known) - n_suspect} clean)",
        }
    per_work, folds = _fold_scores([t for _, t in used], [w for w, _ in used], known, seed)
    return {
        **counts,
        **_figure(per_work, known, n_bootstrap, seed),
        "folds": folds,
        "seed": seed,
        "per_work": per_work,
        "date_cue": _date_cue(years or {}, known, n_bootstrap, seed),
    }


# ---------------------------------------------------------------------------
# The flag
# ---------------------------------------------------------------------------


def _interval(ci: Sequence[float]) -> str:
    return f"{ci[0]:.2f}–{ci[1]:.2f}"


def _not_clear(auc: float, ci: Sequence[float], blind: Mapping[str, Any]) -> bool:
    return auc <= blind["auc"] or ci[0] <= blind["ci"][1]


def blind_flag(
    auc: float | None, ci: Sequence[float] | None, blind: Mapping[str, Any]
) -> str | None:
    """Why a membership AUC (with its 95% interval) is flagged against the blind
    baseline (see the module docstring for the rule), or None when it is not: no
    membership figure, no blind figure, a blind figure at chance, or a membership result
    clear of every blind figure that separates."""
    if auc is None or ci is None:
        return None
    figures = [
        (name, figure)
        for name, figure in (("blind", blind), ("date cue", blind.get("date_cue") or {}))
        if figure.get("separates")
    ]
    hits = [(name, f) for name, f in figures if _not_clear(auc, ci, f)]
    if not hits:
        return None
    name, figure = max(hits, key=lambda hit: hit[1]["auc"])
    return (
        "the passages alone separate suspect from clean this well "
        f"({name} AUC {figure['auc']:.2f} [{_interval(figure['ci'])}])"
    )


def blind_flags(
    results: Mapping[str, Mapping[str, Any] | None], blind: Mapping[str, Any]
) -> dict[str, str | None]:
    """`blind_flag` of each membership result (name -> {auc, auc_ci} or None)."""
    return {
        name: None if figures is None else blind_flag(figures["auc"], figures["auc_ci"], blind)
        for name, figures in results.items()
    }
