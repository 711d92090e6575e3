"""The footer of every screen: Textual's Footer, rebuilt once per burst of binding
changes instead of once per change.

Textual's Footer recomposes all its keys (a widget each, styles applied) every time the
screen's bindings change, and opening a screen changes them several times in a row
(mounting, focus moving to the table): eight rebuilds of the generation list's footer
on opening a run. Here a change schedules one rebuild after the next refresh; changes
arriving before it runs join it.
"""

from __future__ import annotations

from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    _rebuild_pending = False

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._rebuild_pending:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        await self.recompose()
