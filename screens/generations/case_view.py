"""Case view of the reviewer queue: one flagged generation as a reviewer decides on it.

The output (evidence highlighted as in the generation view: screens.widgets.evidence)
beside the prompt and reference (screens.widgets.reference); below them every judge's
figure with its threshold and provenance (model id and revision, prompt template,
decoding, judge version and config), and the people's side: the review status, the
current human labels with their notes and the case's whole event history. Everything
comes from copyaudit.reports.dossier.build.case_file, the data the dossier is written from.

Keys (screens.keymap: a key that writes is never a moving key anywhere): 1 open,
2 cleared, 3 escalated, 4 needs second look (each one review event, written by the key
handler on the UI thread before the next key is handled); z undoes your decision in
force (a new event restoring the status before it: db.review.undo_review); m types a
note that the next status key stores with its event — moving on (N/P, Esc) stores a
pending note with the status unchanged, so a note is never dropped; N/P the next /
previous case in the queue's order and filter; D exports the dossier (the export
dialog: HTML or Markdown, to a file you name). Human labels are named by their item's
text, not only its number.

The judges' quality against people (a run-level measure: every label and verdict of
the run, bootstrap intervals) is computed in a worker when a case opens, never on the
UI thread; its lines appear under the judge figures when it arrives, and a result for a
case no longer shown is dropped.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from copyaudit.errors import UserError
from copyaudit.items import item_label
from copyaudit.judges.metric_facts import format_metric
from copyaudit.reports.dossier.build import case_file, case_quality
from copyaudit.reports.dossier.model import Dossier, flag_text
from copyaudit.verification.quality import quality_figures, validation_text
from db.browse import GenerationDetail, JudgmentView, detail_from_row
from db.content import EARLIER_VERSION, with_version
from db.events import append_review
from db.review import current_review, undo_review
from screens.app_link import copyaudit_app
from screens.generations.generation_view import generation_title
from screens.line_input import LineInputScreen
from screens.plain import DASH, plain
from screens.state.export_choices import dossier_choice
from screens.state.review_cases import STATUS_NAMES, ReviewPager, status_text
from screens.widgets.evidence import evidence_items, legend, render_output
from screens.widgets.footer import KeysFooter
from screens.widgets.reference import context_text
from screens.widgets.scores import scores_text

if TYPE_CHECKING:
    from screens.destinations import Origin

PANES = ("case-output-pane", "case-context-pane", "case-judges-pane", "case-people-pane")
HEADING = "bold underline"
MEASURING = "measuring the judges against people…"  # while the quality worker runs
QUALITY_FAILED = "could not measure the judges against people"  # the worker raised


def generation_detail_of(case: Dossier) -> GenerationDetail:
    """The case file as the generation view's widgets take it (no second query)."""
    return detail_from_row(
        case.generation,
        payload=case.generation["payload"] or {},
        judgments=[
            JudgmentView(
                judge=j["judge"],
                judge_version=j["judge_version"],
                metric=j["metric"],
                value=j["value"],
                flagged=j["flagged"],
                evidence=j["evidence"],
            )
            for j in case.judgments
        ],
        labels=case.labels,
    )


def _compact(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _section(title: str, first: bool = False) -> Text:
    text = Text("" if first else "\n", end="")
    text.append(title, style=HEADING)
    text.append("\n")
    return text


def _when(created_at: str | None) -> str:
    """'2025-01-02 10:11:12' from a stored ISO time (the dossier has it in full)."""
    return DASH if not created_at else created_at[:19].replace("T", " ")


def _field(name: str, value: object) -> Text:
    text = Text(f"{name}: ", style="dim", end="")
    text.append_text(plain(DASH if value is None or value == "" else value))
    text.append("\n")
    return text


def judges_text(
    case: Dossier, *, measuring: bool = False, quality_failed: str | None = None
) -> Text:
    """Every judge figure with threshold and verdict, the judges' versions and
    configs, and the run's provenance; `measuring`: the quality is still on its way;
    `quality_failed`: why it never came."""
    out = _section("Judge figures", first=True)
    if not case.judgments:
        out.append("not judged\n", style="italic dim")
    elif measuring:
        out.append(f"{MEASURING}\n", style="italic dim")
    elif quality_failed:
        out.append_text(plain(f"{QUALITY_FAILED}: {quality_failed}\n", "italic red"))
    quality = {(q["judge"], q["metric"]): q for q in case.quality}
    for j in case.judgments:
        threshold = j["evidence"].get("threshold")
        out.append_text(plain(f"{j['judge']}/{j['metric']} ", "bold"))
        out.append(format_metric(j["metric"], j["value"]))
        if threshold is not None:
            out.append(f" (threshold {threshold:g}) ", style="dim")
            verdict = flag_text(j["flagged"])
            out.append(
                verdict.upper() if j["flagged"] else verdict, "bold red" if j["flagged"] else ""
            )
        if j["evidence"].get("error"):
            out.append_text(plain(f" error: {j['evidence']['error']}", "red"))
        out.append("\n")
        out.append_text(
            plain(
                f"  judge version {j['judge_version'] or DASH} · config {j['judge_hash']}\n", "dim"
            )
        )
        measured = quality.get((j["judge"], j["metric"]))
        if measured is not None:
            said = measured["basis"]  # "not verified against people (…)" when unverified
            if measured["verified"]:
                said = f"against people: {quality_figures(measured)}, {said}"
            elif measured.get("validation"):
                said = (
                    f"validated on 0 labels of this run; {validation_text(measured['validation'])}"
                )
            out.append_text(plain(f"  {said}\n", "dim"))
    g, template = case.generation, case.template
    out.append_text(_section("Provenance"))
    out.append_text(_field("run", f"{g['run']} ({g['run_status']})"))
    out.append_text(_field("backend", g["backend"]))
    out.append_text(_field("model", g["model"]))
    out.append_text(_field("model revision", g["model_revision"]))
    out.append_text(_field("prompt template", template.get("id")))
    if template.get("note"):
        out.append_text(_field("template note", template["note"]))
    if template.get("description") is not None:
        out.append_text(_field("template", _compact(template["description"])))
    if "unchanged_since_run" in template:
        unchanged = template["unchanged_since_run"]
        state = DASH if unchanged is None else ("yes" if unchanged else "NO: changed since the run")
        out.append_text(_field("templates unchanged since the run", state))
    out.append_text(_field("decoding", _compact(g["decoding"])))
    out.append_text(_field("mitigation", g["mitigation"]))
    out.append_text(_field("run config hash", g["config_hash"]))
    out.append_text(_field("code version", g["code_version"]))
    out.append_text(_field("generated at", g["created_at"]))
    configs = {j["judge_hash"]: (j["judge"], j["judge_config"]) for j in case.judgments}
    if configs:
        out.append_text(_section("Judge configs"))
        for judge_hash, (name, config) in sorted(configs.items(), key=lambda kv: str(kv[0])):
            out.append_text(plain(f"{name} ({judge_hash}): ", "bold"))
            out.append_text(plain(_compact(config)))
            out.append("\n")
    return out


def people_text(case: Dossier) -> Text:
    """The review status, the current human labels with notes, and the case history."""
    review = case.review
    out = _section("Review", first=True)
    out.append_text(status_text(review["status"]))
    if review.get("stale"):
        out.append(f" ({EARLIER_VERSION})", style="italic yellow")
    if review["reviewer"]:
        out.append_text(plain(f" by {review['reviewer']}, {_when(review['created_at'])}"))
    else:
        out.append(" (never reviewed)", style="dim")
    out.append("\n")
    if review["note"]:
        out.append_text(_field("note", review["note"]))
    out.append_text(_section("Human labels (current)"))
    if not case.labels:
        out.append("none\n", style="italic dim")
    payload = case.generation.get("payload") or {}
    for label in case.labels:
        item = item_label(label["target"], label["item_index"], payload)
        line = f"{label['annotator']}: {item} {with_version(label['label'], label.get('stale'))}"
        out.append_text(plain(line))
        if label["note"]:
            out.append_text(plain(f" — {label['note']}", "italic"))
        out.append("\n")
    out.append_text(_section("History (oldest first)"))
    if not case.history:
        out.append("no events\n", style="italic dim")
    for event in case.history:
        out.append_text(plain(f"{_when(event['created_at'])} ", "dim"))
        out.append_text(plain(f"{event['kind']} ", "bold"))
        out.append_text(plain(event["who"]))
        if event["target"] is not None:
            out.append_text(plain(f" {item_label(event['target'], event['item_index'], payload)}"))
        if event["kind"] == "review":
            out.append(" ")
            out.append_text(status_text(event["value"]))
        elif event["value"] is not None:
            out.append_text(plain(f" {event['value']}"))
        if event["note"]:
            out.append_text(plain(f" — {event['note']}", "italic"))
        out.append("\n")
    return out


class QualityMeasured(Message):
    """The judges' quality for the case shown when it was asked (`version`), or why it
    could not be measured (`failed`)."""

    def __init__(
        self, version: int, quality: list[dict[str, Any]], failed: str | None = None
    ) -> None:
        super().__init__()
        self.version = version
        self.quality = quality
        self.failed = failed


class CaseScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="case.back"),
        Binding("1", "set_status('open')", "Open", id="case.open"),
        Binding("2", "set_status('cleared')", "Cleared", id="case.cleared"),
        Binding("3", "set_status('escalated')", "Escalate", id="case.escalated"),
        Binding("4", "set_status('needs_second_look')", "2nd look", id="case.second_look"),
        Binding("z", "undo", "Undo", id="case.undo"),
        Binding("m", "note", "Note", id="case.note"),
        Binding("N", "step(1)", "Next case", id="case.next"),
        Binding("P", "step(-1)", "Prev case", id="case.previous"),
        Binding("D", "dossier", "Dossier", id="case.dossier"),
    ]

    DEFAULT_CSS = """
    CaseScreen #case-status { height: auto; max-height: 2; padding: 0 1; }
    CaseScreen #case-scores { height: auto; max-height: 2; padding: 0 1; }
    CaseScreen #case-legend { height: auto; max-height: 2; padding: 0 1; }
    CaseScreen .case-row { height: 3fr; }
    CaseScreen #case-bottom { height: 2fr; }
    CaseScreen .case-pane { width: 1fr; border: round $primary; padding: 0 1; }
    CaseScreen #case-output-pane { width: 3fr; }
    CaseScreen #case-context-pane { width: 2fr; }
    CaseScreen #case-judges-pane { width: 3fr; border: round $secondary; }
    CaseScreen #case-people-pane { width: 2fr; border: round $secondary; }
    CaseScreen .case-pane:focus { border: round $accent; }
    """

    def __init__(
        self, generation_id: int, pager: ReviewPager, origin: Origin | None = None
    ) -> None:
        super().__init__()
        self.generation_id = generation_id
        self.pager = pager
        self.origin = origin  # the queue screen, told where the cursor should be on return
        self.case: Dossier | None = None
        self.pending_note: str | None = None  # typed with m, stored by the next status key
        self.quality_version = 0  # the case the quality worker's answer must be for
        self.measuring = False
        self.quality_failed: str | None = None  # why the quality worker raised

    def compose(self) -> ComposeResult:
        yield Static(id="case-title", classes="title-bar")
        yield Static(id="case-status")
        yield Static(id="case-scores")
        yield Static(id="case-legend")
        with Horizontal(classes="case-row"):
            with VerticalScroll(id="case-output-pane", classes="case-pane") as pane:
                pane.border_title = "Output"
                yield Static(id="case-output")
            with VerticalScroll(id="case-context-pane", classes="case-pane") as pane:
                pane.border_title = "Prompt & reference"
                yield Static(id="case-context")
        with Horizontal(classes="case-row", id="case-bottom"):
            with VerticalScroll(id="case-judges-pane", classes="case-pane") as pane:
                pane.border_title = "Judges & provenance"
                yield Static(id="case-judges")
            with VerticalScroll(id="case-people-pane", classes="case-pane") as pane:
                pane.border_title = "Review, labels & history"
                yield Static(id="case-people")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.show(self.generation_id)
        self.query_one("#case-output-pane").focus()

    # --- showing a case ----------------------------------------------------------------

    def show(self, generation_id: int, *, keep_scroll: bool = False) -> None:
        app = copyaudit_app(self)
        try:
            case = case_file(app.data.ui, generation_id, quality=False)
        except UserError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        if self.case is not None and generation_id == self.generation_id and keep_scroll:
            # the same case again (sized, or after a decision: people's labels, hence the
            # run's quality, are unchanged): the quality shown, or the one on its way
            case = replace(case, quality=self.case.quality)
        else:
            self._measure_quality(case)
        self.generation_id, self.case = generation_id, case
        detail = generation_detail_of(case)
        self.query_one("#case-title", Static).update(self._title(detail))
        self._show_status()
        self.query_one("#case-scores", Static).update(scores_text(detail.judgments))
        items = evidence_items(detail)
        width = self.query_one("#case-output", Static).content_size.width or None
        output = render_output(detail.output, items, width=width).text
        self.query_one("#case-legend", Static).update(legend(items))
        if width is None and not keep_scroll:
            self.call_after_refresh(self._show_when_sized)
        if not detail.output:
            output = Text("(empty output)", style="italic dim")
        self.query_one("#case-output", Static).update(output)
        self.query_one("#case-context", Static).update(context_text(detail))
        self.query_one("#case-judges", Static).update(
            judges_text(case, measuring=self.measuring, quality_failed=self.quality_failed)
        )
        self.query_one("#case-people", Static).update(people_text(case))
        if not keep_scroll:
            for pane in PANES:
                self.query_one(f"#{pane}", VerticalScroll).scroll_to(y=0, animate=False)

    def _measure_quality(self, case: Dossier) -> None:
        """The judges' quality for `case`, from a worker (QualityMeasured)."""
        self.quality_version += 1
        self.measuring, self.quality_failed = bool(case.judgments), None
        if not self.measuring:
            return
        app = copyaudit_app(self)
        version, run, judgments = self.quality_version, case.generation["run"], case.judgments

        def work() -> None:
            try:
                with app.data.background() as store:
                    quality = case_quality(store, run, judgments)
            except Exception as error:
                self.post_message(QualityMeasured(version, [], f"{type(error).__name__}: {error}"))
                raise  # the app's worker handler reports it too
            self.post_message(QualityMeasured(version, quality))

        app.start_worker(work, group=f"case-quality-{id(self)}", description="measuring the judges")

    def on_quality_measured(self, message: QualityMeasured) -> None:
        if message.version != self.quality_version or self.case is None:
            return  # asked for a case no longer shown
        self.measuring, self.quality_failed = False, message.failed
        self.case = replace(self.case, quality=message.quality)
        self.query_one("#case-judges", Static).update(
            judges_text(self.case, quality_failed=self.quality_failed)
        )

    def _show_when_sized(self) -> None:
        if self.query_one("#case-output", Static).content_size.width:
            self.show(self.generation_id, keep_scroll=True)

    def _title(self, detail: GenerationDetail) -> Text:
        return generation_title(detail, self.pager, counted="case ")

    def _show_status(self) -> None:
        assert self.case is not None
        app = copyaudit_app(self)
        review = self.case.review
        line = Text("Status ", style="bold", end="")
        line.append_text(status_text(review["status"]))
        if review.get("stale"):
            line.append(f" ({EARLIER_VERSION}: set it again)", style="italic yellow")
        if review["reviewer"]:
            line.append_text(plain(f" by {review['reviewer']}"))
        if review["note"]:
            line.append_text(plain(f" · note: {review['note']}", "italic"))
        reviewer = getattr(app, "annotator", None)
        line.append_text(
            plain(f"   · reviewing as {reviewer}" if reviewer else "   · no reviewer name", "dim")
        )
        if self.pending_note is not None:
            line.append(
                "\nnote to store with the next status (1-4; N/P/Esc keep the status): ",
                style="bold yellow",
            )
            line.append_text(plain(self.pending_note, "italic"))
        self.query_one("#case-status", Static).update(line)

    # --- decisions ---------------------------------------------------------------------

    def action_set_status(self, status: str) -> None:
        """One review event, committed here, before the next key is handled."""
        app = copyaudit_app(self)
        reviewer = getattr(app, "annotator", None)
        if self.case is None:
            return
        if not reviewer:
            self.notify(
                "no reviewer name: nothing recorded. Start copyaudit with --annotator NAME "
                "(or give your name when the app asks).",
                severity="error",
                timeout=6,
            )
            return
        note, current = self.pending_note, self.case.review
        if note is None and current["status"] == status and current["reviewer"] == reviewer:
            name = STATUS_NAMES.get(status, status)
            self.notify(f"already {name} by you: nothing recorded", timeout=3, markup=False)
            return
        try:
            append_review(
                app.data.ui,
                generation_id=self.generation_id,
                reviewer=reviewer,
                status=status,
                note=note,
            )
        except UserError as error:
            self.notify(str(error), severity="error", markup=False)
            return
        self.pending_note = None
        self.pager.record_review(
            self.generation_id, current_review(app.data.ui, self.generation_id)
        )
        self.show(self.generation_id, keep_scroll=True)
        saved = f"{self.case.key}: {STATUS_NAMES.get(status, status)}"
        self.notify(saved + (" (with the note)" if note else ""), timeout=3, markup=False)

    def action_undo(self) -> None:
        """Withdraw your decision in force (a new review event restores the status)."""
        app = copyaudit_app(self)
        reviewer = getattr(app, "annotator", None)
        if self.case is None or not reviewer:
            return
        try:
            undone = undo_review(app.data.ui, generation_id=self.generation_id, reviewer=reviewer)
        except UserError as error:  # a read-only store, say
            self.notify(str(error), severity="error", markup=False)
            return
        if undone is None:
            self.notify("no decision of yours in force on this case to undo", timeout=3)
            return
        self.pager.record_review(
            self.generation_id, current_review(app.data.ui, self.generation_id)
        )
        self.show(self.generation_id, keep_scroll=True)
        withdrawn, restored = (STATUS_NAMES.get(s, s) for s in undone)
        self.notify(f"undone: {withdrawn}; the status is {restored} again", timeout=3)

    def action_note(self) -> None:
        """A one-line note, stored with the next status key's review event."""
        if self.case is None:
            return

        def keep(text: str | None) -> None:
            if text is None:
                return
            self.pending_note = text or None
            self._show_status()
            if text:
                self.notify("note kept: press 1-4 to store it with a status", timeout=4)

        self.app.push_screen(
            LineInputScreen(
                "Review note",
                "Stored with the next status you set (1 open, 2 cleared, 3 escalated, "
                "4 needs second look); moving on stores it with the status unchanged.",
                value=self.pending_note or "",
                placeholder="note",
            ),
            keep,
        )

    # --- moving ------------------------------------------------------------------------

    def action_step(self, step: int) -> None:
        app = copyaudit_app(self)
        target = self.pager.neighbour(self.generation_id, step, app.data.ui)
        if target is None:
            self.app.bell()
            self.notify("no more cases in this queue", severity="warning", timeout=2)
            return
        if not self._store_pending_note():
            return
        self.show(target)

    def _store_pending_note(self) -> bool:
        """Store a pending note with the status unchanged (False: it could not be)."""
        if self.pending_note is None or self.case is None:
            return True
        self.action_set_status(self.case.review["status"])
        if self.pending_note is not None:  # not stored (no reviewer name, an error)
            self.notify("the note is still pending: set a status or clear it with m")
            return False
        return True

    def action_back(self) -> None:
        if not self._store_pending_note():
            return
        if self.origin is not None:
            self.origin.focus_generation = self.generation_id
        self.app.pop_screen()

    # --- dossier -----------------------------------------------------------------------

    def action_dossier(self) -> None:
        """D: the export dialog for this case's dossier (HTML or Markdown, where you say)."""
        if self.case is None:
            return
        app = copyaudit_app(self)
        app.export([dossier_choice(self.case.key, self.generation_id)])
