"""`copyaudit import decop-results PATH --model NAME`: the authors' published workbooks
(copyaudit.studies.decop.published) become a DE-COP run over the matching suite, with
the provenance of every file (its name and sha256)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from copyaudit.errors import UserError
from copyaudit.hashing import file_sha256
from copyaudit.rows import RowProblem
from copyaudit.runs.lifecycle import code_version
from copyaudit.studies.decop.method import ANSWER_LETTERS, N_ORDERS
from copyaudit.studies.decop.published import (
    Matched,
    SuiteIndex,
    book_id,
    match_results,
    result_files,
)
from copyaudit.studies.decop.published_models import PublishedModel, published_model
from db.decop import suite_doc_type
from db.decop_import import decop_suites_with_work, save_imported_scores
from db.pending import run_cases
from db.runs import RunSpec, suite_id, suite_kind

if TYPE_CHECKING:
    from db.connection import Store


@dataclass(frozen=True)
class ResultsImport:
    """What `import decop-results` did."""

    run: str
    suite: str
    model: PublishedModel
    status: str  # added | unchanged | replaced
    files: int
    matched: Matched

    def summary(self) -> str:
        m = self.matched
        kind = "probabilities" if self.model.probabilities else "chosen letters"
        parts = [
            f"{self.run}: {self.status} ({len(m.rows):,} passages of {m.works} works, "
            f"{self.model.name} {kind}, from {self.files} file(s); suite '{self.suite}')"
        ]
        if m.unread_prompts:
            parts.append(
                f"{m.unread_prompts:,} prompts name no letter: stored as unread, left out "
                "of the accuracies (the authors' script counts them as wrong)"
            )
        if m.skipped:
            parts.append(f"{len(m.skipped):,} problems skipped (recorded with the run):")
            parts += [f"  {where.name}: {p.describe()}" for where, p in m.skipped[:10]]
            if len(m.skipped) > 10:
                parts.append(f"  … and {len(m.skipped) - 10:,} more")
        if m.without_model:
            names = ", ".join(p.name for p in m.without_model[:5])
            more = f" and {len(m.without_model) - 5} more" if len(m.without_model) > 5 else ""
            parts.append(
                f"{len(m.without_model)} file(s) hold no {self.model.name} columns, "
                f"skipped: {names}{more}"
            )
        return "\n".join(parts)


def _resolve_suite(store: Store, files: list[Path], suite: str | None) -> str:
    """--suite, else the one DE-COP suite that holds the first file's work."""
    if suite is not None:
        kind = suite_kind(store, suite_id(store, suite))
        if kind != "decop":
            raise UserError(f"suite '{suite}' holds {kind} cases, not DE-COP passages")
        return suite
    work = book_id(files[0])
    found = decop_suites_with_work(store, work)
    if len(found) == 1:
        return found[0]
    if not found:
        raise UserError(
            f"{files[0]}: no DE-COP suite holds the work '{work}' (import the BookTection CSV with "
            "`copyaudit import decop`, or name the suite with --suite)"
        )
    raise UserError(
        f"{files[0]}: the work '{work}' is in suites {', '.join(found)}: choose one with --suite"
    )


def run_spec(
    name: str,
    suite: str,
    model: PublishedModel,
    sources: list[dict[str, str]],
    matched: Matched,
    doc_type: str,
) -> RunSpec:
    """The run's record, shaped as a DE-COP run's (decoding method, calibration, length),
    with the provenance of the files instead of a model's."""
    provenance = "imported from " + "; ".join(f"{s['file']} ({s['sha256']})" for s in sources)
    length = next(iter(matched.lengths), None)
    return RunSpec(
        name=name,
        suite=suite,
        backend="imported",
        model=model.name,
        templates=(),
        decoding={"method": model.method, "choices": list(ANSWER_LETTERS), "orders": N_ORDERS},
        config={
            "kind": "decop",
            "prompt": "as the authors' 2_decop_*.py asked it (their published results)",
            **({"doc_type": doc_type} if doc_type != "book" else {}),
            "calibration": {"mode": "none", "works": [], "rule": None},
            "baselines": False,
            "baselines_note": "the published results hold no per-token scores",
            **({"length": length} if length is not None else {}),
            "imported_from": sources,
            "published_columns": list(model.columns()),
            "provenance": provenance
            if len(sources) <= 3
            else (f"imported from {len(sources)} files (sha256 of each in imported_from)"),
            "model": {"name": model.name, "source": "DE-COP authors' published results"},
        },
        code_version=code_version(),
    )


def import_decop_results(
    store: Store,
    path: Path,
    model_name: str,
    suite: str | None = None,
    run: str | None = None,
    replace: bool = False,
    skip_invalid: bool = False,
) -> ResultsImport:
    """Read PATH (a workbook, or a directory of them), match every row to the suite and
    store the run; nothing is stored when any row does not match (InputError)."""
    model = published_model(model_name)
    files = result_files(path)
    suite = _resolve_suite(store, files, suite)
    sid = suite_id(store, suite)
    index = SuiteIndex(suite, run_cases(store, sid, None))
    matched = match_results(files, model, index, skip_invalid=skip_invalid)
    sources = [
        {"file": p.name, "sha256": file_sha256(p)} for p in files if p not in matched.without_model
    ]
    name = run or f"{suite}-decop-{model.name}-published"
    spec = run_spec(name, suite, model, sources, matched, suite_doc_type(store, sid))
    skipped: dict[str, list[RowProblem]] = {}
    for where, problem in matched.skipped:
        skipped.setdefault(where.name, []).append(problem)
    status = save_imported_scores(store, spec, matched.rows, replace=replace, skipped=skipped)
    return ResultsImport(name, suite, model, status, len(sources), matched)
