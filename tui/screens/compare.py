"""The compare screen: the same question under two knowledge cutoffs, side by side.

Cutoff A is the header's known_at; cutoff B is this screen's own (``b`` sets
it, "now" by default), kept per user. Both sides are read valid at the
header's valid_at (or, unset, at cutoff A), so only what the store *knew*
differs: the fee valid at 09:05 reads 4 as known at 09:05 and 7 as known at
10:01. Opened from a memory it compares that memory; opened with ``3`` the
whole user, differences first.

A fact that changed in the world between the cutoffs (vegetarian, then eats
fish) is one row labelled "superseded", the new memory on B's side; a
retraction or an expiry says so too: nothing is "gone" (the store deletes
nothing). Enter opens the row's history pinned at the later cutoff, so the
revision that explains the difference is on screen.

The reads run on a worker; the rows are added to the table a page at a time
as the cursor nears the end, so a user with 50,000 memories never blocks
the UI thread for long.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from localmem import Revision, Store
from localmem.present import interval, local_time, memory_text

from ..asof import Pair, compare_memory, compare_user
from ..format import count
from ..state import parse_clock
from ..widgets.paged_table import PagedTable, cell
from .base import ExportJob, ViewScreen
from .dialogs import AskDialog

__all__ = ["CompareScreen", "Pair", "side_text", "pair_cells"]

_CHANGED = "bold reverse"
#: Rows added to the table per step: one step must stay well under 100 ms on the UI thread.
STEP = 100


def side_text(rev: Revision | None, *, missing: str) -> str:
    """One side of a pair: the memory's text and its hiding flags, or ``missing``."""
    if rev is None:
        return missing
    extra = [f for f in ("expired", "retracted") if getattr(rev, f)]
    return memory_text(rev) + (f"  [{', '.join(extra)}]" if extra else "")


def pair_cells(p: Pair) -> list[str]:
    """The row of one pair: key or kind, A's side, B's side, the difference, B's valid time."""
    rev = p.b or p.b_state or p.a
    if rev is None:  # one memory, recorded by neither cutoff
        return ["-", "(not recorded by A)", "(not recorded by B)", "", "-"]
    if p.b is None and p.b_state is not None:
        b = side_text(p.b_state, missing="")
        b = f"({p.change}) {b}" if p.change and p.change != "not current at B" else b
    else:
        b = side_text(p.b, missing="(not recorded by B)")
    if p.successor is not None:
        b = f"{b}  → {memory_text(p.successor)}"
    return [rev.key or rev.kind, side_text(p.a, missing="(not recorded by A)"), b, p.change,
            interval(rev.valid)]


class CompareScreen(ViewScreen):
    """One memory, or a user's memories, under two knowledge cutoffs."""

    TITLE = "Compare"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "cutoff_b", "Cutoff B", tooltip="Set the second knowledge cutoff",
                id="compare.cutoff_b"),
        Binding("enter", "open", "History", show=False, id="compare.history"),
        Binding("escape", "back", "Back", id="compare.back"),
    ]

    def __init__(self, memory_id: str | None = None) -> None:
        super().__init__()
        self.memory_id = memory_id
        # (memory id, its row's cells): tuples of strings, which the garbage collector does not
        # track, so 50,000 rows held here add nothing to a collection's pause.
        self.pairs: list[tuple[str, tuple[str, ...]]] = []
        self._shown = 0
        self._cutoffs: tuple[datetime, datetime] | None = None

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="cutoffs")
        yield PagedTable(id="pairs", cursor_type="row", zebra_stripes=True)
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one(PagedTable)
        table.set_columns([("Key / kind", 16), ("Known at A", None), ("Known at B", None),
                           ("Difference", 22), ("Valid (B)", 30)])
        table.focus()
        super().on_mount()

    def cutoff_b(self) -> datetime | None:
        """This user's cutoff B (None: now)."""
        user = self.view.user
        return self.lm.compare_known.get(user) if user is not None else None

    def reload(self) -> None:
        """Read both sides on a worker."""
        view, source = self.view, self.lm.source
        if view.user is None or source is None:
            return
        a: datetime = view.known(source.clock)
        set_b = self.cutoff_b()
        b: datetime = set_b or source.clock()
        self._cutoffs = (a, b)
        valid = view.valid(source.clock)
        tz = view.tz
        scope = "this memory" if self.memory_id else f"all of {view.user}'s memories"
        self.query_one("#cutoffs", Static).update(
            f"{scope}, valid at {local_time(valid, tz)}:  A = known at {local_time(a, tz)}"
            f"  B = known at {local_time(b, tz)}{'' if set_b else ' (now)'}  (b sets B)")
        memory_id, user = self.memory_id, view.user
        table = self.query_one(PagedTable)
        table.clear_rows()
        table.has_more = False
        self.pairs, self._shown = [], 0

        def job(store: Store) -> list[Pair]:
            if memory_id is not None:
                return compare_memory(store, memory_id, a, b, valid)
            return compare_user(store, user, a, b, valid, current_only=view.current_only,
                                include_expired=view.show_expired, include_retracted=view.show_retracted)

        def rows(store: Store) -> list[tuple[str, tuple[str, ...]]]:
            # The cells too are made on the worker: for 50,000 pairs that is seconds of Python.
            return [(p.memory_id, tuple(pair_cells(p))) for p in job(store)]

        self.status("reading both cutoffs…")
        self.load(rows, self._show)

    def _show(self, result: list[tuple[str, tuple[str, ...]]]) -> None:
        self.pairs, self._shown = result, 0
        self._add_step()
        n = sum(1 for _, c in self.pairs if c[3])
        verb = "differs" if n == 1 else "differ"
        self.status(f"{count(len(self.pairs), 'memory')}, {n:,} {verb} between A and B (differences first)"
                    if self.pairs else "nothing to compare at these clocks")

    def _add_step(self) -> None:
        table = self.query_one(PagedTable)
        step = self.pairs[self._shown:self._shown + STEP]
        rows = []
        for memory_id, cells in step:
            style = _CHANGED if cells[3] else ""
            rows.append((memory_id, [cell(cells[0]), cell(cells[1]), cell(cells[2], style),
                                     cell(cells[3], style), cell(cells[4])]))
        table.add_cells(rows)
        self._shown += len(step)
        table.has_more = self._shown < len(self.pairs)
        table.check_more()

    @on(PagedTable.NeedMore)
    def _more(self) -> None:
        self._add_step()

    def action_cutoff_b(self) -> None:
        """Ask for cutoff B (this user's)."""
        source, user = self.lm.source, self.view.user
        if source is None or user is None:
            return
        tz = self.view.tz

        def check(answers: dict[str, str]) -> None:
            parse_clock(answers["at"], now=source.clock(), tz=tz)

        def asked(answers: dict[str, str] | None) -> None:
            if answers is not None:
                at = parse_clock(answers["at"], now=source.clock(), tz=tz)
                if at is None:
                    self.lm.compare_known.pop(user, None)
                else:
                    self.lm.compare_known[user] = at
                self.reload()

        set_b = self.cutoff_b()
        current = "now" if set_b is None else local_time(set_b, tz)
        self.app.push_screen(AskDialog("Cutoff B: known at", [("at", "known at", current)],
                                       hint="now, 2026-03-02 10:01, 2025-06-16, last monday…",
                                       check=check), asked)

    def current(self) -> tuple[str, tuple[str, ...]] | None:
        """The row under the cursor: its memory id and cells."""
        table = self.query_one(PagedTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return next((p for p in self.pairs if p[0] == key), None)  # a scan: once per Enter

    def action_open(self) -> None:
        """Open the row's history at the later cutoff (A's memory: its revision at B explains the change)."""
        p = self.current()
        if p is None or self._cutoffs is None:
            return
        later = max(self._cutoffs)
        tz = self.view.tz
        self.lm.open_history(p[0], known_at=later,
                             pin_note=f"pinned at the later cutoff {local_time(later, tz)} (k changes it)")

    @on(DataTable.RowSelected)
    def _selected(self) -> None:
        self.action_open()

    def action_back(self) -> None:
        """Back: to the screen below, or, opened with ``3``, to the memories."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
        else:
            self.app.switch_mode("memories")

    _HEADERS = ("key_or_kind", "known_at_a", "known_at_b", "difference", "valid")

    def copy_choices(self) -> list[tuple[str, str]]:
        """The highlighted memory's id, or the row (tab-separated)."""
        p = self.current()
        if p is None:
            return []
        return [("memory id", p[0]), ("row", "\t".join(p[1]))]

    def export_job(self) -> ExportJob | None:
        """The rows as shown (every pair, not only those added to the table yet), with both cutoffs."""
        if self._cutoffs is None:
            return None
        a, b = (t.isoformat() for t in self._cutoffs)
        records = [{"memory_id": mid, **dict(zip(self._HEADERS, cells, strict=True)),
                    "cutoff_a": a, "cutoff_b": b} for mid, cells in self.pairs]

        def job(store: Store) -> list[dict[str, Any]]:
            return records

        return job
