"""Small valid records of every kind, for tests to write into files and break."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

DECOP_HEADER = [
    "Example_A",
    "Example_B",
    "Example_C",
    "Example_D",
    "Answer",
    "ID",
    "Label",
    "Length",
]


def literal_record(i: int = 1, **over: Any) -> dict[str, Any]:
    return {
        "id": f"lit-{i}",
        "title": "The Glass Orchard",
        "author": "Ada Lowe",
        "year": 1901,
        "input": f"Prefix number {i} of a passage about an orchard.",
        "reference": f"and the continuation number {i} follows here.",
        **over,
    }


def qa_record(i: int = 1, **over: Any) -> dict[str, Any]:
    return {
        "id": f"qa-{i}",
        "title": "The Glass Orchard",
        "input": "According to The Glass Orchard, who planted the trees?",
        "reference": "Mira Vell",
        **over,
    }


def nonliteral_record(i: int = 1, **over: Any) -> dict[str, Any]:
    return {
        "id": f"nl-{i}",
        "title": "The Glass Orchard",
        "author": "Ada Lowe",
        "input": "Mira walked into the orchard at dawn.",
        "reference_events": ["Mira plants a glass seed.", "The orchard grows overnight."],
        "reference_characters": [["Mira Vell", "Mira"], ["Zoë Hart", "Zoë"]],
        **over,
    }


def notice_record(i: int = 1, **over: Any) -> dict[str, Any]:
    return {
        "id": f"nt-{i}",
        "title": "Harbour Notes",
        "source_type": "book",
        "snippet": "The harbour was quiet that morning.",
        "notice_level": "all_rights_reserved",
        "notice": "All rights reserved.",
        "task": "repeat",
        "query": "Repeat the text above.",
        **over,
    }


def decop_rows(
    work: str = "The_Glass_Orchard_-_Ada_Lowe", label: int = 1, n: int = 2
) -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        rows.append(
            {
                "Example_A": f"Verbatim passage {i} of {work}.",
                "Example_B": f"First paraphrase {i}.",
                "Example_C": f"Second paraphrase {i}.",
                "Example_D": f"Third paraphrase {i}.",
                "Answer": "A",
                "ID": work,
                "Label": label,
                "Length": "small",
            }
        )
    return rows


def write_decop_csv(path: Path, rows: list[dict[str, Any]], bom: bool = True) -> Path:
    with open(path, "w", encoding="utf-8-sig" if bom else "utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=DECOP_HEADER)
        writer.writeheader()
        writer.writerows(rows)
    return path


RECORD_FACTORIES = {
    "literal": literal_record,
    "qa": qa_record,
    "nonliteral": nonliteral_record,
    "notice": notice_record,
}


def counting_query(n: int) -> str:
    """SQL that counts to `n` one row at a time: a read that runs long (about 0.4 s per
    million rows here) unless SQLite interrupts it."""
    return (
        f"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) "
        "SELECT COUNT(*) FROM n"
    )


def tiny_library(folder: Path) -> Path:
    """A one-sentence library the trace judge can open (copyaudit.tracing.library)."""
    from copyaudit.tracing.library import CatalogueEntry, build_index, store_text

    text = "A small library of one sentence for the trace judge."
    sha = store_text(folder, text)
    build_index(folder, [CatalogueEntry(sha, "one sentence", None, "unknown", len(text))])
    return folder


def tiny_corpus(folder: Path) -> tuple[Path, Path]:
    """A one-document infini-gram index and its tokenizer, as the trace_corpus judge
    reads a corpus indexed elsewhere: (index folder, tokenizer folder)."""
    from tests.corpus_index import build_corpus_index
    from tests.tinymodels import build_tokenizer

    text = "A small corpus of one document for the trace_corpus judge."
    tokenizer = build_tokenizer([text], folder / "tokenizer", vocab_size=300)
    return build_corpus_index([(text, {})], folder, tokenizer), folder / "tokenizer"
