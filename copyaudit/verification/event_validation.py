"""Every offline event judge, and the trivial baselines, on the shipped validation set
(samples/judge_validation, written after the judges were frozen and never tuned on) and
on the demo's stories (issue 31). The successor of `event_training demo-check`.

The judges are those of the registry that score nonliteral stories with an event model
(`events`, `events_entail`, ...), built through `build_judges` with the packaged MiniLM,
as a run builds them; each story is judged with all of its reference events at once.
Figures per judge: accuracy, precision, recall, F1 with story-resampled bootstrap 95%
intervals (the events of one story are not independent), ROC AUC of the item scores,
the share of each pair kind judged right, F1 per story-length band, and the run-level
decision "≥ FLAG_AT events copied" per story against the gold count. On the demo, which
has no item labels, the flag is compared with what each story was written as.

    python -m copyaudit.verification.event_validation [--write-figures] [--stories A,B]

`--write-figures` writes the shipped figures (`copyaudit.judges.validation_figures`),
which the app and reports show beside a judge's rate.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from copyaudit.errors import UserError
from copyaudit.formats import load_cases, load_generations
from copyaudit.judges.base import Judge
from copyaudit.judges.event_training import FLAG_AT, RETELLING, SAMPLES, written_as
from copyaudit.judges.options import JudgeOptions
from copyaudit.judges.presets import build_judges
from copyaudit.judges.registry import JUDGES, score_threshold
from copyaudit.judges.validation_figures import FIGURES_FILE
from copyaudit.models.base import Embedder
from copyaudit.models.embedding import load_embedder
from copyaudit.records import Record, read_json_records
from copyaudit.types import JudgeInput
from copyaudit.verification.roc import roc_points, trapezoid_area
from copyaudit.verification.stats import binary_metrics

VALIDATION_FILE = SAMPLES / "judge_validation" / "stories.jsonl"
KINDS: dict[str, int] = {  # pair kind -> its gold label (1: the story tells the event)
    "verbatim": 1,
    "paraphrase": 1,
    "split": 1,
    "passive": 1,
    "negated": 0,
    "role_swapped": 0,
    "outcome_changed": 0,
    "topical": 0,
    "absent": 0,
}
EVENTS_PER_STORY = (15, 20)
WORDS_PER_STORY = (300, 1000)
LENGTH_BANDS = ((300, 499), (500, 649), (650, 1000))  # words, both bounds inclusive
BASELINES = {"always yes": True, "always no": False}
METRICS = ("accuracy", "precision", "recall", "f1")
RESAMPLES, SEED = 1000, 31


@dataclass(frozen=True)
class Story:
    story_id: str
    voice: str
    source_work: str
    text: str
    events: tuple[str, ...]
    labels: tuple[int, ...]
    kinds: tuple[str, ...]

    @property
    def words(self) -> int:
        return len(self.text.split())

    @property
    def copied(self) -> bool:
        """The gold run-level decision: >= FLAG_AT of its events told."""
        return sum(self.labels) >= FLAG_AT


@dataclass(frozen=True)
class ValidationSet:
    stories: tuple[Story, ...]
    digest: str  # sha256 of the file


def _field(record: Record, data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise record.error(name, "expected a non-empty string")
    return value


def _events(record: Record) -> list[tuple[str, int, str]]:
    low, high = EVENTS_PER_STORY
    value = record.data.get("events")
    if not isinstance(value, list) or not low <= len(value) <= high:
        raise record.error("events", f"expected a list of {low}-{high} events")
    out = []
    for k, event in enumerate(value):
        where = f"events[{k}]"
        if not isinstance(event, dict):
            raise record.error(where, "expected an object {text, label, kind}")
        kind = event.get("kind")
        if kind not in KINDS:
            raise record.error(f"{where}.kind", f"expected one of {', '.join(KINDS)}")
        if event.get("label") != KINDS[kind]:
            raise record.error(f"{where}.label", f"a {kind} pair has label {KINDS[kind]}")
        out.append((_field(record, event, "text"), KINDS[kind], kind))
    return out


def load_validation(path: Path = VALIDATION_FILE) -> ValidationSet:
    """The validation stories; InputError (file, line, field) on a bad record."""
    stories: list[Story] = []
    for record in read_json_records(path):
        events = _events(record)
        story_id, voice, source_work = (
            _field(record, record.data, f) for f in ("story_id", "voice", "source_work")
        )
        story = Story(
            story_id,
            voice,
            source_work,
            _field(record, record.data, "story"),
            tuple(e for e, _, _ in events),
            tuple(label for _, label, _ in events),
            tuple(kind for _, _, kind in events),
        )
        low, high = WORDS_PER_STORY
        if not low <= story.words <= high:
            raise record.error("story", f"{story.words} words, expected {low}-{high}")
        if any(s.story_id == story.story_id for s in stories):
            raise record.error("story_id", f"duplicate {story.story_id!r}")
        stories.append(story)
    return ValidationSet(tuple(stories), hashlib.sha256(path.read_bytes()).hexdigest())


@dataclass(frozen=True)
class Judged:
    """One judge's (or baseline's) verdicts and scores, per story, per event."""

    name: str
    version: str
    config_hash: str | None
    threshold: float | None  # the score threshold that decides a verdict
    verdicts: tuple[tuple[bool, ...], ...]
    scores: tuple[tuple[float, ...], ...]

    def flags(self) -> list[bool]:
        return [sum(v) >= FLAG_AT for v in self.verdicts]


def event_judge_names() -> tuple[str, ...]:
    """The registry's event judges: they score nonliteral stories with an event model."""
    return tuple(
        s.name for s in JUDGES.values() if "nonliteral" in s.kinds and "event model" in s.needs
    )


def build_event_judges(embedder: Callable[[], Embedder]) -> tuple[list[Judge], list[str]]:
    """Every event judge as the offline preset builds it (no event model named), and
    the reasons of those that cannot be built here."""
    options = JudgeOptions(judges=",".join(event_judge_names()))
    judges, skipped = build_judges(options, "nonliteral", embedder_factory=embedder)
    return judges, [f"{name}: {reason}" for name, reason in skipped]


def judge_stories(judge: Judge, stories: Sequence[tuple[Sequence[str], str]]) -> Judged:
    """`judge` on (events, story text) pairs, all in one batch."""
    items = [
        JudgeInput("nonliteral", {"reference_events": list(events)}, "", text)
        for events, text in stories
    ]
    verdicts, scores = [], []
    for (events, _), result in zip(stories, judge.judge(items), strict=True):
        score = next(s for s in result if s.target == "event")
        if score.error or len(score.items) != len(events):
            raise RuntimeError(f"judge {judge.name} could not judge a story: {score.error}")
        ordered = sorted(score.items, key=lambda v: v.index)
        verdicts.append(tuple(bool(v.verdict) for v in ordered))
        scores.append(
            tuple(float(bool(v.verdict)) if v.score is None else v.score for v in ordered)
        )
    key = score_threshold(judge.name)
    threshold = None if key is None else judge.config().get(key)
    return Judged(
        judge.name, judge.version, judge.config_hash(), threshold, tuple(verdicts), tuple(scores)
    )


def baseline(name: str, answer: bool, stories: Sequence[tuple[Sequence[str], str]]) -> Judged:
    verdicts = tuple((answer,) * len(events) for events, _ in stories)
    scores = tuple((float(answer),) * len(events) for events, _ in stories)
    return Judged(name, "-", None, None, verdicts, scores)


def _auc(scores: np.ndarray, gold: np.ndarray) -> float | None:
    if gold.all() or not gold.any():
        return None
    fpr, tpr, _ = roc_points(list(scores), list(gold.astype(int)))
    return trapezoid_area(fpr, tpr)


def _counts(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    return np.array([(pred & gold).sum(), (pred & ~gold).sum(), (~pred & gold).sum()])


def _ratios(counts: np.ndarray, total: np.ndarray) -> dict[str, np.ndarray]:
    """Each metric per row of (tp, fp, fn) counts and item totals; nan where undefined."""
    tp, fp, fn = counts[:, 0], counts[:, 1], counts[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        return {
            "accuracy": (total - fp - fn) / total,
            "precision": np.where(tp + fp > 0, tp / (tp + fp), np.nan),
            "recall": np.where(tp + fn > 0, tp / (tp + fn), np.nan),
            "f1": np.where(2 * tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan),
        }


def story_bootstrap(
    judged: Judged, gold: Sequence[Sequence[int]], resamples: int = RESAMPLES, seed: int = SEED
) -> dict[str, tuple[float, float] | None]:
    """Percentile 95% intervals of each metric and of the AUC, resampling whole stories
    with replacement (seeded); a resample where a metric is undefined is dropped."""
    preds = [np.array(v, dtype=bool) for v in judged.verdicts]
    golds = [np.array(g, dtype=bool) for g in gold]
    per_story = np.array([_counts(p, g) for p, g in zip(preds, golds, strict=True)])
    sizes = np.array([len(g) for g in golds])
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(golds), size=(resamples, len(golds)))
    values = _ratios(per_story[draws].sum(axis=1), sizes[draws].sum(axis=1))
    aucs = []
    for draw in draws:
        auc = _auc(
            np.concatenate([judged.scores[i] for i in draw]),
            np.concatenate([golds[i] for i in draw]),
        )
        if auc is not None:
            aucs.append(auc)
    values["auc"] = np.array(aucs)
    intervals: dict[str, tuple[float, float] | None] = {}
    for metric, found in values.items():
        found = found[~np.isnan(found)]
        if found.size:
            low, high = np.quantile(found, [0.025, 0.975])
            intervals[metric] = (float(low), float(high))
        else:
            intervals[metric] = None
    return intervals


def overall(judged: Judged, stories: Sequence[Story], resamples: int) -> dict[str, Any]:
    """The figures shipped for one judge (`validation_figures`), to 4 decimals."""
    gold = [s.labels for s in stories]
    pred = [v for verdicts in judged.verdicts for v in verdicts]
    flat_gold = [bool(g) for labels in gold for g in labels]
    metrics = binary_metrics(pred, flat_gold)
    scores = np.array([x for row in judged.scores for x in row])
    right = sum(f == s.copied for f, s in zip(judged.flags(), stories, strict=True))
    ci = story_bootstrap(judged, gold, resamples)
    return {
        "version": judged.version,
        "config_hash": judged.config_hash,
        "threshold": judged.threshold,
        **{m: _round(metrics[m]) for m in METRICS},
        "auc": _round(_auc(scores, np.array(flat_gold))),
        "n_pairs": len(pred),
        "n_stories": len(stories),
        "ci": {m: None if c is None else [_round(c[0]), _round(c[1])] for m, c in ci.items()},
        "run_level_right": right,
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _with_ci(value: float | None, ci: tuple[float, float] | None) -> str:
    return _f(value) if ci is None else f"{_f(value)} [{ci[0]:.2f}-{ci[1]:.2f}]"


def _row(cells: Sequence[object]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    return [_row(header), "|" + "---|" * len(header), *(_row(r) for r in rows)]


def overall_table(results: dict[str, dict[str, Any]], n_stories: int) -> list[str]:
    rows = []
    for name, r in results.items():
        ci = r["ci"]
        rows.append(
            [f"`{name}`" if r["config_hash"] else name, r["version"]]
            + [_with_ci(r[m], ci[m]) for m in (*METRICS, "auc")]
            + [f"{r['run_level_right']}/{n_stories}"]
        )
    header = ["judge", "version", "acc", "P", "R", "F1", "ROC AUC", f'runs right (">= {FLAG_AT}")']
    return _table(header, rows)


def kind_table(judged: Sequence[Judged], stories: Sequence[Story]) -> list[str]:
    """Per pair kind, the share each judge gets right: accepted for a supported kind,
    rejected for an unsupported one."""
    rows = []
    for kind, label in KINDS.items():
        where = [(i, k) for i, s in enumerate(stories) for k, x in enumerate(s.kinds) if x == kind]
        if not where:
            continue
        cells: list[object] = [kind, "accepted" if label else "rejected", len(where)]
        for j in judged:
            cells.append(_f(sum(j.verdicts[i][k] == bool(label) for i, k in where) / len(where)))
        rows.append(cells)
    return _table(["kind", "share", "n", *(j.name for j in judged)], rows)


def length_table(judged: Sequence[Judged], stories: Sequence[Story]) -> list[str]:
    rows = []
    for low, high in LENGTH_BANDS:
        chosen = [i for i, s in enumerate(stories) if low <= s.words <= high]
        if not chosen:
            continue
        gold = [bool(g) for i in chosen for g in stories[i].labels]
        cells: list[object] = [f"{low}-{high}", len(chosen), len(gold)]
        for j in judged:
            pred = [v for i in chosen for v in j.verdicts[i]]
            cells.append(_f(binary_metrics(pred, gold)["f1"]))
        rows.append(cells)
    return _table(["words", "stories", "pairs", *(f"{j.name} F1" for j in judged)], rows)


def run_table(judged: Sequence[Judged], stories: Sequence[Story]) -> list[str]:
    """Per story: the gold count and flag, and each judge's count and flag."""
    rows = []
    for i, s in enumerate(stories):
        cells: list[object] = [s.story_id, s.words, f"{sum(s.labels)}/{len(s.labels)}"]
        cells.append("yes" if s.copied else "no")
        for j in judged:
            count = sum(j.verdicts[i])
            mark = "" if (count >= FLAG_AT) == s.copied else " (wrong)"
            cells.append(f"{count}{' FLAG' if count >= FLAG_AT else ''}{mark}")
        rows.append(cells)
    header = ["story", "words", "gold", f">= {FLAG_AT}", *(j.name for j in judged)]
    return _table(header, rows)


def demo_stories() -> tuple[list[str], list[tuple[list[str], str]]]:
    """The demo's nonliteral case ids and (reference events, illustrative story)."""
    cases = {c.case.case_id: c.case for c in load_cases("nonliteral", SAMPLES / "nonliteral.jsonl")}
    outputs = {
        g.case_id: g.output for g in load_generations(SAMPLES / "generations" / "nonliteral.jsonl")
    }
    ids = [i for i in cases if i in outputs]
    return ids, [(list(cases[i].payload["reference_events"]), outputs[i]) for i in ids]


def demo_table(judged: Sequence[Judged], ids: Sequence[str]) -> list[str]:
    """Per demo story, each judge's count and flag beside what it was written as; and how
    often the flag matches the intent (a retelling should be flagged, nothing else)."""
    intent = written_as()
    rows = []
    for k, case_id in enumerate(ids):
        cells: list[object] = [case_id, intent.get(case_id, "?")]
        cells += [f"{sum(j.verdicts[k])}{' FLAG' if j.flags()[k] else ''}" for j in judged]
        rows.append(cells)
    lines = _table(["case", "written as", *(j.name for j in judged)], rows)
    retold = [intent.get(i) == RETELLING for i in ids]
    lines.append("")
    for j in judged:
        flags = j.flags()
        hits = sum(f and r for f, r in zip(flags, retold, strict=True))
        others = sum(f and not r for f, r in zip(flags, retold, strict=True))
        right = sum(f == r for f, r in zip(flags, retold, strict=True))
        lines.append(
            f"- {j.name}: flags {hits} of {sum(retold)} retellings and {others} of "
            f"{len(ids) - sum(retold)} other stories; flag = intent for {right}/{len(ids)}"
        )
    return lines


@dataclass(frozen=True)
class Validation:
    report: str
    figures: dict[str, Any]  # what `--write-figures` ships


def validate(
    embedder: Callable[[], Embedder],
    story_ids: Sequence[str] | None = None,
    demo: bool = True,
    resamples: int = RESAMPLES,
    path: Path = VALIDATION_FILE,
) -> Validation:
    """Every buildable event judge and the baselines on the validation set (or the
    stories named), and on the demo's stories; the report as Markdown."""
    valset = load_validation(path)
    stories = list(valset.stories)
    if story_ids:
        unknown = set(story_ids) - {s.story_id for s in stories}
        if unknown:
            raise UserError(f"{path}: no story {', '.join(sorted(unknown))}")
        stories = [s for s in stories if s.story_id in story_ids]
    judges, skipped = build_event_judges(embedder)
    pairs = [(s.events, s.text) for s in stories]
    judged = [judge_stories(j, pairs) for j in judges]
    judged += [baseline(name, answer, pairs) for name, answer in BASELINES.items()]
    results = {j.name: overall(j, stories, resamples) for j in judged}
    n_pairs = sum(len(s.events) for s in stories)
    lines = [
        f"## On the validation set ({path.relative_to(SAMPLES.parent)}, sha256 "
        f"{valset.digest[:12]}): {len(stories)} stories, {n_pairs} pairs",
        "",
        f"Intervals: 95% percentile bootstrap over stories ({resamples} resamples, seed "
        f"{SEED}). Run-level: a story is flagged at >= {FLAG_AT} events judged told; "
        f"gold: >= {FLAG_AT} labelled told ({sum(s.copied for s in stories)} of "
        f"{len(stories)} stories).",
        "",
        *overall_table(results, len(stories)),
        "",
        "Per pair kind (share accepted for supported kinds, rejected for the others):",
        "",
        *kind_table(judged, stories),
        "",
        "F1 per story length:",
        "",
        *length_table(judged, stories),
        "",
        "Run-level decision per story (count of events judged told):",
        "",
        *run_table(judged, stories),
    ]
    if skipped:
        lines += ["", "Not built here: " + "; ".join(skipped)]
    if demo:
        ids, demo_pairs = demo_stories()
        on_demo = [judge_stories(j, demo_pairs) for j in judges]
        on_demo += [baseline(name, answer, demo_pairs) for name, answer in BASELINES.items()]
        lines += ["", f"## On the demo's {len(ids)} stories (no item labels)", ""]
        lines += demo_table(on_demo, ids)
    figures: dict[str, Any] = {"validation_sha256": valset.digest, **results}
    return Validation("\n".join(lines), figures)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stories", help="comma list of story ids (default: all)")
    parser.add_argument("--no-demo", action="store_true", help="skip the demo's stories")
    parser.add_argument("--resamples", type=int, default=RESAMPLES)
    parser.add_argument(
        "--write-figures",
        nargs="?",
        const=FIGURES_FILE,
        type=Path,
        help=f"write the figures as JSON (default {FIGURES_FILE.name} beside the judges)",
    )
    args = parser.parse_args(argv)
    ids = [i.strip() for i in args.stories.split(",")] if args.stories else None
    result = validate(
        lambda: load_embedder("default", device="cpu"), ids, not args.no_demo, args.resamples
    )
    print(result.report)
    if args.write_figures:
        text = json.dumps(result.figures, indent=1, sort_keys=True) + "\n"
        args.write_figures.write_text(text, encoding="utf-8")
        print(f"\nwrote {args.write_figures}")


if __name__ == "__main__":
    main()
