"""A hostile endpoint on 127.0.0.1: an endless body trickling in, a 100 MB body, a huge
declared length. Each request fails within its deadline, the test process's memory does
not grow with the body, and a run records the failures and goes on (issue 33)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from copyaudit.judges.context import load_judge_lm
from copyaudit.judges.options import JudgeOptions
from copyaudit.models.base import GenerationRequest
from copyaudit.models.openai_compat import OpenAIChoiceScorer, OpenAIGenerator
from tests.conftest import write_jsonl

MIB = 1024 * 1024
BLOCK = b"x" * (64 * 1024)  # what the server repeats: it never holds a whole body


def _endless_trickle(handler: BaseHTTPRequestHandler) -> None:
    """200, no length, a few bytes every 10 ms for ever: no socket timeout ever fires."""
    handler.wfile.write(b'{"choices": [{"text": "')
    while True:
        handler.wfile.write(b"a" * 64)
        handler.wfile.flush()
        time.sleep(0.01)


def _hundred_mb(handler: BaseHTTPRequestHandler) -> None:
    """200, no length, 100 MiB as fast as it goes (the cap must stop the reader)."""
    for _ in range(100 * MIB // len(BLOCK)):
        handler.wfile.write(BLOCK)


def _declared_hundred_mb(handler: BaseHTTPRequestHandler) -> None:
    """A Content-Length of 100 MiB (refused before the body is read)."""
    handler.wfile.write(b"{}")


BODIES: dict[str, Callable[[BaseHTTPRequestHandler], None]] = {
    "trickle": _endless_trickle,
    "hundred": _hundred_mb,
    "declared": _declared_hundred_mb,
}


@pytest.fixture
def hostile(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], str]]:
    """start(kind) -> the base URL of a server answering every POST with BODIES[kind]."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    servers: list[ThreadingHTTPServer] = []

    def start(kind: str) -> str:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # a body without a length ends at close

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                if kind == "declared":
                    self.send_header("Content-Length", str(100 * MIB))
                self.end_headers()
                # the client hanging up ends the body: what the test wants
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    BODIES[kind](self)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        servers.append(server)
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        return f"http://127.0.0.1:{server.server_address[1]}/v1"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} in /proc/self/status")


def _peak_growth_mib(action: Callable[[], Any]) -> tuple[Any, float]:
    """`action`'s result and how far the process's peak RSS rose above its RSS before it
    (the peak is reset first by writing 5 to /proc/self/clear_refs)."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError as error:
        pytest.skip(f"cannot reset the peak RSS here: {error}")
    before = _status_kib("VmRSS")
    result = action()
    return result, (_status_kib("VmHWM") - before) / 1024


def _generator(url: str, **limits: Any) -> OpenAIGenerator:
    return OpenAIGenerator(url, "m", mode="completions", max_retries=2, backoff=0.01, **limits)


def test_an_endless_trickling_body_fails_at_the_deadline(hostile: Callable[[str], str]) -> None:
    generator = _generator(hostile("trickle"), timeout=5.0, deadline=0.5)
    started = time.monotonic()
    result = generator.generate([GenerationRequest("p", 3)])[0]
    elapsed = time.monotonic() - started
    assert result.text == "" and result.error is not None
    assert "deadline of 0.5 s" in result.error
    assert 0.45 <= elapsed < 1.5, elapsed  # the socket timeout (5 s) never fired


def test_a_100_mb_body_is_cut_at_the_cap_in_bounded_memory(
    hostile: Callable[[str], str],
) -> None:
    generator = _generator(hostile("hundred"), max_response_bytes=MIB, deadline=20.0)
    result, growth = _peak_growth_mib(lambda: generator.generate([GenerationRequest("p", 3)])[0])
    assert result.error is not None and f"cap of {MIB} bytes" in result.error
    assert growth < 24, f"peak RSS rose {growth:.1f} MiB for a 1 MiB cap"


def test_the_default_cap_bounds_a_100_mb_body(hostile: Callable[[str], str]) -> None:
    generator = _generator(hostile("hundred"), deadline=20.0)
    result, growth = _peak_growth_mib(lambda: generator.generate([GenerationRequest("p", 3)])[0])
    assert result.error is not None and "cap of 8388608 bytes" in result.error
    assert growth < 48, f"peak RSS rose {growth:.1f} MiB for the 8 MiB default cap"


def test_a_declared_length_over_the_cap_is_not_read(hostile: Callable[[str], str]) -> None:
    scorer = OpenAIChoiceScorer(hostile("declared"), "m", max_response_bytes=MIB)
    rows = scorer.choice_probabilities(["p"], ["A", "B"])
    assert rows.shape == (1, 2) and all(value != value for value in rows[0])  # NaN row
    assert "declares 104857600 bytes" in scorer.last_errors[0]


def test_limits_enter_the_provenance_only_when_chosen() -> None:
    plain = OpenAIGenerator("http://127.0.0.1:9/v1", "m")
    assert "max_response_bytes" not in json.dumps(plain.provenance())  # config hashes kept
    capped = OpenAIGenerator("http://127.0.0.1:9/v1", "m", max_response_bytes=10)
    assert capped.provenance()["retries"]["max_response_bytes"] == 10


def test_a_run_records_deadline_failures_and_goes_on(
    tmp_path: Path, cli, hostile: Callable[[str], str]
) -> None:
    cases = [
        {"id": f"c{i}", "title": "Our Own Tales", "input": f"Story {i}", "reference": "ends"}
        for i in range(2)
    ]
    suite_file = write_jsonl(tmp_path / "c.jsonl", cases)
    imported = cli("import", "literal", str(suite_file), "--suite", "s")
    assert imported.code == 0, imported.err
    started = time.monotonic()
    result = cli(
        "run", "s", "--backend", "openai", "--base-url", hostile("trickle"), "--model", "m",
        "--name", "api", "--request-deadline", "0.4",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "run api: done with 2 failed; 0 generated, 2 failed" in result.out
    assert time.monotonic() - started < 10
    runs = json.loads(cli("runs", "--format", "json").out)
    assert runs[0]["failed"] == 2


def test_the_judge_lm_gets_its_own_limits() -> None:
    options = JudgeOptions(
        judge_backend="openai",
        judge_base_url="http://127.0.0.1:9/v1",
        judge_max_response_bytes=4096,
        judge_request_deadline=2.5,
    )
    client = load_judge_lm(options, "judge").client  # type: ignore[attr-defined]
    assert (client.max_response_bytes, client.deadline) == (4096, 2.5)
    stored = options.config()
    assert stored["judge_max_response_bytes"] == 4096 and stored["judge_request_deadline"] == 2.5
    assert "judge_request_deadline" not in JudgeOptions().config()  # defaults are not stored
