"""The timeline: a key's values along valid time, drawn as bars.

Every value the key held, as known at known_at (retracted ones when shown),
on one shared axis from the earliest start to the latest end (an open end
runs to the later of valid_at and the last start). A mark shows valid_at,
and a date axis under the bars says when (labels on the user's wall clock,
as many as fit the width).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from localmem import Revision, Store
from localmem.present import interval, memory_text

from ..format import count
from .base import ExportJob, ViewScreen

__all__ = ["TimelineScreen", "bars", "span", "axis"]

_BAR = "$text-accent"


def span(revs: list[Revision], at: datetime) -> tuple[datetime, datetime]:
    """The axis: from the earliest start to the latest of valid_at, the ends and the starts."""
    lo = min(r.valid_from for r in revs)
    ends = [r.valid_to for r in revs if r.valid_to is not None]
    hi = max([at, *ends, *(r.valid_from for r in revs)])
    if hi <= lo:
        hi = lo.replace(year=lo.year + 1)
    return lo, hi


def axis(lo: datetime, hi: datetime, width: int, tz: str) -> tuple[str, str]:
    """A ``width``-cell date axis from ``lo`` to ``hi``: a tick line and the dates under its ticks."""
    seconds = (hi - lo).total_seconds()
    fmt = "%Y-%m-%d" if seconds < 2 * 365 * 86400 else "%Y-%m"
    label_w = len(lo.strftime(fmt)) + 2
    ticks = max(2, min(width // label_w, 8))
    line = ["─"] * width
    labels = [" "] * (width + label_w)
    zone = ZoneInfo(tz)
    for k in range(ticks):
        pos = round(k * (width - 1) / (ticks - 1))
        line[pos] = "┼" if 0 < pos < width - 1 else ("├" if pos == 0 else "┤")
        text = (lo + (hi - lo) * (pos / max(1, width - 1))).astimezone(zone).strftime(fmt)
        start = min(max(0, pos - len(text) // 2), width - len(text)) if k else 0
        if k == ticks - 1:
            start = max(0, width - len(text))
        labels[start:start + len(text)] = text
    return "".join(line), "".join(labels[:width]).rstrip()


def bars(revs: list[Revision], at: datetime, width: int) -> list[tuple[str, str, int, int, int | None]]:
    """Each value's (label, interval, first cell, last cell, valid_at cell) on a ``width``-cell axis."""
    if not revs:
        return []
    lo, hi = span(revs, at)
    span_s = (hi - lo).total_seconds()

    def cell(t: datetime) -> int:
        return min(width - 1, max(0, int((t - lo).total_seconds() / span_s * (width - 1))))

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
        view, source = self.view, self.lm.source
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
        view, source = self.view, self.lm.source
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
        if revs:
            lo, hi = span(revs, at)
            ticks, dates = axis(lo, hi, width, view.tz)
            pad = " " * (label_w + 2)
            rows.append(Static(Content.assemble(pad, (ticks, "dim"), "\n", pad, dates), classes="axis"))
        box = self.query_one("#bars", VerticalScroll)
        box.remove_children()
        box.mount_all(rows)
        if revs:
            self.query_one("#timeline-title", Static).update(
                f"key {self.key}: {count(len(revs), 'value')} along valid time (│ marks valid_at)")
            self.status("changing facts read at a glance: each bar is when a value was true")
        else:
            self.query_one("#timeline-title", Static).update(f"key {self.key}: no values as of these clocks")

    def action_back(self) -> None:
        """Back to the screen below."""
        self.app.pop_screen()

    def export_job(self) -> ExportJob | None:
        """The key's values shown, as known at known_at."""
        records = [r.to_dict() for r in self.revs]

        def job(store: Store) -> list[dict[str, Any]]:
            return records

        return job
