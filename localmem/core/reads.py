"""Reads at explicit times: what the store knew (known_at) about what was true (valid_at).

Every read takes its reference times as arguments; only an omitted one falls
back to the store's clock, at the API edge. The rules for the defaults and for
what a current-only read hides are in :mod:`localmem.store`'s docstring.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol
from zoneinfo import ZoneInfo

import apsw

from ..errors import InvalidInputError, NotFoundError
from ..replay.derive import IS_DERIVED, mark_stale
from ..search.embedding import Embedder
from ..search.ranking import Hit, Scope, run_search
from ..time.clock import UTC_ZONE, TimeInput, from_micros, is_date_form, to_micros, zone
from . import sql as queries
from .db import map_errors
from .filters import compile_filter
from .inputs import check_text, optional_text
from .revision import Change, Erasure, Revision, Snapshot, changes, revision_from_row

__all__ = ["Reads"]


class _Host(Protocol):
    """What the reads need from the store they are mixed into."""

    _conn: apsw.Connection
    _embedder: Embedder | None

    def _axes(
        self, as_of: TimeInput | None, known_at: TimeInput | None, valid_at: TimeInput | None, tz: ZoneInfo
    ) -> tuple[int, int]: ...

    def _state(self, memory_id: str, *, writable: bool = True) -> Revision: ...

    def _zone_for(self, tz: str | ZoneInfo | None, user_id: str) -> ZoneInfo: ...

    def erasure(self, memory_id: str) -> Erasure | None: ...

    def _write(self) -> AbstractContextManager[int]: ...


class Reads:
    """The read half of :class:`~localmem.store.Store`."""

    def get(
        self: _Host,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
    ) -> Revision | None:
        """A memory as known at known_at, flagged for valid_at.

        Unlike ``read``, ``get`` does not hide a memory that is retracted,
        expired or outside its valid time: it returns it with its flags (use
        ``rev.valid_at(t)``).

        Returns:
            The newest revision recorded at or before known_at, or None if the
            memory was not yet known then.

        Raises:
            NotFoundError: no memory has this id.
        """
        if not isinstance(memory_id, str):
            raise NotFoundError(f"memory id {memory_id!r} is not an id: expected a string")
        z = UTC_ZONE
        for a in (as_of, known_at, valid_at):
            if a is not None and type(a) is not datetime and is_date_form(a):
                z = zone(self._state(memory_id, writable=False).tz)
                break
        known, valid = self._axes(as_of, known_at, valid_at, z)
        try:
            row = self._conn.execute(queries.GET_AS_OF, (memory_id, known)).fetchone()
            derived = row is not None and self._conn.execute(IS_DERIVED, (memory_id,)).fetchone() is not None
        except apsw.Error:
            with map_errors():
                raise
        if row is None:
            self._state(memory_id, writable=False)  # raises NotFoundError if unknown
            return None
        rev = revision_from_row(row, valid)
        if not derived:  # the hot path stays one lookup and one probe
            return rev
        with map_errors():
            return mark_stale(self._conn, [rev], known)[0]

    def read(
        self: _Host,
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
        """A user's memories as known at known_at.

        Args:
            current_only: keep only memories valid at valid_at (the default);
                False gives every valid interval known at known_at (history).
            include_expired: keep memories expired at valid_at (flagged).
            include_retracted: keep retracted memories (flagged).
            kind, key: keep only this kind / key.
            filters: a filter tree (see :mod:`localmem.filters`), dates in the
                user's zone; it narrows the read, never widens it.

        Returns:
            Each memory's newest revision at known_at, ordered by valid_from.
            Erased memories never appear.

        Raises:
            InvalidFilterError: a malformed filter tree (the message says where).
        """
        check_text(user_id, "user_id")
        optional_text(kind, "kind")
        optional_text(key, "key")
        z = self._zone_for(None, user_id)
        known, valid = self._axes(as_of, known_at, valid_at, z)
        compiled = None if filters is None else compile_filter(filters, tz=z)
        q = queries.read_as_of(
            user_id, known=known, valid=valid, current_only=current_only,
            include_expired=include_expired, include_retracted=include_retracted,
            kind=kind, key=key, extra=None if compiled is None else (compiled.sql, compiled.params),
        )
        with map_errors():
            revs = [revision_from_row(row, valid) for row in self._conn.execute(q.sql, q.params)]
            return mark_stale(self._conn, revs, known)

    def read_page(
        self: _Host,
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
        """One page of :meth:`read`, for browsing a user with very many memories.

        The same memories as ``read`` with the same arguments, but ordered by
        when their revision (as known at known_at) was recorded, newest first,
        so that a page costs the same however large the store is (it walks an
        index from the cursor). ``only_expired`` keeps only the memories
        expired at valid_at (and implies ``include_expired``).

        Args:
            after: the cursor a previous page returned (None: the first page).
            limit: the page size, 1 to 10,000.

        Returns:
            The page, and the cursor of the next one (None when this is the last).

        Raises:
            InvalidInputError: a malformed cursor or limit.
        """
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
        z = self._zone_for(None, user_id)
        known, valid = self._axes(as_of, known_at, valid_at, z)
        q = queries.read_page(
            user_id, known=known, valid=valid, current_only=current_only,
            include_expired=include_expired, include_retracted=include_retracted,
            only_expired=only_expired, kind=kind, key=key, after=cursor, limit=limit + 1,
        )
        with map_errors():
            rows = list(self._conn.execute(q.sql, q.params))
        more = len(rows) > limit
        rows = rows[:limit]
        page = [revision_from_row(row[:-1], valid) for row in rows]
        nxt = f"{rows[-1][-1]}:{rows[-1][0]}" if more else None  # arrived_at, seq
        return page, nxt

    def search(
        self: _Host,
        query: str,
        *,
        user_id: str,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
        filters: Mapping[str, Any] | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        limit: int = 10,
        log: bool = True,
        run_id: str | None = None,
    ) -> list[Hit]:
        """The user's memories that best answer ``query``, as known at known_at.

        Full-text relevance (BM25) reranked by how well each memory's time fits
        the query's time phrases, which are read against known_at in the user's
        zone; see :mod:`localmem.search` for the rules. Unless ``log=False``,
        the hits are appended to the usage log (with ``run_id``, at the store's
        recorded time of the search), which later rankings read as of their
        known_at.

        ``current_only`` (the default) keeps what is current *knowledge* at
        valid_at: memories begun by then and not superseded, so a past event
        ("ran a 10K last weekend") stays findable while a replaced fact
        (Lisbon, once Sam moved) does not; False searches every interval.

        Returns:
            Up to ``limit`` hits, best first, each with its score's parts.

        Raises:
            InvalidInputError: the query is not text, or has neither a word nor
                a time phrase; ``limit`` is not a positive integer.
            InvalidFilterError: a malformed filter tree.
        """
        if not isinstance(query, str):
            raise InvalidInputError(f"query={query!r:.80} is not text: expected a string")
        check_text(user_id, "user_id")
        optional_text(run_id, "run_id")
        if not isinstance(log, bool):
            raise InvalidInputError(f"log={log!r} is not a bool")
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidInputError(f"limit={limit!r} is not acceptable: expected an integer from 1 to 1000")
        z = self._zone_for(None, user_id)
        known, valid = self._axes(as_of, known_at, valid_at, z)
        compiled = None if filters is None else compile_filter(filters, tz=z)
        extra = None if compiled is None else (compiled.sql, compiled.params)
        scope = Scope(
            user_id=user_id, known=known, valid=valid, current_only=current_only,
            include_expired=include_expired, extra=extra,
        )
        with map_errors():
            hits = run_search(self._conn, query, scope, z, limit, self._embedder)
            marked = mark_stale(self._conn, [h.revision for h in hits], known)
            hits = [h if h.revision is r else dataclasses.replace(h, revision=r)
                    for h, r in zip(hits, marked, strict=True)]
        if log and hits:
            with self._write() as now:
                self._conn.executemany(
                    "INSERT INTO usage (user_id, memory_id, used_at, run_id, rank) VALUES (?, ?, ?, ?, ?)",
                    [(user_id, h.revision.memory_id, now, run_id, i) for i, h in enumerate(hits, 1)],
                )
        return hits

    def snapshot(self: _Host, user_id: str, *, known_at: TimeInput | None = None) -> Snapshot:
        """Everything the store held about a user at known_at, with no filter.

        The answer to "you forgot": every revision recorded by then, and each
        memory's newest revision then, retracted, expired, superseded and
        erased ones included (flags are computed at known_at).
        """
        check_text(user_id, "user_id")
        z = self._zone_for(None, user_id)
        known, _ = self._axes(None, known_at, None, z)
        q = queries.snapshot(user_id, known)
        with map_errors():
            revisions = mark_stale(
                self._conn, [revision_from_row(r, known) for r in self._conn.execute(q.sql, q.params)], known)
        latest: dict[str, Revision] = {}
        for rev in revisions:
            latest[rev.memory_id] = rev
        memories = sorted(latest.values(), key=lambda r: (r.valid_from, r.recorded_at))
        return Snapshot(user_id, from_micros(known), tuple(memories), tuple(revisions))

    def history(self: _Host, memory_id: str, *, known_at: TimeInput | None = None) -> list[Change]:
        """Every change to one memory, oldest first, ending with its erasure if any.

        Args:
            known_at: only the changes recorded by then (default: all).

        Raises:
            NotFoundError: no memory has this id.
        """
        state = self._state(memory_id, writable=False)
        known = None
        if known_at is not None:
            known, _ = self._axes(None, known_at, None, zone(state.tz))
        q = queries.history(memory_id, known)
        with map_errors():
            revs = [revision_from_row(r, None) for r in self._conn.execute(q.sql, q.params)]
            erasure = self.erasure(memory_id)
        if erasure is not None and known is not None and to_micros(erasure.erased_at) > known:
            erasure = None
        return changes(revs, erasure)

    def erasure(self: _Host, memory_id: str) -> Erasure | None:
        """The tombstone of a memory's erasure, or None if it was not erased."""
        row = self._conn.execute(
            "SELECT memory_id, user_id, erased_at, erased_by, reason, tomb_id FROM erasures"
            " WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        if row is None:
            return None
        return Erasure(row[0], row[1], from_micros(row[2]), row[3], row[4], row[5])

    def chain(self: _Host, memory_id: str) -> list[str]:
        """The ids of a chain of changing facts, oldest first, that contains ``memory_id``."""
        rev = self._state(memory_id, writable=False)
        back: list[str] = []
        cur: str | None = rev.supersedes
        while cur is not None and cur not in back:
            back.append(cur)
            cur = self._state(cur, writable=False).supersedes
        forward: list[str] = []
        cur = rev.superseded_by
        while cur is not None and cur not in forward:
            forward.append(cur)
            cur = self._state(cur, writable=False).superseded_by
        return [*reversed(back), memory_id, *forward]

    def users(self: _Host) -> list[str]:
        """Every user id with at least one memory, sorted."""
        # One seek of revisions_user per user (a loose index scan) instead of reading every
        # memory: 800 ms -> under 1 ms for 101 users of a 1M-revision store.
        return [r[0] for r in self._conn.execute(
            """WITH RECURSIVE u (id) AS (
    SELECT min(user_id) FROM revisions
    UNION ALL
    SELECT (SELECT min(user_id) FROM revisions WHERE user_id > u.id) FROM u WHERE u.id IS NOT NULL
)
SELECT id FROM u WHERE id IS NOT NULL""")]
