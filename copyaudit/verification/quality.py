"""Each judge figure's measured quality against people, for reports, dossiers and screens.

For every (judge, metric) that scored a run and is a headline figure or has a human
label target: precision, recall and F1 against the human reference (n and 95% bootstrap
intervals, as `copyaudit agreement` computes them) when people labelled its items, else
"not verified against people". A judge calibrated on this run's labels is shown with its
cross-validated figures (its threshold was fitted on those labels, so measuring it on
them again would be the in-sample figure).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from copyaudit.judges.metric_facts import judge_headlines
from copyaudit.judges.metric_facts import metric as declared_metric
from copyaudit.judges.validation_figures import baseline_f1, figures_for_config
from copyaudit.render.metrics_format import format_figure
from copyaudit.verification.agreement import (
    DEFAULT_ADJUDICATORS,
    calibration_of,
    judge_rows,
    reference_items,
)
from db.case_file import run_judges
from db.labels import current_labels, judge_verdicts

if TYPE_CHECKING:
    from db.connection import Store

NOT_VERIFIED = "not verified against people"
FIGURES = ("n", "accuracy", "precision", "recall", "f1", "ci")


def judge_quality(
    store: Store, run: str, *, resamples: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """One entry per (judge, metric) of the run that is a judge figure: judge, metric,
    target, verified, basis and, when verified, n, accuracy, precision, recall, f1, ci."""
    labels = current_labels(store, run=run)
    # only labelled generations' verdicts can be measured: the rest are not read at all
    verdicts = judge_verdicts(store, run=run, generation_ids={x.generation_id for x in labels})
    items, references = reference_items(labels, verdicts, DEFAULT_ADJUDICATORS)
    measured = {
        (row["judge"], row["metric"]): row
        for row in judge_rows(verdicts, items, references, resamples, seed)
        if row["n"]
    }
    headline_metrics = {h.metric for h in judge_headlines()}
    configs: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for config in run_judges(store, run):
        configs[config["judge"]].append(config)
    out = []
    for judge, rows in configs.items():
        calibration = calibration_of(rows, run)
        for metric in sorted({m for row in rows for m in row["metrics"]}):
            known = declared_metric(metric)
            target = known.target if known else None
            if target is None and metric not in headline_metrics:
                continue
            entry: dict[str, Any] = {"judge": judge, "metric": metric, "target": target}
            if calibration is not None and target is not None:
                cross = calibration["cross_validated"]
                entry |= {"verified": True, **{k: cross[k] for k in FIGURES}}
                entry["basis"] = (
                    f"cross-validated ({calibration['folds']} folds by story): "
                    f"{calibration['description']}"
                )
            elif (judge, metric) in measured:
                row = measured[(judge, metric)]
                entry |= {"verified": True, **{k: row[k] for k in FIGURES}}
                entry["basis"] = "against people's labels"
            else:
                reason = "no labels" if target else "no human label for this metric"
                entry |= {"verified": False, "basis": f"{NOT_VERIFIED} ({reason})"}
                shipped = _shipped(judge, rows[0]) if target and len(rows) == 1 else None
                if shipped is not None:
                    entry["validation"] = shipped
            out.append(entry)
    return out


def _shipped(judge: str, config: dict[str, Any]) -> dict[str, Any] | None:
    """The judge's figures on the shipped validation set, when this run's configuration
    is the one measured there (copyaudit.judges.validation_figures)."""
    found = figures_for_config(judge, config["version"], config["config"])
    if found is None:
        return None
    keep = ("f1", "precision", "recall", "auc", "n_pairs", "n_stories", "ci")
    return {k: found.get(k) for k in keep} | {"always_yes_f1": baseline_f1()}


def _with_interval(value: float | None, interval: list[float] | None) -> str:
    if interval is None:
        return format_figure(value)
    return f"{format_figure(value)} [{interval[0]:.2f}–{interval[1]:.2f}]"


def quality_figures(entry: dict[str, Any]) -> str:
    """ "P 0.750 [0.40–1.00] · R … · F1 … (n 12)", or "not verified against people"."""
    if not entry["verified"]:
        return NOT_VERIFIED
    parts = [
        f"{short} {_with_interval(entry[name], entry['ci'].get(name))}"
        for name, short in (("precision", "P"), ("recall", "R"), ("f1", "F1"))
    ]
    return " · ".join(parts) + f" (n {entry['n']})"


def quality_line(entry: dict[str, Any]) -> str:
    """One judge figure's quality in a sentence, for Markdown, HTML and the screens."""
    name = quality_name(entry)
    if not entry["verified"]:
        shipped = entry.get("validation")
        if shipped:
            return f"{name}: validated on 0 labels of this run; {validation_text(shipped)}"
        return f"{name}: {entry['basis']}"
    return f"{name}: {quality_figures(entry)}, {entry['basis']}"


def validation_text(shipped: dict[str, Any]) -> str:
    """ "on the shipped validation set F1 0.700 [0.54–0.81] (336 pairs, 20 stories;
    always yes 0.590)": a judge's figure on data it was not designed on."""
    f1 = _with_interval(shipped["f1"], (shipped.get("ci") or {}).get("f1"))
    text = f"on the shipped validation set F1 {f1} ({shipped['n_pairs']} pairs, "
    text += f"{shipped['n_stories']} stories"
    if shipped.get("always_yes_f1") is not None:
        text += f"; always yes {format_figure(shipped['always_yes_f1'])}"
    return text + ")"


def quality_brief(entry: dict[str, Any]) -> str:
    """quality_line without intervals, for a screen's one line: "events: F1 0.620 on 40
    labelled items of this run" or "events: 0 labels of this run; F1 0.700 on the
    shipped validation set (always yes 0.588)"."""
    name = quality_name(entry)
    if entry["verified"]:
        return f"{name}: F1 {format_figure(entry['f1'])} on {entry['n']} labelled items"
    shipped = entry.get("validation")
    if not shipped:
        return f"{name}: {NOT_VERIFIED}"
    text = f"{name}: 0 labels of this run; F1 {format_figure(shipped['f1'])} on the shipped "
    text += "validation set"
    if shipped.get("always_yes_f1") is not None:
        text += f" (always yes {format_figure(shipped['always_yes_f1'])})"
    return text


def quality_name(entry: dict[str, Any]) -> str:
    """ "events" for a judge named after its metric, else "judge/metric"."""
    return (
        entry["judge"]
        if entry["judge"] == entry["metric"]
        else (f"{entry['judge']}/{entry['metric']}")
    )
