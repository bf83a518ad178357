"""What every data screen shares: the header, loads on a worker, and re-reading on change.

The rule: a screen shows the app's current :class:`~tui.state.View`. When
the view changes the active screen re-reads at once; a screen further down
the stack re-reads when it comes back. Every store call runs in a thread
worker (``exclusive`` per screen), and only the newest load of a screen may
touch its widgets: an older one that finishes late is dropped.

A screen may be opened *pinned* to its own known_at (History opened from
Compare reads at the later cutoff, so the revision that explains the
difference shows): the header says so, and the pin lasts until the app's
view changes (a clock typed on that screen applies to it like any other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from localmem import LocalmemError, Store

from ..host import Host
from ..messages import Loaded, LoadFailed
from ..state import View
from ..widgets.clockbar import ClockBar

__all__ = ["ViewScreen"]


class ViewScreen(Screen[None]):
    """A screen that reads the store under the app's view."""

    TITLE: ClassVar[str] = ""

    def __init__(self, *, known_at: datetime | None = None, pin_note: str = "") -> None:
        super().__init__()
        self._seen: tuple[View, int] | None = None
        self._generation = 0
        self._pin_at = known_at
        self._pin_note = pin_note
        self._pinned_on: View | None = None

    @property
    def view(self) -> View:
        """The view this screen reads with: the app's, or the app's with this screen's pinned known_at."""
        app_view = self.lm.view
        if self._pin_at is None:
            return app_view
        if self._pinned_on is None:
            self._pinned_on = app_view
        if self._pinned_on != app_view:  # the clocks were set since: the pin gives way
            self._pin_at = None
            return app_view
        return replace(app_view, known_at=self._pin_at)

    @property
    def pinned(self) -> datetime | None:
        """This screen's own known_at, while it holds (None: the app's clocks)."""
        return self.view.known_at if self._pin_at is not None else None

    @property
    def lm(self) -> Host:
        """The app, as the screens see it (see :mod:`tui.host`)."""
        app = self.app
        assert isinstance(app, Host)
        return app

    def compose_header(self) -> ComposeResult:
        """The clock bar, at the top of every data screen."""
        yield ClockBar(id="clockbar")

    def compose_footer(self) -> ComposeResult:
        """The status line and the key bindings."""
        yield Static("", id="status")
        # The palette (ctrl+p) is listed in the help: its footer entry cost the app's own keys their room.
        yield Footer(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        """Draw the header (its "now" kept fresh); the first load happens when the screen is resumed."""
        self.refresh_header()
        self.set_interval(20, self.refresh_header, name="clock")

    def on_screen_resume(self) -> None:
        """Redraw the header ("now" moved on); re-read if the view changed while another screen was on top."""
        self.refresh_header()
        if self._seen != (self.view, self.lm.data_version):
            self.view_changed()

    def view_changed(self) -> None:
        """Refresh the header and re-read under the new view."""
        self._seen = (self.view, self.lm.data_version)
        self.refresh_header()
        self.reload()

    def refresh_header(self) -> None:
        """Redraw the clock bar."""
        if self.lm.source is None:
            return
        note = self._pin_note if self.pinned is not None else ""
        for bar in self.query(ClockBar):
            bar.show(self.view, self.lm.source.clock, write=self.lm.write, title=self.TITLE, note=note)

    def reload(self) -> None:
        """Read what the screen shows (subclasses start their workers here)."""

    def status(self, text: str, *, error: bool = False) -> None:
        """Show a one-line status (errors in the error style) under the content."""
        for s in self.query("#status").results(Static):
            s.update(text)
            s.set_class(error, "error")

    def load(self, fn: Callable[[Store], Any], done: Callable[[Any], None], *, new: bool = True) -> None:
        """Run ``fn(store)`` on a worker and hand its result to ``done`` on the UI thread.

        ``new`` starts a new generation: results of earlier loads are dropped.
        A page of the same listing passes ``new=False``.
        """
        if self.lm.source is None:
            return
        if new:
            self._generation += 1
        gen = self._generation
        self.run_worker(partial(self._run_job, gen, fn, done), thread=True, exit_on_error=False,
                        group=f"load-{id(self)}-{gen}")

    def _run_job(self, generation: int, fn: Callable[[Store], Any], done: Callable[[Any], None]) -> None:
        source = self.lm.source
        assert source is not None
        try:
            result = source.run(fn)
        except LocalmemError as exc:
            self.post_message(LoadFailed(generation, str(exc)))
            return
        self.post_message(Loaded(generation, done, result))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        if message.generation == self._generation:
            message.done(message.result)

    @on(LoadFailed)
    def _failed(self, message: LoadFailed) -> None:
        if message.generation == self._generation:
            self.status(message.text, error=True)
