"""Staleness: which derived memories rest on sources that changed, as known at a time.

A derived memory is *stale* at known_at K when, for any source revision, a later
revision of the source's memory recorded by K corrects it, marks it superseded or
retracts it, or the source memory was erased by K. An expiry alone does not make
it stale (the fact was not wrong; it stopped applying). Every read flags stale
memories (:func:`mark_stale`); :mod:`localmem.replay.derive` says why
(:class:`Staleness`). Staleness is read as of K like everything else: a replay
pinned before the correction sees the summary as fresh.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from ..time.clock import from_micros
from . import sql
from .revision import Revision

__all__ = ["Staleness", "staleness_of", "mark_stale", "CHUNK"]

#: How many ids one IN (...) list holds at most.
CHUNK = 400
_REASONS = {"correct": "corrected", "superseded": "superseded", "retract": "retracted", "erase": "erased"}


@dataclass(frozen=True, slots=True)
class Staleness:
    """Why one source of a derived memory makes it stale, as known at a read's known_at.

    Attributes:
        source_rev: the revision the derived memory was computed from.
        memory_id: that revision's memory.
        reason: ``corrected``, ``superseded``, ``retracted`` or ``erased``.
        changed_at: when the change was recorded.
        change_rev: the revision that made the change (None for an erasure).
        newer_rev: the source memory's newest revision at the read (None once erased).
        replaced_by: for a supersession, the memory that replaced the source's.
    """

    source_rev: str
    memory_id: str
    reason: str
    changed_at: datetime
    change_rev: str | None
    newer_rev: str | None
    replaced_by: str | None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, times as ISO 8601 strings."""
        out = dataclasses.asdict(self)
        out["changed_at"] = self.changed_at.isoformat()
        return out


def staleness_of(conn: apsw.Connection, memory_ids: Sequence[str], known: int) -> dict[str, list[Staleness]]:
    """The staleness of each derived memory in ``memory_ids`` as known at ``known`` (fresh ones absent)."""
    firsts: dict[tuple[str, int], tuple[Any, ...]] = {}
    for i in range(0, len(memory_ids), CHUNK):
        q = sql.staleness(memory_ids[i:i + CHUNK], known)
        for row in conn.execute(q.sql, q.params):
            slot = (row[0], row[1])
            if slot not in firsts or row[4] == "erase":  # an erasure outweighs any earlier change
                firsts[slot] = row
    out: dict[str, list[Staleness]] = {}
    for (derived, _pos), (_d, _p, source_rev, source_memory, op, change_rev, at, replaced) \
            in sorted(firsts.items()):
        newer = None if op == "erase" else conn.execute(sql.CURRENT_REV_ID, (source_memory, known)).get
        out.setdefault(derived, []).append(Staleness(
            source_rev=source_rev, memory_id=source_memory, reason=_REASONS[op],
            changed_at=from_micros(at), change_rev=change_rev, newer_rev=newer, replaced_by=replaced))
    return out


def _derived(conn: apsw.Connection, memory_ids: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i in range(0, len(memory_ids), CHUNK):
        q = sql.derived_among(memory_ids[i:i + CHUNK])
        out.extend(r[0] for r in conn.execute(q.sql, q.params))
    return out


def mark_stale(conn: apsw.Connection, revs: list[Revision], known: int) -> list[Revision]:
    """``revs`` with ``stale`` set on the derived memories that are stale as known at ``known``."""
    if not revs:
        return revs
    derived = _derived(conn, list({r.memory_id: None for r in revs}))
    if not derived:
        return revs
    stale_ids = staleness_of(conn, derived, known)
    if not stale_ids:
        return revs
    return [dataclasses.replace(r, stale=True) if r.memory_id in stale_ids else r for r in revs]
