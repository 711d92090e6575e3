"""A row-cursor DataTable: Enter shows in the footer as "Open", Home/End go to the
first/last row (the rows loaded so far; the list then loads the next page).

It also works around a Textual 8 DataTable behaviour: rows painted between `add_row`
and the idle-time re-measure of auto-width columns stay cached at the old widths, so
a table filled by a worker message could show "dem" for "demo-literal" until scrolled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


class OpenTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open", id="table.open"),
        Binding("home", "scroll_top", "First row", id="table.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="table.last", show=False),
    ]

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)

    def _update_dimensions(self, new_rows: Iterable[RowKey]) -> None:
        super()._update_dimensions(new_rows)
        self._clear_caches()  # widths may have changed: repaint every row with them
        self.refresh()
