"""Agreement & judge quality: what `copyaudit agreement` reports, from the same function
(copyaudit.verification.agreement.agreement_report, same defaults), computed in a worker.

Tables: judges against the human reference (n, accuracy, precision, recall, F1 with
bootstrap intervals; the highlighted judge's confusion matrix, CopyBench Table 3
figures, threshold advice and what was left out below it), agreement between
annotators (Krippendorff's alpha, pairwise Cohen's kappa, how the reference was
decided), each labelled run's rates as people would give them (judge figure -> PPI++
estimate [95% interval] from a random-sample queue, and the labels still needed:
copyaudit.verification.estimates, computed after the report in the same worker) and
the disagreements, most disputed first. Enter on a disagreement opens the
generation view (n/p walk the disputed generations); `d` adjudicates: annotation mode
on that generation under the adjudicator name the report reads; `c` calibrates the
highlighted score judge on its run's labels (copyaudit judge RUN --calibrate-from-labels:
a new judge configuration, the run re-judged, the cross-validated figures shown)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Static

from copyaudit.errors import UserError
from copyaudit.items import item_number
from copyaudit.render.metrics_format import format_figure
from copyaudit.reports.people import run_people_estimates, summary_lines
from copyaudit.verification.agreement import agreement_report
from copyaudit.verification.calibration import calibrate_run, options_for_run, outcome_lines
from copyaudit.verification.quality import quality_figures
from db.run_owner import owned
from screens.app_link import copyaudit_app
from screens.destinations import Annotation, Generation
from screens.plain import DASH, plain
from screens.state.id_pager import IdPager
from screens.widgets.footer import KeysFooter
from screens.widgets.tables import OpenTable

MAX_DISPUTES_SHOWN = 1000
JUDGE_COLUMNS = (
    ("run", "Run"),
    ("target", "Target"),
    ("judge", "Judge"),
    ("n", "n"),
    ("accuracy", "Accuracy [95% CI]"),
    ("precision", "Precision [CI]"),
    ("recall", "Recall [CI]"),
    ("f1", "F1 [CI]"),
    ("paper", "Paper acc/P/R/F1"),
)
PEOPLE_COLUMNS = (
    ("run", "Run"),
    ("target", "Target"),
    ("alpha", "Kripp. alpha"),
    ("items", "Items"),
    ("annotators", "Annotators"),
    ("decided", "Decided"),
    ("adjudicated", "Adjudicated"),
    ("ties", "Ties"),
    ("no_votes", "No votes"),
    ("kappa", "Cohen kappa (pairs)"),
)
DISPUTE_COLUMNS = (
    ("generation", "Generation"),
    ("target", "Target"),
    ("item", "Item"),
    ("kind", "Between"),
    ("reference", "Reference"),
    ("judges", "Judges"),
    ("labels", "Labels"),
)


num = format_figure  # figures as `copyaudit agreement` prints them


def _bound(value: float) -> str:
    """An interval bound, short: '.87', '1', '0'."""
    text = f"{value:.2f}"
    if text in ("1.00", "0.00", "-0.00"):
        return text[: text.index(".")].replace("-", "")
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) else text


def with_interval(value: float | None, interval: list[float] | None) -> str:
    """'0.918 [.87–.97]': the figure (as the command prints it) and its 95% bootstrap
    interval, bounds to two decimals without the leading zero."""
    if interval is None:
        return num(value)
    return f"{num(value)} [{_bound(interval[0])}–{_bound(interval[1])}]"


def judge_name(row: dict[str, Any]) -> str:
    """The judge, with its metric when the name does not say it ("literal/rougeL")."""
    return row["judge"] if row["judge"] == row["metric"] else f"{row['judge']}/{row['metric']}"


def item_label(row: dict[str, Any]) -> str:
    """Events and characters numbered from 1, as the generation view numbers them."""
    number = item_number(row["target"], row["item"])
    return DASH if number is None else f"#{number}"


def paper_cell(paper: dict[str, float] | None) -> str:
    if not paper:
        return DASH
    return "/".join(f"{paper[m]:.2f}" for m in ("accuracy", "precision", "recall", "f1"))


def confusion_text(row: dict[str, Any]) -> Text:
    """The judge's confusion matrix against the human reference."""
    c = row["confusion"]
    out = Text(end="")
    out.append(f"{'':10}{'people yes':>11}{'people no':>11}\n", style="dim")
    out.append(f"{'judge yes':10}", style="dim")
    out.append(f"{c['tp']:>11}{c['fp']:>11}\n")
    out.append(f"{'judge no':10}", style="dim")
    out.append(f"{c['fn']:>11}{c['tn']:>11}")
    return out


def judge_detail(row: dict[str, Any]) -> Text:
    """The judge, CopyBench's figures, threshold advice and what was left out."""
    out = plain(f"{row['judge']} ({row['metric']})", "bold")
    out.append_text(plain(f" on {row['run']} · {row['target']}", "dim"))
    paper = row.get("paper")
    out.append("\nCopyBench Table 3: ", style="dim")
    if paper:
        figures = ("accuracy", "precision", "recall", "f1")
        out.append(" · ".join(f"{m} {paper[m]:.2f}" for m in figures))
    else:
        out.append("no figure for this target")
    advice = row.get("threshold")
    if advice:
        best = advice.get("best")
        out.append("\nThreshold: ", style="dim")
        out.append(f"current {num(advice.get('current'))}")
        if best:
            out.append(
                f" · best F1 at {num(best['threshold'])} (F1 {num(best['f1'])}, "
                f"P {num(best['precision'])}, R {num(best['recall'])})"
            )
        out.append(f" · {advice['n_scored']} scored")
        if advice.get("note"):
            out.append(" (approximate: see copyaudit agreement)", style="italic dim")
        if advice.get("warning"):
            out.append(f"\nWarning: {advice['warning']}", style="bold yellow")
    calibration = row.get("calibration")
    if calibration:
        out.append("\nCalibrated: ", style="dim")
        out.append_text(
            plain(
                f"{calibration['description']}; figures above in-sample; cross-validated "
                f"{quality_figures({'verified': True, **calibration['cross_validated']})}"
            )
        )
    left = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in row["excluded"].items() if v)
    out.append("\nLeft out: ", style="dim")
    out.append_text(plain(left or "none"))
    return out


class AgreementLoaded(Message):
    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__()
        self.report = report


class EstimatesLoaded(Message):
    """Per labelled run, its people-level estimate lines."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines


class CalibrationDone(Message):
    """A calibration's outcome lines, or the reason it was refused."""

    def __init__(self, lines: list[str], error: str | None = None) -> None:
        super().__init__()
        self.lines = lines
        self.error = error


class AgreementScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="agreement.back"),
        Binding("r", "reload", "Reload", id="agreement.reload"),
        Binding("d", "adjudicate", "Adjudicate", id="agreement.adjudicate"),
        Binding("c", "calibrate", "Calibrate", id="agreement.calibrate"),
    ]
    DEFAULT_CSS = """
    #agreement-status { height: auto; padding: 0 1; }
    #agreement-judges { height: 7; }
    #agreement-detail-row { height: 6; border-top: solid $primary; }
    #agreement-confusion { width: 34; padding: 0 1; }
    #agreement-detail { width: 1fr; padding: 0 1; }
    #agreement-people { height: 5; }
    #agreement-estimates { height: auto; max-height: 6; padding: 0 1; }
    #agreement-disputes { height: 1fr; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.report: dict[str, Any] | None = None
        self.disputes: list[dict[str, Any]] = []
        self.calibration_lines: list[str] = []  # the last calibration's outcome
        self.estimates: list[str] | None = None  # people-level estimate lines, once computed

    def compose(self) -> ComposeResult:
        yield Static(Text("Agreement & judge quality", style="bold"), classes="title-bar")
        yield Static(Text("computing…", style="italic dim"), id="agreement-status")
        yield Static(Text("Judges against people", style="bold"), classes="section")
        judges = OpenTable(id="agreement-judges")
        for key, label in JUDGE_COLUMNS:
            judges.add_column(label, key=key)
        yield judges
        with Horizontal(id="agreement-detail-row"):
            yield Static(id="agreement-confusion")
            yield Static(id="agreement-detail")
        yield Static(
            Text("Rates as people would give them (PPI++, random-sample queues)", style="bold"),
            classes="section",
        )
        yield Static(Text("computing…", style="italic dim"), id="agreement-estimates")
        yield Static(Text("Agreement between annotators", style="bold"), classes="section")
        people = OpenTable(id="agreement-people")
        for key, label in PEOPLE_COLUMNS:
            people.add_column(label, key=key)
        yield people
        yield Static(
            Text("Disagreements, most disputed first (Enter: open · d: adjudicate)", style="bold"),
            classes="section",
        )
        disputes = OpenTable(id="agreement-disputes")
        for key, label in DISPUTE_COLUMNS:
            disputes.add_column(label, key=key)
        yield disputes
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_reload()
        self.query_one("#agreement-disputes").focus()

    def on_screen_resume(self) -> None:
        if self.report is not None:
            self.action_reload()  # labels may have changed in the view

    def action_reload(self) -> None:
        app = copyaudit_app(self)

        def work() -> None:
            with app.data.background() as store:
                report = agreement_report(store)
                self.post_message(AgreementLoaded(report))
                runs = dict.fromkeys(r["run"] for r in report["references"])
                lines = [
                    line
                    for run in runs
                    for line in summary_lines(run, run_people_estimates(store, run))
                ]
            self.post_message(EstimatesLoaded(lines))

        app.start_worker(work, group="agreement", description="computing the agreement report")

    # --- filling ---------------------------------------------------------------------------

    def on_agreement_loaded(self, message: AgreementLoaded) -> None:
        self.report = report = message.report
        self.disputes = report["disagreements"][:MAX_DISPUTES_SHOWN]
        status = Text(end="")
        labelled = sum(r["items"] for r in report["references"])
        boot = report["bootstrap"]
        status.append_text(
            plain(
                f"{labelled} labelled items · reference: label of "
                f"{', '.join(report['adjudicators'])}, else yes/no majority · "
                f"{int(boot['confidence'] * 100)}% CI: bootstrap ×{boot['resamples']}, "
                f"seed {boot['seed']}"
            )
        )
        self.query_one("#agreement-status", Static).update(status)
        self._fill_judges(report["judges"])
        self._fill_people(report)
        self._fill_disputes(report["disagreements"])

    def on_estimates_loaded(self, message: EstimatesLoaded) -> None:
        self.estimates = message.lines
        text = "\n".join(message.lines) or "no labelled run"
        self.query_one("#agreement-estimates", Static).update(plain(text))

    def _fill_judges(self, rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#agreement-judges", DataTable)
        cursor = table.cursor_row
        table.clear()
        for index, row in enumerate(rows):
            table.add_row(
                plain(row["run"]),
                plain(row["target"]),
                plain(judge_name(row)),
                Text(num(row["n"]), justify="right"),
                *(
                    Text(with_interval(row[m], row["ci"][m]))
                    for m in ("accuracy", "precision", "recall", "f1")
                ),
                Text(paper_cell(row["paper"]), style="dim"),
                key=str(index),
            )
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))
            self._show_detail(table.cursor_row)
        else:
            self.query_one("#agreement-detail", Static).update(
                Text("no judge verdict has a human reference yet", style="italic dim")
            )

    def _fill_people(self, report: dict[str, Any]) -> None:
        table = self.query_one("#agreement-people", DataTable)
        table.clear()
        references = {(r["run"], r["target"]): r for r in report["references"]}
        for index, row in enumerate(report["agreement"]):
            ref = references.get((row["run"], row["target"]), {})
            kappa = "; ".join(
                f"{k['a']}–{k['b']}: {num(k['kappa'])} (n={k['n']})" for k in row["kappa"]
            )
            table.add_row(
                plain(row["run"]),
                plain(row["target"]),
                Text(num(row["alpha"]), justify="right"),
                Text(num(row["items"]), justify="right"),
                Text(num(row["annotators"]), justify="right"),
                Text(num(ref.get("decided")), justify="right"),
                Text(num(ref.get("adjudicated")), justify="right"),
                Text(num((ref.get("excluded") or {}).get("tie")), justify="right"),
                Text(num((ref.get("excluded") or {}).get("no_votes")), justify="right"),
                plain(kappa or DASH),
                key=str(index),
            )

    def _fill_disputes(self, all_rows: list[dict[str, Any]]) -> None:
        table = self.query_one("#agreement-disputes", DataTable)
        cursor = table.cursor_row
        table.clear()
        for index, row in enumerate(self.disputes):
            people = {**row["labels"], **row["adjudicated"]}
            judges = ", ".join(
                f"{j['judge']}: {'yes' if j['verdict'] else 'no'}" for j in row["judges"]
            )
            table.add_row(
                plain(row["generation"]),
                plain(row["target"]),
                Text(item_label(row), justify="right"),
                plain(row["kind"]),
                plain(f"{row['reference'] or DASH} ({row['reference_source']})"),
                plain(judges or DASH),
                plain(", ".join(f"{k}: {v}" for k, v in people.items())),
                key=str(index),
            )
        if self.disputes:
            table.move_cursor(row=min(cursor, len(self.disputes) - 1))
        if len(all_rows) > len(self.disputes):
            more = len(all_rows) - len(self.disputes)
            self.notify(f"{more} more disagreements: copyaudit agreement --format json")

    def _show_detail(self, index: int) -> None:
        if self.report is None or not 0 <= index < len(self.report["judges"]):
            return
        row = self.report["judges"][index]
        self.query_one("#agreement-confusion", Static).update(confusion_text(row))
        self.query_one("#agreement-detail", Static).update(judge_detail(row))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "agreement-judges":
            self._show_detail(event.cursor_row)

    # --- opening -----------------------------------------------------------------------

    def _dispute(self) -> dict[str, Any] | None:
        table = self.query_one("#agreement-disputes", DataTable)
        if not self.disputes or not 0 <= table.cursor_row < len(self.disputes):
            self.app.bell()
            return None
        return self.disputes[table.cursor_row]

    def _pager(self) -> IdPager:
        return IdPager([row["generation_id"] for row in self.disputes])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.data_table.id != "agreement-disputes":
            return
        row = self._dispute()
        if row is not None:
            app = copyaudit_app(self)
            app.open(Generation(row["generation_id"], self._pager()))

    def action_adjudicate(self) -> None:
        """Annotation mode on the disputed generation, labelling as the adjudicator."""
        row = self._dispute()
        if row is None or self.report is None:
            return
        adjudicator = self.report["adjudicators"][0]
        app = copyaudit_app(self)

        def start(_: str) -> None:
            destination = Annotation(
                row["generation_id"],
                self._pager(),
                adjudicate_as=adjudicator,
                start_item=f"{row['target']}:{row['item']}",
            )
            app.open(destination)

        app.ensure_annotator(start)

    def action_calibrate(self) -> None:
        """Fit the highlighted judge's threshold to its run's labels and re-judge."""
        table = self.query_one("#agreement-judges", DataTable)
        rows = self.report["judges"] if self.report else []
        if not 0 <= table.cursor_row < len(rows):
            self.app.bell()
            return
        row = rows[table.cursor_row]
        if row.get("threshold") is None:
            self.app.bell()
            self.notify(
                f"{row['judge']} answers yes/no: it has no score threshold to calibrate",
                severity="warning",
                markup=False,
            )
            return
        run, judge = row["run"], row["judge"]
        app = copyaudit_app(self)

        def work() -> None:
            try:
                with app.data.background() as store, owned(store, run, "judge"):
                    options = options_for_run(store, run, judge)
                    outcomes, _ = calibrate_run(store, run, options)
            except UserError as error:
                self.post_message(CalibrationDone([], str(error)))
                return
            self.post_message(
                CalibrationDone([line for o in outcomes for line in outcome_lines(o)])
            )

        self.query_one("#agreement-status", Static).update(
            plain(f"calibrating {judge} on the labels of {run}…", "italic dim")
        )
        app.start_worker(work, group="calibrate", description=f"calibrating {judge}")

    def on_calibration_done(self, message: CalibrationDone) -> None:
        if message.error is not None:
            self.notify(message.error, title="Not calibrated", severity="warning", markup=False)
        else:
            self.notify("\n".join(message.lines), title="Calibrated", timeout=20, markup=False)
        self.calibration_lines = message.lines
        self.action_reload()

    def action_back(self) -> None:
        self.app.pop_screen()
