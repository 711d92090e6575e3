"""A row-cursor DataTable: Enter shows in the footer as "Open", Home/End go to the
first/last row (the rows loaded so far; the list then loads the next page)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import DataTable


class OpenTable(DataTable):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "select_cursor", "Open", id="table.open"),
        Binding("home", "scroll_top", "First row", id="table.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="table.last", show=False),
    ]

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
