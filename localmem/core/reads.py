"""Reads at explicit times: what the store knew (known_at) about what was true (valid_at).

Every read takes its reference times as arguments; only an omitted one falls back to
the store's clock, at the API edge (:meth:`~localmem.core.ledger.Ledger.axes` states the
defaults). The as-of rule and what a current-only read hides are stated once, in
:mod:`localmem.core.sql`; the functions here run those statements and build results:

* **get** returns one memory as known at known_at with its flags, hiding nothing;
* **read** returns a user's memories as known at known_at, current ones (valid at
  valid_at) by default, without expired and retracted ones unless asked, never erased ones;
* **read_page** is read a page at a time, newest arrived first, for browsing;
* **snapshot** is every revision held at known_at, unfiltered;
* **history** is every change to one memory, ending with its erasure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import apsw

from ..errors import InvalidInputError, NotFoundError
from ..time.clock import UTC_ZONE, TimeInput, from_micros, instant_micros, is_date_form, to_micros, zone
from . import sql
from .db import map_errors
from .filters import compile_filter
from .inputs import check_memory_id, check_text, optional_text
from .ledger import Ledger
from .revision import Change, Erasure, Revision, Snapshot, changes, lazy_revision_from_row, revision_from_row
from .staleness import CHUNK, mark_stale

__all__ = ["get", "read", "read_page", "snapshot", "history", "erasure", "chain", "users", "fetch_revisions"]


def get(
    ledger: Ledger,
    memory_id: str,
    *,
    as_of: TimeInput | None = None,
    known_at: TimeInput | None = None,
    valid_at: TimeInput | None = None,
) -> Revision | None:
    """See :meth:`localmem.store.Store.get`."""
    check_memory_id(memory_id)
    if as_of is None and type(known_at) is datetime and type(valid_at) is datetime:
        # The hot path (both times given as datetimes): what axes() would work out, directly.
        known = instant_micros(known_at, name="known_at", tz=UTC_ZONE)
        valid = instant_micros(valid_at, name="valid_at", tz=UTC_ZONE)
    else:
        z = UTC_ZONE
        for a in (as_of, known_at, valid_at):
            if a is not None and type(a) is not datetime and is_date_form(a):
                z = zone(ledger.state(memory_id, writable=False).tz)
                break
        known, valid = ledger.axes(as_of, known_at, valid_at, z)
    try:
        row = ledger.connection.execute(sql.GET_FLAGGED, (memory_id, known)).fetchone()
    except apsw.Error:
        with map_errors():
            raise
    if row is None:
        ledger.state(memory_id, writable=False)  # raises NotFoundError if unknown
        return None
    # Decoded field by field, when read; the row's last column (derived?) is past every field's.
    rev = lazy_revision_from_row(row, valid)
    if not row[-1]:  # not derived: the hot path stays one statement
        return rev
    with map_errors():
        return mark_stale(ledger.connection, [rev], known)[0]


def read(
    ledger: Ledger,
    user_id: str,
    *,
    as_of: TimeInput | None = None,
    known_at: TimeInput | None = None,
    valid_at: TimeInput | None = None,
    current_only: bool = True,
    include_expired: bool = False,
    include_retracted: bool = False,
    kind: str | None = None,
    key: str | None = None,
    filters: Mapping[str, Any] | None = None,
) -> list[Revision]:
    """See :meth:`localmem.store.Store.read`."""
    check_text(user_id, "user_id")
    optional_text(kind, "kind")
    optional_text(key, "key")
    z = ledger.zone_for(None, user_id)
    known, valid = ledger.axes(as_of, known_at, valid_at, z)
    compiled = None if filters is None else compile_filter(filters, tz=z)
    q = sql.read_as_of(
        user_id, known=known, valid=valid, current_only=current_only,
        include_expired=include_expired, include_retracted=include_retracted,
        kind=kind, key=key, extra=None if compiled is None else (compiled.sql, compiled.params),
    )
    conn = ledger.connection
    with map_errors():
        revs = [revision_from_row(row, valid) for row in conn.execute(q.sql, q.params)]
        return mark_stale(conn, revs, known)


def read_page(
    ledger: Ledger,
    user_id: str,
    *,
    as_of: TimeInput | None = None,
    known_at: TimeInput | None = None,
    valid_at: TimeInput | None = None,
    current_only: bool = True,
    include_expired: bool = False,
    include_retracted: bool = False,
    only_expired: bool = False,
    kind: str | None = None,
    key: str | None = None,
    after: str | None = None,
    limit: int = 200,
) -> tuple[list[Revision], str | None]:
    """See :meth:`localmem.store.Store.read_page`."""
    check_text(user_id, "user_id")
    optional_text(kind, "kind")
    optional_text(key, "key")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
        raise InvalidInputError(f"limit={limit!r} is not acceptable: expected an integer from 1 to 10000")
    cursor: tuple[int, int] | None = None
    if after is not None:
        at, sep, seq = str(after).partition(":")
        if not (sep and at.lstrip("-").isdigit() and seq.isdigit()):
            raise InvalidInputError(f"after={after!r} is not a cursor returned by read_page")
        cursor = (int(at), int(seq))
    z = ledger.zone_for(None, user_id)
    known, valid = ledger.axes(as_of, known_at, valid_at, z)
    q = sql.read_page(
        user_id, known=known, valid=valid, current_only=current_only,
        include_expired=include_expired, include_retracted=include_retracted,
        only_expired=only_expired, kind=kind, key=key, after=cursor, limit=limit + 1,
    )
    with map_errors():
        rows = list(ledger.connection.execute(q.sql, q.params))
    more = len(rows) > limit
    rows = rows[:limit]
    page = [revision_from_row(row[:-1], valid) for row in rows]
    nxt = f"{rows[-1][-1]}:{rows[-1][0]}" if more else None  # arrived_at, seq
    return page, nxt


def snapshot(ledger: Ledger, user_id: str, *, known_at: TimeInput | None = None) -> Snapshot:
    """See :meth:`localmem.store.Store.snapshot`."""
    check_text(user_id, "user_id")
    z = ledger.zone_for(None, user_id)
    known, _ = ledger.axes(None, known_at, None, z)
    q = sql.snapshot(user_id, known)
    conn = ledger.connection
    with map_errors():
        rows = [revision_from_row(r, known) for r in conn.execute(q.sql, q.params)]
        revisions = mark_stale(conn, rows, known)
    latest: dict[str, Revision] = {}
    for rev in revisions:
        latest[rev.memory_id] = rev
    memories = sorted(latest.values(), key=lambda r: (r.valid_from, r.recorded_at))
    return Snapshot(user_id, from_micros(known), tuple(memories), tuple(revisions))


def history(ledger: Ledger, memory_id: str, *, known_at: TimeInput | None = None) -> list[Change]:
    """See :meth:`localmem.store.Store.history`."""
    state = ledger.state(memory_id, writable=False)
    known = None
    if known_at is not None:
        known, _ = ledger.axes(None, known_at, None, zone(state.tz))
    q = sql.history(memory_id, known)
    with map_errors():
        revs = [revision_from_row(r, None) for r in ledger.connection.execute(q.sql, q.params)]
        tomb = erasure(ledger, memory_id)
    if tomb is not None and known is not None and to_micros(tomb.erased_at) > known:
        tomb = None
    return changes(revs, tomb)


def erasure(ledger: Ledger, memory_id: str) -> Erasure | None:
    """See :meth:`localmem.store.Store.erasure`."""
    row = ledger.connection.execute(sql.ERASURE, (memory_id,)).fetchone()
    if row is None:
        return None
    return Erasure(row[0], row[1], from_micros(row[2]), row[3], row[4], row[5])


def chain(ledger: Ledger, memory_id: str) -> list[str]:
    """See :meth:`localmem.store.Store.chain`."""
    rev = ledger.state(memory_id, writable=False)
    back: list[str] = []
    cur: str | None = rev.supersedes
    while cur is not None and cur not in back:
        back.append(cur)
        cur = ledger.state(cur, writable=False).supersedes
    forward: list[str] = []
    cur = rev.superseded_by
    while cur is not None and cur not in forward:
        forward.append(cur)
        cur = ledger.state(cur, writable=False).superseded_by
    return [*reversed(back), memory_id, *forward]


def users(ledger: Ledger) -> list[str]:
    """See :meth:`localmem.store.Store.users`."""
    return [r[0] for r in ledger.connection.execute(sql.USERS)]


def fetch_revisions(conn: apsw.Connection, ids: Sequence[str], valid: int | None = None) -> list[Revision]:
    """These exact revisions, in the order given.

    Raises:
        NotFoundError: an id names no revision (the message says if it is a memory id).
    """
    found: dict[str, Revision] = {}
    for i in range(0, len(ids), CHUNK):
        q = sql.revisions_by_id(ids[i:i + CHUNK])
        for row in conn.execute(q.sql, q.params):
            rev = revision_from_row(row, valid)
            found[rev.rev_id] = rev
    for rid in ids:
        if rid not in found:
            hint = ""
            if conn.execute(sql.MEMORY_EXISTS, (rid,)).fetchone():
                hint = ": that is a memory id; give one of its revision ids (rev_id)"
            raise NotFoundError(f"no revision with id {rid!r}{hint}")
    return [found[rid] for rid in ids]
