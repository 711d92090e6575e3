"""The web server of `copyaudit serve`: textual-serve's server (each browser tab its own
app process) with a guard in front, since textual-serve itself checks nobody.

The guard, an aiohttp middleware, answers 403 to:
- a request whose Host is not one of `allowed_hosts` (when given: the local names), so a
  web page cannot reach the local server through DNS rebinding;
- a request whose Origin (sent by browsers) is another site, so a page the reviewer
  visits cannot open the app's websocket and type labels (cross-site websocket
  hijacking);
- without the token (when one is set): `?token=` on the page's address (answered with a
  redirect to the address without it, setting an HttpOnly, SameSite=Strict cookie), or
  that cookie (the page, its websocket and its static files). The access log hides it.
It also refuses a websocket beyond `max_sessions` open ones (each is a process).
"""

from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Awaitable, Callable, Collection
from pathlib import Path
from typing import Any

from aiohttp import web
from textual_serve.server import Server

TOKEN_COOKIE = "copyaudit_token"
TEMPLATES = Path(__file__).with_name("web_page")  # textual-serve's page, no web fonts

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
TOKEN_IN_QUERY = re.compile(r"([?&]token=)[^&\s\"]*")


def _hide_token(record: logging.LogRecord) -> bool:
    """The access log's lines without the token of a `?token=` address."""
    record.msg = TOKEN_IN_QUERY.sub(r"\1…", str(record.msg))
    return True


class GuardedServer(Server):
    def __init__(
        self,
        command: str,
        *,
        host: str,
        port: int,
        token: str | None,
        allowed_hosts: Collection[str] | None,
        max_sessions: int,
        title: str,
    ) -> None:
        super().__init__(command, host=host, port=port, title=title, templates_path=TEMPLATES)
        self.token = token
        self.allowed_hosts = None if allowed_hosts is None else frozenset(allowed_hosts)
        self.max_sessions = max_sessions
        self.sessions = 0

    async def _make_app(self) -> web.Application:
        app = await super()._make_app()
        app.middlewares.append(self._guard)
        return app

    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = self.refusal(request)
        if refusal is not None:
            return web.Response(status=403, text=f"copyaudit serve: {refusal}\n")
        if self.token is None or "token" not in request.query:
            return await handler(request)
        # the token moves into a cookie and out of the address (history, Referer)
        others = request.url.with_query({k: v for k, v in request.query.items() if k != "token"})
        response = web.Response(status=303, headers={"Location": others.path_qs})
        response.set_cookie(TOKEN_COOKIE, self.token, httponly=True, samesite="Strict", path="/")
        return response

    def refusal(self, request: web.Request) -> str | None:
        """Why `request` is refused (None: it may go on)."""
        if self.allowed_hosts is not None and request.host not in self.allowed_hosts:
            return f"unknown host {request.host!r}"
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return "a page of another site may not use this server"
        if self.token is not None:
            given = request.query.get("token") or request.cookies.get(TOKEN_COOKIE) or ""
            if not hmac.compare_digest(given.encode(), self.token.encode()):
                return "a token is needed: open the address printed by `copyaudit serve`"
        return None

    async def handle_index(self, request: web.Request) -> Any:
        # textual-serve builds the page's websocket address from public_url; here it is
        # the address the browser used (it reached us by it). No await before the page's
        # context is built, so no other request sees this value.
        self.public_url = f"{request.scheme}://{request.host}"
        return await super().handle_index(request)

    # a refusal is a plain response where textual-serve always answers a websocket
    async def handle_websocket(self, request: web.Request) -> web.StreamResponse:  # type: ignore[override]
        if self.sessions >= self.max_sessions:
            return web.Response(
                status=503,
                text=f"copyaudit serve: {self.max_sessions} sessions are open already\n",
            )
        self.sessions += 1
        try:
            return await super().handle_websocket(request)
        finally:
            self.sessions -= 1

    def initialize_logging(self) -> None:
        super().initialize_logging()
        logging.getLogger("aiohttp.access").addFilter(_hide_token)

    async def on_startup(self, app: web.Application) -> None:
        """No logo: the command prints the address itself."""
