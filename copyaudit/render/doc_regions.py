"""Generated regions of a Markdown page: the text between `<!-- NAME:start ... -->` and
`<!-- NAME:end -->` is made by code (the app's key table, the judges' tables), so a test
can regenerate it and compare, and a command can rewrite it leaving the prose around it.
"""

from __future__ import annotations

import re


def _pattern(name: str) -> re.Pattern[str]:
    start = r"<!-- " + re.escape(name) + r":start[^\n]*-->\n"
    return re.compile(start + r"(.*?)\n<!-- " + re.escape(name) + r":end -->", re.S)


def region(page: str, name: str) -> str | None:
    """The text of region `name` as the page holds it (None when its markers are missing)."""
    found = _pattern(name).search(page)
    return None if found is None else found.group(1)


def with_region(page: str, name: str, text: str) -> str:
    """`page` with region `name` replaced by `text` (ValueError when its markers are missing)."""
    found = _pattern(name).search(page)
    if found is None:
        raise ValueError(f"the page has no <!-- {name}:start --> / <!-- {name}:end --> markers")
    return page[: found.start(1)] + text + page[found.end(1) :]
