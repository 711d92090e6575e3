"""Stored text printed to a terminal cannot drive it (control sequences escaped), and a
CSV export cannot run in a spreadsheet (formulas neutralised): one function each
(copyaudit.untrusted), used by every command that prints stored text and every CSV
writer."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from copyaudit.untrusted import csv_cell, csv_row, terminal_text
from tests.conftest import write_jsonl

# an OSC 8 hyperlink, a screen clear, a bell, a C1 CSI, a carriage return that hides text
HOSTILE = "ok\x1b]8;;http://evil.example\x07click\x1b]8;;\x07\x1b[2J\x9b31m\rcovered\x7f"
RAW_CONTROLS = ("\x1b", "\x07", "\x9b", "\r", "\x7f")


def test_terminal_text_escapes_controls_but_newline_and_tab() -> None:
    shown = terminal_text("a\x1b[31mb\tc\nd\x00e\x85f\u00e9\u4e2d")
    assert shown == "a\\u001b[31mb\tc\nd\\u0000e\\u0085f\u00e9\u4e2d"
    assert not any(c in terminal_text(HOSTILE) for c in RAW_CONTROLS)
    # in JSON the escape means the same character: a document stays exact
    document = json.dumps({"x": "\x9b\x85"}, ensure_ascii=False)
    assert json.loads(terminal_text(document)) == {"x": "\x9b\x85"}


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_csv_cells_that_start_a_formula_are_neutralised(start: str) -> None:
    assert csv_cell(f"{start}SUM(A1:A9)") == f"'{start}SUM(A1:A9)"
    assert csv_row({"a": f"{start}1", "b": 2}) == {"a": f"'{start}1", "b": 2}


def test_other_csv_cells_are_unchanged() -> None:
    for value in ("plain", "'quoted", "", " =late", -1.5, 3, None):
        assert csv_cell(value) == value


@pytest.fixture
def hostile_db(tmp_path: Path, cli) -> None:
    cases = [{"id": "c1", "title": "Tale\x1b[5m", "input": "Once", "reference": "upon a time"}]
    assert (
        cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases)), "--suite", "s").code
        == 0
    )
    outputs = [{"case_id": "c1", "output": '=HYPERLINK("http://evil.example")' + HOSTILE}]
    path = write_jsonl(tmp_path / "g.jsonl", outputs)
    assert cli("import-generations", str(path), "--run", "r", "--suite", "s").code == 0
    result = cli("review", "set", "r/c1/1", "escalated", "--reviewer", "ann", "--note", HOSTILE)
    assert result.code == 0, result.err


def _clean(text: str) -> bool:
    return not any(c in text for c in RAW_CONTROLS)


@pytest.mark.parametrize(
    "command",
    [
        ("dossier", "r/c1/1"),
        ("review", "history", "r/c1/1"),
        ("review", "list"),
        ("export", "generations"),
        ("export", "generations", "--format", "csv"),
        ("export", "cases"),
        ("report", "r"),
        ("runs",),
        ("suites",),
    ],
)
def test_commands_print_no_control_sequences(
    hostile_db: None, cli, command: tuple[str, ...]
) -> None:
    result = cli(*command)
    assert result.code == 0, result.err
    assert _clean(result.out) and _clean(result.err)


def test_what_is_escaped_on_screen_is_the_stored_text(
    hostile_db: None, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the tables wide enough to show the note whole
    dossier = cli("dossier", "r/c1/1").out
    # shown, escaped, not dropped (the output and the note)
    assert dossier.count("\\u009b31m") >= 2 and "\\u000dcovered" in dossier
    history = cli("review", "history", "r/c1/1").out
    assert "\\u001b]8;;http://evil.example\\u0007click" in history
    # JSON to a terminal stays exact: the escape is JSON's own
    queue = json.loads(cli("review", "list", "--format", "json").out)
    assert queue["rows"][0]["note"] == HOSTILE
    [row] = [json.loads(line) for line in cli("export", "generations").out.splitlines()]
    assert row["output"].endswith(HOSTILE)


def test_csv_exports_neutralise_formulas(hostile_db: None, cli, tmp_path: Path) -> None:
    out = tmp_path / "g.csv"
    assert cli("export", "generations", "--format", "csv", "-o", str(out)).code == 0
    [row] = list(csv.DictReader(io.StringIO(out.read_bytes().decode("utf-8"), newline="")))
    assert row["output"].startswith("'=HYPERLINK(")
    assert row["output"][1:].endswith(HOSTILE)  # a file (-o) keeps the text exact otherwise


def test_review_set_echoes_the_typed_key_escaped(tmp_path: Path, cli) -> None:
    # click strips ESC sequences off a pipe by itself, but not a C1 CSI or a bell
    cases = [{"id": "c\x9b2J\x071", "title": "T", "input": "Once", "reference": "upon a time"}]
    assert (
        cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases)), "--suite", "s").code
        == 0
    )
    outputs = [{"case_id": "c\x9b2J\x071", "output": "upon"}]
    path = write_jsonl(tmp_path / "g.jsonl", outputs)
    assert cli("import-generations", str(path), "--run", "r", "--suite", "s").code == 0
    result = cli("review", "set", "r/c\x9b2J\x071/1", "cleared", "--reviewer", "ann")
    assert result.code == 0, result.err
    assert _clean(result.out) and "r/c\\u009b2J\\u00071/1: cleared" in result.out


# Trojan Source: "deny" stored, "yned" shown by a bidi-aware terminal or viewer
TROJAN = "ok \u202eyned\u202c \u2067x\u2069 \u200e\u200f\u061c"


def test_bidirectional_controls_are_escaped_for_terminal_and_csv() -> None:
    from copyaudit.untrusted import BIDI_CONTROLS, visible_bidi

    everything = "".join(chr(code) for code in BIDI_CONTROLS)
    for shown in (terminal_text(everything), csv_cell(everything), visible_bidi(everything)):
        assert not any(ord(c) in BIDI_CONTROLS for c in shown)
        assert shown.count("\\u") == len(BIDI_CONTROLS)
    assert terminal_text(TROJAN) == csv_cell(TROJAN) == visible_bidi(TROJAN)
    assert terminal_text(TROJAN).startswith("ok \\u202eyned\\u202c \\u2067x\\u2069")
    assert csv_cell("=\u202e1") == "'=\\u202e1"
    assert visible_bidi("a\x1b") == "a\x1b"  # the other controls: terminal_text's job
    document = json.dumps({"x": TROJAN}, ensure_ascii=False)
    assert json.loads(terminal_text(document)) == {"x": TROJAN}


def test_bidirectional_controls_are_escaped_in_every_document(
    tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copyaudit.untrusted import BIDI_CONTROLS

    monkeypatch.setenv("COLUMNS", "300")
    cases = [{"id": "c1", "title": "Tale", "input": "Once", "reference": "upon a time"}]
    assert (
        cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases)), "--suite", "s").code
        == 0
    )
    path = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "c1", "output": TROJAN}])
    assert cli("import-generations", str(path), "--run", "r", "--suite", "s").code == 0
    assert cli("review", "set", "r/c1/1", "cleared", "--reviewer", "a", "--note", TROJAN).code == 0
    shown = {
        "dossier": cli("dossier", "r/c1/1").out,
        "history": cli("review", "history", "r/c1/1").out,
        "csv": cli("export", "generations", "--format", "csv").out,
    }
    for fmt in ("html", "md"):
        out = tmp_path / f"d.{fmt}"
        assert cli("dossier", "r/c1/1", "--format", fmt, "--output", str(out)).code == 0
        shown[fmt] = out.read_text(encoding="utf-8")
    for name, text in shown.items():
        assert not any(ord(c) in BIDI_CONTROLS for c in text), name
        assert "\\u202eyned" in text, name
    # the stored text is unchanged: JSON export is exact
    [row] = [json.loads(line) for line in cli("export", "generations").out.splitlines()]
    assert row["output"] == TROJAN


def test_the_app_shows_every_bidirectional_control_as_a_replacement() -> None:
    from copyaudit.untrusted import BIDI_CONTROLS
    from screens.plain import REPLACEMENT, visible

    shown = visible(TROJAN)
    assert len(shown) == len(TROJAN)  # evidence offsets stay valid on screen
    assert not any(ord(c) in BIDI_CONTROLS for c in shown) and shown.count(REPLACEMENT) == 7


def test_judge_echoes_a_run_name_escaped(tmp_path: Path, cli) -> None:
    cases = [{"id": "c1", "title": "T", "input": "Once", "reference": "upon a time"}]
    path = write_jsonl(tmp_path / "c.jsonl", cases)
    assert cli("import", "literal", str(path), "--suite", "s").code == 0
    outputs = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "c1", "output": "upon"}])
    run = "r\u202eevil\x9b2J"
    assert cli("import-generations", str(outputs), "--run", run, "--suite", "s").code == 0
    result = cli("judge", run, "--judges", "literal")
    assert result.code == 0, result.err
    assert _clean(result.out) and "run r\\u202eevil\\u009b2J: " in result.out
