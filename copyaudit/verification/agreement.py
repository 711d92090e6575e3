"""Judge quality against people, and agreement between people (human verification).

`agreement_report(store, run)` is the one entry point: the `copyaudit agreement`
command and the agreement screen both show what it returns.

Human reference per item (one event, character, refusal or literal verdict of one
generation):
- adjudicated: if a person named in `adjudicators` (default "adjudicator") has a
  current yes/no label on the item, that label is the reference (several
  adjudicators: their majority; a tie or only "unsure" falls back to the majority);
- otherwise the majority of the other annotators' yes/no labels; "unsure" does not
  vote; a tie or no vote leaves the item out, counted as `tie` / `no_votes`.
Adjudicators are not annotators for Krippendorff's alpha and Cohen's kappa: those
measure how well independent annotators agree.

Judges are compared per (run, target, judge, metric) on the items that have a
reference and a judge verdict. Items the judge leaves out on purpose (characters
named in the prompt) and items it failed on are counted, not compared; labels people
gave on items left out on purpose count nowhere (not in references, agreement or
disagreements: the annotation screen does not ask them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from copyaudit.items import LABEL_TARGETS
from copyaudit.judges.registry import score_threshold
from copyaudit.verification import stats
from db.case_file import run_judges
from db.labels import current_labels, judge_verdicts
from db.runs import run_row

if TYPE_CHECKING:
    from db.connection import Store
    from db.labels import CurrentLabel, JudgeVerdict

DEFAULT_ADJUDICATORS: tuple[str, ...] = ("adjudicator",)
TARGETS: tuple[str, ...] = LABEL_TARGETS
PAPER_SOURCE = "CopyBench (Chen et al., 2024) Table 3: human verification on 82 cases"
PAPER_FIGURES: dict[str, dict[str, float]] = {
    "event": {"accuracy": 0.89, "precision": 0.68, "recall": 0.87, "f1": 0.76},
    "character": {"accuracy": 0.96, "precision": 0.93, "recall": 0.95, "f1": 0.94},
}
EVENT_SCORE_NOTE = (
    "an event's score is its best window score up to the first supporting window "
    "(later windows are not asked), so advice above the current threshold is approximate"
)

Item = tuple[str, int, str, int]  # (run, generation_id, target, item_index)


@dataclass
class ItemLabels:
    """Everything people said about one item."""

    run: str
    generation_id: int
    generation_key: str
    target: str
    item_index: int
    annotators: dict[str, str] = field(default_factory=dict)  # name -> yes/no/unsure
    adjudicators: dict[str, str] = field(default_factory=dict)

    def votes(self) -> Counter[str]:
        return Counter(self.annotators.values())


@dataclass(frozen=True)
class Reference:
    label: str | None  # yes / no, or None when undecided
    source: str  # adjudicated / majority / tie / no_votes


def reference_for(item: ItemLabels) -> Reference:
    adjudicated = stats.reference_label(list(item.adjudicators.values()))
    if adjudicated is not None:
        return Reference(adjudicated, "adjudicated")
    majority = stats.reference_label(list(item.annotators.values()))
    if majority is not None:
        return Reference(majority, "majority")
    votes = item.votes()
    return Reference(None, "tie" if votes["yes"] or votes["no"] else "no_votes")


def collect_items(
    labels: Sequence[CurrentLabel], adjudicators: Sequence[str]
) -> dict[Item, ItemLabels]:
    chosen = set(adjudicators)
    items: dict[Item, ItemLabels] = {}
    for label in labels:
        key = (label.run, label.generation_id, label.target, label.item_index)
        item = items.get(key)
        if item is None:
            item = items[key] = ItemLabels(
                label.run,
                label.generation_id,
                label.generation_key,
                label.target,
                label.item_index,
            )
        people = item.adjudicators if label.annotator in chosen else item.annotators
        people[label.annotator] = label.label
    return items


# ---------------------------------------------------------------------------
# Sections of the report
# ---------------------------------------------------------------------------


def _reference_rows(
    items: dict[Item, ItemLabels], references: dict[Item, Reference]
) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for key, item in items.items():
        reference = references[key]
        counts = groups[(item.run, item.target)]
        counts["items"] += 1
        counts[reference.source] += 1
        majority = stats.reference_label(list(item.annotators.values()))
        if reference.source == "adjudicated" and majority != reference.label:
            counts["overridden"] += 1
    return [
        {
            "run": run,
            "target": target,
            "items": c["items"],
            "decided": c["adjudicated"] + c["majority"],
            "adjudicated": c["adjudicated"],
            "majority": c["majority"],
            "overridden": c["overridden"],  # adjudicated against (or without) a majority
            "excluded": {"tie": c["tie"], "no_votes": c["no_votes"]},
        }
        for (run, target), c in sorted(groups.items(), key=lambda kv: _target_order(kv[0]))
    ]


def _target_order(key: tuple[str, str]) -> tuple[str, int]:
    run, target = key
    return (run, TARGETS.index(target) if target in TARGETS else len(TARGETS))


def judge_rows(
    verdicts: Sequence[JudgeVerdict],
    items: dict[Item, ItemLabels],
    references: dict[Item, Reference],
    resamples: int,
    seed: int,
) -> list[dict[str, Any]]:
    """Per (run, target, judge, metric): the judge's figures against the reference."""
    groups: dict[tuple[str, str, str, str], list[JudgeVerdict]] = defaultdict(list)
    for verdict in verdicts:
        groups[(verdict.run, verdict.target, verdict.judge, verdict.metric)].append(verdict)
    rows = []
    for (run, target, judge, metric), group in sorted(
        groups.items(), key=lambda kv: (*_target_order(kv[0][:2]), kv[0][2], kv[0][3])
    ):
        excluded: Counter[str] = Counter()
        compared: list[tuple[JudgeVerdict, bool]] = []
        for verdict in group:
            key = (verdict.run, verdict.generation_id, verdict.target, verdict.item_index)
            reference = references.get(key)
            if verdict.excluded:
                excluded["not_judged"] += 1
            elif verdict.verdict is None:
                excluded["judge_error"] += 1
            elif reference is None:
                excluded["unlabelled"] += 1
            elif reference.label is None:
                excluded[reference.source] += 1
            else:
                compared.append((verdict, reference.label == stats.YES))
        pred = [bool(v.verdict) for v, _ in compared]
        gold = [g for _, g in compared]
        row: dict[str, Any] = {
            "run": run,
            "target": target,
            "judge": judge,
            "metric": metric,
            **judge_figures(pred, gold, resamples, seed),
            "excluded": {
                name: excluded[name]
                for name in ("unlabelled", "tie", "no_votes", "judge_error", "not_judged")
            },
            "paper": PAPER_FIGURES.get(target),
            "threshold": _threshold_advice(judge, target, compared),
        }
        rows.append(row)
    return rows


def judge_figures(pred: list[bool], gold: list[bool], resamples: int, seed: int) -> dict[str, Any]:
    """A judge's verdicts against people: n, accuracy/precision/recall/F1, their
    bootstrap intervals and the confusion counts."""
    metrics = stats.binary_metrics(pred, gold)
    return {
        **{name: metrics[name] for name in ("n", *stats.METRICS)},
        "ci": {
            name: _pair(stats.bootstrap_ci(pred, gold, name, n=resamples, seed=seed))
            for name in stats.METRICS
        },
        "confusion": {name: metrics[name] for name in ("tp", "fp", "fn", "tn")},
    }


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return None if interval is None else [interval[0], interval[1]]


def _threshold_advice(
    judge: str, target: str, compared: list[tuple[JudgeVerdict, bool]]
) -> dict[str, Any] | None:
    """The score threshold with the best F1 against the reference, for judges whose
    verdict is a thresholded score (the judge registry's `score_threshold`); None for
    a yes/no judge, where a "threshold" on 0/1 answers would only say "flag everything"."""
    if score_threshold(judge) is None:
        return None
    currents = {v.threshold for v, _ in compared if v.threshold is not None}
    scored = [(v.score, gold) for v, gold in compared if v.score is not None]
    best = stats.best_threshold([s for s, _ in scored], [g for _, g in scored])
    advice: dict[str, Any] = {
        "n_scored": len(scored),
        "current": currents.pop() if len(currents) == 1 else None,
        "best": best,
    }
    if best is not None:
        flags = sum(score >= best["threshold"] for score, _ in scored)
        people = sum(gold for _, gold in scored)
        advice["flags"] = {"advised": flags, "people": people, "of": len(scored)}
        if flags == len(scored) and people < len(scored):
            advice["warning"] = (
                f"this threshold flags {flags} of {len(scored)} labelled items (people "
                f"flag {people}): it is the always-yes baseline, not a judge"
            )
    if target == "event":
        advice["note"] = EVENT_SCORE_NOTE
    return advice


def _agreement_rows(items: dict[Item, ItemLabels]) -> list[dict[str, Any]]:
    groups: dict[tuple[str, str], dict[Item, dict[str, str]]] = defaultdict(dict)
    for key, item in items.items():
        if item.annotators:
            groups[(item.run, item.target)][key] = item.annotators
    rows = []
    for (run, target), units in sorted(groups.items(), key=lambda kv: _target_order(kv[0])):
        annotators = sorted({name for labels in units.values() for name in labels})
        pairable = sum(
            1
            for labels in units.values()
            if sum(1 for v in labels.values() if v != stats.UNSURE) >= 2
        )
        rows.append(
            {
                "run": run,
                "target": target,
                "alpha": stats.krippendorff_alpha(units),
                "items": pairable,  # items with two or more yes/no labels (what alpha uses)
                "labelled_items": len(units),
                "annotators": len(annotators),
                "annotator_names": annotators,
                "kappa": stats.pairwise_kappa(units),
            }
        )
    return rows


def disagreement_rows(
    verdicts: Sequence[JudgeVerdict],
    items: dict[Item, ItemLabels],
    references: dict[Item, Reference],
) -> list[dict[str, Any]]:
    """Items where people (annotators and adjudicators) disagree with each other or a
    judge disagrees with the reference, most disputed first: most minority labels (the
    smaller of the yes and no counts among all people), then the closer split, then the
    most judges against the reference."""
    judged: dict[Item, list[JudgeVerdict]] = defaultdict(list)
    for verdict in verdicts:
        if not verdict.excluded and verdict.verdict is not None:
            key = (verdict.run, verdict.generation_id, verdict.target, verdict.item_index)
            judged[key].append(verdict)
    rows: list[dict[str, Any]] = []
    for key, item in items.items():
        votes = Counter([*item.annotators.values(), *item.adjudicators.values()])
        reference = references[key]
        judges = [
            {"judge": v.judge, "metric": v.metric, "verdict": v.verdict, "score": v.score}
            for v in judged.get(key, ())
        ]
        against = (
            0
            if reference.label is None
            else sum(1 for j in judges if j["verdict"] != (reference.label == stats.YES))
        )
        people_disagree = votes["yes"] > 0 and votes["no"] > 0
        if not people_disagree and not against:
            continue
        rows.append(
            {
                "run": item.run,
                "generation_id": item.generation_id,
                "generation": item.generation_key,
                "target": item.target,
                "item": item.item_index,
                "labels": dict(sorted(item.annotators.items())),
                "adjudicated": dict(sorted(item.adjudicators.items())),
                "reference": reference.label,
                "reference_source": reference.source,
                "yes": votes["yes"],
                "no": votes["no"],
                "unsure": votes["unsure"],
                "minority": min(votes["yes"], votes["no"]),
                "judges": judges,
                "judges_against": against,
                "kind": "+".join(
                    name
                    for name, present in (("people", people_disagree), ("judge", against > 0))
                    if present
                ),
            }
        )
    rows.sort(
        key=lambda r: (
            -r["minority"],
            abs(r["yes"] - r["no"]),
            -r["judges_against"],
            r["run"],
            r["generation"],
            r["target"],
            r["item"],
        )
    )
    return rows


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def reference_items(
    labels: Sequence[CurrentLabel],
    verdicts: Sequence[JudgeVerdict],
    adjudicators: Sequence[str] = DEFAULT_ADJUDICATORS,
) -> tuple[dict[Item, ItemLabels], dict[Item, Reference]]:
    """The labelled items and their human reference; labels on items a judge left
    out on purpose, and labels made on an earlier version of the content (until
    re-confirmed), count nowhere."""
    not_scored = {(v.run, v.generation_id, v.target, v.item_index) for v in verdicts if v.excluded}
    labels = [
        label
        for label in labels
        if (label.run, label.generation_id, label.target, label.item_index) not in not_scored
        and not label.stale
    ]
    items = collect_items(labels, adjudicators)
    return items, {key: reference_for(item) for key, item in items.items()}


def compute_report(
    labels: Sequence[CurrentLabel],
    verdicts: Sequence[JudgeVerdict],
    *,
    run: str | None = None,
    adjudicators: Sequence[str] = DEFAULT_ADJUDICATORS,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """The report from current labels and judge verdicts (no database access)."""
    items, references = reference_items(labels, verdicts, adjudicators)
    return {
        "run": run,
        "adjudicators": list(adjudicators),
        "bootstrap": {"resamples": resamples, "seed": seed, "confidence": 0.95},
        "paper": {"source": PAPER_SOURCE, **PAPER_FIGURES},
        "references": _reference_rows(items, references),
        "judges": judge_rows(verdicts, items, references, resamples, seed),
        "agreement": _agreement_rows(items),
        "disagreements": disagreement_rows(verdicts, items, references),
    }


def agreement_report(
    store: Store,
    run: str | None = None,
    *,
    adjudicators: Sequence[str] = DEFAULT_ADJUDICATORS,
    resamples: int = 1000,
    seed: int = 0,
) -> dict[str, Any]:
    """Judge quality and annotator agreement for one run (or every run, each apart).

    Keys: run, adjudicators, bootstrap, paper, references (per run and target: items
    labelled, decided, excluded ties / no votes), judges (per run, target, judge,
    metric: n, accuracy, precision, recall, f1, ci, confusion, excluded, paper,
    threshold advice, calibration: the judge's calibration on these labels, whose
    figures here are then in-sample), agreement (per run and target: alpha, items, annotators,
    pairwise kappa), disagreements (most disputed first).
    """

    if run is not None:
        run_row(store, run)  # a clear error for an unknown run
    report = compute_report(
        current_labels(store, run=run),
        judge_verdicts(store, run=run),
        run=run,
        adjudicators=adjudicators,
        resamples=resamples,
        seed=seed,
    )
    calibrations = {
        judged: judge_calibrations(store, judged) for judged in {r["run"] for r in report["judges"]}
    }
    for row in report["judges"]:
        row["calibration"] = calibrations[row["run"]].get(row["judge"])
    return report


def calibration_of(configs: Sequence[dict[str, Any]], run: str) -> dict[str, Any] | None:
    """The calibration of a judge's configurations on a run (db.case_file.run_judges
    rows of one judge) when it has one configuration there, calibrated on that run's
    labels: its figures measured on those labels again are in-sample."""
    if len(configs) != 1:
        return None
    calibration = (configs[0]["config"] or {}).get("calibration")
    if isinstance(calibration, dict) and calibration.get("run") == run:
        return calibration
    return None


def judge_calibrations(store: Store, run: str) -> dict[str, dict[str, Any]]:
    """Judge -> its calibration on `run`'s labels (see `calibration_of`)."""
    configs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for config in run_judges(store, run):
        configs[config["judge"]].append(config)
    out = {}
    for judge, rows in configs.items():
        calibration = calibration_of(rows, run)
        if calibration is not None:
            out[judge] = calibration
    return out
