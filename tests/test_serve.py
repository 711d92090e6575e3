"""`copyaudit serve` without a browser: who may be served (this machine only, unless
--public with a token), what the guard in front of textual-serve refuses, and the
command each tab runs. The browser test is tests/test_serve_browser.py."""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request

from copyaudit.cli.serve import app_command, check_exposure, is_local, local_hosts
from copyaudit.cli.web_server import TOKEN_COOKIE, GuardedServer
from copyaudit.errors import UserError

TOKEN = "correct-horse-battery-staple"
PORT = 8765


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"])
def test_loopback_hosts_are_local(host: str) -> None:
    assert is_local(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "example.org", ""])
def test_other_hosts_are_not(host: str) -> None:
    assert not is_local(host)


def test_a_host_beyond_this_machine_needs_public_and_a_token() -> None:
    check_exposure("127.0.0.1", public=False, token=None)
    with pytest.raises(UserError, match="pass --public and a token"):
        check_exposure("0.0.0.0", public=False, token=TOKEN)
    with pytest.raises(UserError, match="--public needs a token"):
        check_exposure("0.0.0.0", public=True, token=None)
    with pytest.raises(UserError, match="at least 16 characters"):
        check_exposure("0.0.0.0", public=True, token="short")
    check_exposure("0.0.0.0", public=True, token=TOKEN)


def test_the_command_refuses_before_serving(cli: Callable[..., Any], db_path: Path) -> None:
    assert cli("migrate").code == 0
    before = db_path.read_bytes()
    result = cli("serve", "--host", "0.0.0.0")
    assert result.code == 2 and "--public" in result.err and "token" in result.err
    result = cli("serve", "--host", "0.0.0.0", "--public")
    assert result.code == 2 and "--public needs a token" in result.err
    missing = db_path.with_name("missing.db")
    result = cli("serve", db=missing)
    assert result.code == 2 and "no database at" in result.err and not missing.exists()
    assert db_path.read_bytes() == before


def test_each_tab_runs_the_app_on_the_same_database(tmp_path: Path) -> None:
    db = tmp_path / "a b.db"  # a space: the command is a shell line
    args = shlex.split(app_command(db, "ann", read_only=True, python="/py"))
    served = ["/py", "-m", "copyaudit", "--db", str(db), "--served"]
    assert args == [*served, "--annotator", "ann", "--read-only"]
    assert "--annotator" not in shlex.split(app_command(db, None, read_only=False))


def _server(token: str | None, hosts: list[str] | None) -> GuardedServer:
    return GuardedServer(
        "true", host="127.0.0.1", port=PORT, token=token, allowed_hosts=hosts,
        max_sessions=2, title="t",
    )  # fmt: skip


def _request(path: str = "/", **headers: str) -> Any:
    headers.setdefault("Host", f"127.0.0.1:{PORT}")
    return make_mocked_request("GET", path, headers=headers)


def test_the_local_guard_refuses_other_hosts_and_other_sites() -> None:
    server = _server(None, local_hosts(PORT))
    assert server.refusal(_request()) is None
    assert server.refusal(_request(Host=f"localhost:{PORT}")) is None
    assert server.refusal(_request(Origin=f"http://127.0.0.1:{PORT}")) is None
    # DNS rebinding: a page of evil.example whose name now points at 127.0.0.1
    assert "unknown host" in server.refusal(_request(Host=f"evil.example:{PORT}"))
    # another site's page opening the websocket
    refused = server.refusal(_request("/ws", Origin="http://evil.example"))
    assert refused is not None and "another site" in refused


def test_the_token_guard_takes_the_query_or_the_cookie_only() -> None:
    server = _server(TOKEN, None)
    assert "token is needed" in server.refusal(_request())
    assert "token is needed" in server.refusal(_request("/?token=wrong-token-of-length"))
    assert server.refusal(_request(f"/?token={TOKEN}")) is None
    assert server.refusal(_request("/ws", Cookie=f"{TOKEN_COOKIE}={TOKEN}")) is None
    assert "token is needed" in server.refusal(_request("/ws", Cookie=f"{TOKEN_COOKIE}=x"))


@pytest.mark.anyio
async def test_the_page_with_the_token_sets_the_cookie_the_rest_needs() -> None:
    from aiohttp.test_utils import TestClient, TestServer

    server = _server(TOKEN, None)
    async with TestClient(TestServer(await server._make_app())) as client:
        assert (await client.get("/")).status == 403
        given = await client.get(f"/?fontsize=14&token={TOKEN}", allow_redirects=False)
        assert given.status == 303 and given.headers["Location"] == "/?fontsize=14"
        cookie = given.headers["Set-Cookie"]
        assert f"{TOKEN_COOKIE}={TOKEN}" in cookie
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
        page = await client.get(given.headers["Location"])  # with the cookie
        assert page.status == 200
        html = await page.text()
        assert "https:" not in html and "googleapis" not in html
        assert f"ws://{client.host}:{client.port}/ws" in html  # the address it was reached by
        script = await client.get("/static/js/textual.js")  # the client keeps the cookie
        assert script.status == 200
        client.session.cookie_jar.clear()
        assert (await client.get("/static/js/textual.js")).status == 403


@pytest.mark.anyio
async def test_no_more_app_processes_than_max_sessions() -> None:
    server = _server(None, None)
    server.sessions = server.max_sessions  # that many tabs are open
    response = await server.handle_websocket(_request("/ws"))
    assert response.status == 503 and server.sessions == server.max_sessions


def test_a_served_tab_never_takes_the_name_remembered_on_the_server(
    cli: Callable[..., Any], db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import screens.app
    from copyaudit.identity import remember_annotator

    opened: list[str | None] = []
    monkeypatch.setattr(screens.app, "run_app", lambda path, annotator: opened.append(annotator))
    remember_annotator("owner")  # the serving user's name, remembered on this machine
    assert cli().code == 0  # the terminal app takes the remembered name
    assert cli("--served").code == 0  # a tab asks for one instead
    assert cli("--served", "--annotator", "ann").code == 0
    assert opened == ["owner", None, "ann"]


def test_the_access_log_hides_the_token() -> None:
    from copyaudit.cli.web_server import _hide_token

    line = f'127.0.0.1 "GET /?fontsize=14&token={TOKEN} HTTP/1.1" 303'
    record = logging.LogRecord("aiohttp.access", logging.INFO, "", 0, line, None, None)
    assert _hide_token(record) and TOKEN not in record.msg and "token=…" in record.msg
