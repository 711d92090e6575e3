"""A dossier as one self-contained HTML page (inline CSS, no scripts, no external files).

Every stored string (model output, prompts, references, names, notes, configs) goes
through copyaudit.render.html.esc; highlights are <mark> elements with classes styled
inline.
"""

from __future__ import annotations

from collections.abc import Sequence

from copyaudit.items import item_name, item_number
from copyaudit.render.align import align, slice_segments
from copyaudit.render.highlight import MARK_KINDS, Segment
from copyaudit.render.html import (
    code,
    esc,
    folded_json,
    integrity_html,
    json_block,
    kv_table,
    page,
    pre,
    run_provenance,
)
from copyaudit.render.html import table as html_table
from copyaudit.reports.dossier.model import (
    Dossier,
    ReferenceBlock,
    aligned_block,
    flag_text,
    glossary_entries,
    judgment_figures,
    source_rows,
    verbatim_line,
    verdict_text,
)
from copyaudit.reports.dossier.traced import TRACED_HEADER, traced_cells
from copyaudit.reports.people import PEOPLE_TITLE
from copyaudit.reports.pz_window import (
    SCHEME_HEADER,
    PzWindow,
    scheme_cells,
    token_header,
    token_rows,
)
from copyaudit.timestamps import utc_text
from copyaudit.verification.quality import quality_line
from db.content import EARLIER_VERSION

CSS = """
body { max-width: 110em; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.6em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
table.side { width: 100%; table-layout: fixed; }
pre.text { white-space: pre-wrap; word-wrap: break-word; font-family: ui-monospace, monospace;
  font-size: 0.9em; margin: 0; }
mark.hl { background: none; padding: 0; }
mark.hl-literal { background: #ffe08a; }
mark.hl-verbatim { background: #ff9e6b; outline: 1px solid #b03a00; }
table.aligned col.match { width: 9em; }
td.match { font-size: 0.8em; }
tr.row-same td { background: #f3faf3; }
tr.row-differs td { background: #fdf7ec; }
tr.row-output-only td, tr.row-reference-only td { background: #f7f7f7; }
aside.glossary { border: 1px solid #bbb; background: #fafaf4; padding: 0.3em 1em; }
aside.glossary dt { font-weight: bold; } aside.glossary dd { margin: 0 0 0.4em 1.5em; }
p.verbatim { border-left: 4px solid #b03a00; padding-left: 0.5em; }
mark.hl-character { background: #b8ddff; }
mark.hl-event { border-bottom: 3px solid #2e9d4f; }
mark.hl-answer { background: #d9c8ff; }
mark.hl-refusal { background: #ffc4c4; }
.yes { color: #a00000; font-weight: bold; } .no { color: #006000; }
.muted { color: #666; }
"""

MARK_TITLES = {
    "literal": "literal overlap (LCS tokens)",
    "verbatim": "longest verbatim run (one unbroken stretch)",
    "character": "character named",
    "event": "window supporting a reference event",
    "answer": "extracted answer",
    "refusal": "refusal evidence",
}


def highlighted(segments: Sequence[Segment]) -> str:
    """Segments as escaped text, marked ones wrapped in <mark> with their labels."""
    out: list[str] = []
    for segment in segments:
        text = esc(segment.text)
        if not segment.marks:
            out.append(text)
            continue
        classes = " ".join(["hl", *(f"hl-{k}" for k in segment.kinds)])
        title = "; ".join(sorted({m.label for m in segment.marks}))
        out.append(f'<mark class="{classes}" title="{esc(title)}">{text}</mark>')
    return "".join(out)


def _earlier(stale: object) -> str:
    """The mark of a label or decision made on an earlier version of the content."""
    return f" <em class='muted'>({EARLIER_VERSION})</em>" if stale else ""


def _label_html(label: str | None) -> str:
    return f'<span class="{esc(label)}">{esc(label)}</span>' if label else ""


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{body}</section>'


def _case(d: Dossier) -> str:
    g = d.generation
    work = ", ".join(esc(x) for x in (g["title"], g["author"], g["year"]) if x is not None)
    return kv_table(
        [
            ("generation", f"<code>{esc(d.key)}</code>"),
            ("run", esc(g["run"])),
            ("suite (task kind)", f"{esc(g['suite'])} ({esc(g['kind'])})"),
            *([("suite rows", esc(g["suite_note"]))] if g.get("suite_note") else []),
            (
                "case",
                f"{esc(g['case_id'])} <span class='muted'>content hash "
                f"<code>{esc(g['content_hash'])}</code></span>",
            ),
            ("work", f"{work} <span class='muted'>membership {esc(g['membership'])}</span>"),
            ("generation source", esc(g["source"])),
            ("tokens / seconds", f"{esc(g['tokens'] or '—')} / {esc(g['seconds'] or '—')}"),
            ("generation error", esc(g["error"]) or "none"),
            (
                "review status",
                f"<strong>{esc(d.review['status'])}</strong>{_earlier(d.review.get('stale'))}",
            ),
        ]
    )


def _source(d: Dossier) -> str:
    return kv_table([(name, esc(value)) for name, value in source_rows(d)])


def _glossary(d: Dossier) -> str:
    terms = "".join(f"<dt>{esc(t)}</dt><dd>{esc(m)}</dd>" for t, m in glossary_entries(d))
    return f'<aside class="glossary"><dl>{terms}</dl></aside>'


def _prompt(d: Dossier) -> str:
    note = f"<p class='muted'>{esc(d.prompt_note)}</p>" if d.prompt_note else ""
    return note + pre(esc(d.prompt))


def _span_text(segments: list[Segment], span: tuple[int, int]) -> str:
    return pre(highlighted(slice_segments(segments, span))) if span[1] > span[0] else ""


def _offsets(name: str, span: tuple[int, int]) -> str:
    return f"<br>{name} {span[0] + 1}–{span[1]}" if span[1] > span[0] else ""


def _aligned(d: Dossier, block: ReferenceBlock) -> str:
    """Output and reference passage by passage (copyaudit.render.align): shared
    passages on one row, a stretch only one text has on its own row beside a gap."""
    output = "".join(s.text for s in d.output)
    reference = "".join(s.text for s in block.segments)
    rows = "".join(
        f'<tr class="row-{row.kind.replace(" ", "-")}"><td class="match">{esc(row.kind)}'
        f'<span class="muted">{_offsets("output", row.output)}'
        f"{_offsets('reference', row.reference)}</span></td>"
        f"<td>{_span_text(d.output, row.output)}</td>"
        f"<td>{_span_text(block.segments, row.reference)}</td></tr>"
        for row in align(output, reference)
    )
    return (
        '<table class="side aligned"><colgroup><col class="match"><col><col></colgroup>'
        f"<thead><tr><th>passage (characters, from 1)</th><th>Output</th>"
        f"<th>{esc(block.title)}</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _side_by_side(d: Dossier) -> str:
    reference = "".join(
        f"<h3>{esc(block.title)}</h3>{pre(highlighted(block.segments))}" for block in d.reference
    )
    return (
        '<table class="side"><thead><tr><th>Output</th><th>Reference</th></tr></thead>'
        f"<tbody><tr><td>{pre(highlighted(d.output))}</td><td>{reference}</td></tr></tbody>"
        "</table>"
    )


def _texts(d: Dossier) -> str:
    """The output beside the reference: aligned passage by passage where a judge
    compared them word for word (the other reference texts below), else side by side."""
    legend = " ".join(f'<mark class="hl hl-{k}">{esc(MARK_TITLES[k])}</mark>' for k in MARK_KINDS)
    run = verbatim_line(d)
    verbatim = f'<p class="verbatim">{esc(run)}</p>' if run else ""
    block = aligned_block(d)
    if block is None:
        return f"<p>Highlights: {legend}</p>{verbatim}{_side_by_side(d)}"
    others = "".join(
        f"<h3>{esc(b.title)}</h3>{pre(highlighted(b.segments))}" for b in d.reference if b != block
    )
    return f"<p>Highlights: {legend}</p>{verbatim}{_aligned(d, block)}{others}"


def _traced(d: Dossier) -> str:
    if not d.traced:
        return "<p class='muted'>The trace judge found no span of the output in the library.</p>"
    rows = [[esc(cell) for cell in traced_cells(row)] for row in d.traced]
    return html_table(list(TRACED_HEADER), rows)


def _pz(w: PzWindow) -> str:
    """A p_z window: its texts, p_z per scheme, each token's probability per scheme (the
    scheme's lowest marked), the replay command."""
    texts = kv_table(
        [
            ("prefix", pre(esc(w.prefix))),
            ("reference suffix", pre(esc(w.reference))),
            ("greedy continuation", pre(esc(w.greedy_output))),
        ]
    )
    schemes = html_table(
        list(SCHEME_HEADER), [[esc(c) for c in scheme_cells(f)] for f in w.schemes]
    )
    tokens = html_table(
        token_header(w),
        [
            [esc(n), code(token), *(f"<mark>{esc(p)}</mark>" if low else esc(p) for p, low in ps)]
            for n, token, ps in token_rows(w)
        ],
    )
    replay = f"<p>Scored again by: {code(w.replay)}</p>"
    return f"{texts}{schemes}<h3>Per token (marked: the scheme's lowest)</h3>{tokens}{replay}"


def _items(d: Dossier) -> str:
    if not d.items:
        return "<p class='muted'>No judge verdicts or human labels on items.</p>"
    rows = []
    for item in d.items:
        verdicts = "<br>".join(esc(verdict_text(v)) for v in item["verdicts"])
        labels = "<br>".join(
            f"{esc(name)}: {_label_html(lab['label'])}"
            + (f" — {esc(lab['note'])}" if lab["note"] else "")
            for name, lab in sorted(item["labels"].items())
        )
        number = item_number(item["target"], item["index"])
        rows.append([esc(item["target"]), esc(number), esc(item["text"]), verdicts, labels])
    return html_table(["target", "item", "reference item", "judge verdicts", "human labels"], rows)


def _quality(d: Dossier) -> str:
    if not d.quality:
        return ""
    items = "".join(f"<li>{esc(quality_line(q))}</li>" for q in d.quality)
    html = f"<p>Measured against people (the whole run):</p><ul>{items}</ul>"
    if d.people:
        people = "".join(f"<li>{esc(line)}</li>" for line in d.people)
        html += f"<p>{esc(PEOPLE_TITLE)}:</p><ul>{people}</ul>"
    return html


def _judges(d: Dossier) -> str:
    if not d.judgments:
        return "<p class='muted'>Not judged.</p>"
    rows = [
        [
            esc(j["judge"]),
            esc(j["judge_version"]),
            f"<code>{esc(j['judge_hash'])}</code>",
            esc(j["metric"]),
            *(esc(figure) for figure in judgment_figures(j)),
            flag_text(j["flagged"]) if j["evidence"].get("threshold") is not None else "—",
            esc(j["evidence"].get("error")),
            folded_json(j["judge_config"]),
        ]
        for j in d.judgments
    ]
    return _quality(d) + html_table(
        [
            "judge",
            "version",
            "config hash",
            "metric",
            "value",
            "threshold",
            "verdict",
            "error",
            "judge config",
        ],
        rows,
    )


def _provenance(d: Dossier) -> str:
    g, t = d.generation, d.template
    status = (
        f"{esc(g['run_status'])}; created {esc(utc_text(g['run_created_at']))}, "
        f"finished {esc(utc_text(g['run_finished_at']))}"
    )
    return run_provenance(
        g,
        [
            ("prompt template", f"{esc(t['id'])} {json_block(t)}"),
            ("run templates", esc(g["templates"])),
        ],
        ("run status", status),
        [("generated at", esc(utc_text(g["created_at"])))],
    )


def _labels(d: Dossier) -> str:
    if not d.labels:
        return "<p class='muted'>No current human labels.</p>"
    return html_table(
        ["annotator", "target", "item", "label", "note", "at", "event"],
        [
            [
                esc(lab["annotator"]),
                esc(lab["target"]),
                esc(item_number(lab["target"], lab["item_index"])),
                _label_html(lab["label"]) + _earlier(lab.get("stale")),
                esc(lab["note"]),
                esc(utc_text(lab["created_at"])),
                f"<code>{esc(lab['uuid'])}</code>",
            ]
            for lab in d.labels
        ],
    )


def _review(d: Dossier) -> str:
    r = d.review
    current = kv_table(
        [
            ("status", f"<strong>{esc(r['status'])}</strong>"),
            ("reviewer", esc(r["reviewer"] or "—")),
            ("note", esc(r["note"] or "—")),
            ("since", esc(utc_text(r["created_at"]))),
        ]
    )
    if not d.history:
        return current + "<h3>History</h3><p class='muted'>No events.</p>"
    rows = [
        [
            esc(utc_text(h["created_at"])),
            esc(h["kind"]),
            esc(h["who"]),
            esc("" if h["target"] is None else item_name(h["target"], h["item_index"])),
            esc(h["value"]),
            esc(h["note"]),
            f"<code>{esc(h['uuid'])}</code>"
            + (f"<br>retracts <code>{esc(h['supersedes'])}</code>" if h["supersedes"] else ""),
            f"<code>{esc(h['chain'][:8])}</code> #{esc(h['seq'])}",
            f'<span class="hash">{esc(h["hash"])}</span>',
        ]
        for h in d.history
    ]
    header = ["at", "event", "who", "item", "label / status", "note", "uuid", "chain", "hash"]
    return current + "<h3>History</h3>" + html_table(header, rows)


def dossier_html(d: Dossier) -> str:
    """The whole dossier page."""
    sections = [
        _section("case", "Case", _case(d)),
        _section("source", "Source of the reference text", _source(d)),
        _section("glossary", "Glossary", _glossary(d)),
        _section("prompt", "Prompt", _prompt(d)),
        _section("texts", "Output and reference", _texts(d)),
        *(
            [_section("traced", "Traced to the library", _traced(d))]
            if d.traced is not None
            else []
        ),
        *(
            [_section("pz", "Extraction probability (p_z) of this window", _pz(d.pz))]
            if d.pz
            else []
        ),
        _section("items", "Items: judge verdicts and human labels", _items(d)),
        _section("judges", "Judges", _judges(d)),
        _section("provenance", "Provenance", _provenance(d)),
        _section("labels", "Human labels", _labels(d)),
        _section("review", "Review", _review(d)),
        _section("integrity", "Integrity", integrity_html(d.integrity)),
    ]
    heading = f"<h1>Case dossier: {code(d.key)}</h1>"
    return page(f"Dossier {d.key}", CSS, heading + "".join(sections))
