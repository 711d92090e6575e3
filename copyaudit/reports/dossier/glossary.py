"""The dossier's glossary box: the words of the exhibit in plain language, for a
reader who is not a programmer. The general terms always; a measure's entry only
where the case has a figure of it. (docs/studies.md has the full technical glossary.)"""

from __future__ import annotations

from collections.abc import Iterable

GENERAL: tuple[tuple[str, str], ...] = (
    ("output", "the text the language model wrote when given the prompt."),
    (
        "reference",
        "the original text the output is compared with (e.g. the book's real continuation).",
    ),
    (
        "flagged",
        "a measure reached its threshold, the level at which the case counts as copying; "
        "a person can then confirm or reject it (human labels, review).",
    ),
    (
        "SHA-256",
        "a fingerprint of a text: 64 characters that change completely if a single "
        "character of the text changes. Anyone can recompute it to check a copy.",
    ),
    (
        "audit chain, anchor",
        "every label and review decision is recorded in order, each sealed with the "
        "fingerprint of the one before; the anchor writes down the last seals, so later "
        "tampering can be detected.",
    ),
)

MEASURES: dict[str, tuple[str, str]] = {
    "longest_verbatim_chars": (
        "longest verbatim run",
        "the longest stretch of characters the output and the reference share exactly, "
        "without any change (one unbroken passage).",
    ),
    "rougeL": (
        "LCS overlap (rougeL)",
        "how much of the reference's opening words reappear in the output in the same "
        "order, gaps allowed (0 none, 1 all); the shared words may be scattered.",
    ),
    "lcs_tokens": (
        "LCS tokens",
        "the number of words in that ordered overlap.",
    ),
    "rouge1": (
        "rouge1",
        "the share of single words the two whole texts have in common, in any order.",
    ),
    "events": ("events", "how many of the reference story's events the output retells."),
    "characters": ("characters", "how many of the reference story's named characters appear."),
}


def glossary(metrics: Iterable[str]) -> list[tuple[str, str]]:
    """The entries for a case with figures of `metrics`: general terms, then its measures."""
    present = set(metrics)
    return [*GENERAL, *(entry for name, entry in MEASURES.items() if name in present)]
