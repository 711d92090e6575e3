"""The demo's library (issue 38): the public-domain works the literal samples come from,
each work's passages (input and reference, in file order) joined into one text, so the
trace judge has something to trace the demo's literal outputs to. Kept beside the demo
database like any library (copyaudit.tracing.library)."""

from __future__ import annotations

import json
from pathlib import Path

from copyaudit.engine.case_sources import rebuild_index
from copyaudit.tracing.library import library_folder, store_text
from db import Store
from db.library import LibraryWork, add_work

LITERAL_SAMPLES = "literal.jsonl"
SOURCE = "samples/literal.jsonl: the demo's passages of the public-domain text"
TRACED_RUN = "demo-literal"  # the demo run the trace judge runs on


def sample_works(root: Path) -> list[tuple[str, str | None, str]]:
    """(title, author, text) of each work of the literal samples, in first-seen order."""
    works: dict[str, tuple[str | None, list[str]]] = {}
    for line in (root / LITERAL_SAMPLES).read_text(encoding="utf-8").splitlines():
        if line.strip():
            case = json.loads(line)
            works.setdefault(case["title"], (case.get("author"), []))[1].append(
                f"{case['input']} {case['reference']}"
            )
    return [(title, author, "\n\n".join(texts)) for title, (author, texts) in works.items()]


def build_demo_library(store: Store, root: Path) -> Path:
    """Register the samples' works (public domain) and index the library beside the
    database when a work was added or no index exists yet; the library's folder."""
    folder = library_folder(store.path)
    added = 0
    for title, author, text in sample_works(root):
        sha = store_text(folder, text)
        added += add_work(
            store, LibraryWork(sha, title, author, SOURCE, "public-domain", len(text))
        )
    if added or not (folder / "index").is_dir():
        rebuild_index(store)
    return folder
