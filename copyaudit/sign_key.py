"""Which private key this process signs its label and review events with
(copyaudit.event_signing): `--sign-key FILE`, else $COPYAUDIT_SIGN_KEY, else the
`event_sign_key` setting. Only a path: the key itself never enters the database.
Kept apart from event_signing so that naming none loads no cryptography."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from copyaudit.identity import setting

if TYPE_CHECKING:
    from copyaudit.event_signing import Signer

SIGN_KEY_ENV = "COPYAUDIT_SIGN_KEY"
SIGN_KEY_SETTING = "event_sign_key"
_chosen: list[Path] = []  # this process's --sign-key (copyaudit.cli.main)


def choose_key(path: Path | None) -> None:
    """Sign this process's events with the private key at `path` (None: the default)."""
    _chosen[:] = [] if path is None else [path]


def named_sign_key() -> Path | None:
    """The private key file events are signed with now; None when none is named."""
    if _chosen:
        return _chosen[0]
    named = os.environ.get(SIGN_KEY_ENV) or setting(SIGN_KEY_SETTING, "")
    return Path(named) if named else None


def signer() -> Signer | None:
    """The loaded key named now (db.signatures.use_signer's source); None when none is."""
    path = named_sign_key()
    if path is None:
        return None
    from copyaudit.event_signing import load_signer  # deferred: loads cryptography

    return load_signer(path)
