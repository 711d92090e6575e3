"""Run launcher: a run in a background worker with live progress, cancel from the
launcher or the dashboard, worker failures as notifications, one real (tiny) run."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from textual.widgets import Input

from copyaudit.engine import runner
from copyaudit.runs.progress import ProgressMeter
from db import Store
from db.runs import RunSpec, create_or_resume_run, set_run_status
from screens.app import CopyauditApp
from screens.runs.dashboard import DashboardScreen
from screens.runs.launcher import LauncherScreen
from screens.runs.run_control import ActiveRun
from screens.runs.run_dialogs import ConfirmCancelScreen, StoppingScreen
from tests.test_screens_data import cell_texts, copy_demo_like_db, settle, wait_until

pytestmark = pytest.mark.anyio
SIZE = (120, 40)
TOTAL = 10_000


DEMO_KINDS = ("literal",)  # the demo_db fixture's suites (conftest)


def fake_execute_run(db_path, request, *, on_progress=None, cancel=None):
    """Stands in for the engine: records the run, reports progress item by item until
    done or cancelled, and records how it ended — in the database, like the real one."""
    name = request.run_name()
    assert threading.current_thread() is not threading.main_thread()  # a thread worker
    with Store(db_path) as store:
        spec = RunSpec(name, request.suite, request.backend, request.model, templates=(1,))
        run_id = create_or_resume_run(store, spec)
        set_run_status(store, run_id, "running")
    meter = ProgressMeter(name, "generate", TOTAL, 0, on_progress)
    done = 0
    while done < TOTAL and not (cancel is not None and cancel.is_set()):
        time.sleep(0.002)
        meter.advance(1)
        done += 1
    status = "cancelled" if done < TOTAL else "done"
    with Store(db_path) as store:
        set_run_status(store, run_id, status)
    return runner.GenerationOutcome(run=name, kind="literal", status=status, generated=done)


def _status(path: Path, run: str) -> str | None:
    with Store(path) as store:
        return store.scalar("SELECT status FROM runs WHERE name = ?", (run,))


async def _start_from_launcher(pilot) -> LauncherScreen:
    await settle(pilot)
    await pilot.press("s")  # new run
    await settle(pilot)
    launcher = pilot.app.screen
    assert isinstance(launcher, LauncherScreen)
    await pilot.press("enter", "down", "enter")  # the suite list: blank, literal
    await pilot.press("ctrl+s")
    return launcher


async def run_going_on_the_dashboard(pilot) -> ActiveRun:
    """Start the launcher's run and go back to the dashboard once it has made progress
    (there q is not typed into a field)."""
    await _start_from_launcher(pilot)
    run = pilot.app.active_runs["literal-default-none"]
    await wait_until(pilot, lambda: run.progress is not None and run.progress.done > 5)
    await pilot.press("escape")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, DashboardScreen))
    return run


async def test_progress_shows_live_and_cancel_asks_first(demo_db: Path, monkeypatch) -> None:
    """ctrl+x cancels the launcher's run after a confirmation (n / Esc keep it going);
    Esc is back and never cancels."""
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _start_from_launcher(pilot)
        name = "literal-default-none"
        run = app.active_runs[name]
        await wait_until(pilot, lambda: run.progress is not None and run.progress.done > 20)
        await pilot.pause()
        line = str(launcher.query_one("#run-line").render())
        assert f"run {name}" in line and f"/{TOTAL:,}".replace(",", "") in line
        assert "/s" in line and "ETA" in line
        bar = launcher.query_one("#run-bar")
        assert bar.total == TOTAL and 0 < bar.progress < TOTAL
        assert _status(demo_db, name) == "running"
        await pilot.press("ctrl+x")  # asks first
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        await pilot.press("escape")  # no: the run goes on
        await wait_until(pilot, lambda: app.screen is launcher)
        await pilot.press("ctrl+x", "n")  # no again
        await wait_until(pilot, lambda: app.screen is launcher)
        assert not run.cancel.is_set()
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        await pilot.press("y")  # cancels the run (the launcher stays)
        await wait_until(pilot, lambda: run.finished)
        await pilot.pause()
        assert run.state == "cancelled" and run.outcome.generated < TOTAL
        assert _status(demo_db, name) == "cancelled"
        assert "cancelled" in str(launcher.query_one("#run-line").render())
        assert app.screen is launcher
        await pilot.press("escape")  # back
        await settle(pilot)
        assert isinstance(app.screen, DashboardScreen)
        assert cell_texts(app.screen.query_one("#runs"), name)[3] == "cancelled"


async def test_ctrl_x_cancels_while_a_text_field_has_focus(demo_db: Path, monkeypatch) -> None:
    """A text field binds ctrl+x to "cut": the launcher's cancel key wins wherever the
    focus is, and the footer keeps showing it."""
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _start_from_launcher(pilot)
        run = app.active_runs["literal-default-none"]
        await wait_until(pilot, lambda: run.progress is not None and run.progress.done > 5)
        limit = launcher.query_one("#limit", Input)
        limit.focus()
        await pilot.pause()
        assert app.focused is limit
        assert app.active_bindings["ctrl+x"].binding.action == "cancel_run"  # the footer's
        await pilot.press("ctrl+x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: run.finished)
        assert run.state == "cancelled"


async def test_leave_the_launcher_watch_on_the_dashboard_cancel_there(
    demo_db: Path, monkeypatch
) -> None:
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await _start_from_launcher(pilot)
        name = "literal-default-none"
        run = app.active_runs[name]
        await wait_until(pilot, lambda: run.progress is not None and run.progress.done > 5)
        await pilot.press("escape")  # back to the dashboard, the run goes on
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        table = app.screen.query_one("#runs")
        await wait_until(pilot, lambda: name in [str(r.value) for r in table.rows])
        await wait_until(pilot, lambda: "generate" in cell_texts(table, name)[4])
        first = cell_texts(table, name)[4]
        await wait_until(pilot, lambda: cell_texts(table, name)[4] != first)  # it moves
        # browse meanwhile: open the demo run and come back
        await pilot.press("enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, DashboardScreen))
        await pilot.press("escape")
        await wait_until(pilot, lambda: isinstance(app.screen, DashboardScreen))
        assert not run.finished
        table.move_cursor(row=0 if table.get_row_index(name) else 1)  # another row
        await pilot.press("x")  # the running run, whichever row is selected, after a yes
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmCancelScreen))
        assert app.screen.run_name == name and not run.cancel.is_set()
        await pilot.press("y")
        await wait_until(pilot, lambda: run.finished)
        await wait_until(pilot, lambda: cell_texts(table, name)[3] == "cancelled")
        assert _status(demo_db, name) == "cancelled"


async def test_a_failing_run_becomes_a_notification(demo_db: Path, monkeypatch) -> None:
    def explode(db_path, request, *, on_progress=None, cancel=None):
        raise RuntimeError("model exploded [bold]loudly[/bold]")

    monkeypatch.setattr(runner, "execute_run", explode)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _start_from_launcher(pilot)
        run = app.active_runs["literal-default-none"]
        await wait_until(pilot, lambda: run.finished)
        await pilot.pause()
        assert run.state == "failed" and "model exploded" in run.error
        await wait_until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("model exploded [bold]loudly[/bold]" in text for text in toasts)
        assert app.is_running and app.screen is launcher
        assert "failed" in str(launcher.query_one("#run-line").render())


async def test_bad_form_values_are_refused(demo_db: Path, monkeypatch) -> None:
    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")  # new run
        await settle(pilot)
        await pilot.press("ctrl+s")  # no suite chosen
        await pilot.pause()
        assert app.active_runs == {}
        await wait_until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("choose a suite" in text for text in toasts)


@pytest.mark.slow
async def test_a_real_run_on_a_tiny_model(demo_db: Path, tmp_path: Path) -> None:
    from tests.tinymodels import build_tiny_causal_lm, build_tokenizer

    model = tmp_path / "tiny"
    tokenizer = build_tokenizer(["a tiny corpus about tiny things"], model)
    build_tiny_causal_lm(model, tokenizer, max_position_embeddings=8192)  # few-shot prompts
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")  # new run
        await settle(pilot)
        launcher = app.screen
        launcher.query_one("#model").value = str(model)
        launcher.query_one("#limit").value = "2"
        launcher.query_one("#name").value = "tiny-run"
        await pilot.press("enter", "down", "enter", "ctrl+s")
        run = app.active_runs["tiny-run"]
        await wait_until(pilot, lambda: run.finished, timeout=240)
        assert run.state == "done", run.error
    with Store(demo_db) as store:
        assert store.scalar("SELECT status FROM runs WHERE name = 'tiny-run'") == "done"
        assert (
            store.scalar(
                "SELECT COUNT(*) FROM generations g JOIN runs r ON r.id = g.run_id "
                "WHERE r.name = 'tiny-run'"
            )
            == 2
        )
        assert (
            store.scalar(
                "SELECT COUNT(*) FROM judgments j JOIN generations g ON g.id = j.generation_id "
                "JOIN runs r ON r.id = g.run_id WHERE r.name = 'tiny-run' AND j.metric = 'rougeL'"
            )
            == 2
        )


async def test_notice_placement_and_mitigation_reach_the_request(tmp_path: Path) -> None:
    from textual.widgets import Select

    from screens.runs.launcher import NOTICE_PLACEMENTS

    path = tmp_path / "two.db"
    copy_demo_like_db(path, kinds=("literal", "notice"))
    app = CopyauditApp(path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(LauncherScreen(suite="notice"))
        await settle(pilot)
        launcher = app.screen
        assert [value for _, value in NOTICE_PLACEMENTS] == ["before_query", "start", "end"]
        launcher.query_one("#notice_position", Select).value = "end"
        launcher.query_one("#notice_mitigation", Select).value = "keyword+warning"
        request = launcher.build_request()
        assert (request.notice_position, request.notice_mitigation) == ("end", "keyword+warning")
        assert request.run_name() == "notice-default-none-notice-end-keyword+warning"
        launcher.query_one("#suite", Select).value = "literal"
        request = launcher.build_request()  # other kinds keep the study's layout
        assert (request.notice_position, request.notice_mitigation) == ("before_query", "none")
        assert request.run_name() == "literal-default-none"


async def test_quitting_during_a_run_asks_first(demo_db: Path, monkeypatch) -> None:
    """q with a run in progress warns and quits only on a second q, which cancels the
    run, shows "stopping the run…" (the screen never blanks) and exits once the worker
    has stopped; the run is then cancelled (resumable), not left running."""
    step_done = threading.Event()  # the test ends the "decoding step" in flight

    def slow_to_stop(db_path, request, *, on_progress=None, cancel=None):
        outcome = fake_execute_run(db_path, request, on_progress=on_progress, cancel=cancel)
        step_done.wait(timeout=60)
        return outcome

    monkeypatch.setattr(runner, "execute_run", slow_to_stop)
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        run = await run_going_on_the_dashboard(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running and not run.cancel.is_set()
        await wait_until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("press q again" in text for text in toasts)
        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, StoppingScreen))
        assert run.cancel.is_set() and app.is_running and not run.finished
        shown = " ".join(str(widget.render()) for widget in app.screen.query("Static"))
        assert "stopping the run…" in shown and "literal-default-none" in shown
        step_done.set()
        await wait_until(pilot, lambda: not app.is_running)
    assert run.state == "cancelled"
    assert _status(demo_db, "literal-default-none") == "cancelled"


async def test_q_quits_at_once_without_a_run(demo_db: Path) -> None:
    app = CopyauditApp(demo_db)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await pilot.pause()
        assert not app.is_running


# --- the form: fields per kind, size, remembered values, conflicts ----------------------


@pytest.fixture
def three_kinds(tmp_path: Path) -> Path:
    path = tmp_path / "three.db"
    copy_demo_like_db(path, kinds=("literal", "notice"))  # and decop, always
    return path


def _cases(path: Path, suite: str) -> int:
    with Store(path) as store:
        return store.scalar(
            "SELECT COUNT(*) FROM cases c JOIN suites s ON s.id = c.suite_id WHERE s.name = ?",
            (suite,),
        )


async def _open_launcher(pilot, suite: str | None = None) -> LauncherScreen:
    await settle(pilot)
    pilot.app.push_screen(LauncherScreen(suite=suite))
    await settle(pilot)
    launcher = pilot.app.screen
    assert isinstance(launcher, LauncherScreen)
    return launcher


async def _start_refused(pilot) -> str:
    """Press ctrl+s and return the notifications it brought."""
    await pilot.press("ctrl+s")
    await wait_until(pilot, lambda: len(pilot.app.screen.query("Toast")) > 0)
    return " ".join(str(toast.render()) for toast in pilot.app.screen.query("Toast"))


def _shown_fields(launcher: LauncherScreen) -> set[str]:
    from screens.runs.launcher_form import FIELD_KINDS

    return {field for field in FIELD_KINDS if launcher.query_one(f"#{field}").display}


async def test_only_the_fields_of_the_suites_kind_are_shown(three_kinds: Path) -> None:
    from textual.widgets import Select

    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE) as pilot:
        launcher = await _open_launcher(pilot)
        assert _shown_fields(launcher) == set()  # no suite yet: the common fields only
        suite = launcher.query_one("#suite", Select)
        expected = {
            "literal": {
                "templates-field",
                "mitigation-field",
                "judges-field",
                "judge-models-field",
            },
            "notice": {
                "templates-field",
                "mitigation-field",
                "judges-field",
                "judge-models-field",
                "notice_position-field",
                "notice_mitigation-field",
            },
            "decop": {"calibrate_on-field", "length-field"},
        }
        for name, fields in expected.items():
            suite.value = name
            await pilot.pause()
            assert _shown_fields(launcher) == fields, name
        limit_label = str(launcher.query_one("#limit-label").render())
        assert limit_label.startswith("Passages per work")
        suite.value = "literal"
        await pilot.pause()
        assert str(launcher.query_one("#limit-label").render()).startswith("Limit")


async def test_the_size_of_the_run_is_shown_before_it_starts(three_kinds: Path) -> None:
    from textual.widgets import Input, Select

    literal_cases = _cases(three_kinds, "literal")
    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE) as pilot:
        launcher = await _open_launcher(pilot, "literal")

        def estimate() -> str:
            return str(launcher.query_one("#estimate").render())

        n = literal_cases
        assert f"{n} generations ({n} cases x 1 template)" in estimate()
        launcher.query_one("#templates", Input).value = "1,2,3"
        launcher.query_one("#limit", Input).value = "2"
        await pilot.pause()
        assert "6 generations (2 cases x 3 templates)" in estimate()
        launcher.query_one("#templates", Input).value = "x"
        await pilot.pause()
        assert "templates: 'x' is not a comma list" in estimate()
        # DE-COP: passages (the first N of each work) x 24 option orders
        launcher.query_one("#suite", Select).value = "decop"
        launcher.query_one("#limit", Input).value = "1"
        await pilot.pause()
        with Store(three_kinds) as store:
            works = store.scalar(
                "SELECT COUNT(DISTINCT c.work_id) FROM cases c JOIN suites s "
                "ON s.id = c.suite_id WHERE s.name = 'decop'"
            )
        assert f"{works * 24} prompts ({works} passages x 24 option orders)" in estimate()


async def test_the_launcher_remembers_the_last_values(three_kinds: Path, monkeypatch) -> None:
    from textual.widgets import Input, Select

    monkeypatch.setattr(runner, "execute_run", fake_execute_run)
    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _open_launcher(pilot, "notice")
        launcher.query_one("#limit", Input).value = "3"
        launcher.query_one("#notice_position", Select).value = "end"
        launcher.query_one("#judges", Select).value = "paper"
        await pilot.press("ctrl+s")
        run = app.active_runs["notice-default-none-notice-end"]
        run.cancel.set()
        await wait_until(pilot, lambda: run.finished)
    again = CopyauditApp(three_kinds)  # another session on the same database
    async with again.run_test(size=SIZE) as pilot:
        launcher = await _open_launcher(pilot)
        assert launcher.query_one("#suite", Select).value == "notice"
        assert launcher.query_one("#limit", Input).value == "3"
        assert launcher.query_one("#notice_position", Select).value == "end"
        assert launcher.query_one("#judges", Select).value == "paper"
        assert launcher.query_one("#name", Input).value == ""  # the name is not remembered
        launcher = await _open_launcher(pilot, "literal")  # Enter on a suite wins
        assert launcher.query_one("#suite", Select).value == "literal"


async def test_a_conflicting_configuration_is_refused_before_loading(
    three_kinds: Path, monkeypatch
) -> None:
    from textual.widgets import Input

    calls: list[str] = []

    def counted(db_path, request, **kwargs):
        calls.append(request.run_name())
        return fake_execute_run(db_path, request, **kwargs)

    monkeypatch.setattr(runner, "execute_run", counted)
    with Store(three_kinds) as store:
        spec = RunSpec("literal-default-none", "literal", "hf", "default", templates=(1,))
        create_or_resume_run(store, spec)
    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _open_launcher(pilot, "literal")
        launcher.query_one("#templates", Input).value = "1,2"
        toasts = await _start_refused(pilot)
        assert "Templates: 1 there, 1,2 here" in toasts and "Run name" in toasts
        assert "--" not in toasts  # no command-line flag
        assert app.focused is launcher.query_one("#templates")
        assert calls == [] and app.active_runs == {}
        launcher.query_one("#templates", Input).value = "1"  # as it was: it resumes
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: calls == ["literal-default-none"])
        app.active_runs["literal-default-none"].cancel.set()


async def test_a_refused_decop_calibration_names_the_field(three_kinds: Path) -> None:
    from textual.widgets import Input

    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _open_launcher(pilot, "decop")
        launcher.query_one("#calibrate_on", Input).value = "No Such Work"
        toasts = await _start_refused(pilot)
        assert "--calibrate-on" not in toasts and app.active_runs == {}
        assert app.focused is launcher.query_one("#calibrate_on")


async def test_the_judges_endpoint_reaches_the_request(three_kinds: Path) -> None:
    """Judge and event models, and the judges' endpoint (its key's variable name, never
    the key); a URL with credentials is refused, naming the form's field."""
    from textual.widgets import Input

    app = CopyauditApp(three_kinds)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        launcher = await _open_launcher(pilot, "notice")
        assert launcher.build_request().judging.judge_backend == "hf"  # empty URL: here
        for field, value in {
            "judge_model": "grader",
            "event_model": "default",
            "judge_base_url": "http://127.0.0.1:8000/v1",
            "judge_api_key_env": "MY_JUDGE_KEY",
        }.items():
            launcher.query_one(f"#{field}", Input).value = value
        judging = launcher.build_request().judging
        assert (judging.judge_model, judging.event_model) == ("grader", "default")
        assert (judging.judge_backend, judging.judge_base_url) == (
            "openai",
            "http://127.0.0.1:8000/v1",
        )
        assert judging.config()["judge_api_key_env"] == "MY_JUDGE_KEY"
        launcher.query_one("#judge_base_url", Input).value = "http://me:sk-1@127.0.0.1/v1"
        await pilot.pause()
        estimate = str(launcher.query_one("#estimate").render())
        assert "credentials" in estimate and "--judge" not in estimate
        toasts = await _start_refused(pilot)
        assert "credentials" in toasts and app.active_runs == {}


def test_launcher_snapshot(three_kinds: Path, snap_compare) -> None:
    async def ready(pilot) -> None:
        launcher = await _open_launcher(pilot, "notice")
        # the suite's fields are shown once the suites are read; then the model field
        # takes the focus (and its focus style): wait for it, or the picture races it
        await wait_until(pilot, lambda: pilot.app.focused is launcher.query_one("#model"))
        await pilot.pause()

    assert snap_compare(CopyauditApp(three_kinds), terminal_size=SIZE, run_before=ready)
