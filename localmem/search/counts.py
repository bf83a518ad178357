"""Counts a search reads from the full-text index, kept per connection while the store is unchanged.

A search reads how many indexed revisions hold each of its words within its statistics'
window (an FTS5 ``count(*)``, the costliest of its seeks), where that window starts, and
whether anyone but its user holds a revision. Each answer is fixed by what the store holds:
the same question asked again of an unchanged store has the same answer, and searches
repeat questions (a replay's steps, an agent's burst of searches on the same words, a
question's terms shared with the last one's). So the answers are kept, per connection,
and all forgotten as soon as what they count may have changed.

What they count lives in three tables, all append-only by the schema's triggers: revisions
and tombstones are never updated or deleted, and content rows are deleted only by an
erasure, which appends a tombstone in the same statement. So the newest revision (its
number and random id), the newest content row and the newest tombstone (its row and random
id) mark the state: any write of these tables, by any connection, committed or rolled back
and written again, gives another mark (:data:`~localmem.search.sql.STORE_MARK`, three
probes of an index's end). The usage a logged search appends marks nothing, so a logged
search keeps the answers for the next one.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

import apsw

from .sql import STORE_MARK

__all__ = ["Counts", "counts_for"]

T = TypeVar("T")

#: At most this many answers are kept per connection (a few bytes each); past it, all are
#: forgotten and gathering starts again.
MOST = 4096


class Counts:
    """Answers already read from one connection's store, keyed by the question, for as long as
    the store is unchanged (see the module docstring)."""

    __slots__ = ("_mark", "_answers", "__weakref__")

    def __init__(self) -> None:
        self._mark: tuple[object, ...] | None = None
        self._answers: dict[tuple[object, ...], object] = {}

    def check(self, conn: apsw.Connection) -> None:
        """Forget every answer if what they count may have changed since the last check."""
        mark = conn.execute(STORE_MARK).fetchone()
        if mark != self._mark or len(self._answers) > MOST:
            self._answers.clear()
            self._mark = mark

    def get(self, key: tuple[object, ...], read: Callable[[], T]) -> T:
        """The answer to ``key``: kept, or read now (by ``read``) and kept."""
        try:
            return self._answers[key]  # type: ignore[return-value]
        except KeyError:
            answer = self._answers[key] = read()
            return answer


_BY_CONNECTION: weakref.WeakKeyDictionary[apsw.Connection, Counts] = weakref.WeakKeyDictionary()


def counts_for(conn: apsw.Connection) -> Counts:
    """``conn``'s kept answers, checked against the store's state now."""
    counts = _BY_CONNECTION.get(conn)
    if counts is None:
        counts = _BY_CONNECTION[conn] = Counts()
    counts.check(conn)
    return counts
