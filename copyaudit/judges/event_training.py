"""Train and measure the aligned event judge on our own labelled (story, event) pairs.

The dev set (samples/judge_training: `stories.jsonl`, `pairs.jsonl`) is fiction written
for copyaudit, with contrastive variants of every event (supported verbatim, paraphrased,
split across sentences; negated, role-swapped, outcome-changed, topical-but-absent,
absent). Training reads the features of every (event, whole story) pair with the packaged
MiniLM and fits gradient-boosted trees (scikit-learn, fixed seed) exported to plain
arrays; features are rounded to 2 decimals for training, so that the last bits of the
embedder's output (which move with torch's thread count) cannot move a split, and the
safetensors file is the same bit for bit wherever it is rebuilt with the same
scikit-learn (`make event-judge-weights`).

Evaluation is leave-one-story-out: each story is judged by a combiner trained on the
other stories, through the real events_entail judge, and compared with the old events
judge (embedding + lexical over CopyBench's 128-token windows) on the same stories.

    python -m copyaudit.judges.event_training train [--out PATH]
    python -m copyaudit.judges.event_training evaluate
    python -m copyaudit.judges.event_training demo-check
    python -m copyaudit.judges.event_training ablation

`demo-check` is a sanity check, not training data: it scores the demo's 22 illustrative
stories (samples/generations/nonliteral.jsonl against samples/nonliteral.jsonl's
reference events) and prints each count and flag beside what samples/README.md's table
says the story was written as (the author's intent, not a judge's verdict). `ablation`
measures training variants (features dropped, extra training pairs) the same way,
leave-one-story-out on the dev set, and counts their flags on the demo; nothing it
fits is written. Its successor, `python -m copyaudit.verification.event_validation`,
measures every registered event judge and the trivial baselines on the validation set
(samples/judge_validation, which nothing here reads) and on the demo.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.errors import InputError
from copyaudit.judges.entailment_aligned import (
    FEATURES,
    WEIGHTS_FILE,
    AlignedEntailment,
    AlignedFeatures,
    Combiner,
    save_combiner,
)
from copyaudit.judges.entailment_lexical import EmbeddingLexicalEntailment
from copyaudit.judges.events import EntailingEventJudge, EntailmentModel, EventJudge
from copyaudit.models.base import Embedder
from copyaudit.models.embedding import load_embedder
from copyaudit.types import JudgeInput

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
DEV_SET = SAMPLES / "judge_training"
RETELLING = "retells the book's plot"  # how samples/README.md's table starts a retelling
KINDS: dict[str, int] = {  # pair kind -> its label (1: the story supports the event)
    "verbatim": 1,
    "paraphrase": 1,
    "split": 1,
    "negated": 0,
    "role_swapped": 0,
    "outcome_changed": 0,
    "topical": 0,
    "absent": 0,
}
TREES, DEPTH, RATE = 100, 2, 0.1  # the boosted trees' size and learning rate
TRAIN_DECIMALS = 2
FLAG_AT = 5  # the events judge's run-level flag: >= 5 events copied
FLAG_LISTS_PER_STORY = 20
FLAG_LIST_SIZE = 12


@dataclass(frozen=True)
class Pair:
    story_id: str
    event: str
    kind: str
    label: int


@dataclass(frozen=True)
class DevSet:
    stories: dict[str, str]  # story_id -> text
    pairs: tuple[Pair, ...]
    digest: str  # sha256 over both files


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(path, number, None, f"not JSON ({error.msg})") from error
        if not isinstance(value, dict):
            raise InputError(path, number, None, "expected a JSON object")
        records.append((number, value))
    return records


def _text(path: Path, number: int, record: dict[str, object], field: str) -> str:
    value = record.get(field)
    if not isinstance(value, str) or not value.strip():
        raise InputError(path, number, field, "expected a non-empty string")
    return value


def load_dev_set(directory: Path = DEV_SET) -> DevSet:
    stories_path, pairs_path = directory / "stories.jsonl", directory / "pairs.jsonl"
    stories: dict[str, str] = {}
    for number, record in _records(stories_path):
        stories[_text(stories_path, number, record, "story_id")] = _text(
            stories_path, number, record, "text"
        )
    pairs = []
    for number, record in _records(pairs_path):
        story_id = _text(pairs_path, number, record, "story_id")
        if story_id not in stories:
            raise InputError(pairs_path, number, "story_id", f"unknown story {story_id!r}")
        kind = _text(pairs_path, number, record, "kind")
        if kind not in KINDS:
            raise InputError(pairs_path, number, "kind", f"expected one of {', '.join(KINDS)}")
        if record.get("label") != KINDS[kind]:
            raise InputError(pairs_path, number, "label", f"a {kind} pair has label {KINDS[kind]}")
        pairs.append(Pair(story_id, _text(pairs_path, number, record, "event"), kind, KINDS[kind]))
    digest = hashlib.sha256(stories_path.read_bytes() + pairs_path.read_bytes()).hexdigest()
    return DevSet(stories, tuple(pairs), digest)


def fit_combiner(features: np.ndarray, labels: np.ndarray) -> Combiner:
    """Gradient-boosted trees (scikit-learn, fixed seed), exported to plain arrays; the
    export is checked against scikit-learn's own probabilities."""
    from sklearn.ensemble import GradientBoostingClassifier  # deferred: loads scipy

    # trained on a 0.01 grid: the last bits of MiniLM's output move with the thread
    # count, and a split must not move with them (thresholds fall between grid points)
    features = np.round(features, TRAIN_DECIMALS)
    model = GradientBoostingClassifier(
        n_estimators=TREES, max_depth=DEPTH, learning_rate=RATE, random_state=0
    ).fit(features, labels)
    trees = [estimator[0].tree_ for estimator in model.estimators_]
    nodes = max(tree.node_count for tree in trees)

    def table(read: Callable[[Any], np.ndarray], dtype: type, fill: float) -> np.ndarray:
        out = np.full((len(trees), nodes), fill, dtype=dtype)
        for t, tree in enumerate(trees):
            out[t, : tree.node_count] = read(tree)
        return out

    prior = float(labels.mean())
    combiner = Combiner(
        table(lambda tree: np.maximum(tree.feature, 0), np.int64, 0),
        table(lambda tree: tree.threshold, np.float64, 0.0),
        table(lambda tree: tree.children_left, np.int64, -1),
        table(lambda tree: tree.children_right, np.int64, -1),
        table(lambda tree: np.round(tree.value[:, 0, 0], 9), np.float64, 0.0),
        init=round(float(np.log(prior / (1 - prior))), 9),
        rate=RATE,
    )
    gap = np.abs(combiner.probability(features) - model.predict_proba(features)[:, 1]).max()
    if gap > 1e-6:
        raise RuntimeError(f"exported trees differ from scikit-learn's by {gap}")
    return combiner


def pair_features(dev: DevSet, extractor: AlignedFeatures) -> np.ndarray:
    return extractor.features([(p.event, dev.stories[p.story_id]) for p in dev.pairs])


def train(embedder: Embedder, out: Path = WEIGHTS_FILE, directory: Path = DEV_SET) -> Combiner:
    """Fit the combiner on the whole dev set and write it as safetensors to `out`."""
    dev = load_dev_set(directory)
    features = pair_features(dev, AlignedFeatures(embedder))
    combiner = fit_combiner(features, np.array([p.label for p in dev.pairs], dtype=np.float64))
    metadata = {
        "trained_on": f"samples/judge_training ({len(dev.pairs)} pairs, sha256 {dev.digest})",
        "model": f"gradient-boosted trees: {TREES} of depth {DEPTH}, learning rate {RATE}",
        "written_by": "copyaudit.judges.event_training",
    }
    save_combiner(combiner, out, metadata)
    return combiner


def judge_verdicts(dev: DevSet, story_ids: Sequence[str], judge: EventJudge) -> list[bool]:
    """The judge's verdicts on every pair of the given stories (in dev-set order), each
    story judged with all of its events at once."""
    verdicts: dict[int, bool] = {}
    for story_id in story_ids:
        indices = [i for i, p in enumerate(dev.pairs) if p.story_id == story_id]
        payload = {"reference_events": [dev.pairs[i].event for i in indices]}
        item = JudgeInput("nonliteral", payload, "", dev.stories[story_id])
        score = judge.judge([item])[0][0]
        for verdict in score.items:
            verdicts[indices[verdict.index]] = bool(verdict.verdict)
    return [verdicts[i] for i in sorted(verdicts)]


def cross_validated(
    dev: DevSet, embedder: Embedder, old: Callable[[], EntailmentModel]
) -> dict[str, list[bool]]:
    """Leave-one-story-out verdicts of the new judge, and the old judge's verdicts."""
    extractor = AlignedFeatures(embedder)
    features = pair_features(dev, extractor)
    labels = np.array([p.label for p in dev.pairs], dtype=np.float64)
    story_of = np.array([p.story_id for p in dev.pairs])
    new: dict[int, bool] = {}
    for story_id in dev.stories:
        held = story_of == story_id
        combiner = fit_combiner(features[~held], labels[~held])
        judge = EntailingEventJudge(AlignedEntailment(embedder, combiner))
        fold = judge_verdicts(dev, [story_id], judge)
        for index, verdict in zip(np.flatnonzero(held), fold, strict=True):
            new[int(index)] = verdict
    return {
        "new": [new[i] for i in range(len(dev.pairs))],
        "old": judge_verdicts(dev, list(dev.stories), EventJudge(old())),
    }


@dataclass(frozen=True)
class Figures:
    n: int
    accuracy: float
    precision: float | None
    recall: float | None
    f1: float | None


def figures(labels: Sequence[int], verdicts: Sequence[bool]) -> Figures:
    tp = sum(1 for y, v in zip(labels, verdicts, strict=True) if y and v)
    fp = sum(1 for y, v in zip(labels, verdicts, strict=True) if not y and v)
    fn = sum(1 for y, v in zip(labels, verdicts, strict=True) if y and not v)
    correct = sum(1 for y, v in zip(labels, verdicts, strict=True) if bool(y) == v)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall
        else None
    )
    return Figures(len(labels), correct / len(labels), precision, recall, f1)


def flag_precision(dev: DevSet, verdicts: Sequence[bool]) -> tuple[int, float | None]:
    """The run-level flag (>= FLAG_AT events copied) on event lists drawn from each story
    (FLAG_LISTS_PER_STORY lists of FLAG_LIST_SIZE of its events, seeded): how many lists
    it flags, and the share of those that truly hold >= FLAG_AT supported events."""
    rng = random.Random(17)
    by_story: dict[str, list[int]] = defaultdict(list)
    for i, pair in enumerate(dev.pairs):
        by_story[pair.story_id].append(i)
    flagged = right = 0
    for indices in by_story.values():
        for _ in range(FLAG_LISTS_PER_STORY):
            chosen = rng.sample(indices, min(FLAG_LIST_SIZE, len(indices)))
            if sum(verdicts[i] for i in chosen) >= FLAG_AT:
                flagged += 1
                right += sum(dev.pairs[i].label for i in chosen) >= FLAG_AT
    return flagged, (right / flagged if flagged else None)


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(dev: DevSet, verdicts: dict[str, list[bool]]) -> str:
    """A Markdown table: overall and per pair kind, old judge vs new."""
    lines = [
        "| pairs | n | old acc | old P | old R | old F1 | new acc | new P | new R | new F1 |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    groups = [("all", list(range(len(dev.pairs))))] + [
        (kind, [i for i, p in enumerate(dev.pairs) if p.kind == kind]) for kind in KINDS
    ]
    for name, indices in groups:
        labels = [dev.pairs[i].label for i in indices]
        cells = [name, str(len(indices))]
        for judge in ("old", "new"):
            f = figures(labels, [verdicts[judge][i] for i in indices])
            cells += [_cell(f.accuracy), _cell(f.precision), _cell(f.recall), _cell(f.f1)]
        lines.append("| " + " | ".join(cells) + " |")
    for judge in ("old", "new"):
        flagged, precision = flag_precision(dev, verdicts[judge])
        lines.append(
            f"\n{judge} judge, run-level flag (>= {FLAG_AT} events copied) on "
            f"{FLAG_LISTS_PER_STORY * len(dev.stories)} lists of {FLAG_LIST_SIZE} events: "
            f"flags {flagged}, precision {_cell(precision)}"
        )
    return "\n".join(lines)


def written_as(readme: Path = SAMPLES / "README.md") -> dict[str, str]:
    """case id -> "written as" from samples/README.md's table of the nonliteral stories."""
    rows: dict[str, str] = {}
    for line in readme.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and "-nl-" in cells[0]:
            rows[cells[0]] = cells[1].split(":")[0]
    return rows


def demo_check(embedder: Embedder, old: Callable[[], EntailmentModel]) -> str:
    """Events entailed per demo story by the shipped events_entail and by the old judge,
    beside what each story was written as, and how many of each kind are flagged."""
    cases = {
        str(r["id"]): r for _, r in _records(SAMPLES / "nonliteral.jsonl")
    }  # the reference events
    outputs = {
        str(r["case_id"]): str(r["output"])
        for _, r in _records(SAMPLES / "generations" / "nonliteral.jsonl")
    }
    intent = written_as()
    ids = [i for i in cases if i in outputs]
    items = [JudgeInput("nonliteral", cases[i], "", outputs[i]) for i in ids]
    judges = {
        "new": EntailingEventJudge(AlignedEntailment(embedder)),
        "old": EventJudge(old()),
    }
    counts = {
        name: [sum(bool(v.verdict) for v in s[0].items) for s in judge.judge(items)]
        for name, judge in judges.items()
    }
    lines = ["| case | written as | events | new entailed | new flag | old entailed | old flag |"]
    lines.append("|---|---|---|---|---|---|---|")
    flagged: dict[tuple[str, str], int] = defaultdict(int)
    totals: dict[str, int] = defaultdict(int)
    for k, case_id in enumerate(ids):
        kind = intent.get(case_id, "?")
        totals[kind] += 1
        cells = [case_id, kind, str(len(cases[case_id]["reference_events"]))]
        for name in ("new", "old"):
            flag = counts[name][k] >= FLAG_AT
            flagged[(name, kind)] += flag
            cells += [str(counts[name][k]), "FLAG" if flag else ""]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for kind, total in totals.items():
        lines.append(
            f"{kind} ({total}): new flags {flagged[('new', kind)]}, old flags "
            f"{flagged[('old', kind)]}"
        )
    for name in ("new", "old"):
        retell = sum(n for (j, k), n in flagged.items() if j == name and k == RETELLING)
        other = sum(n for (j, k), n in flagged.items() if j == name and k != RETELLING)
        lines.append(
            f"{name} judge: flags {retell} of {totals[RETELLING]} retellings and {other} of "
            f"{len(ids) - totals[RETELLING]} other stories"
        )
    return "\n".join(lines)


ABLATIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # variant -> (features dropped, extra training pairs)
    "shipped": ((), ()),
    "no predicate support (v1's features)": (
        (
            "predicate_mean",
            "predicate_min",
            "predicate_unsupported",
            "name_recall",
            "passage_predicate_mean",
        ),
        (),
    ),
    "no whole-passage features": (("passage_recall", "cosine_margin"), ()),
    "+ padded stories": ((), ("padded",)),
    "+ cross-story negatives": ((), ("cross",)),
}


def _demo_pairs() -> tuple[list[tuple[str, str]], list[str]]:
    """(event, output) for every reference event of the demo's stories, and their case ids."""
    cases = {str(r["id"]): r for _, r in _records(SAMPLES / "nonliteral.jsonl")}
    generations = SAMPLES / "generations" / "nonliteral.jsonl"
    outputs = {str(r["case_id"]): str(r["output"]) for _, r in _records(generations)}
    pairs, ids = [], []
    for case_id, case in cases.items():
        events = case["reference_events"]
        if case_id in outputs and isinstance(events, list):
            pairs += [(str(e), outputs[case_id].replace("\n", " ").strip()) for e in events]
            ids += [case_id] * len(events)
    return pairs, ids


def ablation(embedder: Embedder) -> str:
    """CV figures and demo flags of each `ABLATIONS` variant. Extra pairs: "padded" = each
    pair against its story followed by the next dev story (label unchanged); "cross" =
    each event against the next two dev stories joined (label 0). A fold never trains on
    an extra pair that holds the held-out story."""
    dev = load_dev_set()
    extractor = AlignedFeatures(embedder)
    ids = list(dev.stories)
    after = {s: (ids[(i + 1) % len(ids)], ids[(i + 2) % len(ids)]) for i, s in enumerate(ids)}
    labels = np.array([p.label for p in dev.pairs], dtype=np.float64)
    story_of = np.array([p.story_id for p in dev.pairs])
    base = pair_features(dev, extractor)
    extra = {
        "padded": (
            extractor.features(
                [
                    (p.event, f"{dev.stories[p.story_id]} {dev.stories[after[p.story_id][0]]}")
                    for p in dev.pairs
                ]
            ),
            labels,
            [{p.story_id, after[p.story_id][0]} for p in dev.pairs],
        ),
        "cross": (
            extractor.features(
                [(p.event, " ".join(dev.stories[s] for s in after[p.story_id])) for p in dev.pairs]
            ),
            np.zeros(len(dev.pairs)),
            [{p.story_id, *after[p.story_id]} for p in dev.pairs],
        ),
    }
    demo_pairs, demo_ids = _demo_pairs()
    demo = extractor.features(demo_pairs)
    intent = written_as()
    lines = [
        "| variant | F1 | P | R | " + " | ".join(KINDS) + " | demo: retellings flagged "
        "| demo: others flagged |",
        "|---" * (len(KINDS) + 6) + "|",
    ]
    for name, (dropped, added) in ABLATIONS.items():
        keep = [i for i, f in enumerate(FEATURES) if f not in dropped]

        def training(
            held: str | None, keep: list[int] = keep, added: tuple = added
        ) -> tuple[np.ndarray, np.ndarray]:
            rows = story_of != held
            xs, ys = [base[rows][:, keep]], [labels[rows]]
            for key in added:
                features, extra_labels, stories = extra[key]
                use = np.array([held not in s for s in stories])
                xs.append(features[use][:, keep])
                ys.append(extra_labels[use])
            return np.concatenate(xs), np.concatenate(ys)

        verdicts = np.zeros(len(dev.pairs), dtype=bool)
        for story_id in ids:
            held = story_of == story_id
            combiner = fit_combiner(*training(story_id))
            verdicts[held] = combiner.probability(base[held][:, keep]) >= 0.5
        f = figures(list(labels.astype(int)), list(verdicts))
        cells = [name, _cell(f.f1), _cell(f.precision), _cell(f.recall)]
        for kind in KINDS:
            rows = np.array([p.kind == kind for p in dev.pairs])
            cells.append(_cell(float(np.mean(verdicts[rows] == labels[rows].astype(bool)))))
        found = fit_combiner(*training(None)).probability(demo[:, keep]) >= 0.5
        flags = {c: int(found[np.array(demo_ids) == c].sum()) >= FLAG_AT for c in intent}
        retold = [c for c in flags if intent[c] == RETELLING]
        cells.append(f"{sum(flags[c] for c in retold)}/{len(retold)}")
        cells.append(
            f"{sum(flags.values()) - sum(flags[c] for c in retold)}/{len(flags) - len(retold)}"
        )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("train", "evaluate", "demo-check", "ablation"))
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    args = parser.parse_args(argv)
    embedder = load_embedder("default", device="cpu")
    if args.command == "train":
        train(embedder, args.out)
        print(f"{args.out}: sha256 {hashlib.sha256(args.out.read_bytes()).hexdigest()}")
        return
    if args.command == "demo-check":
        print(demo_check(embedder, lambda: EmbeddingLexicalEntailment(embedder)))
        return
    if args.command == "ablation":
        print(ablation(embedder))
        return
    dev = load_dev_set()
    verdicts = cross_validated(dev, embedder, lambda: EmbeddingLexicalEntailment(embedder))
    print(
        f"{len(dev.pairs)} pairs, {len(dev.stories)} stories; new judge: leave-one-story-out; "
        f"features {', '.join(FEATURES)}"
    )
    print(report(dev, verdicts))


if __name__ == "__main__":
    main()
