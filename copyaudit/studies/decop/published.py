"""DE-COP's published per-book results as a run: `copyaudit import decop-results`.

The authors publish one workbook per book (`<ID>_Paraphrases_Oversampling.xlsx`, ID =
Title_-_Author as in BookTection): one row per prompt, the 24 option orders of each
passage in turn, with columns `Example A`..`Example D`, `True Answer`, `Label` and, per
model, either the four answer-letter probabilities (ChatGPT, LLaMA-2) or the letter the
model chose (black-box models: Claude, Mistral, Mixtral). `PUBLISHED_MODELS` maps each
model to its columns.

Each row is matched to a passage of a DE-COP suite by text: the work by the file's ID,
the passage by its verbatim option (the one at `True Answer`) and its three paraphrases,
the order by where each option stands. Probabilities are stored as the run stores its
own; a letter as a one-hot row (as the openai backend's letter-only mode); a cell that
names no letter as an unread prompt (NaN, with the reason), which the report leaves out
of the accuracies, as it does for a run's own unread prompts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copyaudit.errors import InputError, UserError
from copyaudit.models.openai_compat import one_hot_letter
from copyaudit.rows import RowProblem
from copyaudit.studies.decop.method import ANSWER_LETTERS, N_ORDERS, all_orders
from copyaudit.studies.decop.orders import OPTION_TAGS
from copyaudit.studies.decop.published_models import PublishedModel, fold
from copyaudit.types import Case
from db.decop import DecopScoreRow

FILE_SUFFIX = "_Paraphrases_Oversampling"
FILE_GLOB = f"*{FILE_SUFFIX}*.xlsx"
OPTION_COLUMNS = tuple(f"Example {letter}" for letter in ANSWER_LETTERS)
ANSWER_COLUMN = "True Answer"
LABEL_COLUMN = "Label"
MAX_LISTED = 20  # problems listed in one error message


def result_files(path: Path) -> list[Path]:
    """PATH itself, or every `*_Paraphrases_Oversampling*.xlsx` under the directory PATH."""
    if path.is_dir():
        files = sorted(p for p in path.rglob(FILE_GLOB) if not p.name.startswith("~$"))
        if not files:
            raise UserError(f"{path}: no {FILE_GLOB} files in this directory")
        return files
    if not path.is_file():
        raise UserError(f"{path}: no such file or directory")
    return [path]


def book_id(path: Path) -> str:
    """The work ID a workbook is named after: `1984_-_George_Orwell` from
    `1984_-_George_Orwell_Paraphrases_Oversampling[_medium].xlsx`."""
    stem, _, _ = path.stem.partition(FILE_SUFFIX)
    return stem


@dataclass(frozen=True)
class PublishedRow:
    """One prompt of a workbook: its row number, the options A..D, the true letter's
    index, the label (None when the column is absent or empty) and the model's cells."""

    row: int
    options: tuple[Any, ...]
    answer: Any
    label: Any
    cells: tuple[Any, ...]


@dataclass
class Workbook:
    path: Path
    book: str
    rows: list[PublishedRow] = field(default_factory=list)
    has_model: bool = True


def read_workbook(path: Path, model: PublishedModel) -> Workbook:
    """The rows of one authors' workbook (first sheet). A workbook without the model's
    columns has `has_model` False (the authors' files do not all hold every model)."""
    import openpyxl  # deferred: only this import reads workbooks

    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile / KeyError / InvalidFileException
        raise InputError(path, None, None, f"not an Excel workbook ({exc})") from None
    try:
        sheet = book.worksheets[0]
        rows = sheet.iter_rows(values_only=True)
        header = [str(h).strip() if h is not None else "" for h in next(rows, ())]
        where = {name: i for i, name in enumerate(header)}
        for column in (*OPTION_COLUMNS, ANSWER_COLUMN):
            if column not in where:
                raise InputError(
                    path, 1, column, "missing column (the authors' layout)", unit="row"
                )
        out = Workbook(path, book_id(path), has_model=all(c in where for c in model.columns()))
        if not out.has_model:
            return out
        pick = lambda values, names: tuple(  # noqa: E731
            values[where[n]] if where[n] < len(values) else None for n in names
        )
        for number, values in enumerate(rows, start=2):
            if all(v is None for v in values):
                continue
            out.rows.append(
                PublishedRow(
                    number,
                    pick(values, OPTION_COLUMNS),
                    pick(values, (ANSWER_COLUMN,))[0],
                    pick(values, (LABEL_COLUMN,))[0] if LABEL_COLUMN in where else None,
                    pick(values, model.columns()),
                )
            )
        return out
    except InputError:
        raise
    except Exception as exc:  # read-only mode parses the sheet's XML while iterating
        raise InputError(path, None, None, f"a damaged Excel workbook ({exc})") from None
    finally:
        book.close()


# ---------------------------------------------------------------------------
# Matching rows to the suite's passages
# ---------------------------------------------------------------------------


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class SuitePassage:
    case_pk: int
    options: dict[str, str]  # tag (V, P1..P3) -> normalised text
    membership: str
    length: str | None


def _suite_passage(case_pk: int, case: Case) -> SuitePassage:
    options = [_norm(o) for o in case.payload["options"]]
    answer = int(case.payload["answer"])
    paraphrases = [o for i, o in enumerate(options) if i != answer]
    tags = dict(zip(OPTION_TAGS, [options[answer], *paraphrases], strict=True))
    return SuitePassage(case_pk, tags, case.work.membership, case.payload.get("length"))


class SuiteIndex:
    """A DE-COP suite's passages by work ID and verbatim text."""

    def __init__(self, name: str, cases: Sequence[tuple[int, Case]]) -> None:
        self.name = name
        self.by_work: dict[str, dict[str, list[SuitePassage]]] = {}
        for case_pk, case in cases:
            passage = _suite_passage(case_pk, case)
            for key in self._work_keys(case):
                by_text = self.by_work.setdefault(key, {})
                by_text.setdefault(passage.options["V"], []).append(passage)

    @staticmethod
    def _work_keys(case: Case) -> set[str]:
        """A work is found by its raw ID, or by "Title_-_Author" rebuilt from its names."""
        keys = {fold(f"{case.work.title}_-_{case.work.author or ''}")}
        if case.payload.get("id"):
            keys.add(fold(str(case.payload["id"])))
        return keys

    def work(self, book: str) -> dict[str, list[SuitePassage]] | None:
        return self.by_work.get(fold(book))


ORDER_OF: dict[tuple[str, ...], int] = {
    tuple(tags): i for i, (tags, _) in enumerate(all_orders(OPTION_TAGS[0], OPTION_TAGS[1:]))
}
_ANSWERS = [answer for _, answer in all_orders(OPTION_TAGS[0], OPTION_TAGS[1:])]


@dataclass
class _Scores:
    """The 24 orders of one passage as they are read."""

    passage: SuitePassage
    first_row: int
    probs: list[list[float] | None] = field(default_factory=lambda: [None] * N_ORDERS)
    rows: list[int | None] = field(default_factory=lambda: [None] * N_ORDERS)
    errors: dict[int, str] = field(default_factory=dict)


@dataclass
class Matched:
    """What a set of workbooks gives: a score row per passage, and what was noticed."""

    rows: list[DecopScoreRow]
    works: int
    unread_prompts: int
    lengths: set[str]
    without_model: list[Path]
    skipped: list[tuple[Path, RowProblem]] = field(default_factory=list)


def _text(value: object) -> str | None:
    return _norm(value) if isinstance(value, str) and value.strip() else None


def _model_row(model: PublishedModel, cells: Sequence[Any]) -> tuple[list[float], str | None]:
    """p(A)..p(D) from the cells, and why they are unread (None when read). Raises
    ValueError naming the column for a probability that is not a number in [0, 1]."""
    if model.probabilities is None:
        text = "" if cells[0] is None else str(cells[0])
        try:
            return one_hot_letter(text.strip(), ANSWER_LETTERS).tolist(), None
        except ValueError:
            return [math.nan] * 4, f"the published answer {text!r} names no letter A-D"
    probs = []
    for column, value in zip(model.columns(), cells, strict=True):
        try:
            p = float(value)
        except (TypeError, ValueError):
            raise ValueError(column, f"'{value}' is not a probability") from None
        if not 0.0 <= p <= 1.0:
            raise ValueError(column, f"{p} is not a probability in [0, 1]")
        probs.append(p)
    return probs, None


def _match_row(
    row: PublishedRow, work: dict[str, list[SuitePassage]], suite: str, book: str
) -> tuple[list[SuitePassage], int]:
    """The passages a row can belong to (more than one where the suite holds the same
    passage twice) and its order index; ValueError(field, reason) when it has none."""
    texts = [_text(o) for o in row.options]
    for column, text in zip(OPTION_COLUMNS, texts, strict=True):
        if text is None:
            raise ValueError(column, "missing or empty passage")
    answer = str(row.answer or "").strip().upper()
    if answer not in ANSWER_LETTERS:
        raise ValueError(ANSWER_COLUMN, f"'{row.answer}' is not one of A, B, C, D")
    true_column = OPTION_COLUMNS[ANSWER_LETTERS.index(answer)]
    candidates = work.get(str(texts[ANSWER_LETTERS.index(answer)]), [])
    if not candidates:
        raise ValueError(true_column, f"the verbatim passage is not in suite '{suite}' ({book})")
    matches: list[SuitePassage] = []
    order, missing = -1, -1
    for passage in candidates:
        by_text = {text: tag for tag, text in passage.options.items()}
        tags = tuple(by_text.get(str(text)) for text in texts)
        if None not in tags and len(set(tags)) == 4:
            matches.append(passage)
            order = ORDER_OF[tags]  # type: ignore[index]
        elif missing < 0:
            missing = next(i for i, t in enumerate(tags) if t is None or tags.count(t) > 1)
    if not matches:
        raise ValueError(
            OPTION_COLUMNS[missing],
            f"not one of the paraphrases of the matching passage in suite '{suite}'",
        )
    return matches, order


def _check_label(row: PublishedRow, passage: SuitePassage) -> None:
    if row.label is None or str(row.label).strip() == "":
        return
    value = row.label
    label = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    label = label.strip()
    expected = {"suspect": "1", "clean": "0"}.get(passage.membership)
    if label not in ("0", "1"):
        raise ValueError(LABEL_COLUMN, f"'{row.label}' is not 0 (clean) or 1 (suspect)")
    if expected is not None and label != expected:
        raise ValueError(
            LABEL_COLUMN, f"{label}, but the suite's work is {passage.membership} ({expected})"
        )


def _read_book(
    book: Workbook,
    model: PublishedModel,
    index: SuiteIndex,
    scores: dict[int, _Scores],
    problems: list[RowProblem],
) -> None:
    work = index.work(book.book)
    if work is None:
        problems.append(
            RowProblem(
                0,
                None,
                f"no work '{book.book}' in suite '{index.name}' (the file is named after "
                f"the work's ID: ID{FILE_SUFFIX}.xlsx)",
                "file",
            )
        )
        return
    for row in book.rows:
        try:
            matches, order = _match_row(row, work, index.name, book.book)
            # the first of the matching passages (one, unless the suite holds it twice)
            # whose order is still free: a passage repeated in the workbook fills its copy
            passage = next(
                (
                    p
                    for p in matches
                    if p.case_pk not in scores or scores[p.case_pk].rows[order] is None
                ),
                matches[0],
            )
            _check_label(row, passage)
            probs, unread = _model_row(model, row.cells)
        except ValueError as exc:
            column, reason = exc.args
            problems.append(RowProblem(row.row, column, reason, "row"))
            continue
        held = scores.setdefault(passage.case_pk, _Scores(passage, row.row))
        if held.rows[order] is not None:
            problems.append(
                RowProblem(
                    row.row, None, f"repeats the option order of row {held.rows[order]}", "row"
                )
            )
            continue
        held.rows[order], held.probs[order] = row.row, probs
        if unread is not None:
            held.errors[order] = unread


def _raise_problems(found: Sequence[tuple[Path, RowProblem]], skip_invalid: bool) -> None:
    """One InputError naming the first problem's file, row and field, listing the rest."""
    path, first = found[0]
    error = InputError(path, first.line or None, first.field, first.reason, unit=first.unit)
    hint = "no passage can be imported" if skip_invalid else "--skip-invalid imports the rest"
    lines = [f"{error} (nothing imported; {hint})"]
    if len(found) > 1:
        lines = [f"{len(found):,} problems in the results (nothing imported; {hint}):"]
        for where, p in found[:MAX_LISTED]:
            at = f"{p.unit} {p.line}: " if p.line else ""
            column = f"field '{p.field}': " if p.field else ""
            lines.append(f"  {where}: {at}{column}{p.reason}")
        if len(found) > MAX_LISTED:
            lines.append(f"  … and {len(found) - MAX_LISTED:,} more")
    error.args = ("\n".join(lines),)
    raise error


def match_results(
    files: Sequence[Path], model: PublishedModel, index: SuiteIndex, skip_invalid: bool = False
) -> Matched:
    """Every workbook's rows matched to the suite's passages. Any row that does not
    match raises InputError (every problem listed, with file, row and field); with
    `skip_invalid` the passages with all 24 orders read are kept and the problems are
    returned as `skipped` (a passage missing an order is one of them)."""
    found: list[tuple[Path, RowProblem]] = []
    rows: list[DecopScoreRow] = []
    works = unread = 0
    lengths: set[str] = set()
    without: list[Path] = []
    for path in files:
        book = read_workbook(path, model)
        if not book.has_model:
            without.append(path)
            continue
        if not book.rows:  # a header alone would make an empty run
            found.append(
                (path, RowProblem(0, None, "no rows under the header: no results", "file"))
            )
            continue
        scores: dict[int, _Scores] = {}
        problems: list[RowProblem] = []
        _read_book(book, model, index, scores, problems)
        complete = []
        for held in sorted(scores.values(), key=lambda s: s.passage.case_pk):
            have = sum(p is not None for p in held.probs)
            if have == N_ORDERS:
                complete.append(held)
                continue
            problems.append(
                RowProblem(
                    held.first_row,
                    None,
                    f"the passage starting here has {have} of its {N_ORDERS} option orders",
                    "row",
                )
            )
        found += [(path, p) for p in sorted(problems, key=lambda p: p.line)]
        works += bool(complete)
        for held in complete:
            rows.append(
                DecopScoreRow(
                    case_pk=held.passage.case_pk,
                    probs=[p for p in held.probs if p is not None],
                    answers=_ANSWERS,
                    errors=held.errors or None,
                )
            )
            unread += len(held.errors)
            if held.passage.length is not None:
                lengths.add(held.passage.length)
    if found and not (skip_invalid and rows):
        _raise_problems(found, skip_invalid)
    if len(without) == len(files):
        named = ", ".join(str(p) for p in files[:3]) + (" …" if len(files) > 3 else "")
        raise UserError(
            f"{named}: no workbook holds the {model.name} columns ({', '.join(model.columns())})"
        )
    if len(lengths) > 1:
        raise UserError(
            f"the results cover passages of {len(lengths)} lengths ({', '.join(sorted(lengths))}); "
            "DE-COP scores one length per run: import each length's files separately"
        )
    return Matched(rows, works, unread, lengths, without, found)
