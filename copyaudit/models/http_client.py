"""A small JSON-over-HTTP client with retries, on the standard library only.

Retries (exponential backoff) on timeouts, connection errors, HTTP 429 and 5xx; never on
other 4xx, which mean the request itself is wrong. The number of attempts is bounded.
Redirects are never followed: the API key goes only to the address given, and a
redirect is an error naming where it pointed. A base URL with credentials in it
(user:key@host) is refused: it would be stored with the run and shown in its reports.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from typing import Any

from copyaudit.endpoint_url import check_base_url

MAX_BACKOFF_SECONDS = 30.0


class RequestFailed(Exception):
    """A request failed for good (not retryable, or out of retries)."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: following one would send the API key elsewhere."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        raise RequestFailed(
            f"HTTP {code}: the endpoint redirects to {newurl}; not followed (the API key is "
            "sent only to the address given): use that address as the base URL if you "
            "trust it"
        )


# every request of every client goes through this opener (no redirects, no cookies)
_OPENER = urllib.request.build_opener(_NoRedirect)


class JsonClient:
    def __init__(
        self,
        base_url: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        timeout: float = 60.0,
        max_retries: int = 4,
        backoff: float = 0.5,
    ) -> None:
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        check_base_url(base_url)
        self.base_url = base_url.rstrip("/")
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff

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
        last_problem = "no attempt made"
        server_delay: float | None = None  # a 429/503's Retry-After, in seconds
        for attempt in range(self.max_retries + 1):
            if attempt:
                time.sleep(self._delay(attempt, server_delay))
            server_delay = None
            request = urllib.request.Request(url, data=data, headers=self._headers(), method="POST")
            try:
                with _OPENER.open(request, timeout=self.timeout) as response:
                    payload = response.read()
            except urllib.error.HTTPError as error:
                detail = _error_detail(error)
                last_problem = f"HTTP {error.code}: {detail}"
                if error.code == 429 or error.code >= 500:
                    server_delay = _retry_after_seconds(error)
                    continue
                raise RequestFailed(last_problem) from error
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

    def _delay(self, attempt: int, server_delay: float | None) -> float:
        delay = self.backoff * (2 ** (attempt - 1))
        if server_delay is not None:
            delay = max(delay, server_delay)
        return min(delay, MAX_BACKOFF_SECONDS)


def _error_detail(error: urllib.error.HTTPError) -> str:
    try:
        text = error.read().decode("utf-8", "replace")
    except Exception:  # the body is only for the message
        text = ""
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
