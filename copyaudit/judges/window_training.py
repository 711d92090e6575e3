"""Train and measure the `events_window` judge's monotone combiner on the dev set
(samples/judge_training) and the demo stories; nothing here reads the validation set.

The combiner is scikit-learn's HistGradientBoostingClassifier with `monotonic_cst` from
`window_features.SIGNS` (100 trees of depth 2, learning rate 0.1, no early stopping, one
OpenMP thread, features on a 0.01 grid, each pair kind and each label weighing the
same), exported to the plain-array `Combiner` of
`entailment_aligned` and checked against scikit-learn's own probabilities; the
safetensors file is the same bit for bit wherever it is rebuilt with the same
scikit-learn (`make event-window-weights`).

`evaluate` is leave-one-story-out on the dev set: each story's pairs are scored by a
combiner fitted on the other stories, at the story's own length and padded with the next
`PADDING` dev stories (a longer text that holds the same events, so a feature that grows
with length would show), beside the old `events` judge's score formula and "always yes".

    python -m copyaudit.judges.window_training train [--out PATH]
    python -m copyaudit.judges.window_training evaluate
    python -m copyaudit.judges.window_training demo-check
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from copyaudit.judges.entailment_aligned import Combiner, save_combiner
from copyaudit.judges.event_training import (
    DEV_SET,
    FLAG_AT,
    KINDS,
    RETELLING,
    DevSet,
    _demo_pairs,
    figures,
    load_dev_set,
    written_as,
)
from copyaudit.judges.window_features import FEATURES, SIGNS, WindowFeatures
from copyaudit.judges.window_support import WEIGHTS_FILE
from copyaudit.models.base import Embedder
from copyaudit.models.embedding import load_embedder

TREES, DEPTH, RATE, MIN_LEAF = 100, 2, 0.1, 20
TRAIN_DECIMALS = 2
PADDING = (0, 2, 4)  # dev stories appended after the judged one in `evaluate`


def balanced_weights(labels: np.ndarray, kinds: np.ndarray) -> np.ndarray:
    """Each pair kind weighs the same in all, and so do the two labels (the dev set's
    mix of kinds is how its contrast variants were written, not how stories are: with
    unit weights the trees learned "no" and flagged 1 of the demo's 9 retellings)."""
    weights = np.ones(len(labels))
    for kind in np.unique(kinds):
        weights[kinds == kind] = 1.0 / np.sum(kinds == kind)
    for label in (0.0, 1.0):
        weights[labels == label] /= weights[labels == label].sum()
    return weights * len(labels) / weights.sum()


def fit_combiner(features: np.ndarray, labels: np.ndarray, kinds: np.ndarray) -> Combiner:
    """Monotone boosted trees on kind- and label-balanced weights, exported; the export
    is checked against scikit-learn."""
    from sklearn.ensemble import HistGradientBoostingClassifier  # deferred: loads scipy
    from threadpoolctl import threadpool_limits

    features = np.round(features, TRAIN_DECIMALS)  # see event_training.fit_combiner
    model = HistGradientBoostingClassifier(
        max_iter=TREES,
        max_depth=DEPTH,
        learning_rate=RATE,
        min_samples_leaf=MIN_LEAF,
        monotonic_cst=[SIGNS[name] for name in FEATURES],
        early_stopping=False,
        random_state=0,
    )
    with threadpool_limits(1):  # a sum over threads would move the leaves' last bits
        model.fit(features, labels, sample_weight=balanced_weights(labels, kinds))
    nodes = [predictors[0].nodes for predictors in model._predictors]
    width = max(len(n) for n in nodes)

    def table(field: str, dtype: type, fill: float) -> np.ndarray:
        out: np.ndarray = np.full((len(nodes), width), fill, dtype=dtype)
        for t, tree in enumerate(nodes):
            values = tree[field].astype(dtype)
            if field in ("left", "right"):
                values = np.where(tree["is_leaf"], -1, values)
            out[t, : len(tree)] = np.round(values, 9) if field == "value" else values
        return out

    combiner = Combiner(
        table("feature_idx", np.int64, 0),
        table("num_threshold", np.float64, 0.0),
        table("left", np.int64, -1),
        table("right", np.int64, -1),
        table("value", np.float64, 0.0),
        init=round(float(np.ravel(model._baseline_prediction)[0]), 9),
        rate=1.0,  # the learning rate is already in HistGradientBoosting's leaf values
    )
    gap = np.abs(combiner.probability(features) - model.predict_proba(features)[:, 1]).max()
    if gap > 1e-6:
        raise RuntimeError(f"exported trees differ from scikit-learn's by {gap}")
    return combiner


def _labels(dev: DevSet) -> np.ndarray:
    return np.array([p.label for p in dev.pairs], dtype=np.float64)


def _kinds(dev: DevSet) -> np.ndarray:
    return np.array([p.kind for p in dev.pairs])


def train(embedder: Embedder, out: Path = WEIGHTS_FILE, directory: Path = DEV_SET) -> Combiner:
    """Fit the combiner on the whole dev set and write it as safetensors to `out`."""
    dev = load_dev_set(directory)
    extractor = WindowFeatures(embedder)
    features = extractor.features([(p.event, dev.stories[p.story_id]) for p in dev.pairs])
    combiner = fit_combiner(features, _labels(dev), _kinds(dev))
    metadata = {
        "trained_on": f"samples/judge_training ({len(dev.pairs)} pairs, sha256 {dev.digest})",
        "model": f"monotone boosted trees: {TREES} of depth {DEPTH}, learning rate {RATE}, "
        f"min leaf {MIN_LEAF}, kind- and label-balanced weights",
        "written_by": "copyaudit.judges.window_training",
    }
    save_combiner(combiner, out, metadata, FEATURES)
    return combiner


def _padded(dev: DevSet, padding: int) -> tuple[list[str], list[set[str]]]:
    """Each pair's story followed by the next `padding` dev stories, and which stories
    that text holds (a fold never trains on a text that holds its held-out story)."""
    ids = list(dev.stories)
    texts, holds = [], []
    for pair in dev.pairs:
        at = ids.index(pair.story_id)
        chosen = [ids[(at + k) % len(ids)] for k in range(padding + 1)]
        texts.append(" ".join(dev.stories[s] for s in chosen))
        holds.append(set(chosen))
    return texts, holds


def _auc(scores: np.ndarray, labels: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score  # deferred: loads scipy

    return float(roc_auc_score(labels, scores))


def evaluate(embedder: Embedder) -> str:
    """Leave-one-story-out figures at each padding, overall and per kind."""
    dev = load_dev_set()
    labels = _labels(dev)
    story_of = np.array([p.story_id for p in dev.pairs])
    kinds = _kinds(dev)
    base = WindowFeatures(embedder).features(
        [(p.event, dev.stories[p.story_id]) for p in dev.pairs]
    )
    old = FEATURES.index("old_score")
    lines = [
        f"{len(dev.pairs)} pairs, {len(dev.stories)} stories; leave-one-story-out; "
        f"always yes F1 {figures(list(labels.astype(int)), [True] * len(labels)).f1:.2f}",
        "| padding | words (mean) | judge | F1 | P | R | AUC | " + " | ".join(KINDS) + " |",
        "|---" * (len(KINDS) + 7) + "|",
    ]
    for padding in PADDING:
        texts, _ = _padded(dev, padding)
        features = (
            WindowFeatures(embedder).features(
                [(p.event, t) for p, t in zip(dev.pairs, texts, strict=True)]
            )
            if padding
            else base
        )
        scores = np.zeros(len(labels))
        for story_id in dev.stories:
            held = story_of == story_id
            combiner = fit_combiner(base[~held], labels[~held], kinds[~held])
            scores[held] = combiner.probability(features[held])
        words = np.mean([len(t.split()) for t in texts])
        for name, values in (("events_window", scores), ("events formula", features[:, old])):
            verdicts = values >= 0.5
            f = figures(list(labels.astype(int)), list(verdicts))
            per_kind = [
                f"{np.mean(verdicts[kinds == k] == labels[kinds == k].astype(bool)):.2f}"
                for k in KINDS
            ]
            cells = [str(padding), f"{words:.0f}", name, f"{f.f1:.2f}", f"{f.precision:.2f}"]
            cells += [f"{f.recall:.2f}", f"{_auc(values, labels):.2f}", *per_kind]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def demo_check(embedder: Embedder, weights: Path = WEIGHTS_FILE) -> str:
    """Events found per demo story by the shipped combiner, flags by what each story was
    written as (the author's intent: the demo has no item labels)."""
    from copyaudit.judges.entailment_aligned import load_combiner

    pairs, ids = _demo_pairs()
    found = load_combiner(weights, FEATURES).probability(WindowFeatures(embedder).features(pairs))
    intent = written_as()
    lines = ["| case | written as | events found | flag |", "|---|---|---|---|"]
    flagged = {True: 0, False: 0}
    totals = {True: 0, False: 0}
    for case_id in dict.fromkeys(ids):
        count = int((found[np.array(ids) == case_id] >= 0.5).sum())
        retelling = intent.get(case_id) == RETELLING
        totals[retelling] += 1
        flagged[retelling] += count >= FLAG_AT
        flag = "FLAG" if count >= FLAG_AT else ""
        lines.append(f"| {case_id} | {intent.get(case_id, '?')} | {count} | {flag} |")
    lines.append(
        f"\nflags {flagged[True]} of {totals[True]} retellings and {flagged[False]} of "
        f"{totals[False]} other stories"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("train", "evaluate", "demo-check"))
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    args = parser.parse_args(argv)
    embedder = load_embedder("default", device="cpu")
    if args.command == "train":
        train(embedder, args.out)
        print(f"{args.out}: sha256 {hashlib.sha256(args.out.read_bytes()).hexdigest()}")
    elif args.command == "demo-check":
        print(demo_check(embedder))
    else:
        print(evaluate(embedder))


if __name__ == "__main__":
    main()
