"""The OpenAI-compatible client never sends the API key anywhere but the address given:
a redirect is an error naming where it pointed, never followed; a base URL with
credentials in it is refused before anything is stored."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from copyaudit.errors import UserError
from copyaudit.models.base import GenerationRequest
from copyaudit.models.http_client import JsonClient, RequestFailed
from copyaudit.models.openai_compat import OpenAIGenerator
from tests.conftest import database_fingerprint, write_jsonl

KEY = "sk-test-secret-0123"


class Recorder:
    """A fake endpoint: records each request's path and Authorization header, answers
    `status` with a Location header when given, else a chat completion."""

    def __init__(self, status: int = 200, location: str | None = None) -> None:
        self.status, self.location = status, location
        self.seen: list[tuple[str, str, str | None]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                self.rfile.read(length)
                recorder.seen.append((self.command, self.path, self.headers.get("Authorization")))
                body = b'{"choices": [{"message": {"content": "the other host"}}]}'
                self.send_response(recorder.status)
                if recorder.location:
                    self.send_header("Location", recorder.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET = _answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def servers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Recorder]]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("COPYAUDIT_TEST_KEY", KEY)
    started: list[Recorder] = []
    yield started
    for server in started:
        server.close()


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_host_is_an_error_and_never_followed(
    servers: list[Recorder], status: int
) -> None:
    other = Recorder()
    # another host name and port: 'localhost' where the first is 127.0.0.1
    other_url = f"http://localhost:{other.port}/v1/chat/completions"
    first = Recorder(status, location=other_url)
    servers += [other, first]
    generator = OpenAIGenerator(
        f"http://127.0.0.1:{first.port}/v1", "m", api_key_env="COPYAUDIT_TEST_KEY", max_retries=0
    )
    [result] = generator.generate([GenerationRequest("hello", 5)])
    assert result.text == "" and result.error is not None
    assert other_url in result.error and "not followed" in result.error
    assert first.seen == [("POST", "/v1/chat/completions", f"Bearer {KEY}")]
    assert other.seen == []  # the key (and the prompt) never reached the other host


def test_a_redirect_on_the_same_host_is_not_followed_either(servers: list[Recorder]) -> None:
    first = Recorder(308, location="/v2/chat/completions")
    servers.append(first)
    client = JsonClient(f"http://127.0.0.1:{first.port}/v1", "COPYAUDIT_TEST_KEY", max_retries=0)
    with pytest.raises(RequestFailed, match=r"redirects to \S*/v2/chat/completions; not"):
        client.post("chat/completions", {"model": "m"})
    assert len(first.seen) == 1


@pytest.mark.parametrize(
    "url", ["http://user:sk-1@127.0.0.1:9/v1", "https://sk-1@api.example.org/v1", "ftp://h/v1"]
)
def test_credentials_in_the_base_url_are_refused(url: str) -> None:
    with pytest.raises(UserError, match="--base-url") as refused:
        OpenAIGenerator(url, "m")
    assert "sk-1" not in str(refused.value) or url.startswith("ftp")


@pytest.mark.parametrize("command", ["run", "decop"])
def test_the_cli_refuses_credentials_before_storing_anything(
    tmp_path: Path, cli, db_path: Path, command: str
) -> None:
    cases = [{"id": "c1", "title": "Our Tale", "input": "Once", "reference": "upon a time"}]
    assert (
        cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases)), "--suite", "s").code
        == 0
    )
    before = database_fingerprint(db_path)
    result = cli(
        command, "s", "--backend", "openai", "--base-url", "http://me:sk-1@127.0.0.1:9/v1",
        "--model", "m",
    )  # fmt: skip
    assert result.code == 2 and "must not carry credentials" in result.err
    assert "--api-key-env" in result.err
    assert database_fingerprint(db_path) == before


def test_credentials_an_older_copyaudit_stored_are_redacted_where_shown(
    tmp_path: Path, cli, db_path: Path
) -> None:
    import json
    import sqlite3

    cases = [{"id": "c1", "title": "Our Tale", "input": "Once", "reference": "upon a time"}]
    assert (
        cli("import", "literal", str(write_jsonl(tmp_path / "c.jsonl", cases)), "--suite", "s").code
        == 0
    )
    outputs = write_jsonl(tmp_path / "g.jsonl", [{"case_id": "c1", "output": "upon"}])
    assert cli("import-generations", str(outputs), "--run", "r", "--suite", "s").code == 0
    config = {
        "model": {"base_url": "http://me:sk-1@127.0.0.1:9/v1"},
        "judge_base_url": "https://sk-2@h/v1",
    }
    conn = sqlite3.connect(db_path)  # as a run made before the refusal stored it
    conn.execute("UPDATE runs SET config = ?", (json.dumps(config),))
    conn.commit()
    conn.close()
    for command in (
        ("dossier", "c1"),
        ("dossier", "c1", "--format", "html"),
        ("report", "r", "--format", "html"),
    ):
        argv = [command[0], "r/c1/1", *command[2:]] if command[0] == "dossier" else list(command)
        result = cli(*argv)
        assert result.code == 0, result.err
        assert "sk-1" not in result.out and "sk-2" not in result.out
        assert "[redacted]@127.0.0.1:9/v1" in result.out
