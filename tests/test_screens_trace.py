"""The generation view's traced spans (issue 38): each span the trace judge found is an
item saying which work of the library holds it, a work other than the case's own called
out; Enter on it opens the library's text at that place with the span highlighted, as
plain text (a hostile work's markup is shown, not applied). Snapshot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copyaudit.engine.runner import judge_run
from copyaudit.formats import load_cases, load_generations
from copyaudit.judges.options import JudgeOptions
from copyaudit.tracing.library import CatalogueEntry, build_index, library_folder, store_text
from db import Store
from db.cases import import_cases
from db.library import LibraryWork, add_work
from db.runs import import_generations
from screens.app import CopyauditApp
from screens.generations.generation_view import GenerationScreen
from screens.generations.library_text import SPAN_STYLE, LibraryTextScreen
from tests.conftest import write_jsonl
from tests.factories import literal_record
from tests.process_cache import copy_database, scratch_folder
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
SAMPLES = Path(__file__).parent.parent / "samples" / "literal.jsonl"
OTHER = "Moby Dick; or, The Whale"
HOSTILE = "[bold red]not markup[/] "  # in the library's text: shown as written


def _moby() -> str:
    passages = [
        json.loads(line)
        for line in SAMPLES.read_text(encoding="utf-8").splitlines()
        if json.loads(line)["title"].startswith("Moby")
    ]
    return HOSTILE + "\n\n".join(p["input"] + " " + p["reference"] for p in passages)


_TEMPLATE: list[Path] = []


def _template() -> Path:
    """A case of Pride and Prejudice whose output copies 400 characters of Moby Dick, a
    library of that one work, and the trace judge's judgments (built once)."""
    if _TEMPLATE:
        return _TEMPLATE[0]
    folder = scratch_folder("trace-view")
    path = folder / "trace.db"
    moby = _moby()
    copy = moby[600:1000]
    cases = write_jsonl(
        folder / "cases.jsonl",
        [literal_record(1, id="pp-1", title="Pride and Prejudice", author="Jane Austen")],
    )
    output = "It goes on: " + copy + " and so on."
    gens = write_jsonl(folder / "gens.jsonl", [{"case_id": "pp-1", "output": output}])
    with Store(path) as store:
        import_cases(store, "lit", "literal", load_cases("literal", cases), source="cases.jsonl")
        import_generations(
            store, run="r", suite="lit", model="m", rows=load_generations(gens), source="gens"
        )
        sha = store_text(library_folder(path), moby)
        add_work(store, LibraryWork(sha, OTHER, "Herman Melville", "samples", "public-domain", 1))
        entry = CatalogueEntry(sha, OTHER, "Herman Melville", "public-domain", len(moby))
        build_index(library_folder(path), [entry])
        options = JudgeOptions("trace", trace_library=str(library_folder(path)))
        stored, skipped = judge_run(store, "r", options)
        assert stored == 3 and not skipped
    _TEMPLATE.append(path)
    return path


@pytest.fixture
def trace_db(tmp_path: Path) -> Path:
    path = copy_database(_template(), tmp_path / "trace.db")
    target = library_folder(path)
    target.mkdir()
    for part in ("texts", "index"):
        source = library_folder(_template()) / part
        (target / part).mkdir()
        for file in source.iterdir():
            (target / part / file.name).write_bytes(file.read_bytes())
    return path


async def _open_trace(pilot) -> GenerationScreen:
    await settle(pilot)
    pilot.app.open_run("r")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, GenerationScreen)
    traced = next(i for i in screen.items if i.kind == "trace")
    pilot.app.screen.query_one("#checklist").select_item(traced.key)
    await settle(pilot)
    return screen


async def test_a_traced_span_names_another_work_and_opens_its_text(trace_db: Path) -> None:
    app = CopyauditApp(trace_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_trace(pilot)
        (traced,) = [i for i in screen.items if i.kind == "trace"]
        assert traced.label == f"from another work: {OTHER} (public-domain)"
        assert traced.verdict is True and traced.score >= 160  # flagged at 160 characters
        start, end = traced.spans[0]
        assert screen.detail.output[start:end] in _moby()[600:1000]  # the planted copy
        options = str(screen.query_one("#checklist").get_option(traced.key).prompt)
        assert "from another work: Moby Dick" in options
        assert screen.selected is traced
        await pilot.press("enter")
        await settle(pilot)
        modal = app.screen
        assert isinstance(modal, LibraryTextScreen)
        shown = modal.query_one("#library-text").content
        place = traced.place
        text = _moby()
        offset = place["start"] - modal.first
        assert shown.plain == text[modal.first : modal.last]
        assert shown.plain.startswith(HOSTILE)  # markup in the work shown as written
        highlighted = [s for s in shown.spans if s.style == SPAN_STYLE]
        assert [(s.start, s.end) for s in highlighted] == [
            (offset, offset + place["end"] - place["start"])
        ]
        assert (
            text[place["start"] : place["end"]].split() == screen.detail.output[start:end].split()
        )
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen


async def test_a_changed_library_text_is_refused_not_shown(trace_db: Path) -> None:
    for stored in (library_folder(trace_db) / "texts").iterdir():
        stored.write_text("changed", encoding="utf-8")
    app = CopyauditApp(trace_db)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _open_trace(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert app.screen is screen
        assert any("changed since it was added" in str(n.message) for n in app._notifications)


def test_traced_span_from_another_work_snapshot(trace_db: Path, snap_compare) -> None:
    assert snap_compare(CopyauditApp(trace_db), terminal_size=SIZE, run_before=_open_trace)
