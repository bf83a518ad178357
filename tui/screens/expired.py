"""The expired screen: what has expired as of the clocks, when, and what it was.

A memory is expired at valid_at when its expiry is at or before it; it is
hidden from default reads but never deleted. This lists those memories for
every valid interval known at known_at (retracted ones only when shown), in
pages on a worker, newest recorded first.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from localmem import Revision, Store
from localmem.present import flags_text, interval, local_time, memory_text

from ..widgets.paged_table import PagedTable
from .base import ViewScreen
from .memories import PAGE

__all__ = ["ExpiredScreen"]


class ExpiredScreen(ViewScreen):
    """Memories expired as of the clocks."""

    TITLE = "Expired"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "History", show=False, id="expired.history"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._cursor: str | None = None
        self._rows: dict[str, Revision] = {}

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield PagedTable(id="rows", cursor_type="row", zebra_stripes=True)
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one(PagedTable)
        table.add_columns("What it was", "Expired at", "Valid", "Recorded", "Key", "Kind", "Flags")
        table.focus()
        super().on_mount()

    def reload(self) -> None:
        """The first page of what has expired."""
        table = self.query_one(PagedTable)
        table.clear()
        table.has_more = False
        self._rows.clear()
        self._cursor = None
        if self.lm.view.user is None:
            return
        self.status("loading…")
        self.load(self._job(None), self._show)

    def _job(self, cursor: str | None) -> Any:
        view, source = self.lm.view, self.lm.source
        assert view.user is not None and source is not None
        user = view.user
        known, valid = view.known(source.clock), view.valid(source.clock)

        def page(store: Store) -> tuple[list[Revision], str | None]:
            return store.read_page(
                user, known_at=known, valid_at=valid, current_only=False, only_expired=True,
                include_retracted=view.show_retracted, after=cursor, limit=PAGE,
            )

        return page

    def _show(self, result: tuple[list[Revision], str | None]) -> None:
        revs, cursor = result
        table = self.query_one(PagedTable)
        for rev in revs:
            if rev.memory_id in self._rows:
                continue
            self._rows[rev.memory_id] = rev
            table.add_row(
                Text(memory_text(rev)), Text(local_time(rev.expires_at, rev.tz)), Text(interval(rev.valid)),
                Text(local_time(rev.recorded_at, rev.tz)), Text(rev.key or ""), Text(rev.kind),
                Text(flags_text(rev)), key=rev.memory_id,
            )
        self._cursor = cursor
        if not self._rows:
            self.status(f"nothing of {self.lm.view.user}'s has expired as of these clocks")
        else:
            self.status(f"{len(self._rows):,} expired memories (hidden from default reads, never deleted)")
        table.has_more = cursor is not None
        table.check_more()

    @on(PagedTable.NeedMore)
    def _more(self) -> None:
        if self._cursor is not None:
            self.load(self._job(self._cursor), self._show, new=False)

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_open()

    def action_open(self) -> None:
        """Open the highlighted memory's history."""
        table = self.query_one(PagedTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                self.lm.open_history(key)
