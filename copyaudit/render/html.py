"""The one HTML toolkit of the reports and the dossier: one escaping rule, tables,
definition lists (the provenance and integrity tables) and the page shell.

The rule: every stored or computed value (model output, prompts, references, names,
notes, configurations) goes through `esc`, html.escape with quote=True, so that it is
inert both as text and inside an attribute, with its bidirectional controls shown as
escapes (\\u202e: a model output cannot reorder what a reader sees; inside embedded
JSON the escape means the same character); None is written as nothing. Functions
whose parameters say "HTML" take markup already built from escaped pieces.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from copyaudit.anchors import HTML_TAG, anchor_json, anchor_line, anchor_reading
from copyaudit.hashing import stable_json
from copyaudit.timestamps import utc_text
from copyaudit.untrusted import visible_bidi

# The rules every page shares; page() puts a document's own CSS after them.
BASE_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #1b1b1b; }
table { border-collapse: collapse; margin: 0.5em 0; }
th { background: #f3f3f3; }
code, .hash { font-family: ui-monospace, monospace; font-size: 0.85em; word-break: break-all; }
.bad { color: #a00000; font-weight: bold; }
"""


def esc(value: object) -> str:
    """`value` as inert HTML text (also safe in a quoted attribute); None is empty."""
    return "" if value is None else escape(visible_bidi(str(value)), quote=True)


def markdown_html(text: str) -> str:
    """Markdown that copyaudit wrote (headings, tables, lists, fenced blocks) as HTML
    (Python-Markdown). The source is HTML-escaped first, so whatever text it carries
    (run and work names, notes) stays text; a `<`, `>` or `&` inside a code span or
    block then shows as its entity, never as markup."""
    import markdown  # deferred: only HTML reports need it

    source = escape(visible_bidi(text), quote=False)
    return markdown.markdown(source, extensions=["tables", "fenced_code"])


def code(value: object) -> str:
    """`value` escaped in a <code> element (names, hashes, ids)."""
    return f"<code>{esc(value)}</code>"


def pre(inner_html: str) -> str:
    """Preformatted text (its content is HTML: escape it first)."""
    return f'<pre class="text">{inner_html}</pre>'


def json_block(value: object) -> str:
    """`value` as escaped, indented JSON in a <pre>."""
    return pre(esc(stable_json(value)))


def folded_json(value: object, summary: str = "config") -> str:
    """JSON behind a <details> toggle (configurations are long)."""
    return f"<details><summary>{esc(summary)}</summary>{json_block(value)}</details>"


def table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """A table: the header escaped here, the cells HTML."""
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def kv_table(pairs: Iterable[tuple[str, str]]) -> str:
    """A definition list as a two-column table: names escaped here, values HTML."""
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{v}</td></tr>" for k, v in pairs)
    return f'<table class="kv">{rows}</table>'


def run_provenance(
    run: Mapping[str, Any],
    templates: Sequence[tuple[str, str]],
    status: tuple[str, str],
    after: Sequence[tuple[str, str]] = (),
) -> str:
    """A run's provenance table (db.case_file.run_record's or case_record's fields):
    backend, model and revision, then the `templates` rows, decoding, mitigation,
    configuration and its hash, code version, the `status` row and the `after` rows."""
    return kv_table(
        [
            ("backend", esc(run["backend"])),
            ("model", code(run["model"])),
            ("model revision", code(run["model_revision"] or "—")),
            *templates,
            ("decoding", json_block(run["decoding"])),
            ("mitigation", esc(run["mitigation"])),
            ("run config hash", code(run["config_hash"])),
            ("run config", folded_json(run["config"])),
            ("code version (run)", esc(run["code_version"] or "—")),
            status,
            *after,
        ]
    )


def anchor_html(anchor: Mapping[str, Any]) -> str:
    """The embedded anchor: what it says in plain words, its line, and the whole of it
    (`verify --against` reads it)."""
    reading = f"{esc(anchor_reading(dict(anchor)))}<br>"
    return (
        f"{reading}{esc(anchor_line(dict(anchor)))}{HTML_TAG}{esc(anchor_json(dict(anchor)))}</pre>"
    )


def _file_hash_html(sha256: str | None, checkpoint: str) -> str:
    if sha256 is None:
        return (
            "not computed (<code>--file-hash</code> adds it); the chain heads and the "
            "anchor below tie this export to the data"
        )
    return f'<span class="hash">{esc(sha256)}</span>{esc(checkpoint)}'


def integrity_html(i: Mapping[str, Any]) -> str:
    """dossier.integrity_figures(): the database hash, the audit chains' state and
    their heads."""
    problems = i["chain_problems"]
    verified = (
        "all chains intact"
        if not problems
        else "<span class='bad'>BROKEN: " + "; ".join(esc(p) for p in problems) + "</span>"
    )
    checkpoint = "" if i["checkpoint_complete"] else " (WAL checkpoint incomplete)"
    heads = table(
        ["chain", "head hash"],
        [
            [code(c), f'<span class="hash">{esc(h)}</span>']
            for c, h in sorted(i["chain_heads"].items())
        ],
    )
    return kv_table(
        [
            ("database", code(i["database"])),
            ("database SHA-256", _file_hash_html(i["sha256"], checkpoint)),
            ("audit chains", verified),
            ("exported at", esc(utc_text(i["exported_at"]))),
            ("exported with", esc(i["exported_with"])),
            *([("exported by", esc(i["exported_by"]))] if i.get("exported_by") else []),
            *(
                (f"SHA-256 of the {name}", f'<span class="hash">{esc(digest)}</span>')
                for name, digest in (i.get("text_sha256") or {}).items()
            ),
            *([("anchor", anchor_html(i["anchor"]))] if i.get("anchor") else []),
        ]
    ) + ("<h3>Chain heads</h3>" + heads if i["chain_heads"] else "<p>No events yet.</p>")


def page(title: str, css: str, body_html: str) -> str:
    """A whole self-contained page (inline CSS: BASE_CSS then `css`, no scripts): `title`
    escaped, `body_html` as built."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{BASE_CSS}{css}</style></head>"
        f"<body>{body_html}</body></html>\n"
    )
