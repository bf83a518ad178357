"""Counts a search reads from the full-text index, kept per connection while the store is unchanged.

A search reads how many indexed revisions hold each of its words within its statistics'
window (an FTS5 ``count(*)``, the costliest of its seeks), where that window starts, and
whether anyone but its user holds a revision. Each answer is fixed by what the store holds:
the same question asked again of an unchanged store has the same answer, and searches
repeat questions (a replay's steps, an agent's burst of searches on the same words, a
question's terms shared with the last one's). So the answers are kept, per connection,
and all forgotten as soon as the store may have changed: when this connection has written
anything (its total changes, which count every row inserted, updated or deleted, in
triggers too, committed or rolled back) or another connection has committed (SQLite's
``data_version``). An erasure deletes rows, so no count outlives the text it counted.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

import apsw

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
        self._mark: tuple[int, int] | None = None
        self._answers: dict[tuple[object, ...], object] = {}

    def check(self, conn: apsw.Connection) -> None:
        """Forget every answer if the store may have changed since the last check."""
        mark = (int(conn.execute("PRAGMA data_version").get), conn.total_changes())
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
