"""The store behind the TUI, reached only from worker threads.

A :class:`~localmem.Store` wraps one connection that is not meant to be used
by two threads at once, and the UI thread must never wait on SQLite. So the
app keeps one store (opened for it, or handed in by a caller or a test), and
every load runs in a thread worker that takes :class:`Source`'s lock around
its calls: one database call at a time, never on the UI thread.

Read-only means the file is never written: without ``--write`` the file is
opened through SQLite's own read-only mode (``mode=ro``), so neither a
migration nor ``PRAGMA optimize`` nor a checkpoint can change it, and a file
that is not a current localmem database is refused before anything reads it
as one.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar
from urllib.parse import quote

import apsw

import localmem
from localmem import Clock, Store

__all__ = ["Source", "open_store", "open_read_only"]

T = TypeVar("T")


class Source:
    """One store, used by one worker thread at a time."""

    def __init__(self, store: Store, clock: Clock, *, owned: bool, read_only: bool = False) -> None:
        self.store = store
        self.clock = clock
        self.read_only = read_only
        self._owned = owned
        self._lock = threading.Lock()

    def run(self, fn: Callable[[Store], T]) -> T:
        """Call ``fn`` with the store while holding the lock (call from a worker thread).

        The cyclic garbage collector is paused meanwhile. A read of 50,000
        revisions allocates hundreds of thousands of objects, which set off
        full collections; a collection holds the GIL, on whichever thread it
        starts, so the UI froze for as long (300-800 ms on a 50k store). What
        a read allocates has no reference cycles: it is freed by reference
        counting without the collector, which runs again once the read is done.
        """
        with self._lock:
            paused = gc.isenabled()
            gc.disable()
            try:
                return fn(self.store)
            finally:
                if paused:
                    gc.enable()

    def close(self) -> None:
        """Close the store if the TUI opened it (a store handed in stays open).

        A read-only store closes its connection only: ``Store.close`` would
        checkpoint and refresh planner statistics, which are writes.
        """
        if self._owned:
            with self._lock:
                if self.read_only:
                    self.store.connection.close()
                else:
                    self.store.close()


@cache
def _expected() -> tuple[int, int]:
    """(application_id, user_version) of a current localmem file, read from a fresh in-memory store."""
    ref = localmem.open(":memory:")
    try:
        conn = ref.connection
        return int(conn.pragma("application_id")), int(conn.pragma("user_version"))
    finally:
        ref.close()


def _check_path(path: str | Path) -> Path:
    p = Path(path)
    if p.is_dir():
        raise localmem.NotFoundError(f"{str(p)!r} is a directory: expected a localmem database file")
    if not p.exists():
        raise localmem.NotFoundError(
            f"no database at {str(p)!r}: give an existing file with --db, "
            "or make one with `localmem add` or `localmem demo`"
        )
    return p


def open_read_only(path: str | Path, clock: Clock) -> Store:
    """Open an existing localmem file so that nothing can write to it.

    Raises:
        localmem.NotFoundError: no file at ``path``.
        localmem.CorruptDatabaseError: not SQLite, empty, or not localmem's.
        localmem.SchemaVersionError: another schema version (an older file
            is migrated by any localmem command that writes, or ``--write``).
    """
    p = _check_path(path)
    name = str(p)
    if p.stat().st_size == 0:
        raise localmem.CorruptDatabaseError(
            f"{name!r} is an empty file, not a localmem database (left as it is: the TUI never "
            "creates one; `localmem add` or `localmem demo` make one)")
    uri = "file:" + quote(str(p.resolve())) + "?mode=ro"
    try:
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        raise localmem.StorageError(f"cannot open database {name!r} read-only: {exc}") from exc
    try:
        try:
            app_id, version = int(conn.pragma("application_id")), int(conn.pragma("user_version"))
        except (apsw.NotADBError, apsw.CorruptError) as exc:
            raise localmem.CorruptDatabaseError(f"{name!r} is not a SQLite database ({exc})") from exc
        want_id, want_version = _expected()
        if app_id != want_id:
            raise localmem.CorruptDatabaseError(
                f"{name!r} is a SQLite database but not a localmem one "
                f"(application_id {app_id:#x}, expected {want_id:#x})")
        if version != want_version:
            newer = "newer" if version > want_version else "older"
            hint = ("upgrade localmem to open it" if version > want_version
                    else "any localmem command that writes migrates it, as does `localmem tui --write`")
            raise localmem.SchemaVersionError(
                f"{name!r} has schema version {version}, {newer} than this localmem's {want_version}: {hint}")
        conn.setbusytimeout(5000)
        return Store(conn, clock=clock)
    except BaseException:
        conn.close()
        raise


def open_store(path: str | Path, clock: Clock, *, write: bool = False) -> Store:
    """Open an existing database file for browsing (read-only unless ``write``).

    The rule: the TUI never creates a database, and without ``write`` it never
    changes one. A path that does not exist is reported (``localmem add`` or
    ``localmem demo`` make one); anything the library refuses (not SQLite, not
    localmem, too new) raises its error.

    Raises:
        localmem.NotFoundError: no file at ``path``.
        localmem.CorruptDatabaseError, localmem.SchemaVersionError,
        localmem.StorageError: as :func:`localmem.open`.
    """
    if str(path) == ":memory:":
        return localmem.open(":memory:", clock=clock)
    p = _check_path(path)
    if not write:
        return open_read_only(p, clock)
    if p.stat().st_size == 0:
        raise localmem.CorruptDatabaseError(
            f"{str(p)!r} is an empty file, not a localmem database (the TUI never creates one: "
            "`localmem add` or `localmem demo` make one)")
    return localmem.open(p, clock=clock)
