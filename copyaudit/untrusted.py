"""Stored text on its way out, made harmless: to a terminal (control sequences, and the
bidirectional controls that reorder what a reader sees: "Trojan Source") and to a
spreadsheet (formulas, bidirectional controls). Model output, notes, titles and file
contents are untrusted; every command that prints them, and every CSV writer, goes
through these. The stored text itself is never altered."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# C0 controls but \t and \n, DEL, and the C1 controls (U+0080..U+009F: CSI, OSC, ...)
_C0_C1 = "\x00-\x08\x0b-\x1f\x7f-\x9f"
# The bidirectional controls of Trojan Source (CVE-2021-42574): the embeddings and
# overrides U+202A..U+202E, the isolates U+2066..U+2069, and the marks LRM, RLM, ALM.
BIDI_CONTROLS = (
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x200E,
    0x200F,
    0x061C,
)
_BIDI = "".join(chr(code) for code in BIDI_CONTROLS)
_CONTROLS = re.compile(f"[{_C0_C1}{_BIDI}]")
_BIDI_ONLY = re.compile(f"[{_BIDI}]")
# what makes a spreadsheet read a cell as a formula (or a DDE call) when it starts one
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _escaped(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def terminal_text(text: str) -> str:
    """`text` safe to print: each control character (ESC, BEL, CR, backspace, C1 ...)
    but newline and tab, and each bidirectional control, is shown as its escape,
    \\u001b for ESC. In JSON the escape means the same character, so a JSON document
    stays exact."""
    return _CONTROLS.sub(_escaped, text)


def visible_bidi(text: str) -> str:
    """`text` with each bidirectional control shown as its escape (\\u202e): the order
    a reader sees is the order stored. For text that is escaped otherwise (HTML, CSV)."""
    return _BIDI_ONLY.sub(_escaped, text)


def csv_cell(value: object) -> Any:
    """A CSV cell a spreadsheet will not run: a string beginning with = + - @, a tab or
    a carriage return gets a leading ' (OWASP's advice), and its bidirectional controls
    are shown escaped (visible_bidi); other values as they are."""
    if not isinstance(value, str):
        return value
    value = visible_bidi(value)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def csv_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row for csv.DictWriter with every cell through csv_cell."""
    return {key: csv_cell(value) for key, value in row.items()}
