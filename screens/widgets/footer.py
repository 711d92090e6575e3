"""The footer of every screen: Textual's Footer, rebuilt once per burst of binding
changes instead of once per change, and only when the keys it shows changed.

Textual's Footer recomposes all its keys (a widget each, styles applied) every time the
screen's bindings change, and opening a screen changes them several times in a row
(mounting, focus moving to the table): eight rebuilds of the generation list's footer
on opening a run. Here a change schedules one rebuild after the next refresh; changes
arriving before it runs join it; and the rebuild is skipped when the keys the footer
would show (key, action, description, enabled, tooltip, group) are those it shows,
which is most focus moves (about 26 rebuilds per Pilot test before).
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer


class KeysFooter(Footer):
    _rebuild_pending = False
    _shown: Hashable = None

    def bindings_changed(self, screen: Screen) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus or self._rebuild_pending:
            return
        if self.is_attached and screen is self.screen:
            self._rebuild_pending = True
            self.call_after_refresh(self._rebuild)

    def _keys_shown(self) -> Hashable:
        """What Footer.compose reads from the screen's bindings, as one comparable value."""
        return tuple(
            (
                binding.key,
                binding.action,
                binding.description,
                binding.show,
                binding.group,
                enabled,
                tooltip,
            )
            for _node, binding, enabled, tooltip in self.screen.active_bindings.values()
        )

    async def _rebuild(self) -> None:
        self._rebuild_pending = False
        if self.is_attached and self._keys_shown() != self._shown:
            await self.recompose()

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._keys_shown()
        yield from super().compose()
