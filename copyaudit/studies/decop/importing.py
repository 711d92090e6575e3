"""What a DE-COP file's question names: a book (BookTection) or an arXiv paper
(arXivTection), given or detected from the authors' layout, and the works a paper
suite holds (titled by the raw ID, as the authors' question names it)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from copyaudit.records import LocatedCase

DETECTION_RULE = (
    "paper when the file has no Length column and no ID of the form Title_-_Author "
    "(the arXivTection layout), else book"
)


def detect_doc_type(cases: Sequence[LocatedCase]) -> str:
    """'paper' for the arXivTection layout (no Length column, IDs without "_-_"); else
    'book' (BookTection: Title_-_Author IDs and a Length column)."""
    for located in cases:
        payload = located.case.payload
        if "length" in payload or "_-_" in str(payload.get("id", "")):
            return "book"
    return "paper" if cases else "book"


def titled_for(cases: Sequence[LocatedCase], doc_type: str) -> list[LocatedCase]:
    """The cases with their works named as the question names them: papers by the raw ID
    (no author, "_" kept); books as parsed from Title_-_Author."""
    if doc_type != "paper":
        return list(cases)
    return [
        dataclasses.replace(
            located,
            case=dataclasses.replace(
                located.case,
                work=dataclasses.replace(
                    located.case.work, title=located.case.payload["id"], author=None
                ),
            ),
        )
        for located in cases
    ]
