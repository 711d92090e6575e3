"""A small JSON-over-HTTP client with retries, on the standard library only.

Retries (exponential backoff) on timeouts, connection errors, HTTP 429 and 5xx; never on
other 4xx, which mean the request itself is wrong. The number of attempts is bounded.
Redirects are never followed: the API key goes only to the address given, and a
redirect is an error naming where it pointed. A base URL with credentials in it
(user:key@host) is refused: it would be stored with the run and shown in its reports.

Every request is bounded (`endpoint_limits`): an answer larger than `max_response_bytes`
is refused as soon as it is known to be (its Content-Length, else once that many bytes
have been read), and a request, retries included, ends at its `deadline` even while
bytes keep trickling in (a socket timeout alone never fires then). Both are failures of
that request, not retried: the caller records them like any other failed request.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from typing import IO, Any

from copyaudit.endpoint_url import check_base_url
from copyaudit.models.endpoint_limits import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_REQUEST_DEADLINE_S,
    DeadlinePassed,
    ResponseTooLarge,
    Watchdog,
    read_capped,
    watched_opener,
)

MAX_BACKOFF_SECONDS = 30.0
ERROR_BODY_BYTES = 64 * 1024  # of an HTTP error's body, read for its message only


class RequestFailed(Exception):
    """A request failed for good (not retryable, or out of retries)."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: following one would send the API key elsewhere."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: http.client.HTTPMessage,
        newurl: str,
    ) -> urllib.request.Request | None:
        raise RequestFailed(
            f"HTTP {code}: the endpoint redirects to {newurl}; not followed (the API key is "
            "sent only to the address given): use that address as the base URL if you "
            "trust it"
        )


class JsonClient:
    def __init__(
        self,
        base_url: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        deadline: float = DEFAULT_REQUEST_DEADLINE_S,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if max_response_bytes < 1 or not deadline > 0:
            raise ValueError(
                f"max_response_bytes and deadline must be positive, got "
                f"{max_response_bytes} and {deadline}"
            )
        check_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_response_bytes = max_response_bytes
        self.deadline = deadline

    def limits(self) -> dict[str, float]:
        """The limits that differ from the defaults (a run's stored configuration names
        them only then, so runs made before them still resume)."""
        chosen = {
            "max_response_bytes": (self.max_response_bytes, DEFAULT_MAX_RESPONSE_BYTES),
            "request_deadline_s": (self.deadline, DEFAULT_REQUEST_DEADLINE_S),
        }
        return {name: value for name, (value, default) in chosen.items() if value != default}

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:  # local servers (vLLM, TGI) usually need none
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST `body` as JSON to base_url + path and return the decoded JSON answer."""
        url = f"{self.base_url}/{path.lstrip('/')}"
        data = json.dumps(body).encode("utf-8")
        finish = time.monotonic() + self.deadline
        last_problem = "no attempt made"
        server_delay: float | None = None  # a 429/503's Retry-After, in seconds
        for attempt in range(self.max_retries + 1):
            if attempt:
                delay = self._delay(attempt, server_delay)
                if time.monotonic() + delay >= finish:
                    raise RequestFailed(
                        f"gave up after {attempt} attempts: the request deadline of "
                        f"{self.deadline} s leaves no time for another; last: "
                        f"{last_problem}"
                    )
                time.sleep(delay)
            server_delay = None
            request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
            try:
                payload = self._attempt(request, finish - time.monotonic())
            except urllib.error.HTTPError as error:
                last_problem = f"HTTP {error.code}: {_error_detail(error)}"
                if error.code == 429 or error.code >= 500:
                    server_delay = _retry_after_seconds(error)
                    continue
                raise RequestFailed(last_problem) from error
            except (DeadlinePassed, ResponseTooLarge) as error:
                raise RequestFailed(str(error)) from error
            except TimeoutError as error:
                last_problem = f"timed out after {self.timeout} s ({error})"
                continue
            except urllib.error.URLError as error:
                last_problem = f"connection error: {error.reason}"
                continue
            except (ConnectionError, http.client.HTTPException) as error:
                last_problem = f"connection error: {error!r}"
                continue
            try:
                decoded = json.loads(payload)
            except ValueError as error:
                raise RequestFailed(f"answer is not JSON: {payload[:200]!r}") from error
            if not isinstance(decoded, dict):
                raise RequestFailed(f"answer is not a JSON object: {payload[:200]!r}")
            return decoded
        raise RequestFailed(f"gave up after {self.max_retries + 1} attempts; last: {last_problem}")

    def _attempt(self, request: urllib.request.Request, seconds_left: float) -> bytes:
        """One exchange, ended by the watchdog when `seconds_left` run out (DeadlinePassed);
        ResponseTooLarge past the cap. An HTTP error's body is read (bounded) before the
        watchdog stops, so that its message is had in time too."""
        with Watchdog(seconds_left, self.deadline) as watchdog:
            try:
                with watched_opener(watchdog, _NoRedirect).open(
                    request, timeout=min(self.timeout, max(seconds_left, 0.001))
                ) as response:
                    payload = read_capped(response, self.max_response_bytes)
            except urllib.error.HTTPError as error:
                error.detail_text = _read_error_body(error)  # type: ignore[attr-defined]
                raise
            except (OSError, http.client.HTTPException) as error:
                watchdog.raise_if_expired(error)
                raise
            watchdog.raise_if_expired(None)  # the socket was shut: the body may be cut
            return payload

    def _delay(self, attempt: int, server_delay: float | None) -> float:
        delay = self.backoff * (2 ** (attempt - 1))
        if server_delay is not None:
            delay = max(delay, server_delay)
        return min(delay, MAX_BACKOFF_SECONDS)


def _read_error_body(error: urllib.error.HTTPError) -> str:
    try:
        return error.read(ERROR_BODY_BYTES).decode("utf-8", "replace")
    except Exception:  # the body is only for the message
        return ""


def _error_detail(error: urllib.error.HTTPError) -> str:
    text = getattr(error, "detail_text", None)
    if text is None:
        text = _read_error_body(error)
    try:
        message = json.loads(text)["error"]
        if isinstance(message, dict):
            message = message.get("message", message)
        return str(message)[:500]
    except (ValueError, KeyError, TypeError):
        return (text or str(error.reason))[:500]


def _retry_after_seconds(error: urllib.error.HTTPError) -> float | None:
    value = error.headers.get("Retry-After") if error.headers else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None
