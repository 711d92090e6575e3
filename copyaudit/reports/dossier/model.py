"""The case dossier as data: what the builder gathers and the renderers write."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from copyaudit.judges.metric_facts import format_metric
from copyaudit.render.highlight import Segment
from copyaudit.reports.dossier.glossary import glossary
from copyaudit.reports.dossier.traced import TracedRow
from copyaudit.reports.dossier.verbatim import VerbatimRun, verbatim_sentence
from copyaudit.reports.pz_window import PzWindow
from copyaudit.timestamps import utc_text


@dataclass(frozen=True)
class ReferenceBlock:
    title: str
    segments: list[Segment]


@dataclass
class Dossier:
    key: str
    generation: dict[str, Any]  # db.case_file.generation_record
    prompt: str
    prompt_note: str | None  # set when the prompt shown is not the generation's own
    output: list[Segment]
    reference: list[ReferenceBlock]
    items: list[dict[str, Any]]  # per labelled/judged item: verdicts and human labels
    judgments: list[dict[str, Any]]  # db.case_file.judgments_with_provenance
    template: dict[str, Any]
    labels: list[dict[str, Any]]  # current labels
    review: dict[str, Any]  # current status, reviewer, note
    history: list[dict[str, Any]]  # every label/review event, oldest first
    integrity: dict[str, Any] = field(default_factory=dict)
    # each judge figure's measured P/R/F1 against people (verification.quality)
    quality: list[dict[str, Any]] = field(default_factory=list)
    # the run's rates as people would give them (reports.people.run_people_lines)
    people: list[str] = field(default_factory=list)
    # the verbatim judge's longest run (the 160-character measure), when it judged
    verbatim: VerbatimRun | None = None
    # every span the trace judge traced to the library (None: it did not judge this case)
    traced: list[TracedRow] | None = None
    # a p_z window's figures per scheme and per token (None: no p_z judge scored it)
    pz: PzWindow | None = None


ALIGNED_KINDS = ("literal", "verbatim")  # marks that say a reference was compared word for word


def aligned_block(d: Dossier) -> ReferenceBlock | None:
    """The reference text the output is aligned with passage by passage: the first
    block carrying the literal or verbatim judge's marks (a continuation); None when
    none does (events, characters, a payload: nothing to align word for word)."""
    for block in d.reference:
        if any(k in ALIGNED_KINDS for s in block.segments for k in s.kinds):
            return block
    return None


def verbatim_line(d: Dossier) -> str | None:
    """The longest verbatim run in plain words, naming the reference text it lies in
    (the block the run is marked in; the study's source text otherwise)."""
    if d.verbatim is None:
        return None
    marked = (b.title for b in d.reference if any("verbatim" in s.kinds for s in b.segments))
    return verbatim_sentence(d.verbatim, next(marked, "source text").lower())


def judgment_figures(judgment: dict[str, Any]) -> tuple[str, str]:
    """A judgment's value and threshold as every screen writes its metric (the raw
    floats stay exact in the dossier's JSON)."""
    metric, threshold = judgment["metric"], judgment["evidence"].get("threshold")
    shown = format_metric(metric, threshold) if isinstance(threshold, int | float) else ""
    return format_metric(metric, judgment["value"]), shown if threshold is not None else ""


def flag_text(flagged: bool | None) -> str:
    return "—" if flagged is None else ("flagged" if flagged else "not flagged")


def verdict_text(verdict: dict[str, Any]) -> str:
    """One judge's verdict on an item, e.g. 'events/events: flagged (score 0.9, threshold 0.5)'."""
    if verdict["excluded"]:
        state = "left out (named in the prompt)"
    else:
        state = flag_text(verdict["verdict"])
    details = []
    if verdict["score"] is not None:
        details.append(f"score {round(verdict['score'], 4)}")
    if verdict["threshold"] is not None:
        details.append(f"threshold {verdict['threshold']}")
    suffix = f" ({', '.join(details)})" if details else ""
    return f"{verdict['judge']}/{verdict['metric']}: {state}{suffix}"


NOT_RECORDED = "not recorded at import"


def source_rows(d: Dossier) -> list[tuple[str, str]]:
    """Where the reference text came from, as recorded when its case was imported: the
    work, the file, when, and the edition and source type where the case file gave them."""
    g, payload = d.generation, d.generation["payload"] or {}
    work = ", ".join(str(x) for x in (g["title"], g["author"], g["year"]) if x is not None)
    rows = [
        ("work", work),
        ("edition", str(payload.get("edition") or f"{NOT_RECORDED} (the case file gives none)")),
        ("imported from", g.get("case_source") or NOT_RECORDED),
        ("imported at", utc_text(g.get("case_imported_at"))),
        ("case content hash", str(g["content_hash"])),
    ]
    if payload.get("source_type"):
        rows.insert(2, ("source type", str(payload["source_type"])))
    return rows


def glossary_entries(d: Dossier) -> list[tuple[str, str]]:
    """The glossary box for this case's measures."""
    return glossary(j["metric"] for j in d.judgments)
