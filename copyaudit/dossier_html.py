"""A dossier as one self-contained HTML page (inline CSS, no scripts, no external files).

Every stored string (model output, prompts, references, names, notes, configs) goes
through html.escape; highlights are <mark> elements with classes styled inline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape
from typing import Any

from copyaudit.dossier import Dossier, flag_text, stable_json, verdict_text
from copyaudit.highlight import MARK_KINDS, Segment
from copyaudit.items import item_name, item_number

CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #1b1b1b; max-width: 110em; }
h1 { font-size: 1.5em; } h2 { border-bottom: 1px solid #ccc; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.5em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
table.side { width: 100%; table-layout: fixed; }
pre.text { white-space: pre-wrap; word-wrap: break-word; font-family: ui-monospace, monospace;
  font-size: 0.9em; margin: 0; }
code, .hash { font-family: ui-monospace, monospace; font-size: 0.85em; word-break: break-all; }
mark.hl { background: none; padding: 0; }
mark.hl-literal { background: #ffe08a; }
mark.hl-character { background: #b8ddff; }
mark.hl-event { border-bottom: 3px solid #2e9d4f; }
mark.hl-answer { background: #d9c8ff; }
mark.hl-refusal { background: #ffc4c4; }
.yes { color: #a00000; font-weight: bold; } .no { color: #006000; }
.muted { color: #666; } .bad { color: #a00000; font-weight: bold; }
"""

MARK_TITLES = {
    "literal": "literal overlap (LCS tokens)",
    "character": "character named",
    "event": "window supporting a reference event",
    "answer": "extracted answer",
    "refusal": "refusal evidence",
}


def _e(value: Any) -> str:
    return "" if value is None else escape(str(value), quote=True)


def highlighted(segments: Sequence[Segment]) -> str:
    """Segments as escaped text, marked ones wrapped in <mark> with their labels."""
    out: list[str] = []
    for segment in segments:
        text = _e(segment.text)
        if not segment.marks:
            out.append(text)
            continue
        classes = " ".join(["hl", *(f"hl-{k}" for k in segment.kinds)])
        title = "; ".join(sorted({m.label for m in segment.marks}))
        out.append(f'<mark class="{classes}" title="{_e(title)}">{text}</mark>')
    return "".join(out)


def _pre(inner: str) -> str:
    return f'<pre class="text">{inner}</pre>'


def html_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table; cells are already-escaped HTML."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def kv_table(pairs: Iterable[tuple[str, str]]) -> str:
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs)
    return f'<table class="kv">{rows}</table>'


def folded_json(value: Any, summary: str = "config") -> str:
    """JSON behind a <details> toggle (configurations are long)."""
    return f"<details><summary>{_e(summary)}</summary>{json_block(value)}</details>"


def json_block(value: Any) -> str:
    return _pre(_e(stable_json(value)))


def _label_html(label: str | None) -> str:
    return f'<span class="{_e(label)}">{_e(label)}</span>' if label else ""


def _section(anchor: str, title: str, body: str) -> str:
    return f'<section id="{anchor}"><h2>{_e(title)}</h2>{body}</section>'


def _case(d: Dossier) -> str:
    g = d.generation
    work = ", ".join(_e(x) for x in (g["title"], g["author"], g["year"]) if x is not None)
    return kv_table(
        [
            ("generation", f"<code>{_e(d.key)}</code>"),
            ("run", _e(g["run"])),
            ("suite (task kind)", f"{_e(g['suite'])} ({_e(g['kind'])})"),
            *([("suite rows", _e(g["suite_note"]))] if g.get("suite_note") else []),
            (
                "case",
                f"{_e(g['case_id'])} <span class='muted'>content hash "
                f"<code>{_e(g['content_hash'])}</code></span>",
            ),
            ("work", f"{work} <span class='muted'>membership {_e(g['membership'])}</span>"),
            ("generation source", _e(g["source"])),
            ("tokens / seconds", f"{_e(g['tokens'] or '—')} / {_e(g['seconds'] or '—')}"),
            ("generation error", _e(g["error"]) or "none"),
            ("review status", f"<strong>{_e(d.review['status'])}</strong>"),
        ]
    )


def _prompt(d: Dossier) -> str:
    note = f"<p class='muted'>{_e(d.prompt_note)}</p>" if d.prompt_note else ""
    return note + _pre(_e(d.prompt))


def _texts(d: Dossier) -> str:
    legend = " ".join(f'<mark class="hl hl-{k}">{_e(MARK_TITLES[k])}</mark>' for k in MARK_KINDS)
    reference = "".join(
        f"<h3>{_e(block.title)}</h3>{_pre(highlighted(block.segments))}" for block in d.reference
    )
    table = (
        '<table class="side"><thead><tr><th>Output</th><th>Reference</th></tr></thead>'
        f"<tbody><tr><td>{_pre(highlighted(d.output))}</td><td>{reference}</td></tr></tbody>"
        "</table>"
    )
    return f"<p>Highlights: {legend}</p>{table}"


def _items(d: Dossier) -> str:
    if not d.items:
        return "<p class='muted'>No judge verdicts or human labels on items.</p>"
    rows = []
    for item in d.items:
        verdicts = "<br>".join(_e(verdict_text(v)) for v in item["verdicts"])
        labels = "<br>".join(
            f"{_e(name)}: {_label_html(lab['label'])}"
            + (f" — {_e(lab['note'])}" if lab["note"] else "")
            for name, lab in sorted(item["labels"].items())
        )
        number = item_number(item["target"], item["index"])
        rows.append([_e(item["target"]), _e(number), _e(item["text"]), verdicts, labels])
    return html_table(["target", "item", "reference item", "judge verdicts", "human labels"], rows)


def _judges(d: Dossier) -> str:
    if not d.judgments:
        return "<p class='muted'>Not judged.</p>"
    rows = [
        [
            _e(j["judge"]),
            _e(j["judge_version"]),
            f"<code>{_e(j['judge_hash'])}</code>",
            _e(j["metric"]),
            _e(j["value"]),
            _e(j["evidence"].get("threshold")),
            flag_text(j["flagged"]) if j["evidence"].get("threshold") is not None else "—",
            _e(j["evidence"].get("error")),
            folded_json(j["judge_config"]),
        ]
        for j in d.judgments
    ]
    return html_table(
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
    return kv_table(
        [
            ("backend", _e(g["backend"])),
            ("model", f"<code>{_e(g['model'])}</code>"),
            ("model revision", f"<code>{_e(g['model_revision'] or '—')}</code>"),
            ("prompt template", f"{_e(t['id'])} {json_block(t)}"),
            ("run templates", _e(g["templates"])),
            ("decoding", json_block(g["decoding"])),
            ("mitigation", _e(g["mitigation"])),
            ("run config hash", f"<code>{_e(g['config_hash'])}</code>"),
            (
                "run config",
                folded_json(g["config"]),
            ),
            ("code version (run)", _e(g["code_version"] or "—")),
            (
                "run status",
                f"{_e(g['run_status'])}; created {_e(g['run_created_at'])}, "
                f"finished {_e(g['run_finished_at'] or '—')}",
            ),
            ("generated at", _e(g["created_at"])),
        ]
    )


def _labels(d: Dossier) -> str:
    if not d.labels:
        return "<p class='muted'>No current human labels.</p>"
    return html_table(
        ["annotator", "target", "item", "label", "note", "at", "event"],
        [
            [
                _e(lab["annotator"]),
                _e(lab["target"]),
                _e(item_number(lab["target"], lab["item_index"])),
                _label_html(lab["label"]),
                _e(lab["note"]),
                _e(lab["created_at"]),
                f"<code>{_e(lab['uuid'])}</code>",
            ]
            for lab in d.labels
        ],
    )


def _review(d: Dossier) -> str:
    r = d.review
    current = kv_table(
        [
            ("status", f"<strong>{_e(r['status'])}</strong>"),
            ("reviewer", _e(r["reviewer"] or "—")),
            ("note", _e(r["note"] or "—")),
            ("since", _e(r["created_at"] or "—")),
        ]
    )
    if not d.history:
        return current + "<h3>History</h3><p class='muted'>No events.</p>"
    rows = [
        [
            _e(h["created_at"]),
            _e(h["kind"]),
            _e(h["who"]),
            _e("" if h["target"] is None else item_name(h["target"], h["item_index"])),
            _e(h["value"]),
            _e(h["note"]),
            f"<code>{_e(h['uuid'])}</code>"
            + (f"<br>retracts <code>{_e(h['supersedes'])}</code>" if h["supersedes"] else ""),
            f"<code>{_e(h['chain'][:8])}</code> #{_e(h['seq'])}",
            f'<span class="hash">{_e(h["hash"])}</span>',
        ]
        for h in d.history
    ]
    header = ["at", "event", "who", "item", "label / status", "note", "uuid", "chain", "hash"]
    return current + "<h3>History</h3>" + html_table(header, rows)


def integrity_html(i: dict[str, Any]) -> str:
    """dossier.integrity_figures() as a table and the chain heads."""
    problems = i["chain_problems"]
    verified = (
        "all chains intact"
        if not problems
        else "<span class='bad'>BROKEN: " + "; ".join(_e(p) for p in problems) + "</span>"
    )
    checkpoint = "" if i["checkpoint_complete"] else " (WAL checkpoint incomplete)"
    heads = html_table(
        ["chain", "head hash"],
        [
            [f"<code>{_e(c)}</code>", f'<span class="hash">{_e(h)}</span>']
            for c, h in sorted(i["chain_heads"].items())
        ],
    )
    return kv_table(
        [
            ("database", f"<code>{_e(i['database'])}</code>"),
            ("database SHA-256", f'<span class="hash">{_e(i["sha256"])}</span>{_e(checkpoint)}'),
            ("audit chains", verified),
            ("exported at", _e(i["exported_at"])),
            ("exported with", _e(i["exported_with"])),
        ]
    ) + ("<h3>Chain heads</h3>" + heads if i["chain_heads"] else "<p>No events yet.</p>")


def dossier_html(d: Dossier) -> str:
    """The whole dossier page."""
    sections = [
        _section("case", "Case", _case(d)),
        _section("prompt", "Prompt", _prompt(d)),
        _section("texts", "Output and reference", _texts(d)),
        _section("items", "Items: judge verdicts and human labels", _items(d)),
        _section("judges", "Judges", _judges(d)),
        _section("provenance", "Provenance", _provenance(d)),
        _section("labels", "Human labels", _labels(d)),
        _section("review", "Review", _review(d)),
        _section("integrity", "Integrity", integrity_html(d.integrity)),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Dossier {_e(d.key)}</title><style>{CSS}</style></head><body>"
        f"<h1>Case dossier: <code>{_e(d.key)}</code></h1>" + "".join(sections) + "</body></html>\n"
    )
