"""The timeline: a key's values along valid time, drawn as bars.

Every value the key held, as known at known_at (retracted ones when shown),
on one shared axis from the earliest start to the latest end (an open end
runs to the later of valid_at and the last start). A mark shows valid_at.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from localmem import Revision, Store
from localmem.present import interval, memory_text

from .base import ViewScreen

__all__ = ["TimelineScreen", "bars"]

_BAR = "$text-accent"


def bars(revs: list[Revision], at: datetime, width: int) -> list[tuple[str, str, int, int, int | None]]:
    """Each value's (label, interval, first cell, last cell, valid_at cell) on a ``width``-cell axis."""
    if not revs:
        return []
    lo = min(r.valid_from for r in revs)
    ends = [r.valid_to for r in revs if r.valid_to is not None]
    hi = max([at, *ends, *(r.valid_from for r in revs)])
    if hi <= lo:
        hi = lo.replace(year=lo.year + 1)
    span = (hi - lo).total_seconds()

    def cell(t: datetime) -> int:
        return min(width - 1, max(0, int((t - lo).total_seconds() / span * (width - 1))))

    mark = cell(at) if lo <= at <= hi else None
    return [(memory_text(r), interval(r.valid), cell(r.valid_from),
             cell(r.valid_to) if r.valid_to else width - 1, mark) for r in revs]


class TimelineScreen(ViewScreen):
    """One key's values over valid time."""

    TITLE = "Timeline"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", id="timeline.back"),
    ]

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key
        self.revs: list[Revision] = []

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield Static("", id="timeline-title")
        yield VerticalScroll(id="bars")
        yield from self.compose_footer()

    def reload(self) -> None:
        """Read every value of the key as known at known_at."""
        view, source = self.lm.view, self.lm.source
        if view.user is None or source is None:
            return
        user, key = view.user, self.key
        known = view.known(source.clock)

        def job(store: Store) -> list[Revision]:
            return store.read(user, key=key, known_at=known, current_only=False, include_expired=True,
                              include_retracted=view.show_retracted)

        self.load(job, self._show)

    def on_resize(self) -> None:
        if self.revs:
            self._show(self.revs)

    def _show(self, revs: list[Revision]) -> None:
        self.revs = revs
        view, source = self.lm.view, self.lm.source
        assert source is not None
        at = view.valid(source.clock)
        label_w = min(36, max([len(memory_text(r)) for r in revs] + [8]))
        width = max(10, self.size.width - label_w - 6)
        rows: list[Static] = []
        for label, text, first, last, mark in bars(revs, at, width):
            line = ["·"] * width
            for i in range(first, last + 1):
                line[i] = "█"
            parts: list[tuple[str, str] | str] = [f"{label[:label_w]:<{label_w}}  "]
            for i, ch in enumerate(line):
                if i == mark:
                    parts.append(("│", "bold $text-warning"))
                else:
                    parts.append((ch, _BAR) if ch == "█" else ch)
            rows.append(Static(Content.assemble(*parts, "\n", " " * (label_w + 2), (text, "dim")),
                               classes="bar"))
        box = self.query_one("#bars", VerticalScroll)
        box.remove_children()
        box.mount_all(rows)
        if revs:
            first_year = min(r.valid_from for r in revs).astimezone().year
            self.query_one("#timeline-title", Static).update(
                f"key {self.key}: {len(revs)} values along valid time (from {first_year}; │ marks valid_at)")
            self.status("changing facts read at a glance: each bar is when a value was true")
        else:
            self.query_one("#timeline-title", Static).update(f"key {self.key}: no values as of these clocks")

    def action_back(self) -> None:
        """Back to the screen below."""
        self.app.pop_screen()
