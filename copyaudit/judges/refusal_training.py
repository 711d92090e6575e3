"""Training and cross-validating the refusal reader's combiner.

The combiner is an L2-regularised logistic regression over the cues of
`refusal_cues.read`, fitted by Newton's method (deterministic: no random start, no
shuffling) and rounded to 4 decimals before it is stored, so the shipped
safetensors file is byte-for-byte reproducible from the labelled responses in
`samples/judge_training/refusal.jsonl`:

    python -m copyaudit.judges.refusal_training            # writes the weights
    python -m copyaudit.judges.refusal_training --cv       # grouped 5-fold CV table

Cross-validation is grouped: a hand-written response and its surface variants
(`group`) are always in the same fold.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import save_file

from copyaudit.judges.context import default_embedder
from copyaudit.judges.refusal import RefusalJudge
from copyaudit.judges.refusal_cues import FEATURES, read
from copyaudit.judges.refusal_reader import WEIGHTS
from copyaudit.models.base import Embedder
from copyaudit.types import JudgeInput

L2 = 1.0  # ridge penalty on the weights (not the bias)
DECIMALS = 4
FOLDS = 5
DATA = Path("samples/judge_training/refusal.jsonl")


@dataclass(frozen=True)
class Example:
    group: str
    kind: str
    lang: str
    prompt: str
    output: str
    label: int


def load(path: Path = DATA) -> list[Example]:
    """The labelled responses (one JSON object per line)."""
    examples = []
    with path.open(encoding="utf-8") as handle:
        for row in map(json.loads, handle):
            examples.append(
                Example(
                    row["group"],
                    row["kind"],
                    row["lang"],
                    row["prompt"],
                    row["output"],
                    row["label"],
                )
            )
    return examples


def design(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cue matrix, labels, and which rows can be refusals at all (not empty / echo)."""
    readings = [read(e.output, e.prompt) for e in examples]
    x = np.array([r.vector for r in readings]).reshape(len(examples), len(FEATURES))
    y = np.array([e.label for e in examples], dtype=np.float64)
    possible = np.array([r.possible for r in readings])
    return x, y, possible


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2, steps: int = 50) -> np.ndarray:
    """Logistic regression weights [bias, w...] by Newton's method, rounded."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    penalty = np.diag([0.0] + [l2] * x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        gradient = xb.T @ (p - y) + penalty @ w
        hessian = (xb.T * (p * (1 - p))) @ xb + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return np.round(w, DECIMALS)


def probability(weights: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(weights[0] + x @ weights[1:])))


def train(path: Path = DATA) -> np.ndarray:
    """The combiner's weights from every labelled response that can be a refusal."""
    x, y, possible = design(load(path))
    return fit(x[possible], y[possible])


def save(weights: np.ndarray, path: Path = WEIGHTS) -> str:
    """Write the weights as safetensors; returns the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    save_file(
        {"weights": weights.astype(np.float32)},
        str(path),
        metadata={"features": ",".join(("bias", *FEATURES))},
    )
    return hashlib.sha256(path.read_bytes()).hexdigest()


def folds(groups: Sequence[str], k: int = FOLDS) -> np.ndarray:
    """Fold of each row: groups dealt to folds in sorted order (deterministic)."""
    order = {g: i % k for i, g in enumerate(sorted(set(groups)))}
    return np.array([order[g] for g in groups])


def cross_validate(examples: Sequence[Example], k: int = FOLDS) -> np.ndarray:
    """Out-of-fold verdicts of the reader (grouped folds)."""
    x, y, possible = design(examples)
    fold = folds([e.group for e in examples], k)
    verdict = np.zeros(len(examples), dtype=bool)
    for f in range(k):
        train_rows = (fold != f) & possible
        weights = fit(x[train_rows], y[train_rows])
        test = fold == f
        verdict[test] = (probability(weights, x[test]) >= 0.5) & possible[test]
    return verdict


def metrics(truth: np.ndarray, verdict: np.ndarray) -> dict[str, float]:
    """n, accuracy, precision, recall, F1 (precision/recall NaN when undefined)."""
    tp = float(np.sum(truth & verdict))
    fp = float(np.sum(~truth & verdict))
    fn = float(np.sum(truth & ~verdict))
    precision = tp / (tp + fp) if tp + fp else float("nan")
    recall = tp / (tp + fn) if tp + fn else float("nan")
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else float("nan")
    return {
        "n": float(len(truth)),
        "acc": float(np.mean(truth == verdict)) if len(truth) else float("nan"),
        "p": precision,
        "r": recall,
        "f1": f1,
    }


def table(
    examples: Sequence[Example], verdicts: dict[str, np.ndarray]
) -> list[tuple[str, str, dict[str, float]]]:
    """(kind, judge, metrics) for every kind and overall."""
    truth = np.array([e.label == 1 for e in examples])
    kinds = sorted({e.kind for e in examples})
    rows = []
    for kind in [*kinds, "all"]:
        mask = np.array([kind in ("all", e.kind) for e in examples])
        for judge, verdict in verdicts.items():
            rows.append((kind, judge, metrics(truth[mask], verdict[mask])))
    return rows


def old_judge_verdicts(
    examples: Sequence[Example], embedder_factory: Callable[[], Embedder] | None
) -> dict[str, np.ndarray]:
    """Verdicts of the old `refusal` judge (phrases only, and with MiniLM if it loads)."""
    items = [JudgeInput("notice", {}, e.prompt, e.output) for e in examples]
    judges = {"refusal v1 (phrases)": RefusalJudge()}
    if embedder_factory is not None:
        judges["refusal v1 (phrases+MiniLM)"] = RefusalJudge(embedder=embedder_factory())
    return {
        name: np.array([bool(s[0].flagged) for s in judge.judge(items)])
        for name, judge in judges.items()
    }


def _format(rows: list[tuple[str, str, dict[str, float]]]) -> str:
    lines = ["| kind | judge | n | acc | P | R | F1 |", "|---|---|---|---|---|---|---|"]
    for kind, judge, m in rows:
        cells = [f"{m[k]:.2f}" if m[k] == m[k] else "–" for k in ("acc", "p", "r", "f1")]
        lines.append(f"| {kind} | {judge} | {int(m['n'])} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument("--cv", action="store_true", help="print the grouped CV table instead")
    parser.add_argument("--eval", type=Path, help="score a held-out file with weights from --data")
    parser.add_argument("--minilm", action="store_true", help="CV: also the old judge with MiniLM")
    args = parser.parse_args(argv)
    if args.cv or args.eval:
        examples = load(args.eval or args.data)
        factory = default_embedder if args.minilm else None
        verdicts = old_judge_verdicts(examples, factory)
        if args.eval:
            x, _, possible = design(examples)
            weights = train(args.data)
            verdicts["refusal_reader"] = (probability(weights, x) >= 0.5) & possible
            verdicts["always yes"] = np.ones(len(examples), dtype=bool)
            verdicts["always no"] = np.zeros(len(examples), dtype=bool)
        else:
            verdicts["refusal_reader v1 (CV)"] = cross_validate(examples)
        print(_format(table(examples, verdicts)))
        return
    digest = save(train(args.data), args.out)
    print(f"{args.out}  sha256 {digest}")


if __name__ == "__main__":
    main()
