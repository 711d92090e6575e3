"""The cases' own sources in the library (issue 38): each reference text a literal or
extraction suite's cases hold, registered as a work titled with the case's work and
sourced `case SUITE/ID` (`library add --from-suite`, and before `judge --judges trace`
on a run of the suite), and the index rebuilt over the library."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from copyaudit.tracing.index import LibraryIndex
from copyaudit.tracing.library import CatalogueEntry, build_index, library_folder, store_text
from db import Store
from db.library import (
    CaseReference,
    LibraryWork,
    add_work,
    case_references,
    library_works,
    run_suite,
)

REFERENCE_KINDS = ("literal", "extraction")  # suites whose cases hold a reference text
AUTOMATIC_STATUS = "unknown"  # a suite says nothing of its works' copyright status


def add_case_references(
    store: Store, suite: str, references: list[CaseReference], status: str, author: str | None
) -> int:
    """Register each reference text beside the database (a text already registered
    keeps its first record); how many were new."""
    folder = library_folder(store.path)
    added = 0
    for case in references:
        sha = store_text(folder, case.text)
        source = f"case {suite}/{case.case_id}"
        work = LibraryWork(sha, case.title, author or case.author, source, status, len(case.text))
        added += add_work(store, work)
    return added


def rebuild_index(store: Store, infinigram: bool = False) -> LibraryIndex:
    """Index every registered work (each text checked by its SHA-256) beside the
    database (for the infini-gram engine too when asked: copyaudit.tracing.library)."""
    entries = [
        CatalogueEntry(w.sha256, w.title, w.author, w.status, w.chars) for w in library_works(store)
    ]
    return build_index(library_folder(store.path), entries, infinigram)


@dataclass(frozen=True)
class RunSources:
    suite: str
    kind: str
    cases: int  # the suite's cases with a reference text
    added: int  # of their texts, those the library lacked
    folder: Path  # the library's folder
    indexed: int | None  # the works indexed, when the index was rebuilt

    def summary(self) -> str:
        if self.kind not in REFERENCE_KINDS:
            return f"library: suite {self.suite} holds {self.kind} cases, no source text to add"
        if not self.added:
            return f"library: the {self.cases} sources of suite {self.suite}'s cases are in it"
        return (
            f"library: {self.added} sources of suite {self.suite}'s cases added (source "
            f"'case {self.suite}/ID', status {AUTOMATIC_STATUS}), "
            f"{self.cases - self.added} in it already; indexed {self.indexed} works"
        )


def add_run_sources(store: Store, run: str) -> RunSources:
    """Register the reference texts of the cases of `run`'s suite that the library
    beside the database lacks, and rebuild its index when one was added (or there is
    none yet and the library holds a work)."""
    suite, kind = run_suite(store, run)
    folder = library_folder(store.path)
    references = case_references(store, suite)[1] if kind in REFERENCE_KINDS else []
    added = add_case_references(store, suite, references, AUTOMATIC_STATUS, None)
    indexed = None
    if added or (not (folder / "index").is_dir() and library_works(store)):
        indexed = len(rebuild_index(store).works)
    return RunSources(suite, kind, len(references), added, folder, indexed)
