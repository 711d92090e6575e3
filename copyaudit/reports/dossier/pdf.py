"""A dossier as PDF: the HTML dossier laid out for paper by WeasyPrint.

Every page carries, in its bottom margin, "page X of Y" and the hash footer: the full
SHA-256 of the output and the digest of the database's anchor (copyaudit.anchors: it
names every audit chain's head), so a single printed page can be tied back to the
text and the database it came from.
"""

from __future__ import annotations

from typing import Any

from copyaudit.anchors import anchor_digest
from copyaudit.reports.dossier.html import dossier_html
from copyaudit.reports.dossier.model import Dossier

# Paper layout: the screen page's width limit and folded <details> make no sense here.
PRINT_CSS = """
@page { size: A4; margin: 16mm 12mm 24mm 12mm;
  @bottom-left { content: FOOTER; white-space: pre; font-family: monospace;
    font-size: 6.5pt; color: #444; vertical-align: top; padding-top: 3mm; }
  @bottom-right { content: "page " counter(page) " of " counter(pages); font-size: 8pt;
    vertical-align: top; padding-top: 3mm; } }
body { max-width: none; margin: 0; font-size: 9pt; }
pre.text { font-size: 8pt; }
table { page-break-inside: auto; } tr { page-break-inside: avoid; }
"""


def _css_string(text: str) -> str:
    """`text` as a quoted CSS string ("\\A" a line break; quotes and backslashes escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\A ")
    return f'"{escaped}"'


def footer_lines(d: Dossier) -> list[str]:
    """The hash footer printed on every page."""
    i = d.integrity
    lines = [f"{d.key} · output SHA-256 {(i.get('text_sha256') or {}).get('output', '—')}"]
    anchor: dict[str, Any] | None = i.get("anchor")
    if anchor:
        lines.append(f"database anchor {anchor_digest(anchor)} (copyaudit verify --against)")
    elif i.get("sha256"):
        lines.append(f"database SHA-256 {i['sha256']}")
    return lines


def dossier_document(d: Dossier) -> Any:
    """The dossier laid out on pages (a weasyprint Document: its pages can be read)."""
    from weasyprint import CSS, HTML  # deferred: loading it takes a second

    footer = _css_string("\n".join(footer_lines(d)))
    css = CSS(string=PRINT_CSS.replace("FOOTER", footer))
    return HTML(string=dossier_html(d)).render(stylesheets=[css])


def dossier_pdf(d: Dossier) -> bytes:
    """The dossier as PDF bytes."""
    return dossier_document(d).write_pdf()
