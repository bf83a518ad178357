"""Row tables: columns fitted to their content, cells cut with an ellipsis, pages loaded near the end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.events import Resize
from textual.message import Message
from textual.widgets import DataTable

__all__ = ["FitTable", "PagedTable", "cell"]


def cell(text: str, style: str = "") -> Text:
    """A table cell that is cut with an ellipsis, never wrapped, when its column is narrower."""
    return Text(text, style=style, no_wrap=True, overflow="ellipsis")


class FitTable(DataTable[object]):
    """A row table whose columns are as wide as their widest cell, one of them taking the rest.

    The rule: every column but the *flex* one is as wide as its label and its
    widest loaded cell, up to its cap; the flex columns (the memory's text)
    share the width left, but never less than 60% of the table between them
    (or their widest cell): on a narrow terminal the last columns scroll sideways rather than
    squeezing the text; a cell wider than its column ends in "…". Widths are
    fitted afresh whenever the rows are replaced (a new search, another
    user) and when the table is resized, so they never go stale.
    """

    #: The column the rows are sorted by (None: the order they were loaded in).
    sort_column: int | None = None
    sort_reverse: bool = False

    BINDINGS: ClassVar[list[BindingType]] = [
        # Rows, not columns, are what these tables are about: Home/End go to the first/last row.
        Binding("home", "scroll_top", "First row", show=False, id="table.first"),
        Binding("end", "scroll_bottom", "Last row", show=False, id="table.last"),
        Binding("o", "sort_next", "Sort", show=False, id="table.sort",
                tooltip="Sort by the next column (again: reverse); a click on a header too"),
    ]

    def action_sort_next(self) -> None:
        """Sort by the next column; past the last, back to the loading order."""
        if self.sort_column is None:
            self.sort_by(0)
        elif not self.sort_reverse:
            self.sort_by(self.sort_column)
        elif self.sort_column + 1 < len(self._specs):
            self.sort_by(self.sort_column + 1)
        else:
            self.sort_column, self.sort_reverse = None, False
            self.apply_filter(self.text_filter)
        self.notify(self.sort_text(), timeout=2)

    def sort_text(self) -> str:
        """The sort, in words: ``sorted by Valid, descending`` (or the loading order)."""
        if self.sort_column is None:
            return "in loading order"
        label = self._specs[self.sort_column][0]
        return f"sorted by {label}, {'descending' if self.sort_reverse else 'ascending'}"

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._specs: list[tuple[str, int | None]] = []
        self._widest: list[int] = []
        self._all: list[tuple[str, Sequence[Text], list[str]]] = []  # every loaded row: key, cells, texts
        self.text_filter = ""

    @property
    def plain(self) -> list[list[str]]:
        """The rows shown (loaded and matching the text filter), as text, in table order."""
        by_key = {key: texts for key, _, texts in self._all}
        return [by_key[str(row.key.value)] for row in self.ordered_rows if str(row.key.value) in by_key]

    @property
    def loaded(self) -> int:
        """How many rows are loaded (shown or filtered out)."""
        return len(self._all)

    def set_columns(self, specs: Sequence[tuple[str, int | None]]) -> None:
        """Name the columns: (label, cap), the one with cap None is the flex column."""
        self._specs = list(specs)
        self.clear(columns=True)
        for label, _ in self._specs:
            self.add_column(label, key=label)
        self._widest = [len(label) for label, _ in self._specs]
        self._all = []

    def clear_rows(self) -> None:
        """Drop every row; the widths are fitted again from the next rows (the filter and sort stay)."""
        self.clear()
        self._all = []
        self._widest = [len(label) for label, _ in self._specs]

    def _matches(self, texts: list[str]) -> bool:
        words = self.text_filter.lower().split()
        line = " ".join(texts).lower()
        return all(w in line for w in words)

    def add_cells(self, rows: Sequence[tuple[str, Sequence[Text]]]) -> None:
        """Add rows (key, cells): the ones matching the text filter show; the columns fit them."""
        for key, cells in rows:
            texts = [c.plain for c in cells]
            self._all.append((key, cells, texts))
            if not self._matches(texts):
                continue
            for i, t in enumerate(texts):
                if len(t) > self._widest[i]:
                    self._widest[i] = len(t)
            self.add_row(*cells, key=key)
        self._resort()
        self.fit()

    def apply_filter(self, text: str) -> int:
        """Show only the loaded rows holding every word of ``text`` (any column, any case).

        Returns how many rows show.
        """
        self.text_filter = text
        self.clear()
        self._widest = [len(label) for label, _ in self._specs]
        shown = 0
        for key, cells, texts in self._all:
            if self._matches(texts):
                for i, t in enumerate(texts):
                    self._widest[i] = max(self._widest[i], len(t))
                self.add_row(*cells, key=key)
                shown += 1
        self._resort()
        self.fit()
        return shown

    def sort_by(self, column: int) -> None:
        """Sort the loaded rows by ``column`` (again on the same column: the other way round)."""
        if self.sort_column == column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, False
        self._resort()

    def _resort(self) -> None:
        if self.sort_column is None or not self.columns or not self.row_count:
            return
        key = list(self.columns)[self.sort_column]
        self.sort(key, key=lambda c: c.plain.lower() if isinstance(c, Text) else str(c).lower(),
                  reverse=self.sort_reverse)

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header sorts by that column."""
        self.sort_by(event.column_index)

    def add_row_texts(self, key: str, texts: Sequence[str]) -> None:
        """Add one row of plain texts (each cut with an ellipsis)."""
        self.add_cells([(key, [cell(t) for t in texts])])

    def fit(self) -> None:
        """Set every column's width from its content and the table's width."""
        if not self._specs or not self.columns:
            return
        avail = (self.size.width or self.app.size.width) - 2 * self.cell_padding * len(self._specs) - 1
        widths = [min(w, cap) if cap is not None else 0 for w, (_, cap) in zip(self._widest, self._specs,
                                                                                  strict=True)]
        flex = [i for i, (_, cap) in enumerate(self._specs) if cap is None]
        left = avail - sum(widths)
        for n, i in enumerate(flex):
            widest, share = self._widest[i], left // (len(flex) - n)
            widths[i] = max(min(widest, share), min(widest, int(avail * 0.6 / len(flex))), 8)
            left -= widths[i]
        changed = False
        for column, w in zip(self.columns.values(), widths, strict=True):
            if column.auto_width or column.width != w:
                column.auto_width, column.width = False, w
                changed = True
        if changed:
            # DataTable has no public call to resize a column: this flag is what its own
            # add_column/update_cell set to have the next refresh re-measure the table.
            self._require_update_dimensions = True
            self.refresh()

    def on_resize(self, event: Resize) -> None:
        self.fit()


class PagedTable(FitTable):
    """A row table that posts :class:`PagedTable.NeedMore` near its last loaded row.

    The rule: ask when fewer than two screens of rows are left below the
    cursor or the viewport, and only while the owner says more exist
    (``has_more``); the owner clears ``has_more`` while a page is in flight.
    """

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
