"""People-level estimates of a run's headline rates: the rate people would give, with a
95% interval, from the judge's verdict on every generation and people's labels on a
random sample (copyaudit.verification.ppi_mean: PPI++).

Per headline rate the judges declare (copyaudit.judges.metric_facts) whose metric is
flagged and has a human label target, per generation with a judge verdict:
- the judge's decision: its stored flag (for a count such as events, the count of items
  it judged copied against its threshold, e.g. ">= 5 events");
- people's decision, on a generation every item of which (every reference event the
  judge counted, or the one refusal / literal item) has a human reference
  (copyaudit.verification.agreement.reference_items: adjudicated, else the majority):
  the same threshold applied to the count of items people said yes to.
Item-level rates (`event_share`, `character_share`): per generation, the share of its
reference items copied, by the judge and by people, averaged over generations.

Only generations in the run's newest queue drawn with known inclusion probabilities
(db.queue_designs: random or stratified) count as labelled: labels made elsewhere (a
reviewer looking at flagged cases, a per-value queue) are never used, and an estimate
that cannot be made says why in `reason`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from copyaudit.items import NUMBERED_TARGETS
from copyaudit.judges.metric_facts import judge_headlines
from copyaudit.metrics_spec import Headline, in_report_order, report_headlines
from copyaudit.verification.agreement import DEFAULT_ADJUDICATORS, reference_items
from copyaudit.verification.ppi_mean import (
    labels_for_half_width,
    more_labels,
    ppi_estimate,
    rogan_gladen,
)
from copyaudit.verification.stats import YES
from db.labels import current_labels, generation_judgments, judge_verdicts
from db.queue_designs import ESTIMATE_DESIGNS
from db.queues import design_queues

if TYPE_CHECKING:
    from db.connection import Store
    from db.labels import JudgeVerdict

MIN_LABELLED = 10  # fewer: the normal-approximation interval is not to be trusted
PLAN_HALF_WIDTH = 0.05  # the planning line's target: +-5 points
NOT_LABELLED = "people do not label"  # the reason of a figure no label checks
CREATE_HINT = "copyaudit queue create NAME --run {run} --design random --size 60"


@dataclass(frozen=True)
class Rate:
    """One estimable rate: its key, the headline it refines, and whether it is the share
    of items copied per generation (item level) or the headline's flag."""

    key: str
    headline: Headline
    item_level: bool = False

    @property
    def target(self) -> str | None:
        return self.headline.of.target


def rates_of(headlines: Sequence[Headline]) -> list[Rate]:
    """The headline rates and, for those counted over reference items, their item-level
    share (derived from the headlines' metrics, never listed by hand)."""
    rates = []
    for headline in headlines:
        rates.append(Rate(headline.key, headline))
        target = headline.of.target
        if target in NUMBERED_TARGETS:
            rates.append(Rate(f"{target}_share", headline, item_level=True))
    return rates


RATES: tuple[Rate, ...] = tuple(rates_of(in_report_order(judge_headlines())))


@dataclass
class _Decisions:
    """Per generation of the run: the judge's value and, where every needed item has a
    human reference, people's value."""

    judge: dict[int, float]
    people: dict[int, float]
    partly: int = 0  # generations with labels on some items only (or ties, unsure)


def _decisions(
    rate: Rate,
    rows: Sequence[Mapping[str, Any]],
    verdicts: Sequence[JudgeVerdict],
    references: Mapping[tuple[str, int, str, int], Any],
    run: str,
) -> _Decisions:
    needed: dict[int, list[JudgeVerdict]] = defaultdict(list)
    for v in verdicts:
        if not v.excluded:
            needed[v.generation_id].append(v)
    judge: dict[int, float] = {}
    people: dict[int, float] = {}
    partly = 0
    for row in rows:
        g = int(row["generation_id"])
        if row["flagged"] is None:
            continue  # the judge failed here: not in the rate's denominator either
        items = needed.get(g, [])
        if rate.item_level:
            if not items:
                continue  # nothing to copy: no share
            judge[g] = sum(bool(v.verdict) for v in items) / len(items)
        else:
            judge[g] = float(row["flagged"])
        refs = [references.get((run, g, v.target, v.item_index)) for v in items]
        if not items or any(r is None or r.label is None for r in refs):
            partly += any(r is not None for r in refs)
            continue
        yes = sum(r is not None and r.label == YES for r in refs)
        if rate.item_level:
            people[g] = yes / len(items)
        elif rate.target in NUMBERED_TARGETS:
            people[g] = float(yes >= float(row["threshold"]))
        else:
            people[g] = float(yes == 1)
    return _Decisions(judge, people, partly)


def _design_text(queue: Mapping[str, Any]) -> str:
    where = f"queue {queue['name']}, seed {queue['seed']}"
    if queue["design"] == "random":
        return f"random sample of {len(queue['items'])} ({where})"
    return (
        f"stratified by {queue['judge']}/{queue['metric']}, {len(queue['items'])} drawn ({where})"
    )


def _planning(result: Any, queue: Mapping[str, Any], labelled: int, n: int) -> dict[str, Any]:
    points = round(PLAN_HALF_WIDTH * 100)
    needed = labels_for_half_width(result, PLAN_HALF_WIDTH)
    more = more_labels(needed, labelled)
    room = len(queue["items"]) - labelled
    if more is None:
        line = (
            f"±{points} points cannot be reached with this run's {n} generations: the "
            "judge's figure over them alone varies more"
        )
    elif needed is not None and needed > n:
        line = (
            f"±{points} points would need about {labelled + more} labelled generations, "
            f"more than this run's {n}"
        )
    elif more == 0:
        line = f"±{points} points reached"
    elif more <= room:
        line = f"label {more} more generations from queue {queue['name']} to reach ±{points} points"
    else:
        line = (
            f"±{points} points needs about {more} more labelled generations; queue "
            f"{queue['name']} has {room} left: draw a larger random queue"
        )
    return {"half_width": PLAN_HALF_WIDTH, "more_labels": more, "line": line}


def estimate_rate(
    rate: Rate,
    decisions: _Decisions,
    queues: Sequence[Mapping[str, Any]],
    run: str,
) -> dict[str, Any]:
    """The estimate of one rate from its decisions and the run's design queues (newest
    first), or {"reason": ...}."""
    if not decisions.judge:
        return {"reason": "the judge gave no verdict on this run"}
    if not queues:
        n_labelled = len(decisions.people)
        hint = f"create one: {CREATE_HINT.format(run=run)}"
        partly = (
            f" ({decisions.partly} more with items not decided: unlabelled, tied or unsure)"
            if decisions.partly
            else ""
        )
        if not n_labelled and not partly:
            return {"reason": f"no labelled generations and no random sample ({hint})"}
        return {
            "reason": f"{n_labelled} labelled generations{partly}, "
            f"none from a random sample ({hint})"
        }
    queue = queues[0]
    sampled = [g for g in queue["items"] if g in decisions.judge]
    labelled = [g for g in sampled if g in decisions.people]
    if len(labelled) < MIN_LABELLED:
        return {
            "reason": f"{len(labelled)} of the {len(sampled)} generations of queue "
            f"{queue['name']} ({queue['design']}) fully labelled; {MIN_LABELLED} needed"
        }
    everything = list(decisions.judge.values())
    y = [decisions.people[g] for g in labelled]
    if len(set(y)) == 1:  # the normal interval would have no width at all
        return {
            "reason": f"people give every one of the {len(y)} labelled generations of queue "
            f"{queue['name']} the same value ({y[0]:.0%}): no interval from so few; label more"
        }
    f = [decisions.judge[g] for g in labelled]
    weights = None
    method = "PPI++ (ppi_py.ppi_mean_ci, power-tuned"
    if queue["design"] == "stratified":
        weights = [1.0 / queue["items"][g] for g in labelled]
        method = "PPI++ weighted by 1/inclusion probability (ppi_py.ppi_mean_ci, power-tuned"
    result = ppi_estimate(y, f, everything, weights)
    out: dict[str, Any] = {
        "estimate": result.estimate,
        "ci": [result.ci[0], result.ci[1]],
        "n_labelled": len(labelled),
        "n": len(everything),
        "method": f"{method} λ {result.lam:.2f}, 95%)",
        "design": _design_text(queue),
        "judge_rate": sum(everything) / len(everything),
        "planning": _planning(result, queue, len(labelled), len(everything)),
    }
    if not rate.item_level:
        corrected = rogan_gladen(y, f, everything, weights)
        if corrected is not None:
            inside = result.ci[0] <= corrected["estimate"] <= result.ci[1]
            corrected["within_ppi_interval"] = inside
        out["rogan_gladen"] = corrected
    return out


def _one_judge(rows: Sequence[Mapping[str, Any]]) -> str | None:
    judges = sorted({r["judge"] for r in rows})
    return judges[0] if len(judges) == 1 else None


def people_estimates(
    store: Store, run: str, kind: str, judged: Mapping[str, int]
) -> dict[str, dict[str, Any]]:
    """Rate key -> its people-level estimate (see estimate_rate) for the rates a `kind`
    run's report shows (`judged`: metric -> judgments, as report_headlines takes)."""
    rates = rates_of(report_headlines(kind, judged, in_report_order(judge_headlines())))
    if not rates:
        return {}
    verdicts = judge_verdicts(store, run=run)
    _, references = reference_items(current_labels(store, run=run), verdicts, DEFAULT_ADJUDICATORS)
    queues = design_queues(store, run, ESTIMATE_DESIGNS)
    out: dict[str, dict[str, Any]] = {}
    for rate in rates:
        metric = rate.headline.of
        if metric.summary != "flagged" or rate.target is None:
            out[rate.key] = {"reason": f"{NOT_LABELLED} {metric.label}"}
            continue
        rows = generation_judgments(store, run, metric.name)
        judge = _one_judge(rows)
        if rows and judge is None:
            names = ", ".join(sorted({r["judge"] for r in rows}))
            out[rate.key] = {"reason": f"several judges give {metric.name} ({names})"}
            continue
        mine = [v for v in verdicts if v.metric == metric.name and v.judge == judge]
        decisions = _decisions(rate, rows, mine, references, run)
        out[rate.key] = estimate_rate(rate, decisions, queues, run)
    return out
