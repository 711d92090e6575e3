"""Stored text as plain, inert rich Text: never parsed as markup, no control characters.

Model output, prompts, references and every string read from the database go through
`plain()`. Control characters that could drive the terminal are replaced one character
for one character, so evidence offsets (character offsets into the stored output) stay
valid on the shown text:

- C0 controls except newline and tab -> the Unicode "Control Pictures" (ESC -> "␛",
  NUL -> "␀", CR -> "␍"), DEL -> "␡";
- C1 controls (U+0080-U+009F) and the bidirectional controls (copyaudit.untrusted's
  BIDI_CONTROLS: overrides, isolates and the marks LRM, RLM, ALM) -> "�" (U+FFFD).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text

from copyaudit.judges.metric_facts import format_metric
from copyaudit.render.metrics_format import DASH
from copyaudit.untrusted import BIDI_CONTROLS

REPLACEMENT = "\ufffd"
_TABLE: dict[int, str] = {code: chr(0x2400 + code) for code in range(0x20) if code not in (9, 10)}
_TABLE[0x7F] = "\u2421"
_TABLE.update({code: REPLACEMENT for code in range(0x80, 0xA0)})
_TABLE.update({code: REPLACEMENT for code in BIDI_CONTROLS})


def visible(text: str) -> str:
    """`text` with every control character replaced by a visible one (same length)."""
    return text.translate(_TABLE)


def plain(text: object, style: str | Style = "") -> Text:
    """A Text showing `text` literally (str() of anything else; None -> "")."""
    return Text(visible("" if text is None else str(text)), style=style, end="")


def one_line(text: str, width: int) -> Text:
    """A single-line preview: whitespace runs shown as one space, cut at `width`."""
    flat = " ".join(visible(text).split())
    if len(flat) > width:
        flat = flat[: width - 1] + "…"
    return Text(flat, end="", no_wrap=True, overflow="ellipsis")


def middle_cut(text: str, width: int) -> Text:
    """A name cut in the middle at `width` (its start and its distinguishing end stay:
    'notice-default-none-…-keyword+warning')."""
    flat = " ".join(visible(text).split())
    if len(flat) > width:
        head = (width - 1) // 2
        flat = flat[:head] + "…" + flat[len(flat) - (width - 1 - head) :]
    return Text(flat, end="", no_wrap=True)


def metric_cell(metric: str, value: float | None) -> Text:
    """A metric's value right-aligned, written as everywhere (copyaudit.render.metrics_format)."""
    return Text(format_metric(metric, value), justify="right")


def percent(value: float | None) -> Text:
    return Text(DASH if value is None else f"{100 * value:.1f}%", justify="right")


def number(value: float | None, digits: int = 2, whole: bool = True) -> Text:
    """`value` right-aligned; whole numbers without decimals unless `whole` is False."""
    if value is None:
        return Text(DASH, justify="right")
    if whole and float(value).is_integer() and abs(value) < 1e6:
        return Text(str(int(value)), justify="right")
    return Text(f"{value:.{digits}f}", justify="right")
