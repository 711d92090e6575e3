"""`copyaudit serve` in a real browser: Debian's chromium, headless, driven by playwright
(the system browser: playwright never downloads one here). A reviewer opens the page,
gives a name, opens the dashboard's first run, its first generation, annotation mode, and
labels one item with `y`, all with keys typed into the page; the label is then read from
the database. The screenshot is left under the test's tmp dir (its path is printed)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from db import Store
from db.labels import current_labels

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DEMO_KINDS = ("literal",)  # the demo_db fixture's suites (conftest)
REVIEWER = "reviewer-web"
ROOT = Path(__file__).resolve().parent.parent
STEP_S = 60  # one screen's wait, at most (an app process starts in a few seconds idle)
# xterm.js draws with WebGL or a canvas; without a canvas it falls back to DOM rows, whose
# text the test reads to know which screen is shown
DOM_RENDERER = "HTMLCanvasElement.prototype.getContext = function () { return null; };"
ROWS_INCLUDE = "n => (document.querySelector('.xterm-rows') || {}).innerText?.includes(n)"
ROWS_TEXT = "() => (document.querySelector('.xterm-rows') || {}).innerText"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no chromium installed (Debian: apt-get install chromium; .ci/run does)",
    ),
    pytest.mark.timeout(300),
    pytest.mark.slow,  # make test-slow: drives a real browser
]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for_server(url: str, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STEP_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"copyaudit serve ended early: {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"copyaudit serve did not answer on {url} in {STEP_S} s")


def test_a_reviewer_labels_an_item_in_the_browser(demo_db: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    port = _free_port()
    base = f"http://127.0.0.1:{port}/"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "COPYAUDIT_CONFIG_DIR": str(tmp_path / "config"),
    }
    log = (tmp_path / "serve.log").open("wb")
    command = [sys.executable, "-m", "copyaudit", "--db", str(demo_db), "serve"]
    server = subprocess.Popen(
        [*command, "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    requested: list[str] = []
    try:
        _wait_for_server(base, server)
        with sync_api.sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.on("request", lambda request: requested.append(request.url))
            page.add_init_script(DOM_RENDERER)
            page.goto(base)

            def shows(text: str) -> None:
                try:
                    page.wait_for_function(ROWS_INCLUDE, arg=text, timeout=STEP_S * 1000)
                except sync_api.TimeoutError as timeout:
                    page.screenshot(path=str(tmp_path / "serve-stuck.png"))
                    rows = page.evaluate(ROWS_TEXT)
                    shown = f"no {text!r} in {STEP_S} s; the page shows:\n{rows}"
                    raise AssertionError(shown) from timeout

            shows("Who is labelling?")  # each tab asks: no name remembered on the server
            page.focus("textarea.xterm-helper-textarea")  # where xterm.js takes keys
            page.keyboard.type(REVIEWER)
            page.keyboard.press("Enter")
            shows(f"annotator: {REVIEWER}")
            shows("demo-literal")  # the dashboard's runs are loaded
            page.keyboard.press("Enter")  # the first run: its generation list
            shows("generations match")
            # the first generation: under load the list may take the key before its rows
            # can be opened (the app drops it), so the key is pressed again until it opens
            for _ in range(int(STEP_S / 5)):
                page.keyboard.press("Enter")
                try:
                    page.wait_for_function(ROWS_INCLUDE, arg="Prompt & reference", timeout=5000)
                    break
                except sync_api.TimeoutError:
                    continue
            shows("Prompt & reference")
            page.keyboard.press("a")  # annotation mode
            shows("labelled")
            page.keyboard.press("y")
            deadline = time.monotonic() + STEP_S
            with Store(demo_db, read_only=True) as store:
                while not (labels := current_labels(store, annotator=REVIEWER)):
                    assert time.monotonic() < deadline, "no label in the database"
                    time.sleep(0.2)
            shows("1/2 labelled")  # the screen shows the stored label
            shot = tmp_path / "serve-labelled.png"
            page.screenshot(path=str(shot))
            browser.close()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()
    print(f"screenshot: {shot}")
    assert [label.label for label in labels] == ["yes"]
    assert shot.stat().st_size > 0
    outside = [url for url in requested if not url.startswith(base)]
    assert outside == []  # the page loads nothing from anywhere else
