"""The people-level estimates of a run report (copyaudit.verification.estimates) in
words: one plain line per rate, for Markdown, HTML, comparisons, dossiers and screens."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from copyaudit.render.text import DASH, headline_text, percent
from copyaudit.verification.estimates import NOT_LABELLED, RATES, people_estimates
from db.case_file import run_judges
from db.queries import run_overview

if TYPE_CHECKING:
    from db.connection import Store

RATE = {rate.key: rate for rate in RATES}
PEOPLE_TITLE = "The run's rates as people would give them (estimated)"


def rate_label(key: str) -> str:
    """A rate's column title, or for an item-level share "share of reference events"."""
    rate = RATE.get(key)
    if rate is None:
        return key
    if rate.item_level:
        return f"share of reference {rate.target}s copied"
    return rate.headline.column


def judge_text(key: str, report: Mapping[str, Any]) -> str:
    """The judge's own figure for a rate, as the report prints it."""
    rate = RATE.get(key)
    estimate = (report.get("people_estimates") or {}).get(key) or {}
    if rate is not None and not rate.item_level and key in report:
        return headline_text(rate.headline, report[key])
    return percent(estimate["judge_rate"]) if "judge_rate" in estimate else DASH


def estimate_text(judge: str, estimate: Mapping[str, Any]) -> str:
    """ "judge: 54.5% · people, estimated from 20 labelled of 60: 38% [24–52%]", or the
    judge's figure and why there is no estimate."""
    if "reason" in estimate:
        return f"judge: {judge} · people: no estimate ({estimate['reason']})"
    low, high = estimate["ci"]
    return (
        f"judge: {judge} · people, estimated from {estimate['n_labelled']} labelled of "
        f"{estimate['n']}: {estimate['estimate']:.0%} [{low * 100:.0f}–{high * 100:.0f}%]"
    )


def people_line(key: str, report: Mapping[str, Any], planning: bool = True) -> str:
    """One rate's line: its label, the judge's figure, the estimate (or the reason), the
    Rogan–Gladen correction beside it and, with `planning`, the labels still needed."""
    estimate = report["people_estimates"][key]
    line = f"{rate_label(key)}: {estimate_text(judge_text(key, report), estimate)}"
    corrected = estimate.get("rogan_gladen")
    if corrected:
        where = "inside" if corrected["within_ppi_interval"] else "outside"
        line += f" (Rogan–Gladen: {corrected['estimate']:.0%}, {where} the interval)"
    if planning and "planning" in estimate:
        line += f"; {estimate['planning']['line']}"
    return line


def people_markdown(report: Mapping[str, Any]) -> list[str]:
    """The section of a run report (none when the run has no rates)."""
    estimates = report.get("people_estimates") or {}
    if not estimates:
        return []
    method = next((e["method"] for e in estimates.values() if "method" in e), None)
    lines = ["", f"## {PEOPLE_TITLE}", ""]
    lines += [f"- {people_line(key, report)}" for key in estimates]
    if method:
        lines += ["", "95% intervals by prediction-powered inference (PPI++) on a random sample."]
    return lines


def run_people_estimates(store: Store, run: str, kind: str | None = None) -> dict[str, Any]:
    """A run's people_estimates without its whole report (the judged metrics read from
    its judge configurations; `kind` looked up when not given)."""
    if kind is None:
        kind = run_overview(store, run).get("kind") or ""
    judged = {m: 1 for config in run_judges(store, run) for m in config["metrics"]}
    return people_estimates(store, run, kind, judged)


def run_people_lines(store: Store, run: str, kind: str | None = None) -> list[str]:
    """A run's people lines (a dossier's run summary): the judge's figure is its rate
    over the generations it judged."""
    report = {"people_estimates": run_people_estimates(store, run, kind)}
    return [people_line(key, report) for key in report["people_estimates"]]


def arrow_text(key: str, estimate: Mapping[str, Any]) -> str:
    """ "events % 22.7% → 53% [27–79%] (11 of 22 labelled)": the judge's rate, then
    people's estimated rate and interval (for a screen's narrow lines)."""
    low, high = estimate["ci"]
    return (
        f"{rate_label(key)} {percent(estimate['judge_rate'])} → {estimate['estimate']:.0%} "
        f"[{low * 100:.0f}–{high * 100:.0f}%] ({estimate['n_labelled']} of {estimate['n']} "
        "labelled)"
    )


def summary_lines(run: str, estimates: Mapping[str, Any]) -> list[str]:
    """For a screen: the run's estimated rates on one line (judge → people [interval])
    and the planning line of its first, or one line saying why the run has none."""
    made = {k: e for k, e in estimates.items() if "reason" not in e}
    if made:
        first = next(iter(made))
        return [
            f"{run}: " + " · ".join(arrow_text(k, e) for k, e in made.items()),
            f"  {rate_label(first)}: {made[first]['planning']['line']}",
        ]
    reasons = [e["reason"] for e in estimates.values() if not e["reason"].startswith(NOT_LABELLED)]
    return [f"{run}: no estimate ({reasons[0] if reasons else 'no rate people label'})"]
