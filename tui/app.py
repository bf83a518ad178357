"""The Textual app: global bindings, the view every screen reads with, and opening the store.

Thin by design: the screens do the showing, :mod:`tui.source` the store
access, :mod:`tui.state` the clocks. The app opens the database on a worker
(a bad path, a file that is not a localmem database, or an empty one is shown
as a message, never a traceback), then shows the memories screen. Read-only
unless started with ``write=True``.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import events, on, work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from localmem import Clock, LocalmemError, Store, system_clock
from localmem.present import local_time

from .screens.base import ViewScreen
from .screens.compare import CompareScreen
from .screens.dialogs import AskDialog, PickDialog
from .screens.expired import ExpiredScreen
from .screens.help import HelpScreen
from .screens.history import HistoryScreen
from .screens.memories import MemoriesScreen
from .screens.message import MessageScreen
from .screens.timeline import TimelineScreen
from .source import Source, open_store
from .state import View, parse_clock

__all__ = ["LocalmemApp", "IDLE_GC_S"]

#: Seconds without a key press or click after which a full garbage collection may run.
IDLE_GC_S = 2.0


class _Opening(Screen[None]):
    """What shows for the moment it takes to open the file."""

    def compose(self) -> object:  # type: ignore[override]
        yield Static("opening…", id="opening")


class LocalmemApp(App[None]):
    """Browse a localmem store at any point in time.

    Args:
        store: an open store to browse (a caller's or a test's; left open on exit).
        path: a database file to open instead (never created; closed on exit).
        clock: "now" for the clocks and, with ``write``, the store's clock for
            appended revisions when the app opens the file itself.
        user: whose memories to show first (default: the first user).
        write: allow correct, retract and expire (each confirmed first).
        known_at, valid_at: the clocks to start with (None: now).
    """

    CSS_PATH = "localmem.tcss"
    TITLE = "localmem"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Keys", tooltip="Show every key", id="app.help"),
        Binding("1", "switch_mode('memories')", "Memories", show=False, tooltip="The memories screen",
                id="app.memories"),
        Binding("2", "switch_mode('expired')", "Expired", show=False, tooltip="What has expired",
                id="app.expired"),
        Binding("3", "switch_mode('compare')", "Compare", show=False,
                tooltip="The user under two knowledge cutoffs", id="app.compare"),
        Binding("k", "known_at", "Known", tooltip="Set known_at: what the store knew then",
                id="app.known_at"),
        Binding("v", "valid_at", "Valid", tooltip="Set valid_at: what was true then", id="app.valid_at"),
        Binding("n", "now", "Now", show=False, tooltip="Both clocks back to now", id="app.now"),
        Binding("x", "flip('show_expired')", "±expired", show=False, tooltip="Show or hide expired memories",
                id="app.toggle_expired"),
        Binding("r", "flip('show_retracted')", "±retracted", show=False,
                tooltip="Show or hide retracted memories",
                id="app.toggle_retracted"),
        Binding("a", "flip('current_only')", "all/current", show=False,
                tooltip="Current-only (valid at valid_at) or every valid interval (history)",
                id="app.toggle_history"),
        Binding("u", "user", "User", tooltip="Switch user", id="app.user"),
        Binding("q", "quit", "Quit", tooltip="Quit", id="app.quit"),
    ]
    MODES: ClassVar[dict[str, type[Screen[None]]]] = {  # type: ignore[assignment]
        "memories": MemoriesScreen, "expired": ExpiredScreen, "compare": CompareScreen,
    }

    class _Ready(Message):
        def __init__(self, source: Source, user: str | None, tz: str, users: list[str]) -> None:
            super().__init__()
            self.source, self.user, self.tz, self.users = source, user, tz, users

    class _Unusable(Message):
        def __init__(self, title: str, text: str, error: bool = True) -> None:
            super().__init__()
            self.title, self.text, self.error = title, text, error

    def __init__(
        self,
        store: Store | None = None,
        *,
        path: str | Path | None = None,
        clock: Clock = system_clock,
        user: str | None = None,
        write: bool = False,
        known_at: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> None:
        super().__init__()
        if (store is None) == (path is None):
            raise ValueError("give the app either a store or a path")
        self._store, self._path, self._clock = store, path, clock
        self.write = write
        self.source: Source | None = None
        self.view = View(user=user, known_at=known_at, valid_at=valid_at)
        self.compare_known: dict[str, datetime] = {}
        self.users: list[str] = []
        self.data_version = 0

    # -- opening -------------------------------------------------------------------

    def on_mount(self) -> None:
        self.push_screen(_Opening())
        self._open()
        # Full garbage collections wait for a pause in the user's input. Textual's rendering
        # leaves its strips and caches in reference cycles that only a full collection frees;
        # on a 50k store one walked 200,000+ objects and froze the UI for 200-450 ms in the
        # middle of a key press. Young collections still run as usual.
        self._gc_thresholds = gc.get_threshold()
        gc.set_threshold(self._gc_thresholds[0], self._gc_thresholds[1], 1_000_000)
        self._last_input = time.monotonic()
        self.set_interval(1.0, self._collect_when_idle, name="gc")

    async def on_event(self, event: events.Event) -> None:
        """Note when the user last pressed a key or the mouse (for the idle collection)."""
        if isinstance(event, (events.Key, events.MouseDown)):
            self._last_input = time.monotonic()
        await super().on_event(event)

    def _collect_when_idle(self) -> None:
        """A full collection, once the user has been idle for a while and a young one is due."""
        if time.monotonic() - self._last_input >= IDLE_GC_S and gc.get_count()[2] >= self._gc_thresholds[2]:
            gc.collect()

    @work(thread=True, exclusive=True, exit_on_error=False, group="open")
    def _open(self) -> None:
        """Open the file (or take the store), pick the user and their zone."""
        try:
            if self._store is not None:
                source = Source(self._store, self._clock, owned=False)
            else:
                assert self._path is not None
                store = open_store(self._path, self._clock, write=self.write)
                source = Source(store, self._clock, owned=True, read_only=not self.write)
        except LocalmemError as exc:
            self.post_message(self._Unusable("Cannot open the database", str(exc)))
            return
        try:
            users = source.run(lambda s: s.users())
            user = self.view.user or (users[0] if users else None)
            tz = source.run(lambda s: s.user_zone(user)) if user else "UTC"
        except LocalmemError as exc:
            self.post_message(self._Unusable("Cannot read the database", str(exc)))
            source.close()
            return
        if not users:
            where = self._path or "this store"
            self.post_message(self._Unusable(
                "No memories yet",
                f"{where} is a localmem database with no memories in it yet.\n"
                "Add one with `localmem add \"Sam lives in Lisbon\" --user sam`, "
                "or try the stories with `localmem demo`.", error=False))
            source.close()
            return
        self.post_message(self._Ready(source, user, tz, users))

    @on(_Ready)
    def _opened(self, message: _Ready) -> None:
        # What exists now (Textual, its styles, the modules) lives as long as the app: kept out
        # of the collector's full passes, whose pause grows with every object it must walk
        # (on a 50k store those passes froze the UI for 300-650 ms).
        gc.freeze()
        self.source = message.source
        self.users = message.users
        self.view = replace(self.view, user=message.user, tz=message.tz)
        self.switch_mode("memories")

    @on(_Unusable)
    def _unusable(self, message: _Unusable) -> None:
        self.switch_screen(MessageScreen(message.title, message.text, error=message.error))

    def on_unmount(self) -> None:
        if self.source is not None:
            self.source.close()
        gc.set_threshold(*self._gc_thresholds)
        gc.unfreeze()

    # -- the view ------------------------------------------------------------------

    def set_view(self, view: View) -> None:
        """Change the view; the active screen re-reads now, the others when shown."""
        if view == self.view:
            return
        self.view = view
        if isinstance(self.screen, ViewScreen):
            self.screen.view_changed()

    def data_written(self) -> None:
        """The store gained a revision: every screen re-reads (the active one now)."""
        self.data_version += 1
        if isinstance(self.screen, ViewScreen):
            self.screen.view_changed()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): Textual's own commands, then every action of the app by name.

        Jump to a user, set the clocks, open a screen, flip a toggle, and copy
        or export what the current screen shows.
        """
        yield from super().get_system_commands(screen)
        if self.source is None:
            return
        yield SystemCommand("Set known at…", "What the store knew then (k)", self.action_known_at)
        yield SystemCommand("Set valid at…", "What was true then (v)", self.action_valid_at)
        yield SystemCommand("Clocks back to now", "Both clocks to now (n)", self.action_now)
        for mode, title, key in (("memories", "Memories", "1"), ("expired", "Expired", "2"),
                                 ("compare", "Compare", "3")):
            yield SystemCommand(f"Open {title}", f"The {title.lower()} screen ({key})",
                                partial(self.switch_mode, mode))
        toggles = (("show_expired", "Show/hide expired (x)"), ("show_retracted", "Show/hide retracted (r)"),
                   ("current_only", "Current only / every interval (a)"))
        for name, title in toggles:
            yield SystemCommand(title, "A toggle of the view, shown in the header",
                                partial(self.action_flip, name))
        for user in self.users:
            if user != self.view.user:
                yield SystemCommand(f"Jump to user {user}", "Show this user's memories (u)",
                                    partial(self._switch_user, user))
        if isinstance(screen, ViewScreen):
            yield SystemCommand("Export this view as CSV…", "At its clocks, filter and search (E)",
                                partial(screen.action_export, "csv"))
            yield SystemCommand("Export this view as JSON…", "At its clocks, filter and search",
                                partial(screen.action_export, "json"))
            yield SystemCommand("Copy…", "The highlighted memory's id, text or row (y)", screen.action_copy)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The view's keys work once a store is open."""
        if action in ("help", "quit"):
            return True
        return self.source is not None

    def _ask_clock(self, name: str, current: datetime | None, apply: str) -> None:
        source = self.source
        if source is None:
            return
        tz = self.view.tz
        shown = "now" if current is None else local_time(current, tz)

        def check(answers: dict[str, str]) -> None:
            parse_clock(answers["at"], now=source.clock(), tz=tz)

        def asked(answers: dict[str, str] | None) -> None:
            if answers is not None:
                at = parse_clock(answers["at"], now=source.clock(), tz=tz)
                if apply == "known_at":
                    self.set_view(replace(self.view, known_at=at))
                else:
                    self.set_view(replace(self.view, valid_at=at))

        hint = (f"now · 2026-03-02 10:01 · 2025-06-16 · last monday · yesterday "
                f"(read on {tz} wall clock; a day means its start)")
        self.push_screen(AskDialog(name, [("at", name, shown)], hint=hint, check=check), asked)

    def action_known_at(self) -> None:
        """Ask for known_at."""
        self._ask_clock("known at: what the store knew then", self.view.known_at, "known_at")

    def action_valid_at(self) -> None:
        """Ask for valid_at (now: follow known_at)."""
        self._ask_clock("valid at: what was true then", self.view.valid_at, "valid_at")

    def action_now(self) -> None:
        """Both clocks back to now."""
        self.set_view(replace(self.view, known_at=None, valid_at=None))

    def action_flip(self, name: str) -> None:
        """Flip one of the view's toggles: show_expired, show_retracted or current_only."""
        v = self.view
        if name == "show_expired":
            self.set_view(replace(v, show_expired=not v.show_expired))
        elif name == "show_retracted":
            self.set_view(replace(v, show_retracted=not v.show_retracted))
        elif name == "current_only":
            self.set_view(replace(v, current_only=not v.current_only))

    def action_help(self) -> None:
        """Every key, with what it does."""
        self.push_screen(HelpScreen())

    def action_user(self) -> None:
        """Pick another user (the list is read on a worker)."""
        self._pick_user()

    @work(thread=True, exclusive=True, exit_on_error=False, group="users")
    def _pick_user(self) -> None:
        source = self.source
        if source is None:
            return
        try:
            users = source.run(lambda s: s.users())
        except LocalmemError as exc:
            self.call_from_thread(self.notify, str(exc), severity="error")
            return
        self.call_from_thread(self.push_screen, PickDialog("User", users, self.view.user), self._user_picked)

    def _user_picked(self, user: str | None) -> None:
        if user is not None and user != self.view.user:
            self._switch_user(user)

    @work(thread=True, exclusive=True, exit_on_error=False, group="users")
    def _switch_user(self, user: str) -> None:
        source = self.source
        assert source is not None
        tz = source.run(lambda s: s.user_zone(user))
        self.call_from_thread(self.set_view, replace(self.view, user=user, tz=tz))

    # -- opening screens -----------------------------------------------------------

    def open_history(self, memory_id: str, *, known_at: datetime | None = None, pin_note: str = "",
                     trail: tuple[str, ...] = ()) -> None:
        """Show a memory's history on top of the current screen (``known_at``: pinned to that cutoff)."""
        self.push_screen(HistoryScreen(memory_id, known_at=known_at, pin_note=pin_note, trail=trail))

    def open_timeline(self, key: str) -> None:
        """Show a key's values along valid time."""
        self.push_screen(TimelineScreen(key))

    def open_compare(self, memory_id: str) -> None:
        """Compare one memory under two knowledge cutoffs."""
        self.push_screen(CompareScreen(memory_id))

