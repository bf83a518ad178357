"""What did the app know: a user's snapshot at one time, and what changed between two.

``store.snapshot(user, known_at=T)`` is what the store held at T. ``knowledge_diff``
says what was learned, derived, corrected, superseded, retracted, re-dated by an
expiry, or erased between two times: every revision recorded after ``since``
and by ``until``, one entry per change, each with the memory just before it
(None if it was new), the revision it wrote, and the memory as held at
``until``. Erased memories show no content anywhere: the diff never brings
erased words back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..core import reads
from ..core.inputs import check_text
from ..core.ledger import Ledger
from ..core.revision import Erasure, Revision, Snapshot
from ..errors import InvalidInputError
from ..time.clock import TimeInput, to_micros

__all__ = ["DiffEntry", "KnowledgeDiff", "knowledge_diff", "diff", "CHANGES"]

#: The kinds of change, in the order a diff lists them.
CHANGES = ("learned", "derived", "corrected", "superseded", "retracted", "expiry", "erased")
_BY_OP = {"assert": "learned", "supersede": "learned", "derive": "derived", "correct": "corrected",
          "superseded": "superseded", "retract": "retracted", "expire": "expiry"}


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One change to one memory between two times: its kind, the memory just before the change
    (None if new), the revision the change wrote, and when.

    ``after`` is the memory as held at the diff's end (the same for every entry of a memory).
    """

    change: str
    memory_id: str
    before: Revision | None
    after: Revision
    at: datetime
    revision: Revision

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"change": self.change, "memory_id": self.memory_id, "at": self.at.isoformat(),
                "before": None if self.before is None else self.before.to_dict(),
                "revision": self.revision.to_dict(), "after": self.after.to_dict()}


@dataclass(frozen=True, slots=True)
class KnowledgeDiff:
    """What the store learned about a user after ``since`` and by ``until``."""

    user_id: str
    since: datetime
    until: datetime
    entries: tuple[DiffEntry, ...]

    def of(self, change: str) -> list[DiffEntry]:
        """The entries of one kind of change."""
        return [e for e in self.entries if e.change == change]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"user_id": self.user_id, "since": self.since.isoformat(), "until": self.until.isoformat(),
                "entries": [e.to_dict() for e in self.entries]}


def knowledge_diff(ledger: Ledger, user_id: str, since: TimeInput, until: TimeInput) -> KnowledgeDiff:
    """See :meth:`localmem.store.Store.knowledge_diff`."""
    check_text(user_id, "user_id")
    first = reads.snapshot(ledger, user_id, known_at=since)
    last = reads.snapshot(ledger, user_id, known_at=until)
    return diff(first, last, lambda memory_id: reads.erasure(ledger, memory_id))


def diff(first: Snapshot, last: Snapshot, erasure: Callable[[str], Erasure | None]) -> KnowledgeDiff:
    """What changed between two snapshots of one user (``first`` the earlier): the rule of
    :func:`knowledge_diff`, for any store that makes the snapshots (a device, the hub).
    ``erasure`` gives a memory's tombstone.

    Raises:
        InvalidInputError: ``last`` is not after ``first``.
    """
    if last.known_at <= first.known_at:
        raise InvalidInputError(
            f"until={last.known_at.isoformat()!r} is not after since={first.known_at.isoformat()!r}: "
            "a diff runs forwards in time")
    held = {m.memory_id: m for m in first.memories}  # each memory as last seen, walking forwards
    after = {m.memory_id: m for m in last.memories}
    entries: list[DiffEntry] = []
    for rev in last.revisions:
        if rev.recorded_at <= first.known_at:
            continue
        entries.append(DiffEntry(_BY_OP[rev.op], rev.memory_id, held.get(rev.memory_id), after[rev.memory_id],
                                 rev.recorded_at, rev))
        held[rev.memory_id] = rev
    for memory_id, rev in after.items():
        if not rev.erased:
            continue
        tomb = erasure(memory_id)
        if tomb is not None and first.known_at < tomb.erased_at <= last.known_at:
            entries.append(DiffEntry("erased", memory_id, held.get(memory_id), rev, tomb.erased_at, rev))
    entries.sort(key=lambda e: (to_micros(e.at), CHANGES.index(e.change), e.memory_id))
    return KnowledgeDiff(last.user_id, first.known_at, last.known_at, tuple(entries))
