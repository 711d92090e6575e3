"""The address of an OpenAI-compatible endpoint (a generation backend or the judges'),
checked once wherever one is given: the CLI, the launcher, the client itself; and
credentials that an older copyaudit stored in one, redacted wherever a stored
configuration is shown."""

from __future__ import annotations

import re
import urllib.parse
from typing import Any

from copyaudit.errors import UserError


def check_base_url(url: str, option: str = "--base-url", key_option: str = "--api-key-env") -> None:
    """UserError unless `url` is an http(s) URL without credentials in it (a key in
    user:key@host would be stored with the run); `option` names it in the message."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"{option} must be http(s)://host[:port]/path, got {url!r}")
    if parts.username is not None or parts.password is not None:
        raise UserError(
            f"{option} must not carry credentials (user:key@host): they would be stored "
            "with the run and shown in its reports; put the key in an environment "
            f"variable and name it with {key_option}"
        )


# scheme://user:password@ (or scheme://key@) in any text
_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]+@")


def redact_credentials(value: object) -> Any:
    """`value` (a stored configuration: dicts, lists, strings) with the credentials of
    every URL in it replaced by '[redacted]'."""
    if isinstance(value, str):
        return _CREDENTIALS.sub(r"\1[redacted]@", value)
    if isinstance(value, dict):
        return {key: redact_credentials(item) for key, item in value.items()}
    if isinstance(value, list):
        return [redact_credentials(item) for item in value]
    return value
