"""DE-COP (paper 001) as a study: decop passages, scored by its own loop."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from copyaudit.records import LocatedCase
from copyaudit.studies.decop.format import read_cases, to_record
from copyaudit.studies.decop.importing import detect_doc_type, titled_for
from copyaudit.studies.spec import DocTypes, ImportPlan, StudySpec, payload_reference

if TYPE_CHECKING:
    from db.connection import Store


def prepare_import(stream: Iterable[LocatedCase], doc_type: str | None) -> ImportPlan:
    """Name the works as the question does: a book, or an arXiv paper (detected from
    the authors' layout unless `doc_type` says). Reads the file's passages whole (a
    few thousand rows): the layout is seen across them."""
    cases = list(stream)
    detected = doc_type is None
    doc_type = doc_type or detect_doc_type(cases)
    note = f"; the question names a {doc_type}" + (
        " (detected from the layout; --doc-type to choose)" if detected else ""
    )
    return ImportPlan(titled_for(cases, doc_type), doc_type, note)


def execute(db_path: Any, request: Any, **kwargs: Any) -> Any:
    """Run DE-COP (copyaudit.studies.decop.run.execute_decop)."""
    from copyaudit.studies.decop.run import execute_decop  # defers scipy (decop.method)

    return execute_decop(db_path, request, **kwargs)


def export_run(store: Store, run: str) -> Iterator[dict[str, Any]]:
    """One row per prompt of the run (copyaudit.studies.decop.export)."""
    from copyaudit.studies.decop.export import decop_export_rows  # defers scipy (decop.method)

    return decop_export_rows(store, run)


DECOP = StudySpec(
    name="decop",
    title="DE-COP",
    kinds=("decop",),
    read_cases=read_cases,
    to_record=to_record,
    reference=payload_reference,
    samples={"decop": "decop.csv"},
    doc_types=DocTypes(
        choices=("book", "paper"),
        help="what the question names (default: paper for the arXivTection layout, "
        "no Length column and no Title_-_Author IDs; else book).",
        files="BookTection / arXivTection",
    ),
    prepare_import=prepare_import,
    execute=execute,
    export_run=export_run,
    run_fields=frozenset({"calibrate_on-field", "length-field"}),
    limit_label="Passages per work (first N of each work)",
    prompts_per_case=math.factorial(4),  # the 24 orders of 4 options (method.N_ORDERS)
)
