"""The header every screen shows: where it is, whose memories, the two clocks and the toggles."""

from __future__ import annotations

from textual.content import Content
from textual.events import Resize
from textual.widgets import Static

from localmem import Clock
from localmem.present import local_time

from ..state import View

__all__ = ["ClockBar", "describe"]


def describe(
    view: View, clock: Clock, *, write: bool, title: str, width: int = 200, note: str = ""
) -> Content:
    """The header's two lines for ``view``, each fitted to ``width`` cells.

    The rule: the clocks come first and always show. Line one is the screen
    and the two clocks (and "now" when it fits); line two is the user, the
    toggles, read-only or WRITE, the zone (and "now" when line one had no
    room), each line cut with an ellipsis rather than wrapped.
    """
    known = "now" if view.known_at is None else local_time(view.known_at, view.tz)
    if view.valid_at is not None:
        valid = local_time(view.valid_at, view.tz)
    else:
        valid = "now" if view.known_at is None else "= known at"
    now = f"now {local_time(clock(), view.tz)}"
    line1 = Content.assemble(
        (f" {title} ", "$accent bold reverse"), "  known at ", (known, "$text-accent bold"),
        "  valid at ", (valid, "$text-accent bold"))
    now_on_1 = line1.cell_length + 3 + len(now) <= width
    if now_on_1:
        line1 = Content.assemble(line1, "   ", (now, "dim"))
    mode = "current only" if view.current_only else "history (all intervals)"
    toggles = (("expired", view.show_expired), ("retracted", view.show_retracted))
    shown = [name for name, on in toggles if on]
    hidden = [name for name, on in toggles if not on]
    showing = " · ".join(([f"showing {' + '.join(shown)}"] if shown else [])
                         + ([f"{'+'.join(hidden)} hidden"] if hidden else []))
    parts: list[Content | str | tuple[str, str]] = []
    if note:
        parts += [(note, "$text-warning bold"), " · "]
    parts += [
        "user ", (view.user or "-", "bold"), " · ", (mode, "bold"),
        " · ", (showing, "bold"),
        " · ", ("WRITE" if write else "read-only", "$text-warning bold" if write else "bold"),
        f" · {view.tz}",
    ]
    if not now_on_1:
        parts.append(f" · {now}")
    line2 = Content.assemble(" ", *parts)
    return Content("\n").join([_fit(line1, width), _fit(line2, width)])


def _fit(line: Content, width: int) -> Content:
    if line.cell_length <= width:
        return line
    return Content.assemble(line[: max(0, width - 1)], "…")


class ClockBar(Static):
    """Shows the active clocks and toggles; the screen refreshes it when the view changes."""

    DEFAULT_CSS = """
    ClockBar { height: 2; text-wrap: nowrap; }
    """

    _args: tuple[View, Clock, bool, str, str] | None = None

    def show(self, view: View, clock: Clock, *, write: bool, title: str, note: str = "") -> None:
        """Render ``view`` (called on the UI thread)."""
        self._args = (view, clock, write, title, note)
        self._draw()

    def _draw(self) -> None:
        if self._args is None:
            return
        view, clock, write, title, note = self._args
        width = self.size.width or self.app.size.width
        self.update(describe(view, clock, write=write, title=title, width=width, note=note))

    def on_resize(self, event: Resize) -> None:
        self._draw()
