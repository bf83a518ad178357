"""A DataTable that asks for more rows as the cursor or the scroll nears its end."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widgets import DataTable

__all__ = ["PagedTable"]


class PagedTable(DataTable[object]):
    """A row table that posts :class:`PagedTable.NeedMore` near its last loaded row.

    The rule: ask when fewer than two screens of rows are left below the
    cursor or the viewport, and only while the owner says more exist
    (``has_more``); the owner clears ``has_more`` while a page is in flight.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        # Rows, not columns, are what these tables are about: Home/End go to the first/last row.
        Binding("home", "scroll_top", "First row", show=False, id="table.first"),
        Binding("end", "scroll_bottom", "Last row", show=False, id="table.last"),
    ]

    class NeedMore(Message):
        """Load the next page."""

    has_more: bool = False

    def _near_end(self) -> bool:
        margin = max(2 * self.size.height, 40)
        bottom_row = int(self.scroll_y) + self.size.height
        return self.row_count - max(self.cursor_row, bottom_row) < margin

    def check_more(self) -> None:
        """Post NeedMore if more rows exist and the end is near."""
        if self.has_more and self._near_end():
            self.has_more = False
            self.post_message(self.NeedMore())

    def watch_cursor_coordinate(self, old_coordinate: Coordinate, new_coordinate: Coordinate) -> None:
        super().watch_cursor_coordinate(old_coordinate, new_coordinate)
        self.check_more()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.check_more()
