"""The app as the screens' type checker sees it: Textual types `node.app` as its own
`App`, so the screens reach CopyauditApp's store, workers and routes through here."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.command import Provider
from textual.dom import DOMNode

if TYPE_CHECKING:
    from screens.app import CopyauditApp as CopyauditApp  # re-exported for annotations


def copyaudit_app(node: DOMNode | Provider) -> CopyauditApp:
    """The running CopyauditApp of a screen, widget or command provider (only
    CopyauditApp runs them)."""
    return cast("CopyauditApp", node.app)
