"""What the screens need from the app that hosts them, as a protocol.

The screens depend on this, never on :mod:`tui.app`: the app imports every
screen (its modes, the screens it opens), so a screen importing the app back
would make a cycle. :class:`~tui.app.LocalmemApp` satisfies :class:`Host`
structurally; a test can host a screen in any app that does.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

from .source import Source
from .state import View

__all__ = ["Host"]


@runtime_checkable
class Host(Protocol):
    """The app as a screen sees it: the view, the store, and the screens it can open."""

    #: What every screen reads with: the user, the clocks, the toggles.
    view: View
    #: The store (None until the file is open).
    source: Source | None
    #: Whether correct, retract and expire are allowed.
    write: bool
    #: Bumped on every write, so screens further down the stack re-read when shown.
    data_version: int
    #: The compare screen's cutoff B per user (absent: now), kept across visits.
    compare_known: dict[str, datetime]
    #: Every user with a memory, as read when the file opened.
    users: list[str]

    def data_written(self) -> None:
        """The store gained a revision: every screen re-reads."""

    def open_history(self, memory_id: str, *, known_at: datetime | None = None, pin_note: str = "",
                     trail: tuple[str, ...] = ()) -> None:
        """Show a memory's history on top of the current screen (``known_at``: pinned to that cutoff)."""

    def open_timeline(self, key: str) -> None:
        """Show a key's values along valid time."""

    def open_compare(self, memory_id: str) -> None:
        """Compare one memory under two knowledge cutoffs."""
