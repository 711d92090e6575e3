"""A row-cursor DataTable: Enter shows in the footer as "Open", Home/End go to the
first/last row (the rows loaded so far; the list then loads the next page).

Flexible columns use the width the table has: each gets its narrowest width, then the
room the other columns leave goes to them in the order given, each up to its widest
cell (case ids and work titles first, a preview last: they are cut only when the
screen is too narrow).
Their cells hold the whole text (plain.one_line with CELL_CHARS); the table cuts it.

It also works around a Textual 8 DataTable behaviour: rows painted between `add_row`
and the idle-time re-measure of auto-width columns stay cached at the old widths, so
a table filled by a worker message could show "dem" for "demo-literal" until scrolled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

if TYPE_CHECKING:
    from textual.widgets.data_table import ColumnKey

CELL_CHARS = 240  # text kept in a flexible column's cell (wider than any screen's share)


def share_width(room: int, columns: Sequence[tuple[int, int]]) -> list[int]:
    """Widths for columns given as (narrowest, widest), in order of priority: each its
    narrowest, then the rest of `room` to each in turn up to its widest."""
    widths = [low for low, _ in columns]
    spare = room - sum(widths)
    for i, (low, high) in enumerate(columns):
        grow = max(0, min(spare, high - low))
        widths[i] += grow
        spare -= grow
    return widths


class OpenTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open", id="table.open"),
        Binding("home", "scroll_top", "First row", id="table.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="table.last", show=False),
    ]

    def __init__(self, *, id: str, flexible: Mapping[str, int] | None = None) -> None:
        """`flexible`: column key -> narrowest width of the columns that share the room,
        in the order they get it."""
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.flexible = dict(flexible or {})

    def add_column(
        self, label: Any, *, width: int | None = None, key: str | None = None, **kw: Any
    ) -> ColumnKey:
        if key in self.flexible:
            width = self.flexible[key]  # fixed until the rows say how wide they are
        return super().add_column(label, width=width, key=key, **kw)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        self._fit_flexible()
        self._clear_caches()  # widths may have changed: repaint every row with them
        self.refresh()

    def on_resize(self, event: events.Resize) -> None:
        if self._fit_flexible():
            self._clear_caches()

    def _fit_flexible(self) -> bool:
        """Give the flexible columns the room the others leave; True if a width changed."""
        order = list(self.flexible)
        columns = sorted(
            (c for c in self.ordered_columns if c.key.value in self.flexible),
            key=lambda c: order.index(c.key.value or ""),
        )
        if not columns or not self.size.width:
            return False
        padding = 2 * self.cell_padding
        others = sum(
            c.get_render_width(self) for c in self.ordered_columns if c.key.value not in order
        )
        scrollbar = self.styles.scrollbar_size_vertical
        room = self.size.width - scrollbar - others - self._row_label_column_width
        room -= padding * len(columns)
        wanted = [
            (
                self.flexible[c.key.value or ""],
                max(self.flexible[c.key.value or ""], c.content_width),
            )
            for c in columns
        ]
        changed = False
        for column, width in zip(columns, share_width(room, wanted), strict=True):
            changed |= column.width != width
            column.width = width
        if changed:
            total = sum(c.get_render_width(self) for c in self.columns.values())
            self.virtual_size = Size(total + self._row_label_column_width, self.virtual_size.height)
        return changed
