"""Reads on the hub with the device's answers: read, get, search, snapshot, history.

Each takes the device's times and defaults (:meth:`localmem.store.Store.read`): ``known_at``
is ``known_at`` else ``as_of`` else now (the hub's clock, injected); ``valid_at`` is
``valid_at`` else ``as_of`` else known; a date is read in the user's last zone. Each
returns the device's result types (:class:`~localmem.core.revision.Revision`, ...), so the
command line prints them as a device's (:mod:`localmem.present`). The SQL is
:mod:`localmem.hub.sql`. Derived memories are flagged ``stale`` as a device flags them
(:func:`localmem.core.staleness.mark_stale`): one query per read, for the user's derived
memories only, and only when the read returned one (each row says whether it is derived).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

import psycopg

from ..core.inputs import check_text
from ..core.revision import Change, Erasure, Revision, Snapshot, changes, revision_from_row
from ..errors import InvalidInputError, NotFoundError
from ..time.clock import Clock, TimeInput, from_micros, instant_micros, to_micros, zone
from . import db
from . import sql as hub_sql

__all__ = ["axes", "read", "get", "search", "snapshot", "history", "erasure", "users"]

Conn = psycopg.Connection[tuple[Any, ...]]


def axes(conn: Conn, user_id: str | None, clock: Clock, as_of: TimeInput | None = None,
         known_at: TimeInput | None = None, valid_at: TimeInput | None = None) -> tuple[int, int]:
    """A read's (known, valid) in microseconds, by the device's rule (see the module docstring).

    The user's zone is looked up only when a time is not a datetime (a date or a string, which
    may need it): an aware datetime is one instant in any zone, and the read stays one query.
    """
    tz = "UTC"
    given = (as_of, known_at, valid_at)
    if user_id is not None and any(t is not None and type(t) is not datetime for t in given):
        with db.errors("the hub refused a read"):
            row = conn.execute(hub_sql.USER_ZONE, (user_id,)).fetchone()
        tz = str(row[0]) if row is not None else "UTC"
    z = zone(tz)
    base = None if as_of is None else instant_micros(as_of, name="as_of", tz=z)
    if known_at is not None:
        known = instant_micros(known_at, name="known_at", tz=z)
    else:
        known = base if base is not None else to_micros(clock())
    if valid_at is not None:
        valid = instant_micros(valid_at, name="valid_at", tz=z)
    else:
        valid = base if base is not None else known
    return known, valid


def _execute(conn: Conn, query: tuple[str, dict[str, object]]) -> list[tuple[Any, ...]]:
    """A read's rows: prepared at its first run on the connection (psycopg would wait for five;
    planning is a tenth of a read) unless the connection prepares nothing (``prepare_threshold``
    None, as behind a transaction-pooling PgBouncer), in binary (numbers cost less to decode)."""
    prepare = None if conn.prepare_threshold is None else True
    with db.errors("the hub refused a read"):
        return conn.execute(query[0].encode(), query[1], prepare=prepare, binary=True).fetchall()


def _rows(conn: Conn, query: tuple[str, dict[str, object]], valid: int | None) -> list[Revision]:
    return [revision_from_row(row, valid) for row in _execute(conn, query)]


def _flagged(conn: Conn, query: tuple[str, dict[str, object]], valid: int | None, user_id: str,
             known: int, extra: int = 0) -> list[Revision]:
    """The rows of a read whose columns end with :data:`~localmem.hub.sql.DERIVED` (then ``extra``
    more), as Revisions, the stale ones flagged."""
    rows = _execute(conn, query)
    end = -1 - extra
    revs = [revision_from_row(row[:end], valid) for row in rows]
    if any(row[end] for row in rows):
        return _mark_stale(conn, revs, user_id, known)
    return revs


def _mark_stale(conn: Conn, revs: list[Revision], user_id: str, known: int) -> list[Revision]:
    """``revs`` with ``stale`` set on the derived memories stale as known at ``known``."""
    with db.errors("the hub refused a read"):
        found = conn.execute(hub_sql.STALE.encode(), {"user_id": user_id, "known": known})
        stale = {str(r[0]) for r in found}
    if not stale:
        return revs
    return [dataclasses.replace(r, stale=True) if r.memory_id in stale else r for r in revs]


def read(conn: Conn, user_id: str, *, clock: Clock, as_of: TimeInput | None = None,
         known_at: TimeInput | None = None, valid_at: TimeInput | None = None, current_only: bool = True,
         include_expired: bool = False, include_retracted: bool = False, kind: str | None = None,
         key: str | None = None) -> list[Revision]:
    """A user's memories as the hub knew them at known_at, valid at valid_at (the device's ``read``)."""
    check_text(user_id, "user_id")
    known, valid = axes(conn, user_id, clock, as_of, known_at, valid_at)
    q = hub_sql.read_as_of(user_id, known=known, valid=valid, current_only=current_only,
                           include_expired=include_expired, include_retracted=include_retracted,
                           kind=kind, key=key)
    return _flagged(conn, q, valid, user_id, known)


def get(conn: Conn, user_id: str, memory_id: str, *, clock: Clock, as_of: TimeInput | None = None,
        known_at: TimeInput | None = None, valid_at: TimeInput | None = None) -> Revision | None:
    """One memory as the hub knew it at known_at (None: it had not arrived by then)."""
    check_text(user_id, "user_id")
    known, valid = axes(conn, user_id, clock, as_of, known_at, valid_at)
    found = _flagged(conn, hub_sql.get_as_of(user_id, memory_id, known), valid, user_id, known)
    return found[0] if found else None


def search(conn: Conn, user_id: str, query: str, *, clock: Clock, as_of: TimeInput | None = None,
           known_at: TimeInput | None = None, valid_at: TimeInput | None = None,
           limit: int = 10) -> list[Revision]:
    """A user's memories matching ``query`` (PostgreSQL full-text search), best first."""
    check_text(user_id, "user_id")
    check_text(query, "query")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
        raise InvalidInputError(f"limit={limit!r} is not acceptable: expected an integer from 1 to 1000")
    known, valid = axes(conn, user_id, clock, as_of, known_at, valid_at)
    q = hub_sql.search(user_id, query, known=known, valid=valid, limit=limit)
    return _flagged(conn, q, valid, user_id, known, extra=1)


def snapshot(conn: Conn, user_id: str, *, clock: Clock, known_at: TimeInput | None = None) -> Snapshot:
    """Everything the hub held about a user at known_at (the device's ``snapshot``)."""
    check_text(user_id, "user_id")
    known, _ = axes(conn, user_id, clock, None, known_at, None)
    revisions = _flagged(conn, hub_sql.snapshot(user_id, known), known, user_id, known)
    latest: dict[str, Revision] = {}
    for rev in revisions:
        latest[rev.memory_id] = rev
    memories = sorted(latest.values(), key=lambda r: (r.valid_from, r.recorded_at))
    return Snapshot(user_id, from_micros(known), tuple(memories), tuple(revisions))


def erasure(conn: Conn, memory_id: str) -> Erasure | None:
    """A memory's tombstone on the hub, or None."""
    with db.errors("the hub refused a read"):
        row = conn.execute(hub_sql.ERASURE, (memory_id,)).fetchone()
    if row is None:
        return None
    return Erasure(str(row[0]), str(row[1]), from_micros(int(row[2])), row[3], row[4], str(row[5]))


def history(conn: Conn, memory_id: str, *, clock: Clock, known_at: TimeInput | None = None) -> list[Change]:
    """Every change to one memory the hub holds, oldest first, its erasure last (the device's ``history``).

    Raises:
        NotFoundError: the hub holds no such memory.
    """
    check_text(memory_id, "memory_id")
    known = None if known_at is None else axes(conn, None, clock, None, known_at, None)[0]
    revs = _rows(conn, hub_sql.history(memory_id, known), None)
    if not revs:
        with db.errors("the hub refused a read"):
            there = conn.execute("SELECT 1 FROM memories WHERE memory_id = %s", (memory_id,)).fetchone()
        if there is None:
            raise NotFoundError(f"no memory {memory_id!r} on the hub")
    tomb = erasure(conn, memory_id)
    if tomb is not None and known is not None and to_micros(tomb.erased_at) > known:
        tomb = None
    return changes(revs, tomb)


def users(conn: Conn) -> list[str]:
    """Every user the hub holds memories of."""
    with db.errors("the hub refused a read"):
        return [str(r[0]) for r in conn.execute("SELECT DISTINCT user_id FROM memories ORDER BY 1")]
