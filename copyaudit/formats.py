"""Importers for the source studies' published formats, and the reverse mapping.

Each study reads its own files (copyaudit/studies/*/format.py, looked up by kind in
copyaudit.studies.registry); the generic reading and field checks are in
copyaudit.records. Formats by kind:
  literal, qa   {id, title, input, reference[, author, year]}       JSON array or JSONL
  nonliteral    {id, title, input, reference_events: [str],
                 reference_characters: [[alias, ...], ...][, author, year]}
  decop         BookTection / arXivTection CSV: Example_A..Example_D, Answer, ID, Label
                [, Length]; ID is Title_-_Author; Label 1 = suspect, 0 = clean.
                (JSONL with the same columns is accepted too: that is what export writes.)
  notice        {id, title, source_type, snippet, notice_level, notice, task, query
                 [, query_rewriting_weight]}, or the notice study's own
                dataset_<config>.json (see copyaudit.studies.notice.dataset), detected by its fields
  generations   {case_id, output[, template, model]} (template defaults to 1; model: who
                wrote the output, the same in every row of a file)

A file whose structure is wrong (not UTF-8, not JSON/CSV, a required column absent
from every record) is rejected whole. A record whose content cannot be used is a
`RowProblem`: readers collect every one of them (`Loaded.problems`) and the caller
either stops (`InvalidRows`, the default) or imports the other records and keeps
the problems as the skipped rows (`--skip-invalid`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from copyaudit.columns import NO_MAP, ColumnMap, mapping
from copyaudit.errors import InputError, UserError
from copyaudit.file_kinds import SUFFIXES, detect, is_datasets_dir
from copyaudit.records import (
    LocatedCase,
    LocatedGeneration,
    Record,
    collect,
    id_field,
    int_field,
    read_json_records,
    string_field,
)
from copyaudit.rows import Loaded, RowProblem
from copyaudit.sources import read_records
from copyaudit.studies.registry import STUDIES
from copyaudit.types import Case

# names other modules import from here
__all__ = [
    "LocatedCase",
    "LocatedGeneration",
    "Record",
    "case_to_record",
    "check_kind",
    "collect",
    "load_cases",
    "load_generations",
    "read_cases",
    "read_generations",
    "read_json_records",
    "read_records",
]


def check_kind(kind: str, path: str | Path) -> None:
    if kind not in STUDIES:
        raise InputError(path, None, "kind", f"unknown kind '{kind}' (one of {', '.join(STUDIES)})")


def read_cases(
    kind: str,
    path: str | Path,
    prefix_tokens: int | None = None,
    continuation_tokens: int | None = None,
    columns: ColumnMap = NO_MAP,
) -> Loaded[LocatedCase]:
    """Every usable case of the file (any format copyaudit.sources reads, its columns
    renamed by `columns`) and the problems of the others; structural problems (not
    UTF-8, a required field absent, an unknown --map column) raise InputError.
    `prefix_tokens`: whole texts cut into prefix and continuation (StudySpec.split_cases)."""
    check_kind(kind, path)
    detect(path)  # a directory, a missing file: said now, before the store opens
    spec = STUDIES[kind]
    if prefix_tokens is not None and spec.split_cases is None:
        raise UserError(f"--prefix-tokens is not for {kind} files")
    with mapping(columns):  # the readers take it when called, here
        if prefix_tokens is None:
            return spec.read_cases(kind, path)
        assert spec.split_cases is not None
        return spec.split_cases(path, prefix_tokens, continuation_tokens)


def load_cases(kind: str, path: str | Path, *, skip_invalid: bool = False) -> list[LocatedCase]:
    """The file's cases; raises InvalidRows listing every unusable record unless
    `skip_invalid` (then those are left out)."""
    return read_cases(kind, path).accept(skip_invalid)


MAX_TEMPLATE = 1000  # a prompt template's number: the studies use a handful
# what `export generations` writes besides the fields read, so that its file imports quietly
GENERATION_EXPORT_FIELDS = (
    "generation",
    "run",
    "prompt",
    "tokens",
    "seconds",
    "source",
    "error",
    "created_at",
)


def _parse_generation(record: Record) -> LocatedGeneration:
    case_id = id_field(record, "case_id")
    output = string_field(record, "output", allow_empty=True)
    template = record.typed("template")
    template = 1 if template is None else template
    if isinstance(template, bool) or not isinstance(template, int) or template < 1:
        raise record.error("template", f"expected a positive integer, got {template!r}")
    int_field(record, "template", 1, MAX_TEMPLATE, template)
    model = string_field(record, "model", required=False)
    return LocatedGeneration(record.line, case_id, template, output, model)


def read_generations(path: str | Path, columns: ColumnMap = NO_MAP) -> Loaded[LocatedGeneration]:
    """A generations file {case_id, output[, template, model]}, any format
    copyaudit.sources reads, its columns renamed by `columns`: usable rows and problems."""
    detect(path)  # a directory, a missing file: said now
    with mapping(columns):
        return _collect_generations(path)


def _collect_generations(path: str | Path) -> Loaded[LocatedGeneration]:
    return collect(
        path,
        read_records(path),
        _parse_generation,
        required=("case_id", "output"),
        ignored=GENERATION_EXPORT_FIELDS,
        key=lambda g: f"{g.template}\x1f{g.case_id}",  # one str a row: compact
        duplicate=lambda g, first: RowProblem(
            g.line,
            "case_id",
            f"duplicate generation for case '{g.case_id}' template {g.template} "
            f"(first on line {first})",
        ),
    )


class GenerationFile:
    """One generations file and the run it becomes. Its rows stream (`rows()`), each
    checked to name the file's one model as it goes; `model` is complete once they
    were read (asked first, it reads the file)."""

    def __init__(
        self, path: Path, run: str, loaded: Loaded[LocatedGeneration], given: str | None,
        default: str | None = None,
    ) -> None:  # fmt: skip
        self.path = path
        self.run = run
        self.loaded = loaded
        self.given = given  # --model
        self.default = default  # without a `model` field: a directory's file stem
        self.first: LocatedGeneration | None = None  # the first row naming a model
        self.read = False  # every row was read

    def rows(self) -> Iterator[LocatedGeneration]:
        """The usable rows (their problems in `loaded.problems` at the end); a row
        naming another model than the file's first (or --model) raises InputError."""
        for g in self.loaded.stream():
            if g.model is not None:
                self._check(g)
            yield g
        self.read = True

    def _check(self, g: LocatedGeneration) -> None:
        if self.first is None:
            self.first = g
        expected = self.given or self.first.model
        if g.model != expected:
            why = f"--model {self.given}" if self.given else f"line {self.first.line}"
            raise InputError(
                self.path,
                g.line,
                "model",
                f"'{g.model}' differs from '{expected}' ({why}); one model per file",
            )

    @property
    def model(self) -> str | None:
        """--model, else the model the rows name, else `default` (None: the run's
        existing model, or 'imported' for a new run)."""
        if not self.read:
            self.loaded.items  # noqa: B018 - asked before the rows: reads the file
            for _ in self.rows():
                pass
        named = self.first.model if self.first is not None else None
        return self.given or named or self.default


# the files of a directory of generation files that are read: every format's usual names
GENERATION_FILE_SUFFIXES = tuple(s for suffixes in SUFFIXES.values() for s in suffixes)


def read_generation_files(
    path: Path, run: str | None, model: str | None, columns: ColumnMap = NO_MAP
) -> list[GenerationFile]:
    """PATH a file (or a `datasets` save_to_disk folder): one run, named by `run`. PATH
    a directory: one run per generations file in it (GENERATION_FILE_SUFFIXES), named
    after the file (`run`-stem with `run` given, else the stem), its model the rows'
    `model` field or else the file's stem. The files are read when their rows are
    (GenerationFile.rows)."""
    if not path.is_dir() or is_datasets_dir(path):
        if run is None:
            raise UserError("import-generations FILE needs --run NAME")
        return [GenerationFile(path, run, read_generations(path, columns), model)]
    if model is not None:
        raise UserError(
            "--model is for one file: in a directory each file names its model (the rows' "
            "`model` field, else the file name)"
        )
    files = sorted(
        p
        for p in path.iterdir()
        if p.suffix.lower() in GENERATION_FILE_SUFFIXES or is_datasets_dir(p)
    )
    if not files:
        names = ", ".join(GENERATION_FILE_SUFFIXES)
        raise UserError(f"{path}: no generations files ({names}) in this directory")
    out = []
    for file in files:
        name = f"{run}-{file.stem}" if run else file.stem
        out.append(GenerationFile(file, name, read_generations(file, columns), None, file.stem))
    return out


def load_generations(path: str | Path, *, skip_invalid: bool = False) -> list[LocatedGeneration]:
    """Parse a generations file {case_id, output[, template]}."""
    return read_generations(path).accept(skip_invalid)


def case_to_record(case: Case) -> dict[str, Any]:
    """The record that `load_cases(case.kind, ...)` reads back as the same case."""
    return STUDIES[case.kind].to_record(case)
