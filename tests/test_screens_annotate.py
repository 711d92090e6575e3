"""Annotation mode: labels by keyboard survive quitting and a killed process, undo,
notes, blind mode, the annotator name asked at start, two annotators at once."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from copyaudit.identity import remembered_annotator
from db import Store
from db.events import verify_chains
from db.labels import current_labels
from screens.app import CopyauditApp
from screens.generations.generation_view import GenerationScreen
from screens.line_input import LineInputScreen
from screens.review.annotation import AnnotationScreen
from screens.runs.dashboard import DashboardScreen
from screens.widgets.annotator_tag import AnnotatorTag
from tests.test_screens_data import settle

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
REPO = Path(__file__).resolve().parents[1]
TEN_KEYS = ("y", "n", "u", "y", "y", "n", "n", "u", "y", "n")
WORDS = {"y": "yes", "n": "no", "u": "unsure"}


async def _annotate_first_nonliteral(pilot: Any) -> AnnotationScreen:
    """Dashboard -> demo-nonliteral -> its first generation -> annotation mode."""
    await settle(pilot)
    await pilot.press("down", "enter")
    await settle(pilot)
    await pilot.press("enter")
    await settle(pilot)
    assert isinstance(pilot.app.screen, GenerationScreen)
    await pilot.press("a")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, AnnotationScreen)
    return screen


def _lines(screen: AnnotationScreen) -> dict[str, str]:
    """What the label checklist shows, by item key."""
    checklist = screen.query_one("#checklist")
    return {item.key: str(checklist.get_option(item.key).prompt) for item in checklist.items}


def _stored(path: Path, annotator: str) -> dict[tuple[int, str, int], tuple[str, str | None]]:
    with Store(path) as store:
        return {
            (c.generation_id, c.target, c.item_index): (c.label, c.note)
            for c in current_labels(store, annotator=annotator)
        }


async def test_ten_labels_by_keyboard_one_undone_survive_quitting(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        generation = screen.generation_id
        items = screen.query_one("#checklist").items
        assert [i.target for i in items[:10]] == ["event"] * 10
        assert {i.target for i in items} == {"event", "character", "refusal", "literal"}
        for key in TEN_KEYS:
            await pilot.press(key)
        # every key was committed as it was handled: ten label events, nothing pending
        assert len(_stored(demo_db, "ann")) == 10
        await pilot.press("z")  # retracts the newest: the tenth
        assert screen.generation_id == generation  # n labelled "no", it did not move on
        assert screen.query_one("#checklist").current_item.key == "event:9"
        await pilot.press("q")
    expected = {(generation, "event", i): (WORDS[k], None) for i, k in enumerate(TEN_KEYS[:9])}
    assert _stored(demo_db, "ann") == expected
    with Store(demo_db) as store:
        actions = [r[0] for r in store.query("SELECT action FROM labels ORDER BY seq")]
        assert actions == ["label"] * 10 + ["retract"]
        assert verify_chains(store) == []

    reopened = CopyauditApp(demo_db, annotator="ann")
    async with reopened.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        assert screen.generation_id == generation
        shown = _lines(screen)
        marks = {"yes": " YES ", "no": " NO  ", "unsure": " ??? "}
        for index, key in enumerate(TEN_KEYS[:9]):
            assert shown[f"event:{index}"].startswith(marks[WORDS[key]])
        unlabelled = [k for k in shown if k not in {f"event:{i}" for i in range(9)}]
        assert unlabelled and all(shown[k].startswith(" ·   ") for k in unlabelled)
        mode = str(screen.query_one("#scores").render())
        asked = sum(item.asked for item in screen.query_one("#checklist").items)
        assert "ANNOTATING as ann" in mode and f"9/{asked} labelled" in mode
    assert _stored(demo_db, "ann") == expected


async def test_characters_named_in_the_prompt_are_marked_and_skipped(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        checklist = screen.query_one("#checklist")
        items = checklist.items
        skipped = next(i for i, item in enumerate(items) if not item.asked)
        assert items[skipped].target == "character"  # the demo case names one in its input
        assert "not scored: named in the prompt" in _lines(screen)[items[skipped].key]
        checklist.select_item(items[skipped - 1].key)
        await pilot.press("y")  # labels the item before it, then steps over it
        assert checklist.current_item.key == items[skipped + 1].key
    stored = _stored(demo_db, "ann")
    assert (screen.generation_id, items[skipped].target, items[skipped].index) not in stored
    assert len(stored) == 1


async def test_blind_mode_hides_the_judges_until_toggled(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        supported = next(i for i in screen.items if i.kind == "event" and i.verdict)
        assert screen.blind
        mode = str(screen.query_one("#scores").render())
        assert "blind: ON" in mode and "FLAGGED" not in mode and "events" not in mode
        assert not any("✓" in line or "✗" in line for line in _lines(screen).values())
        assert not screen.rendered.text.spans  # no evidence highlighted in the output
        assert "✓" not in str(screen.query_one("#context").render())
        await pilot.press("b")
        await settle(pilot)
        assert not screen.blind
        mode = str(screen.query_one("#scores").render())
        assert "blind: OFF" in mode and "events" in mode
        assert "events ✓" in _lines(screen)[supported.key]
        assert screen.rendered.text.spans
        await pilot.press("b")
        await settle(pilot)
        assert screen.blind and "blind: ON" in str(screen.query_one("#scores").render())


async def test_note_key_stores_a_note_with_the_label(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        generation = screen.generation_id
        await pilot.press("m")  # before any label: kept for the next label on the item
        await settle(pilot)
        assert isinstance(app.screen, LineInputScreen)
        await pilot.press(*"close paraphrase", "enter")
        await settle(pilot)
        assert _stored(demo_db, "ann") == {}
        await pilot.press("y")
        assert _stored(demo_db, "ann") == {(generation, "event", 0): ("yes", "close paraphrase")}
        await pilot.press("k", "m")  # back to event 1; edit the note of a labelled item
        await settle(pilot)
        field = app.screen.query_one("#line-input")
        assert field.value == "close paraphrase"
        field.value = ""
        await pilot.press(*"[b]not markup[/b]", "enter")
        await settle(pilot)
        assert _stored(demo_db, "ann") == {(generation, "event", 0): ("yes", "[b]not markup[/b]")}
        assert "✎ [b]not markup[/b]" in _lines(screen)["event:0"]
        await pilot.press("n")  # relabelling keeps the note
        assert _stored(demo_db, "ann") == {(generation, "event", 0): ("no", "[b]not markup[/b]")}


async def test_generation_keys_in_annotation_mode(demo_db: Path) -> None:
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        screen = await _annotate_first_nonliteral(pilot)
        first = screen.generation_id
        await pilot.press("N")
        second = screen.generation_id
        assert second != first and app.screen is screen
        await pilot.press("y", "j", "j", "u")
        await pilot.press("P")
        assert screen.generation_id == first
        assert _stored(demo_db, "ann") == {
            (second, "event", 0): ("yes", None),
            (second, "event", 3): ("unsure", None),
        }
        await pilot.press("escape")  # back to the view annotation mode came from
        await settle(pilot)
        view = app.screen
        assert isinstance(view, GenerationScreen) and not isinstance(view, AnnotationScreen)
        assert view.generation_id == first and view.blind  # blind annotation: a blind view
        assert "judges hidden" in str(view.query_one("#scores").render())
        await pilot.press("n")  # a label key is nothing in the view
        assert view.generation_id == first
        await pilot.press("N")
        assert view.generation_id == second


async def test_annotator_is_asked_at_start_remembered_and_shown(demo_db: Path) -> None:
    assert remembered_annotator() is None
    app = CopyauditApp(demo_db, ask_annotator=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LineInputScreen)
        await pilot.press("enter")  # an empty name is refused
        await settle(pilot)
        assert isinstance(app.screen, LineInputScreen)
        await pilot.press(*"Ada [x]", "enter")
        await settle(pilot)
        assert app.annotator == "Ada [x]" and remembered_annotator() == "Ada [x]"
        tag = app.screen.query_one(AnnotatorTag)
        assert str(tag.render()).strip() == "annotator: Ada [x]"
        screen = await _annotate_first_nonliteral(pilot)
        assert str(screen.query_one(AnnotatorTag).render()).strip() == "annotator: Ada [x]"
        await pilot.press("y")
    assert list(_stored(demo_db, "Ada [x]").values()) == [("yes", None)]


async def test_labelling_without_a_name_asks_for_one_first(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)  # no name given, none remembered, not asked at start
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        assert isinstance(app.screen, LineInputScreen)
        await pilot.press(*"bo", "enter")
        await settle(pilot)
        assert isinstance(app.screen, AnnotationScreen)
        await pilot.press("u")
    assert list(_stored(demo_db, "bo").values()) == [("unsure", None)]


# --- the real app in a pseudo-terminal, killed after a keypress --------------------------


class Terminal:
    """The app's process on a pseudo-terminal (120 x 40); everything it draws is kept."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.master = master
        self.process = subprocess.Popen(
            args,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=REPO,
            start_new_session=True,
        )
        os.close(slave)
        self.output = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                return
            if not chunk:
                return
            with self._lock:
                self.output += chunk

    def mark(self) -> int:
        with self._lock:
            return len(self.output)

    def wait_for(self, text: str, since: int = 0, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                if text.encode() in self.output[since:]:
                    return
            if self.process.poll() is not None:
                raise AssertionError(f"the app exited ({self.process.returncode})")
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} not drawn within {timeout} s")
            time.sleep(0.05)

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        os.close(self.master)


@pytest.mark.slow  # make test-slow: starts and kills processes
def test_a_label_survives_killing_the_app_process(
    demo_db: Path, tmp_path: Path, cli: Callable
) -> None:
    env = {
        **os.environ,
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LINES": "40",
        "COPYAUDIT_CONFIG_DIR": str(tmp_path / "config"),
    }
    args = [sys.executable, "-m", "copyaudit", "--db", str(demo_db), "--annotator", "kim"]
    terminal = Terminal(args, env)
    try:
        terminal.wait_for("demo-nonliteral")  # the dashboard is up
        mark = terminal.mark()
        terminal.send("\x1b[B\r")  # down, Enter: the run's generations
        terminal.wait_for("pride-nl-01", since=mark)
        mark = terminal.mark()
        terminal.send("\r")  # the first generation
        terminal.wait_for("Evidence", since=mark)
        mark = terminal.mark()
        terminal.send("a")  # annotation mode
        terminal.wait_for("ANNOTATING", since=mark)
        terminal.send("n")  # event 1: not in the story
        deadline = time.monotonic() + 10
        while not _stored(demo_db, "kim"):
            assert time.monotonic() < deadline, "the label never reached the database"
            time.sleep(0.02)
    finally:
        terminal.kill()
    assert terminal.process.returncode == -signal.SIGKILL
    stored = _stored(demo_db, "kim")
    assert [(target, index, value) for (_, target, index), value in stored.items()] == [
        ("event", 0, ("no", None))
    ]
    result = cli("verify", db=demo_db)
    assert result.code == 0, result.out + result.err


# --- two annotators at once ------------------------------------------------------------

WRITER = """
import json, sys, time
from pathlib import Path
from db import Store
from db.events import append_label
from screens.state.labelling import labels_by_item, undo_latest

path, name, generation, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
store = Store(path)
Path(f"{go}.{name}").touch()
while not go.exists():
    time.sleep(0.001)
for i in range(150):
    append_label(store, generation_id=generation, annotator=name, target="event",
                 item_index=i % 6, label=("yes", "no", "unsure")[i % 3], note=f"{name} {i}")
    if i % 10 == 9:
        undo_latest(store, generation_id=generation, annotator=name)
    time.sleep(0.001)  # a person's pace; lets the other writer in
final = {f"{t}:{i}": [c.label, c.note]
         for (t, i), cs in labels_by_item(store, generation, name).items() for c in cs}
print(json.dumps(final))
"""


@pytest.mark.slow  # make test-slow: starts and kills processes
def test_two_annotators_labelling_at_once_lose_nothing(demo_db: Path, tmp_path: Path) -> None:
    with Store(demo_db) as store:
        ids = [  # a generation whose case has the 6 reference events the writers label
            int(r[0])
            for r in store.query(
                "SELECT g.id FROM generations g JOIN cases c ON c.id = g.case_pk "
                "WHERE json_array_length(c.payload, '$.reference_events') >= 6 "
                "ORDER BY g.id LIMIT 1"
            )
        ]
    go = tmp_path / "go"
    writers = {
        name: subprocess.Popen(
            [sys.executable, "-c", WRITER, str(demo_db), name, str(ids[0]), str(go)],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("ann", "bob")
    }
    deadline = time.monotonic() + 60
    while not all(Path(f"{go}.{name}").exists() for name in writers):
        assert time.monotonic() < deadline and all(w.poll() is None for w in writers.values())
        time.sleep(0.01)
    go.touch()
    finals = {}
    for name, writer in writers.items():
        out, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
        finals[name] = json.loads(out)
    with Store(demo_db) as store:
        rows = store.query("SELECT annotator, action, seq, note FROM labels ORDER BY seq")
        assert [r["seq"] for r in rows] == list(range(1, 2 * (150 + 15) + 1))
        for name in writers:
            mine = [r for r in rows if r["annotator"] == name]
            assert [r["note"] for r in mine if r["action"] == "label"] == [
                f"{name} {i}" for i in range(150)
            ]
            assert sum(r["action"] == "retract" for r in mine) == 15
            # what each writer saw at the end is what the database holds
            current = {
                f"{c.target}:{c.item_index}": [c.label, c.note]
                for c in current_labels(store, annotator=name)
            }
            assert current == finals[name] and len(current) == 6
        assert verify_chains(store) == []
    owners = [r["annotator"] for r in rows]
    switches = sum(1 for a, b in pairwise(owners) if a != b)
    assert switches > 1, "the writers did not overlap; the test did not test concurrency"


def test_command_line_name_is_remembered_for_the_next_start(
    cli: Callable, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import screens.app

    opened: list[str | None] = []
    monkeypatch.setattr(screens.app, "run_app", lambda path, annotator: opened.append(annotator))
    assert cli("--annotator", " zoe ").code == 0
    assert cli().code == 0  # no name given: the remembered one
    assert opened == ["zoe", "zoe"]


async def test_a_work_queue_resumes_at_the_first_generation_not_fully_labelled(
    demo_db: Path,
) -> None:
    from db.queues import create_queue, queue_items

    with Store(demo_db) as store:
        create_queue(store, "q1", run="demo-nonliteral", metric="events", per_value=1, seed=3)
        ids = queue_items(store, "q1")
    assert len(ids) >= 3
    app = CopyauditApp(demo_db, annotator="ann")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"label queue q1")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, AnnotationScreen) and screen.generation_id == ids[0]
        assert f"1 of {len(ids)}" in str(screen.query_one("#title").render())
        await pilot.press("y", "N")
        assert screen.generation_id == ids[1]
        await pilot.press("escape")  # back where the queue was opened: the dashboard
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        await pilot.press("ctrl+p", *"label queue q1")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        again = app.screen
        assert again.generation_id == ids[0]  # partly labelled: not done yet
        assert again.query_one("#checklist").current_item.key == "event:1"  # first open item
    assert list(_stored(demo_db, "ann")) == [(ids[0], "event", 0)]
