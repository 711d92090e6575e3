"""Bounds on one endpoint request: how many bytes its answer may have, and how long the
whole request may take.

A socket timeout bounds each wait for bytes, not a request: a server that keeps sending
a byte now and then never trips it. The deadline is kept by a `Watchdog` timer that
shuts the request's socket down when it fires, which ends a read blocked in any thread
at once; the reader then sees the watchdog expired and reports DeadlinePassed.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import urllib.request
from collections.abc import Callable
from typing import Any

from copyaudit.endpoint_budget import DEFAULT_MAX_RESPONSE_BYTES as DEFAULT_MAX_RESPONSE_BYTES
from copyaudit.endpoint_budget import DEFAULT_REQUEST_DEADLINE_S as DEFAULT_REQUEST_DEADLINE_S

READ_CHUNK = 64 * 1024


class ResponseTooLarge(Exception):
    """The answer is larger than the cap; it was not read further."""


class DeadlinePassed(Exception):
    """The request did not finish within its deadline."""


class Watchdog:
    """Shuts down every socket it tracks `seconds` after entering (a context manager)."""

    def __init__(self, seconds: float, deadline: float) -> None:
        self.deadline = deadline  # the request's whole deadline, for the message
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(seconds, 0.0), self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exception: object) -> None:
        self._timer.cancel()

    def track(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            expired = self.expired
        if expired:
            _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def raise_if_expired(self, cause: BaseException | None) -> None:
        if self.expired:
            raise DeadlinePassed(
                f"no complete answer within the request deadline of {self.deadline} s "
                "(--request-deadline); the connection was closed"
            ) from cause


def _shut(sock: socket.socket) -> None:
    """Shut the socket's both directions (the plain socket's call, so that a TLS socket
    is cut under its reader too); a blocked recv returns at once."""
    with contextlib.suppress(OSError):  # already closed
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


class _WatchedConnections:
    """Mixin for urllib's HTTP(S) handlers: each connection's socket goes to the watchdog
    as soon as it is connected."""

    watchdog: Watchdog

    def do_open(self, http_class: Callable[..., Any], req: Any, **kwargs: Any) -> Any:
        watchdog = self.watchdog

        def connection(*args: Any, **options: Any) -> http.client.HTTPConnection:
            made = http_class(*args, **options)
            connect = made.connect

            def watched_connect() -> None:
                connect()
                watchdog.track(made.sock)

            made.connect = watched_connect
            return made

        return super().do_open(connection, req, **kwargs)  # type: ignore[misc]


class _HTTPHandler(_WatchedConnections, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_WatchedConnections, urllib.request.HTTPSHandler):
    pass


def watched_opener(watchdog: Watchdog, *handlers: Any) -> urllib.request.OpenerDirector:
    """An opener (with `handlers`, e.g. one refusing redirects) whose connections the
    watchdog can cut."""
    plain, secure = _HTTPHandler(), _HTTPSHandler()
    plain.watchdog = secure.watchdog = watchdog
    return urllib.request.build_opener(plain, secure, *handlers)


def read_capped(response: http.client.HTTPResponse, cap: int) -> bytes:
    """The body, refused (ResponseTooLarge) when its declared length or the bytes read
    pass `cap`; read a chunk at a time (`read1`: at most one wait for bytes per call)."""
    declared = response.headers.get("Content-Length", "")
    if declared.isdigit() and int(declared) > cap:
        raise ResponseTooLarge(
            f"the answer declares {int(declared)} bytes, more than the cap of {cap} "
            "(--max-response-bytes); not read"
        )
    chunks: list[bytes] = []
    size = 0
    while chunk := response.read1(READ_CHUNK):
        size += len(chunk)
        if size > cap:
            raise ResponseTooLarge(
                f"the answer passed the cap of {cap} bytes (--max-response-bytes); not read further"
            )
        chunks.append(chunk)
    return b"".join(chunks)
