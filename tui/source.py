"""The store behind the TUI, reached only from worker threads.

A :class:`~localmem.Store` wraps one connection that is not meant to be used
by two threads at once, and the UI thread must never wait on SQLite. So the
app keeps one store (opened for it, or handed in by a caller or a test), and
every load runs in a thread worker that takes :class:`Source`'s lock around
its calls: one database call at a time, never on the UI thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import localmem
from localmem import Clock, Store

__all__ = ["Source", "open_store"]

T = TypeVar("T")


class Source:
    """One store, used by one worker thread at a time."""

    def __init__(self, store: Store, clock: Clock, *, owned: bool) -> None:
        self.store = store
        self.clock = clock
        self._owned = owned
        self._lock = threading.Lock()

    def run(self, fn: Callable[[Store], T]) -> T:
        """Call ``fn`` with the store while holding the lock (call from a worker thread)."""
        with self._lock:
            return fn(self.store)

    def close(self) -> None:
        """Close the store if the TUI opened it (a store handed in stays open)."""
        if self._owned:
            with self._lock:
                self.store.close()


def open_store(path: str | Path, clock: Clock) -> Store:
    """Open an existing database file for browsing.

    The rule: the TUI never creates a database. A path that does not exist is
    reported (``localmem add`` or ``localmem demo`` make one); anything the
    library refuses (not SQLite, not localmem, too new) raises its error.

    Raises:
        localmem.NotFoundError: no file at ``path``.
        localmem.CorruptDatabaseError, localmem.SchemaVersionError,
        localmem.StorageError: as :func:`localmem.open`.
    """
    p = Path(path)
    if str(path) != ":memory:":
        if p.is_dir():
            raise localmem.NotFoundError(f"{str(p)!r} is a directory: expected a localmem database file")
        if not p.exists():
            raise localmem.NotFoundError(
                f"no database at {str(p)!r}: give an existing file with --db, "
                "or make one with `localmem add` or `localmem demo`"
            )
    return localmem.open(p, clock=clock)
