"""The expired screen: what has expired as of the clocks, when, and what it was.

A memory is expired at valid_at when its expiry is at or before it; it is
hidden from default reads but never deleted. This lists those memories for
every valid interval known at known_at (retracted ones only when shown), in
pages on a worker, newest recorded first.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable

from localmem import Revision, Store
from localmem.present import flags_text, interval, local_time, memory_text

from ..format import count, expiry_text
from ..widgets.paged_table import PagedTable, cell
from .base import ExportJob, ViewScreen
from .memories import PAGE

__all__ = ["ExpiredScreen"]


class ExpiredScreen(ViewScreen):
    """Memories expired as of the clocks."""

    TITLE = "Expired"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "History", show=False, id="expired.history"),
        Binding("escape", "back", "Back", id="expired.back"),
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
        table.set_columns([("What it was", None), ("Expiry", 28), ("Valid", 34), ("Recorded", 16),
                           ("Key", 16), ("Kind", 10), ("Flags", 24)])
        table.focus()
        super().on_mount()

    def reload(self) -> None:
        """The first page of what has expired."""
        table = self.query_one(PagedTable)
        table.clear_rows()
        table.has_more = False
        self._rows.clear()
        self._cursor = None
        if self.view.user is None:
            return
        self.status("loading…")
        self.load(self._job(None), self._show)

    def _job(self, cursor: str | None) -> Any:
        view, source = self.view, self.lm.source
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
        rows = []
        for rev in revs:
            if rev.memory_id in self._rows:
                continue
            self._rows[rev.memory_id] = rev
            rows.append((rev.memory_id, [cell(t) for t in (
                memory_text(rev), expiry_text(rev.expires_at, rev.tz), interval(rev.valid),
                local_time(rev.recorded_at, rev.tz), rev.key or "", rev.kind, flags_text(rev))]))
        table.add_cells(rows)
        self._cursor = cursor
        n = count(len(self._rows), "expired memory")
        if not self._rows:
            self.status(f"nothing of {self.view.user}'s has expired as of these clocks")
        elif cursor:
            self.status(f"{n} loaded (more below: scroll to load); hidden from default reads, never deleted")
        else:
            self.status(f"{n} (hidden from default reads, never deleted)")
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

    def action_back(self) -> None:
        """Back to the memories."""
        self.app.switch_mode("memories")

    def copy_choices(self) -> list[tuple[str, str]]:
        """The highlighted memory's id, or its text."""
        table = self.query_one(PagedTable)
        if not table.row_count:
            return []
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        rev = self._rows.get(key) if key is not None else None
        return [] if rev is None else [("memory id", rev.memory_id), ("text", memory_text(rev))]

    def export_job(self) -> ExportJob | None:
        """Every memory expired as of the clocks."""
        view, source = self.view, self.lm.source
        if view.user is None or source is None:
            return None
        user, known, valid = view.user, view.known(source.clock), view.valid(source.clock)

        def job(store: Store) -> list[dict[str, Any]]:
            revs = store.read(user, known_at=known, valid_at=valid, current_only=False, include_expired=True,
                              include_retracted=view.show_retracted)
            return [r.to_dict() for r in revs if r.expired]

        return job
