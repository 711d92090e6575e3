"""`copyaudit import decop-results`: DE-COP's published per-book workbooks, in the
authors' layout (built here with openpyxl from our own text), become a DE-COP run whose
report gives the accuracies computed by hand below."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from copyaudit.hashing import file_sha256
from copyaudit.studies.decop.report import decop_report
from db import Store
from tests.conftest import database_fingerprint
from tests.factories import write_decop_csv

LETTERS = "ABCD"
SUSPECT = "The_Glass_Orchard_-_Ada_Lowe"
CLEAN = "Winter_at_Pell_Farm_-_Ada_Lowe"
# The authors' columns (their workbooks hold more models; two suffice here).
HEADER = [
    "Example A",
    "Example B",
    "Example C",
    "Example D",
    "True Answer",
    "A_Probability",
    "B_Probability",
    "C_Probability",
    "D_Probability",
    "Max_Label_NoDebias",
    "Claude2.1",
    "Label",
]


def passage(work: str, i: int) -> tuple[str, list[str]]:
    """Our own verbatim passage and three paraphrases."""
    return (
        f"The lamp in {work.split('_-_')[0]} burned low on night {i}, and the keeper waited.",
        [
            f"On night {i} the lamp of {work.split('_-_')[0]} burned dim while the keeper waited.",
            f"The keeper waited as the lamp in {work.split('_-_')[0]} guttered on night {i}.",
            f"Night {i}: in {work.split('_-_')[0]} the lamp was low and the keeper kept waiting.",
        ],
    )


def write_suite(path: Path) -> Path:
    """Two passages per work; the verbatim option stands at C in the suite's CSV, so the
    workbook's orders must be matched by text, not by position."""
    rows = []
    for work, label in ((SUSPECT, 1), (CLEAN, 0)):
        for i in (1, 2):
            verbatim, paraphrases = passage(work, i)
            options = [paraphrases[0], paraphrases[1], verbatim, paraphrases[2]]
            rows.append(
                {
                    **{f"Example_{x}": o for x, o in zip(LETTERS, options, strict=True)},
                    "Answer": "C",
                    "ID": work,
                    "Label": label,
                    "Length": "medium",
                }
            )
    return write_decop_csv(path, rows)


# Which letter the "model" picks, given the true letter: hand-computed accuracies below.
#   suspect, passage 1: always the true letter                -> 24 of 24
#   suspect, passage 2: true letter when it is A or B, else A -> 12 of 24
#   clean, both passages: always D                            ->  6 of 24 each
CHOOSERS: dict[tuple[str, int], Callable[[str], str]] = {
    (SUSPECT, 1): lambda true: true,
    (SUSPECT, 2): lambda true: true if true in "AB" else "A",
    (CLEAN, 1): lambda true: "D",
    (CLEAN, 2): lambda true: "D",
}
ACCURACY = {"The Glass Orchard": 36 / 48, "Winter at Pell Farm": 12 / 48}


def workbook_rows(work: str, label: int | None) -> list[list[Any]]:
    """The authors' layout (oversample_labels_fn.py): per passage, the 24 permutations of
    (verbatim, paraphrase 1..3), True Answer = the verbatim's letter."""
    rows = []
    for i in (1, 2):
        verbatim, paraphrases = passage(work, i)
        base = [verbatim, *paraphrases]
        for perm in itertools.permutations(range(4)):
            true = LETTERS[perm.index(0)]
            chosen = CHOOSERS[(work, i)](true)
            probs = [0.7 if x == chosen else 0.1 for x in LETTERS]
            rows.append([*(base[k] for k in perm), true, *probs, chosen, chosen, label])
    return rows


def write_workbook(path: Path, rows: list[list[Any]], header: list[str] | None = None) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(header or HEADER)
    for row in rows:
        sheet.append(row)
    book.save(path)
    return path


def results_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    for sub, work, label in (("Suspect", SUSPECT, 1), ("Clean", CLEAN, 0)):
        (folder / sub).mkdir(parents=True)
        write_workbook(
            folder / sub / f"{work}_Paraphrases_Oversampling.xlsx", workbook_rows(work, label)
        )
    return folder


@pytest.fixture
def suite(cli: Any, tmp_path: Path) -> str:
    result = cli("import", "decop", str(write_suite(tmp_path / "booktection.csv")), "--suite", "bt")
    assert result.code == 0, result.err
    return "bt"


def report(db_path: Path, run: str) -> dict[str, Any]:
    with Store(db_path) as store:
        return decop_report(store, run, n_bootstrap=50)


def test_probabilities_reproduce_hand_computed_accuracies(
    cli: Any, db_path: Path, tmp_path: Path, suite: str
) -> None:
    folder = results_dir(tmp_path)
    result = cli("import", "decop-results", str(folder), "--model", "chatgpt")
    assert result.code == 0, result.err
    assert "bt-decop-ChatGPT-published: added (4 passages of 2 works" in result.out
    got = report(db_path, "bt-decop-ChatGPT-published")
    assert {w["work"]: w["accuracy"] for w in got["per_work"]} == pytest.approx(ACCURACY)
    assert got["auc"] == 1.0  # one suspect work above one clean work
    assert got["method"] == "next_token_probabilities"
    assert got["passages"] == {"scored": 4, "total": 4}
    assert got["failed_prompts"] == 0
    conn = sqlite3.connect(db_path)
    backend, status, model, config = conn.execute(
        "SELECT backend, status, model, config FROM runs WHERE name = ?",
        ("bt-decop-ChatGPT-published",),
    ).fetchone()
    conn.close()
    assert (backend, status, model) == ("imported", "imported", "ChatGPT")
    sha = file_sha256(folder / "Suspect" / f"{SUSPECT}_Paraphrases_Oversampling.xlsx")
    assert f"{SUSPECT}_Paraphrases_Oversampling.xlsx ({sha})" in json.loads(config)["provenance"]
    assert json.loads(config)["length"] == "medium"


def test_stored_probabilities_are_the_published_cells(
    cli: Any, db_path: Path, tmp_path: Path, suite: str
) -> None:
    """Every stored row is the workbook row of the same option order: the verbatim text
    at the stored answer letter, the published probabilities at their letters."""
    folder = results_dir(tmp_path)
    assert cli("import", "decop-results", str(folder), "--model", "ChatGPT").code == 0
    published = {
        tuple(row[:4]): row[5:9] for row in workbook_rows(SUSPECT, 1) + workbook_rows(CLEAN, 0)
    }
    result = cli("export", "decop", "--run", "bt-decop-ChatGPT-published")
    exported = [json.loads(line) for line in result.out.splitlines()]
    assert len(exported) == 4 * 24
    for row in exported:
        options = [
            line.split(". ", 1)[1] for line in row["prompt"].splitlines() if line[1:3] == ". "
        ]
        assert [row[f"p_{x}"] for x in LETTERS] == published[tuple(options)]


def test_black_box_letters(cli: Any, db_path: Path, tmp_path: Path, suite: str) -> None:
    """Claude's chosen letters, one-hot; 'None' and '*' (no letter) are unread prompts,
    left out of the accuracy (the authors' script counts them as wrong)."""
    folder = results_dir(tmp_path)
    suspect = folder / "Suspect" / f"{SUSPECT}_Paraphrases_Oversampling.xlsx"
    rows = workbook_rows(SUSPECT, 1)
    # passage 1 (always right): two answers name no letter -> 22 of 22 read
    rows[0][10], rows[1][10] = "None", "*"
    write_workbook(suspect, rows)
    result = cli("import", "decop-results", str(folder), "--model", "Claude 2.1")
    assert result.code == 0, result.err
    assert "2 prompts name no letter" in result.out
    got = report(db_path, "bt-decop-Claude-2.1-published")
    assert got["method"] == "letter_only"
    assert got["failed_prompts"] == 2
    accuracy = {w["work"]: w["accuracy"] for w in got["per_work"]}
    assert accuracy == pytest.approx({"The Glass Orchard": 34 / 46, "Winter at Pell Farm": 0.25})


def test_single_file_and_reimport(cli: Any, db_path: Path, tmp_path: Path, suite: str) -> None:
    folder = results_dir(tmp_path)
    one = folder / "Clean" / f"{CLEAN}_Paraphrases_Oversampling.xlsx"
    args = ("import", "decop-results", str(one), "--model", "LLaMA-2-70B", "--run", "r")
    header = [h.replace("_Probability", "_Probability_LLAMMA2-70B") for h in HEADER]
    write_workbook(one, workbook_rows(CLEAN, 0), header)
    assert cli(*args).code == 0
    got = report(db_path, "r")
    assert [w["accuracy"] for w in got["per_work"]] == [pytest.approx(0.25)]
    assert got["passages"] == {"scored": 2, "total": 4}
    before = database_fingerprint(db_path)
    again = cli(*args)
    assert again.code == 0 and "r: unchanged" in again.out
    assert database_fingerprint(db_path) == before
    # a different file for the same run: refused, then replaced with --replace
    rows = workbook_rows(CLEAN, 0)
    rows[0][5:9] = [0.7, 0.1, 0.1, 0.1]  # order 0 (true letter A) now right: 13 of 48
    write_workbook(one, rows, header)
    refused = cli(*args)
    assert refused.code == 2
    assert "holds LLaMA-2-70B results imported from" in refused.err
    assert "use --replace" in refused.err
    assert database_fingerprint(db_path) == before
    replaced = cli(*args, "--replace")
    assert replaced.code == 0 and "r: replaced" in replaced.out
    assert [w["accuracy"] for w in report(db_path, "r")["per_work"]] == [pytest.approx(13 / 48)]


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (lambda r: r.__setitem__(1, "A passage that is in no suite."), "Example B", "not in suite"),
        (lambda r: r.__setitem__(3, "An unknown paraphrase."), "Example D", "paraphrases"),
        (lambda r: r.__setitem__(6, "high"), "B_Probability", "not a probability"),
        (lambda r: r.__setitem__(11, 0), "Label", "the suite's work is suspect"),
        (lambda r: r.__setitem__(4, "E"), "True Answer", "not one of A, B, C, D"),
    ],
)
def test_mismatched_row_is_refused_naming_file_row_and_field(
    cli: Any,
    db_path: Path,
    tmp_path: Path,
    suite: str,
    change: Callable[[list[Any]], None],
    field: str,
    reason: str,
) -> None:
    folder = results_dir(tmp_path)
    suspect = folder / "Suspect" / f"{SUSPECT}_Paraphrases_Oversampling.xlsx"
    rows = workbook_rows(SUSPECT, 1)
    change(rows[6])  # order (1, 0, 2, 3), verbatim at B: row 8 of the sheet (1 is the header)
    write_workbook(suspect, rows)
    before = database_fingerprint(db_path)
    result = cli("import", "decop-results", str(folder), "--model", "ChatGPT")
    assert result.code == 2
    assert f"{suspect}: row 8: field '{field}'" in result.err
    assert reason in result.err
    assert database_fingerprint(db_path) == before


def test_skip_invalid_keeps_complete_passages(
    cli: Any, db_path: Path, tmp_path: Path, suite: str
) -> None:
    folder = results_dir(tmp_path)
    suspect = folder / "Suspect" / f"{SUSPECT}_Paraphrases_Oversampling.xlsx"
    rows = workbook_rows(SUSPECT, 1)
    rows[30][0] = "A passage that is in no suite."  # passage 2, one order lost
    write_workbook(suspect, rows)
    result = cli("import", "decop-results", str(folder), "--model", "ChatGPT", "--skip-invalid")
    assert result.code == 0, result.err
    assert "3 passages of 2 works" in result.out
    got = report(db_path, "bt-decop-ChatGPT-published")
    accuracy = {w["work"]: w["accuracy"] for w in got["per_work"]}
    assert accuracy == pytest.approx({"The Glass Orchard": 1.0, "Winter at Pell Farm": 0.25})
    assert got["results_note"].startswith("72 of 74 rows; 2 skipped: ")


def test_unknown_work_and_model(cli: Any, db_path: Path, tmp_path: Path, suite: str) -> None:
    stray = write_workbook(
        tmp_path / "Another_Book_-_Nobody_Paraphrases_Oversampling.xlsx",
        workbook_rows(SUSPECT, 1),
    )
    result = cli("import", "decop-results", str(stray), "--model", "ChatGPT", "--suite", "bt")
    assert result.code == 2
    assert "no work 'Another_Book_-_Nobody' in suite 'bt'" in result.err
    unknown = cli("import", "decop-results", str(stray), "--model", "GPT-5")
    assert unknown.code == 2 and "ChatGPT, GPT-3, LLaMA-2-7B" in unknown.err
    no_model = cli(
        "import", "decop-results", str(stray), "--model", "Mixtral-8x7B", "--suite", "bt"
    )
    assert no_model.code == 2 and "no workbook holds the Mixtral-8x7B columns" in no_model.err


@pytest.mark.anyio
async def test_imported_run_opens_in_the_decop_view(
    cli: Any, db_path: Path, tmp_path: Path, suite: str
) -> None:
    from screens.app import CopyauditApp
    from screens.decop.run_view import DecopScreen
    from tests.test_screens_data import settle

    assert (
        cli("import", "decop-results", str(results_dir(tmp_path)), "--model", "ChatGPT").code == 0
    )
    app = CopyauditApp(db_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_run("bt-decop-ChatGPT-published")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, DecopScreen) and screen.view is not None
        table = screen.query_one("#decop-works")
        rows = {str(table.get_row_at(i)[0]): table.get_row_at(i) for i in range(table.row_count)}
        assert {name: str(row[3]) for name, row in rows.items()} == {
            "The Glass Orchard": "0.750",
            "Winter at Pell Farm": "0.250",
        }
        assert "ROC-AUC 1.000" in str(screen.query_one("#decop-summary").render())


def test_a_passage_the_suite_and_the_workbook_hold_twice(
    cli: Any, db_path: Path, tmp_path: Path
) -> None:
    """The authors' Udolpho workbook repeats a passage that BookTection also holds twice:
    the repeated rows fill the second copy instead of being refused as repeats."""
    csv_path = write_suite(tmp_path / "booktection.csv")
    lines = csv_path.read_text(encoding="utf-8-sig").splitlines(keepends=True)
    csv_path.write_text("".join([*lines, lines[-1]]), encoding="utf-8")  # clean passage 2 again
    assert cli("import", "decop", str(csv_path), "--suite", "bt").code == 0
    folder = results_dir(tmp_path)
    clean = folder / "Clean" / f"{CLEAN}_Paraphrases_Oversampling.xlsx"
    rows = workbook_rows(CLEAN, 0)
    write_workbook(clean, rows + rows[24:])
    result = cli("import", "decop-results", str(folder), "--model", "ChatGPT")
    assert result.code == 0, result.err
    got = report(db_path, "bt-decop-ChatGPT-published")
    assert got["passages"] == {"scored": 5, "total": 5}
    assert {w["work"]: w["accuracy"] for w in got["per_work"]} == pytest.approx(ACCURACY)


def test_a_header_only_workbook_is_refused_naming_it(
    cli: Any, db_path: Path, tmp_path: Path, suite: str
) -> None:
    """Issue 33: a workbook with no rows under its header made an empty run."""
    empty = write_workbook(tmp_path / f"{SUSPECT}_Paraphrases_Oversampling.xlsx", [])
    result = cli("import", "decop-results", str(empty), "--model", "ChatGPT", "--suite", "bt")
    assert result.code == 2
    assert f"{empty}: no rows under the header: no results (nothing imported" in result.err
    assert json.loads(cli("runs", "--format", "json").out) == []  # no empty run


def test_every_refusal_names_its_file(cli: Any, db_path: Path, tmp_path: Path) -> None:
    """Issue 33: a workbook whose work no suite holds, and one without the model's columns."""
    cli("import", "decop", str(write_suite(tmp_path / "booktection.csv")), "--suite", "bt")
    stray = write_workbook(
        tmp_path / "Another_Book_-_Nobody_Paraphrases_Oversampling.xlsx", workbook_rows(SUSPECT, 1)
    )
    unknown = cli("import", "decop-results", str(stray), "--model", "ChatGPT")
    assert unknown.code == 2 and f"{stray}: no DE-COP suite holds the work" in unknown.err
    no_model = cli(
        "import", "decop-results", str(stray), "--model", "Mixtral-8x7B", "--suite", "bt"
    )
    assert no_model.code == 2 and f"{stray}: no workbook holds the Mixtral" in no_model.err
