"""Human-verification commands: agreement, import-labels, queue, annotator."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from copyaudit.anchors import anchor_markdown
from copyaudit.cli.options import POSITIVE_INT, SEED, FiniteFloat, skip_invalid_option
from copyaudit.cli.output import echo, echo_skipped, echo_warnings, print_json, print_table
from copyaudit.errors import UserError
from copyaudit.identity import config_path, resolve_annotator
from copyaudit.items import item_number
from copyaudit.render.markdown import table
from copyaudit.render.metrics_format import format_figure
from copyaudit.reports.anchor import current_anchor
from copyaudit.reports.people import rate_label, run_people_estimates
from copyaudit.verification.agreement import agreement_report
from copyaudit.verification.estimates import NOT_LABELLED
from copyaudit.verification.label_files import fold_label_file
from copyaudit.verification.quality import quality_figures
from db.content import EARLIER_VERSION
from db.labels import current_labels, import_labels
from db.queue_designs import (
    DESIGNS,
    ESTIMATE_DESIGNS,
    MAX_PER_VALUE,
    MAX_SIZE,
    MIN_BIN_WIDTH,
    NOT_FOR_ESTIMATES,
)
from db.queues import create_queue, list_queues, queue_info, queue_item_rows

if TYPE_CHECKING:
    from copyaudit.cli.main import AppContext
    from db.connection import Store

MAX_DISAGREEMENTS_SHOWN = 20
MAX_STRATA_SHOWN = 12


# ---------------------------------------------------------------------------
# agreement
# ---------------------------------------------------------------------------


_num = format_figure


def _with_interval(value: float | None, interval: list[float] | None) -> str:
    if interval is None:
        return _num(value)
    return f"{_num(value)} [{interval[0]:.2f}, {interval[1]:.2f}]"


def render_markdown(
    report: dict[str, Any], max_disagreements: int = MAX_DISAGREEMENTS_SHOWN
) -> str:
    """The agreement report as Markdown (the same numbers as --format json)."""
    boot = report["bootstrap"]
    out = [
        f"# Judge quality against human labels{' — run ' + report['run'] if report['run'] else ''}",
        "",
        f"Reference: adjudicated label ({', '.join(report['adjudicators'])}) where there is "
        "one, else the majority of yes/no labels (unsure does not vote; ties left out). "
        f"Intervals: {int(boot['confidence'] * 100)}% percentile bootstrap, "
        f"{boot['resamples']} resamples, seed {boot['seed']}.",
        "",
        "## Judges",
        "",
    ]
    judge_rows = []
    for j in report["judges"]:
        judge_rows.append(
            [
                j["run"],
                j["target"],
                f"{j['judge']} ({j['metric']})",
                j["n"],
                *(_with_interval(j[m], j["ci"][m]) for m in ("accuracy", "precision")),
                *(_with_interval(j[m], j["ci"][m]) for m in ("recall", "f1")),
                "/".join(str(j["confusion"][k]) for k in ("tp", "fp", "fn", "tn")),
                ", ".join(f"{k} {v}" for k, v in j["excluded"].items() if v) or "—",
            ]
        )
    header = ["run", "target", "judge", "n", "accuracy", "precision", "recall", "F1"]
    out += table([*header, "tp/fp/fn/tn", "left out"], judge_rows) if judge_rows else ["none"]
    for j in report["judges"]:
        calibration = j.get("calibration")
        if calibration:
            held_out = quality_figures({"verified": True, **calibration["cross_validated"]})
            out.append(
                f"\n{j['judge']} on {j['run']} is {calibration['description']}: its figures "
                f"above are in-sample; cross-validated ({calibration['folds']} folds by story): "
                f"{held_out}."
            )
    paper = report["paper"]
    out += ["", f"Paper figures ({paper['source']}):", ""]
    out += table(
        ["target", "accuracy", "precision", "recall", "F1"],
        [
            [t, *(_num(paper[t][m]) for m in ("accuracy", "precision", "recall", "f1"))]
            for t in ("event", "character")
        ],
    )
    advice = [j for j in report["judges"] if j["threshold"] and j["threshold"]["best"]]
    if advice:
        out += ["", "## Threshold advice (best F1 against the reference)", ""]
        out += table(
            ["run", "target", "judge", "current", "best", "F1 at best", "P", "R", "scored"],
            [
                [
                    j["run"],
                    j["target"],
                    j["judge"],
                    _num(j["threshold"]["current"]),
                    _num(j["threshold"]["best"]["threshold"]),
                    _num(j["threshold"]["best"]["f1"]),
                    _num(j["threshold"]["best"]["precision"]),
                    _num(j["threshold"]["best"]["recall"]),
                    j["threshold"]["n_scored"],
                ]
                for j in advice
            ],
        )
        notes = {j["threshold"].get("note") for j in advice} - {None}
        out += [f"\nNote: {note}." for note in sorted(notes)]
        out += [
            f"\n**Warning** ({j['run']}, {j['judge']}): {j['threshold']['warning']}."
            for j in advice
            if j["threshold"].get("warning")
        ]
        out.append(
            "\nIn-sample: the best threshold is fitted and measured on the same labels. "
            "`copyaudit judge RUN --calibrate-from-labels` fits it with cross-validation "
            "and re-judges the run."
        )
    out += ["", "## Human reference", ""]
    out += table(
        ["run", "target", "items", "decided", "adjudicated", "overridden", "ties", "no votes"],
        [
            [
                r["run"],
                r["target"],
                r["items"],
                r["decided"],
                r["adjudicated"],
                r["overridden"],
                r["excluded"]["tie"],
                r["excluded"]["no_votes"],
            ]
            for r in report["references"]
        ],
    )
    out += ["", "## Agreement between annotators", ""]
    out += table(
        ["run", "target", "Krippendorff alpha", "items", "annotators", "Cohen kappa (pairs)"],
        [
            [
                a["run"],
                a["target"],
                _num(a["alpha"]),
                a["items"],
                a["annotators"],
                "; ".join(f"{k['a']}–{k['b']}: {_num(k['kappa'])} (n={k['n']})" for k in a["kappa"])
                or "—",
            ]
            for a in report["agreement"]
        ],
    )
    rows = report["disagreements"]
    out += ["", f"## Disagreements ({len(rows)}, most disputed first)", ""]
    out += table(
        ["generation", "target", "item", "labels", "reference", "judges", "kind"],
        [
            [
                d["generation"],
                d["target"],
                item_number(d["target"], d["item"]) or "—",
                ", ".join(f"{k}: {v}" for k, v in {**d["labels"], **d["adjudicated"]}.items()),
                f"{d['reference'] or '—'} ({d['reference_source']})",
                ", ".join(f"{j['judge']}: {'yes' if j['verdict'] else 'no'}" for j in d["judges"])
                or "—",
                d["kind"],
            ]
            for d in rows[:max_disagreements]
        ],
    )
    if len(rows) > max_disagreements:
        out.append(f"\n… {len(rows) - max_disagreements} more (see --format json)")
    return "\n".join(out) + "\n"


@click.command("agreement")
@click.option("--run", "run_name", help="Only this run (default: every run, each apart).")
@click.option("--format", "fmt", type=click.Choice(["md", "json"]), default="md", show_default=True)
@click.option(
    "--adjudicator",
    "adjudicators",
    multiple=True,
    default=("adjudicator",),
    show_default=True,
    help="Annotator name whose labels override the majority (repeatable).",
)
@click.option("--resamples", type=POSITIVE_INT, default=1000, show_default=True)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Bootstrap seed.")
@click.pass_obj
def agreement_cmd(
    obj: AppContext,
    run_name: str | None,
    fmt: str,
    adjudicators: tuple[str, ...],
    resamples: int,
    seed: int,
) -> None:
    """Judges' accuracy, precision, recall and F1 against human labels (with bootstrap
    intervals and CopyBench's figures), agreement between annotators, threshold advice
    and the most disputed items."""

    with obj.store(read_only=True) as store:
        report = agreement_report(
            store, run_name, adjudicators=adjudicators, resamples=resamples, seed=seed
        )
        earlier = sum(label.stale for label in current_labels(store, run=run_name))
        report["anchor"] = current_anchor(store)  # the audit chains' heads, as in report
    if fmt == "json":
        print_json(report)
    else:
        echo(render_markdown(report), nl=False)
        echo("\n" + "\n".join(anchor_markdown(report["anchor"])))
        if earlier:  # left out of every figure above: say so
            echo(
                f"\n{earlier} current label(s) {EARLIER_VERSION} of their content (a "
                "--replace changed it) are left out until labelled again.\n"
            )


# ---------------------------------------------------------------------------
# import-labels
# ---------------------------------------------------------------------------


@click.command("import-labels")
@click.argument("file", type=click.Path(path_type=Path))
@skip_invalid_option("list the unusable ones on standard error")
@click.pass_obj
def import_labels_cmd(obj: AppContext, file: Path, skip_invalid: bool) -> None:
    """Import human labels (JSONL {annotator, generation: run/case_id/template, target,
    index, label[, note]}, or a file written by `export labels`: each event keeps its uuid
    and time). All or nothing; an event already here (same uuid) or a label equal to the
    annotator's current one is skipped, so re-importing adds nothing."""

    folded = fold_label_file(file, skip_invalid=skip_invalid)  # checked before any write
    echo_warnings(file, folded.warnings)
    with obj.store() as store:
        summary = import_labels(store, folded.current())  # the file is read again
    click.echo(
        f"{file}: {summary.added} labels added, {summary.unchanged} unchanged "
        f"({folded.records} records, {len(folded)} current labels"
        + (f"; {len(folded.problems)} of {folded.total} records skipped" if folded.problems else "")
        + ")"
    )
    echo_skipped(folded.problems)


# ---------------------------------------------------------------------------
# queue
# ---------------------------------------------------------------------------


@click.group("queue")
def queue_group() -> None:
    """Work queues: stratified samples of a run's generations to label."""


@queue_group.command("create")
@click.argument("name")
@click.option("--run", "run_name", required=True, help="Run to sample generations from.")
@click.option(
    "--design",
    type=click.Choice(DESIGNS),
    default="per-value",
    show_default=True,
    help="per-value: up to --per-value generations per value of --metric (judge quality, "
    "not valid for estimates); random: --size generations uniformly; stratified: --size "
    "split equally over the --metric judge's verdicts (or --bin-width bins), weighted back.",
)
@click.option(
    "--size",
    type=click.IntRange(1, MAX_SIZE),
    help="Generations to draw (--design random or stratified).",
)
@click.option("--metric", default="events", show_default=True, help="Judge metric to stratify by.")
@click.option("--judge", help="Judge of the metric, when several produce it.")
@click.option(
    "--per-value",
    type=click.IntRange(1, MAX_PER_VALUE),
    default=10,
    show_default=True,
    help="Generations drawn per metric value (CopyBench drew 10 per events count).",
)
@click.option("--seed", type=SEED, default=0, show_default=True, help="Sampling seed (stored).")
@click.option(
    "--bin-width",
    type=FiniteFloat(min=MIN_BIN_WIDTH),
    help="Group a continuous metric into bins of this width (e.g. 0.1 for rougeL).",
)
@click.pass_obj
def queue_create_cmd(
    obj: AppContext,
    name: str,
    run_name: str,
    design: str,
    size: int | None,
    metric: str,
    judge: str | None,
    per_value: int,
    seed: int,
    bin_width: float | None,
) -> None:
    """Create queue NAME: generations of RUN drawn by --design (default: up to
    --per-value generations per value of --metric)."""

    if design == "per-value" and size is not None:
        raise UserError(
            "--size applies to --design random or stratified (per-value draws "
            "--per-value generations per value)"
        )
    if design != "per-value" and size is None:
        raise UserError(f"--design {design} needs --size (the generations to draw)")
    with obj.store() as store:
        summary = create_queue(
            store,
            name,
            run=run_name,
            metric=metric,
            judge=judge,
            per_value=per_value,
            seed=seed,
            bin_width=bin_width,
            design=design,
            size=size,
        )
    if design == "random":
        click.echo(
            f"queue {summary.name}: {summary.items} generations of {summary.run} drawn at "
            f"random (design random, size {size}); seed {seed}"
        )
        return
    shown = list(summary.strata.items())
    strata = ", ".join(f"{value:g}: {count}" for value, count in shown[:MAX_STRATA_SHOWN])
    if len(shown) > MAX_STRATA_SHOWN:
        strata += f", … {len(shown)} values in all"
    click.echo(
        f"queue {summary.name}: {summary.items} generations of {summary.run} by "
        f"{summary.judge}/{summary.metric} ({strata}); seed {seed}"
        + (f"; {summary.unscored} without a value left out" if summary.unscored else "")
        if design == "per-value"
        else f"queue {summary.name}: {summary.items} generations of {summary.run} stratified "
        f"by {summary.judge}/{summary.metric} (stratum: drawn {strata}; -1: no verdict); "
        f"seed {seed}"
    )
    if design == "per-value":
        click.echo(f"note: {NOT_FOR_ESTIMATES} (use --design random)", err=True)
    if bin_width is None and len(shown) > MAX_STRATA_SHOWN:
        click.echo(
            f"note: {len(shown)} distinct values of {summary.metric}; for a continuous "
            "metric, --bin-width groups them (e.g. 0.1)",
            err=True,
        )


def _sampling(queue: dict[str, Any]) -> str:
    """How a queue was drawn, in a few words."""
    bins = f" (bins {queue['bin_width']:g})" if queue["bin_width"] else ""
    seed = f", seed {queue['seed']}"
    if queue["design"] == "random":
        return f"random, size {queue['size']}{seed}"
    if queue["design"] == "stratified":
        return f"stratified by {queue['judge']}/{queue['metric']}{bins}, size {queue['size']}{seed}"
    return f"{queue['judge']}/{queue['metric']} ≤{queue['per_value']} per value{bins}{seed}"


@queue_group.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
def queue_list_cmd(obj: AppContext, fmt: str) -> None:
    """Queues with each annotator's progress: generations labelled (any label) and
    complete (every judged item labelled) out of the total."""

    with obj.store(read_only=True) as store:
        queues = list_queues(store)
    if fmt == "json":
        print_json(queues)
        return
    for queue in queues:
        queue["sampling"] = _sampling(queue)
        queue["annotators"] = (
            "; ".join(
                f"{p['annotator']} {p['labelled']}/{p['total']} ({p['complete']} complete)"
                for p in queue["progress"]
            )
            or "nobody yet"
        )
    print_table(queues, ["name", "run", "items", "sampling", "annotators"], "Queues")


@queue_group.command("show")
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table")
@click.pass_obj
def queue_show_cmd(obj: AppContext, name: str, fmt: str) -> None:
    """The generations of queue NAME in labelling order, with its design and seed."""

    with obj.store(read_only=True) as store:
        info = queue_info(store, name)
        rows = queue_item_rows(store, name)
        info["valid_for_estimates"] = info["design"] in ESTIMATE_DESIGNS
        planning = queue_planning(store, info) if info["valid_for_estimates"] else {}
    if fmt == "json":
        print_json(
            {
                **info,
                "planning": planning,
                "generations": [r["generation"] for r in rows],
                "items": rows,
            }
        )
        return
    click.echo(
        f"design {info['design']}, seed {info['seed']}"
        + (f", size {info['size']}" if info["size"] is not None else "")
        + ("" if info["valid_for_estimates"] else f" ({NOT_FOR_ESTIMATES})")
    )
    print_table(rows, ["position", "generation", "stratum", "inclusion_prob"], f"Queue {name}")
    for key, line in planning.items():
        click.echo(f"{rate_label(key)}: {line}")


def queue_planning(store: Store, info: dict[str, Any]) -> dict[str, str]:
    """Rate key -> the planning line of the run's estimates made from this queue, or
    why there is none (the estimates use the run's newest random or stratified queue)."""
    estimates = run_people_estimates(store, info["run"])
    mine = f"(queue {info['name']}, "
    return {
        key: estimate["planning"]["line"]
        if mine in estimate.get("design", "")
        else estimate.get("reason", f"estimated from another queue: {estimate.get('design')}")
        for key, estimate in estimates.items()
        if not estimate.get("reason", "").startswith(NOT_LABELLED)
    }


# ---------------------------------------------------------------------------
# annotator
# ---------------------------------------------------------------------------


@click.command("annotator")
@click.argument("name", required=False)
@click.pass_obj
def annotator_cmd(obj: AppContext, name: str | None) -> None:
    """Show the remembered annotator name, or remember NAME (or the global --annotator)
    as the name stored with the labels you make."""

    current = resolve_annotator(name or getattr(obj, "annotator", None))
    if current is None:
        click.echo("no annotator remembered (give one: copyaudit annotator NAME)")
    else:
        click.echo(f"annotator: {current} (remembered in {config_path()})")


def register(group: click.Group) -> None:
    for command in (agreement_cmd, import_labels_cmd, queue_group, annotator_cmd):
        group.add_command(command)
