"""Export from the app (dashboard e, ctrl+p "Export"): labels, a run's generations and
report written to a path the person types, byte for byte what `copyaudit export` /
`report -o` write, through the same safe output file (never the database, an existing
file only after a yes), and the dialog's snapshot."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from db import Store
from db.events import append_label
from db.search_index import catch_up
from screens.app import CopyauditApp
from screens.export_dialog import ConfirmOverwriteScreen, ExportScreen
from screens.runs.dashboard import DashboardScreen
from screens.state.export_choices import file_stem, run_choices
from tests.conftest import database_fingerprint
from tests.label_fixtures import make_run
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
CASES = ("lit-1", "lit-2")


@pytest.fixture
def labelled_db(
    cli: Callable[..., Any], tmp_path: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Run `r` of two literal generations with three labels (one retracted by a newer
    one), its search index caught up (the app opened on it writes nothing by itself);
    the current directory is a fresh `out` folder (where exports go by default)."""
    make_run(cli, tmp_path, "literal", CASES)
    with Store(db_path) as store:
        catch_up(store)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM generations ORDER BY id")]
        for generation, value in ((ids[0], "yes"), (ids[1], "no"), (ids[1], "unsure")):
            append_label(
                store,
                generation_id=generation,
                annotator="ann",
                target="literal",
                item_index=0,
                label=value,
                note="a note, with a comma",
            )
    out = tmp_path / "out"
    out.mkdir()
    monkeypatch.chdir(out)
    return db_path


def _choice_titles(screen: ExportScreen) -> list[str]:
    return [choice.title for choice in screen.choices]


async def _export(pilot: Any, what: str, path: str | None = None) -> tuple[ExportScreen, str]:
    """Dashboard e, highlight `what`, Enter, type `path` (None: keep the default), Enter;
    the dialog and the path it was given."""
    await settle(pilot)
    await pilot.press("e")
    await settle(pilot)
    dialog = pilot.app.screen
    assert isinstance(dialog, ExportScreen)
    for _ in range(_choice_titles(dialog).index(what)):
        await pilot.press("down")
    await pilot.press("enter")  # the choice: focus goes to the path
    field = dialog.query_one("#export-path")
    assert field.has_focus
    if path is not None:
        field.value = path
        field.action_end()  # as after typing it: the cursor at the end, nothing selected
    given = field.value
    await pilot.press("enter")
    await settle(pilot)
    return dialog, given


async def test_labels_exported_from_the_app_equal_the_command_line_export(
    labelled_db: Path, cli: Callable[..., Any], tmp_path: Path
) -> None:
    app = CopyauditApp(labelled_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        _, given = await _export(pilot, "Labels of every run")
        assert given == "labels.jsonl"  # the default
        assert isinstance(app.screen, DashboardScreen)
        await settle(pilot)
        notices = [str(n.message) for n in app._notifications]
    written = tmp_path / "out" / "labels.jsonl"
    assert any(f"wrote 3 labels to {written}" in notice for notice in notices)
    expected = tmp_path / "cli-labels.jsonl"
    assert cli("export", "labels", "-o", str(expected), db=labelled_db).code == 0
    assert written.read_bytes() == expected.read_bytes()
    assert len(written.read_text(encoding="utf-8").splitlines()) == 3


@pytest.mark.parametrize(
    ("what", "name", "command"),
    [
        ("Labels of r", "r.labels.csv", ("export", "labels", "--run", "r", "--format", "csv")),
        ("Generations of r", "r.generations.jsonl", ("export", "generations", "--run", "r")),
        ("Report of r", "r.report.md", ("report", "r")),
    ],
)
async def test_a_runs_rows_and_report_equal_the_command_lines(
    labelled_db: Path,
    cli: Callable[..., Any],
    tmp_path: Path,
    what: str,
    name: str,
    command: tuple[str, ...],
) -> None:
    app = CopyauditApp(labelled_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        await _export(pilot, what, name)
        await settle(pilot)
    expected = tmp_path / f"cli-{name}"
    assert cli(*command, "-o", str(expected), db=labelled_db).code == 0
    written = (tmp_path / "out" / name).read_text(encoding="utf-8")
    assert _timeless(written) == _timeless(expected.read_text(encoding="utf-8"))


def _timeless(text: str) -> str:
    """A report with its anchor's time, and so the anchor's digests, masked: the chain
    heads are read when each report is written (a second apart here); all else must be
    equal."""
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|\+00:00)", "TIME", text)
    return re.sub(r"\b[0-9a-f]{16}\b", "DIGEST", text)


@pytest.mark.parametrize(
    ("typed", "says"),
    [
        ("", "type a file name"),
        ("labels.txt", "name a .jsonl or .csv file: the extension picks the format"),
        ("{db}", "is the database (or one of its files)"),
        ("{db}-wal.jsonl", None),  # not a companion of the database: allowed
        ("no-such-dir/labels.jsonl", "no directory"),
        ("{tmp}", "is a directory"),
    ],
)
async def test_a_refused_path_is_said_under_the_field_and_nothing_is_written(
    labelled_db: Path, tmp_path: Path, typed: str, says: str | None
) -> None:
    typed = typed.replace("{db}", str(labelled_db)).replace("{tmp}", str(tmp_path))
    before = database_fingerprint(labelled_db)
    app = CopyauditApp(labelled_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        dialog, _ = await _export(pilot, "Labels of every run", typed)
        if says is None:
            assert app.screen is not dialog
            return
        assert app.screen is dialog
        error = dialog.query_one("#export-error")
        assert error.display and says in str(error.render())
    assert database_fingerprint(labelled_db) == before
    assert list((tmp_path / "out").iterdir()) == []


async def test_an_existing_file_is_replaced_only_after_a_yes(
    labelled_db: Path, tmp_path: Path
) -> None:
    existing = tmp_path / "out" / "labels.jsonl"
    existing.write_text("keep me\n", encoding="utf-8")
    app = CopyauditApp(labelled_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        dialog, _ = await _export(pilot, "Labels of every run")
        assert isinstance(app.screen, ConfirmOverwriteScreen)
        await pilot.press("n")
        await settle(pilot)
        assert app.screen is dialog
        assert "exists: kept" in str(dialog.query_one("#export-error").render())
        assert existing.read_text(encoding="utf-8") == "keep me\n"
        await pilot.press("enter")  # the same name again: asked again
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
    assert existing.read_text(encoding="utf-8").count('"annotator": "ann"') == 3
    assert [p.name for p in existing.parent.iterdir()] == ["labels.jsonl"]  # no temporary left


def test_default_names_are_file_names_whatever_the_run_is_called() -> None:
    choices = run_choices([{"name": "my run/v1", "kind": "literal"}])
    assert [c.default_name for c in choices] == [
        "labels.jsonl",
        "my_run__v1.labels.jsonl",
        "my_run__v1.generations.jsonl",
        "my_run__v1.report.md",
    ]
    assert file_stem("run one/case:1/2") == "run_one__case_1__2"


def test_export_dialog_snapshot(
    labelled_db: Path, snap_compare, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir("/tmp")  # the dialog names the current directory: the same everywhere

    async def ready(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        dialog = pilot.app.screen
        dialog.query_one("#export-path").value = "labels.txt"
        dialog.query_one("#export-path").focus()
        await pilot.press("enter")  # a wrong extension: said under the field
        dialog.query_one("#export-path").cursor_blink = False  # the same picture each time
        await settle(pilot)

    assert snap_compare(
        CopyauditApp(labelled_db, annotator="ann"), terminal_size=SIZE, run_before=ready
    )


def test_replace_question_snapshot(
    labelled_db: Path, snap_compare, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir("/tmp")  # the question names the file's absolute path
    target = Path("/tmp/copyaudit-snapshot-labels.jsonl")

    async def ready(pilot: Any) -> None:
        target.write_text("an earlier export\n", encoding="utf-8")
        try:
            dialog, _ = await _export(pilot, "Labels of every run", target.name)
            assert isinstance(pilot.app.screen, ConfirmOverwriteScreen)
            dialog.query_one("#export-path").cursor_blink = False  # the same picture each time
            await settle(pilot)
        finally:
            target.unlink()  # the picture is taken after: the question stays on screen

    assert snap_compare(
        CopyauditApp(labelled_db, annotator="ann"), terminal_size=SIZE, run_before=ready
    )
