"""The address of an OpenAI-compatible endpoint (a generation backend or the judges'),
checked once wherever one is given: the CLI, the launcher, the client itself."""

from __future__ import annotations

import urllib.parse

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
