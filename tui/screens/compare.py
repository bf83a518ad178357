"""The compare screen: the same question under two knowledge cutoffs, side by side.

Cutoff A is the header's known_at; cutoff B is this screen's own (``b`` sets
it, "now" by default). Both sides are read valid at the header's valid_at
(or, unset, at cutoff A), so only what the store *knew* differs: the fee
valid at 09:05 reads 4 as known at 09:05 and 7 as known at 10:01. Opened
from a memory it compares that memory; opened with ``3`` the whole user.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Static

from localmem import Revision, Store
from localmem.present import interval, local_time, memory_text

from ..state import parse_clock
from .base import ViewScreen
from .dialogs import AskDialog

__all__ = ["CompareScreen", "Pair", "pair_up"]

_CHANGED = "bold reverse"


@dataclass(frozen=True, slots=True)
class Pair:
    """One memory under both cutoffs (None where it was not known or not shown)."""

    memory_id: str
    a: Revision | None
    b: Revision | None

    @property
    def change(self) -> str:
        """What differs: "", "changed", "new at B" or "gone at B"."""
        if self.a is None:
            return "new at B"
        if self.b is None:
            return "gone at B"
        same = (memory_text(self.a), self.a.valid, self.a.expired, self.a.retracted) == (
            memory_text(self.b), self.b.valid, self.b.expired, self.b.retracted)
        return "" if same else "changed"


def pair_up(a: list[Revision], b: list[Revision]) -> list[Pair]:
    """Pair two reads by memory, in A's order then B's newcomers."""
    by_b = {r.memory_id: r for r in b}
    seen = set()
    out = []
    for r in a:
        out.append(Pair(r.memory_id, r, by_b.get(r.memory_id)))
        seen.add(r.memory_id)
    out.extend(Pair(r.memory_id, None, r) for r in b if r.memory_id not in seen)
    return out


def _side(rev: Revision | None) -> str:
    if rev is None:
        return "(not known)"
    extra = [f for f in ("expired", "retracted") if getattr(rev, f)]
    return memory_text(rev) + (f"  [{', '.join(extra)}]" if extra else "")


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
        self.pairs: list[Pair] = []

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="cutoffs")
        yield DataTable(id="pairs", cursor_type="row", zebra_stripes=True)
        yield from self.compose_footer()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_columns("Key / kind", "Known at A", "Known at B", "Difference", "Valid (B)")
        table.focus()
        super().on_mount()

    def reload(self) -> None:
        """Read both sides."""
        view, source = self.lm.view, self.lm.source
        if view.user is None or source is None:
            return
        a: datetime = view.known(source.clock)
        b: datetime = self.lm.compare_known or source.clock()
        valid = view.valid(source.clock)
        tz = view.tz
        scope = "this memory" if self.memory_id else f"all of {view.user}'s memories"
        self.query_one("#cutoffs", Static).update(
            f"{scope}, valid at {local_time(valid, tz)}:   A = known at {local_time(a, tz)}"
            f"   B = known at {local_time(b, tz)}{'' if self.lm.compare_known else ' (now)'}   (b sets B)")
        memory_id, user = self.memory_id, view.user

        def job(store: Store) -> list[Pair]:
            if memory_id is not None:
                return [Pair(memory_id, store.get(memory_id, known_at=a, valid_at=valid),
                             store.get(memory_id, known_at=b, valid_at=valid))]
            def at(known: datetime) -> list[Revision]:
                return store.read(user, known_at=known, valid_at=valid, current_only=view.current_only,
                                  include_expired=view.show_expired, include_retracted=view.show_retracted)

            return pair_up(at(a), at(b))

        self.status("loading…")
        self.load(job, self._show)

    def _show(self, pairs: list[Pair]) -> None:
        self.pairs = pairs
        table = self.query_one(DataTable)
        table.clear()
        for p in pairs:
            rev = p.b or p.a
            assert rev is not None
            change = p.change
            style = _CHANGED if change else ""
            table.add_row(
                Text(rev.key or rev.kind), Text(_side(p.a)), Text(_side(p.b), style=style),
                Text(change, style=style), Text(interval(rev.valid)), key=p.memory_id,
            )
        n = sum(1 for p in pairs if p.change)
        self.status(f"{len(pairs)} memories, {n} differ between A and B" if pairs else "nothing to compare")

    def action_cutoff_b(self) -> None:
        """Ask for cutoff B."""
        source = self.lm.source
        if source is None:
            return
        tz = self.lm.view.tz

        def check(answers: dict[str, str]) -> None:
            parse_clock(answers["at"], now=source.clock(), tz=tz)

        def asked(answers: dict[str, str] | None) -> None:
            if answers is not None:
                self.lm.compare_known = parse_clock(answers["at"], now=source.clock(), tz=tz)
                self.reload()

        current = "now" if self.lm.compare_known is None else local_time(self.lm.compare_known, tz)
        self.app.push_screen(AskDialog("Cutoff B: known at", [("at", "known at", current)],
                                       hint="now, 2026-03-02 10:01, 2025-06-16, last monday…",
                                       check=check), asked)

    def action_open(self) -> None:
        """Open the highlighted memory's history."""
        table = self.query_one(DataTable)
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                self.lm.open_history(key)

    def on_data_table_row_selected(self) -> None:
        self.action_open()

    def action_back(self) -> None:
        """Back, if this screen was opened from a memory."""
        if len(self.app.screen_stack) > 1:
            self.app.pop_screen()
