"""Type-ahead into a screen's search box: the characters typed right after the search key
go into the box, even those that reach the screen before the box has the focus.

Why it is needed: the app hands each key to the widget focused when the key is read, and
runs a key's binding only once the key has come back up to it. Keys typed faster than
that (`/curtsey` in one terminal read) were all handed to the list before `/` had moved
the focus, so `c`, `u`, `r`, `t`, `s` ran list commands instead of being typed. The
screen sees those keys in the order they were typed, before the app runs any binding;
from the search key on, it puts each printable one into the box.
"""

from __future__ import annotations

from textual import events
from textual.screen import Screen
from textual.widgets import Input


class SearchTypeAhead:
    """Call `take` from the screen's `on_key`; it is armed by the key bound to
    `action` on that screen, and disarmed once the box loses the focus."""

    def __init__(self, action: str = "search") -> None:
        self.action = action
        self.armed = False

    def take(self, screen: Screen, box: Input, event: events.Key) -> bool:
        """True when the key was used here (the caller stops it): the search key, which
        focuses the box at once, or a printable key typed after it that reached the
        screen instead of the box (the box stops every printable key it gets)."""
        focused = screen.focused is box  # at once (`has_focus` waits for the Focus event)
        if self.armed and focused and event.is_printable and event.character:
            box.insert_text_at_cursor(event.character)
            return True
        if not focused and self._is_search_key(screen, event.key):
            self.open(screen, box)
            return True
        return False

    def open(self, screen: Screen, box: Input) -> None:
        """Focus the box now (not on the app's next turn, as `Widget.focus` does)."""
        self.armed = True
        screen.set_focus(box)

    def left(self) -> None:
        """The box lost the focus: keys are the screen's again."""
        self.armed = False

    def _is_search_key(self, screen: Screen, key: str) -> bool:
        bound = screen.active_bindings.get(key)
        return bound is not None and bound.node is screen and bound.binding.action == self.action
