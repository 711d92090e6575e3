"""DE-COP's case files: the BookTection / arXivTection CSV as published
(Example_A..Example_D, Answer, ID, Label[, Length]; ID is Title_-_Author; Label 1 =
suspect, 0 = clean), or the same columns in any format copyaudit.sources reads (JSON
Lines is what `export` writes)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from copyaudit.records import LocatedCase, Record, collect
from copyaudit.rows import Loaded, RowProblem
from copyaudit.sources import read_records
from copyaudit.types import Case, Work

DECOP_LETTERS = ("A", "B", "C", "D")
DECOP_COLUMNS = ("Example_A", "Example_B", "Example_C", "Example_D", "Answer", "ID", "Label")


def parse_decop_id(value: str) -> tuple[str, str | None]:
    """'Pride_and_Prejudice_-_Jane_Austen' -> ('Pride and Prejudice', 'Jane Austen')."""
    title, sep, author = value.partition("_-_")
    clean = lambda s: " ".join(s.replace("_", " ").split())  # noqa: E731
    return clean(title), (clean(author) if sep else None)


def _decop_options(record: Record) -> list[str]:
    options = []
    for letter in DECOP_LETTERS:
        field = f"Example_{letter}"
        value = record.data.get(field)
        if not isinstance(value, str) or not value.strip():
            raise record.error(field, "missing or empty passage")
        options.append(value)
    for i, option in enumerate(options):
        same = [f"Example_{DECOP_LETTERS[j]}" for j in range(i) if options[j] == option]
        if same:
            raise record.error(
                f"Example_{DECOP_LETTERS[i]}",
                f"identical to {same[0]} (the four options must be distinct)",
            )
    return options


MEMBERSHIP = {"1": "suspect", "0": "clean"}


@dataclass
class _FileState:
    """What the rows read so far say: each work's passage count and its first label
    (with the row giving it), and each row's content (to notice exact repeats)."""

    counters: dict[str, int] = field(default_factory=dict)
    labels: dict[str, tuple[str, int]] = field(default_factory=dict)
    rows: dict[bytes, int] = field(default_factory=dict)  # a digest of each row's content
    repeats: list[RowProblem] = field(default_factory=list)

    def note_repeat(self, record: Record) -> None:
        """An exact repeat of an earlier row is a warning, not an error: the published
        BookTection holds a passage twice (Udolpho) and the authors' workbooks score
        both copies, so refusing it would keep the paper's suite out."""
        content = repr(sorted((k, str(v)) for k, v in record.data.items()))
        # 16 bytes a row, not the row: the rows stream and the file may be large
        digest = hashlib.blake2b(content.encode(), digest_size=16).digest()
        first = self.rows.setdefault(digest, record.line)
        if first != record.line:
            self.repeats.append(
                RowProblem(
                    record.line,
                    None,
                    f"repeats {record.unit} {first} exactly (imported as a second passage)",
                    record.unit,
                )
            )


def _check_membership(record: Record, state: _FileState, work_id: str, label: str) -> None:
    """A work is suspect or clean, never both: a row contradicting the work's first
    label is an error (suspect would otherwise win and skew the AUC)."""
    first, row = state.labels.setdefault(work_id, (label, record.line))
    if first != label:
        raise record.error(
            "Label",
            f"{label} ({MEMBERSHIP[label]}), but {record.unit} {row} marks work "
            f"'{work_id}' {first} ({MEMBERSHIP[first]}): a work is either suspect or clean",
        )


def _parse_decop_row(record: Record, state: _FileState) -> Case:
    data = record.data
    raw_id = data.get("ID")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raise record.error("ID", "missing (expected Title_-_Author)")
    work_id = raw_id.strip()
    # numbered by position among the work's rows, valid or not: a skipped row leaves
    # a gap, so fixing it later does not renumber the work's other passages
    counters = state.counters
    counters[work_id] = counters.get(work_id, 0) + 1
    number = counters[work_id]
    options = _decop_options(record)
    answer = str(data.get("Answer", "")).strip().upper()
    if answer not in DECOP_LETTERS:
        raise record.error("Answer", f"'{data.get('Answer')}' is not one of A, B, C, D")
    label = str(data.get("Label", "")).strip()
    if label not in MEMBERSHIP:
        raise record.error("Label", f"'{data.get('Label')}' is not 0 (clean) or 1 (suspect)")
    _check_membership(record, state, work_id, label)
    title, author = parse_decop_id(work_id)
    payload: dict[str, Any] = {
        "options": options,
        "answer": DECOP_LETTERS.index(answer),
        "id": work_id,
    }
    length = data.get("Length")
    if length not in (None, ""):
        payload["length"] = str(length)
    return Case(
        case_id=f"{work_id}/{number}",
        kind="decop",
        work=Work(title=title, author=author, membership=MEMBERSHIP[label]),
        payload=payload,
    )


def read_cases(kind: str, path: str | Path) -> Loaded[LocatedCase]:
    """The file's passages, numbered per work, and the problems of the other rows."""
    state = _FileState()
    records = read_records(path, DECOP_COLUMNS)

    def parse(record: Record) -> LocatedCase:
        state.note_repeat(record)
        return LocatedCase(record.line, _parse_decop_row(record, state))

    # repeats are found while the rows stream: the list is the result's warnings
    return collect(path, records, parse, required=DECOP_COLUMNS, warnings=state.repeats)


def to_record(case: Case) -> dict[str, Any]:
    """The CSV row `read_cases` reads back as the same passage."""
    p = case.payload
    row: dict[str, Any] = {
        f"Example_{letter}": p["options"][i] for i, letter in enumerate(DECOP_LETTERS)
    }
    row.update(
        Answer=DECOP_LETTERS[p["answer"]],
        ID=p["id"],
        Label=1 if case.work.membership == "suspect" else 0,
    )
    if "length" in p:
        row["Length"] = p["length"]
    return row
