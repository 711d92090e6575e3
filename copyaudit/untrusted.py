"""Stored text on its way out, made harmless: to a terminal (control sequences) and to a
spreadsheet (formulas). Model output, notes, titles and file contents are untrusted;
every command that prints them, and every CSV writer, goes through these two."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# C0 controls but \t and \n, DEL, and the C1 controls (U+0080..U+009F: CSI, OSC, ...)
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# what makes a spreadsheet read a cell as a formula (or a DDE call) when it starts one
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def terminal_text(text: str) -> str:
    """`text` safe to print: each control character (ESC, BEL, CR, backspace, C1 ...)
    but newline and tab is shown as its escape, \\u001b for ESC. In JSON the escape
    means the same character, so a JSON document stays exact."""
    return _CONTROLS.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def csv_cell(value: Any) -> Any:
    """A CSV cell a spreadsheet will not run: a string beginning with = + - @, a tab or
    a carriage return gets a leading ' (OWASP's advice); other values as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row for csv.DictWriter with every cell through csv_cell."""
    return {key: csv_cell(value) for key, value in row.items()}
