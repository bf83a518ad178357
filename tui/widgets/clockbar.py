"""The header every screen shows: where it is, whose memories, the two clocks and the toggles."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from localmem import Clock
from localmem.present import local_time

from ..state import View

__all__ = ["ClockBar"]


def describe(view: View, clock: Clock, *, write: bool, title: str) -> Content:
    """The header's two lines for ``view``: the rule is that every clock and toggle is always visible."""
    known = "now" if view.known_at is None else local_time(view.known_at, view.tz)
    if view.valid_at is not None:
        valid = local_time(view.valid_at, view.tz)
    else:
        valid = "now" if view.known_at is None else "= known at"
    now = local_time(clock(), view.tz)
    mode = "current only" if view.current_only else "history (all intervals)"
    shown = [name for name, on in (("expired", view.show_expired), ("retracted", view.show_retracted)) if on]
    return Content.assemble(
        (f" {title} ", "$accent bold reverse"), "  user ", (view.user or "-", "bold"),
        "  ·  ", (mode, "bold"),
        "  ·  showing ", (" + ".join(shown) if shown else "no expired/retracted", "bold"),
        "  ·  ", ("WRITE" if write else "read-only", "$text-warning bold" if write else "bold"),
        "\n known at ", (known, "$text-accent bold"), "   valid at ", (valid, "$text-accent bold"),
        f"   zone {view.tz}   now {now}",
    )


class ClockBar(Static):
    """Shows the active clocks and toggles; the screen refreshes it when the view changes."""

    def show(self, view: View, clock: Clock, *, write: bool, title: str) -> None:
        """Render ``view`` (called on the UI thread)."""
        self.update(describe(view, clock, write=write, title=title))
