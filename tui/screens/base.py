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
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from localmem import InvalidInputError, LocalmemError, Store
from localmem.present import local_time

from ..export import FORMATS, write_records
from ..host import Host
from ..messages import Loaded, LoadFailed
from ..state import View
from ..widgets.clockbar import ClockBar
from .dialogs import AskDialog, PickDialog

#: What an export reads on a worker: the view's records (each a ``to_dict()``).
ExportJob = Callable[[Store], list[dict[str, Any]]]

__all__ = ["ViewScreen"]


class ViewScreen(Screen[None]):
    """A screen that reads the store under the app's view."""

    TITLE: ClassVar[str] = ""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "copy", "Copy", show=False, tooltip="Copy the memory id, its text or the row",
                id="view.copy"),
        Binding("E", "export('csv')", "Export", show=False,
                tooltip="Export this view (its clocks, filter, search) to CSV or JSON", id="view.export"),
    ]

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
        message.result = None  # a message may outlive this in a reference cycle: not the data

    @on(LoadFailed)
    def _failed(self, message: LoadFailed) -> None:
        if message.generation == self._generation:
            self.status(message.text, error=True)

    # -- copy and export ---------------------------------------------------------

    def copy_choices(self) -> list[tuple[str, str]]:
        """What ``y`` can copy here: (what it is, the text); none by default."""
        return []

    def action_copy(self) -> None:
        """Pick what to copy (the id, the text, the row) and put it on the clipboard."""
        choices = self.copy_choices()
        if not choices:
            self.notify("nothing to copy here: highlight a memory first", severity="warning")
            return
        labels = [f"{what}: {text if len(text) <= 60 else text[:59] + '…'}" for what, text in choices]

        def picked(label: str | None) -> None:
            if label is None:
                return
            what, text = choices[labels.index(label)]
            self.app.copy_to_clipboard(text)
            self.notify(f"copied the {what} to the clipboard")

        self.app.push_screen(PickDialog("Copy", labels), picked)

    def export_job(self) -> ExportJob | None:
        """The records of this view, read again in full on a worker (None: nothing to export)."""
        return None

    def export_name(self, fmt: str) -> str:
        """A file name for this view's export: user, screen and known_at."""
        view, source = self.view, self.lm.source
        at = view.known(source.clock) if source is not None else None
        stamp = local_time(at, view.tz).replace(" ", "T").replace(":", "") if at else "now"
        return f"localmem-{view.user or 'all'}-{self.TITLE.lower()}-{stamp}.{fmt}"

    def action_export(self, fmt: str = "csv") -> None:
        """Ask where, then write this view's records there as CSV or JSON (by the suffix)."""
        job = self.export_job()
        if job is None:
            self.notify("nothing to export on this screen", severity="warning")
            return

        def check(answers: dict[str, str]) -> None:
            suffix = answers["path"].strip().rsplit(".", 1)[-1].lower()
            if suffix not in FORMATS:
                raise InvalidInputError(f"{answers['path']!r} must end in .csv or .json")

        def asked(answers: dict[str, str] | None) -> None:
            if answers is None:
                return
            path = answers["path"].strip()

            def run(store: Store) -> tuple[int, str]:
                return write_records(path, job(store)), path

            self.status(f"exporting to {path}…")
            self.load(run, self._exported, new=False)

        self.app.push_screen(AskDialog(
            f"Export {self.TITLE}: this view, at its clocks", [("path", "File (.csv or .json)",
                                                              self.export_name(fmt))],
            hint="Everything this view shows, read again in full (not just the rows loaded so far).",
            check=check), asked)

    def _exported(self, result: tuple[int, str]) -> None:
        n, path = result
        self.status(f"exported {n:,} record{'s' if n != 1 else ''} to {path}")
        self.notify(f"exported {n:,} to {path}")
