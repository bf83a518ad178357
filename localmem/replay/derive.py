"""Derived memories: summaries computed from other revisions, with provenance and staleness.

The rules:

- **Provenance.** ``derive`` records a new memory (its first revision has op
  ``derive``) and links it to the exact revisions it was computed from. The
  links are append-only; they name revisions, never copy their words.
- **Its own recorded time.** A derived memory is a revision like any other: a
  read whose known_at is before the derive does not see it, even when every
  source was known by then (a summary written Wednesday is not in a Monday
  replay). Its sources were all recorded before it, since recorded time never
  goes backwards and only revisions already stored can be cited.
- **Valid time.** Unless given, a derived memory is valid over the hull of its
  sources' valid times (open-ended if any source is), with the coarsest of
  their precisions, and ``valid_source="assumed"``.
- **Staleness, as known at a time.** A derived memory is *stale* at known_at K
  when, for any source revision, a later revision of the source's memory
  recorded by K corrects it, marks it superseded or retracts it, or the source
  memory was erased by K. An expiry alone does not make it stale (the fact was
  not wrong; it stopped applying). Each source reports the first such change
  (its reason and revision), the source memory's newest revision at K (what a
  re-derivation would use; None once erased) and, for a supersession, the
  memory that replaced it. Staleness is read as of K like everything else: a
  replay pinned before the correction sees the summary as fresh.
- Staleness looks at a derived memory's own sources. A summary built on a
  stale summary is not itself flagged until one of its own sources changes:
  re-derive the inner one and supersede it, and the outer one goes stale.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import sql as queries
from ..core.ids import new_id
from ..core.inputs import check_text, encode_attributes, encode_json, optional_text
from ..core.revision import Revision, revision_from_row
from ..errors import ErasedError, InvalidInputError, InvalidOperationError, NotFoundError
from ..search.ranking import Hit
from ..time.clock import TimeInput, from_micros, parse_time, to_micros
from ..time.interval import PRECISIONS, check_interval, check_precision
from . import sql as rq

if TYPE_CHECKING:
    import apsw

    from ..store import Store

__all__ = [
    "IS_DERIVED",
    "Staleness",
    "Provenance",
    "derive",
    "staleness_of",
    "mark_stale",
    "provenance",
    "stale",
    "rev_ids",
    "fetch_revisions",
]

_CHUNK = 400
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


@dataclass(frozen=True, slots=True)
class Provenance:
    """A derived memory as known at ``known_at``, the revisions it came from, and why it is stale."""

    revision: Revision
    sources: tuple[str, ...]
    staleness: tuple[Staleness, ...]
    known_at: datetime

    @property
    def stale(self) -> bool:
        """Whether any source changed (see :class:`Staleness`) by known_at."""
        return bool(self.staleness)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"revision": self.revision.to_dict(), "sources": list(self.sources),
                "staleness": [s.to_dict() for s in self.staleness], "known_at": self.known_at.isoformat(),
                "stale": self.stale}


def rev_ids(items: object, name: str) -> list[str]:
    """Revision ids from a list of ids, Revisions or search Hits; each once."""
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"{name}={items!r:.80} is not a list: expected revision ids, Revisions or Hits")
    out: list[str] = []
    for item in items:
        if isinstance(item, Hit):
            rid = item.revision.rev_id
        elif isinstance(item, Revision):
            rid = item.rev_id
        elif isinstance(item, str) and item.strip():
            rid = item.strip().upper()
        else:
            raise InvalidInputError(
                f"{name} holds {item!r:.80}: expected a revision id, a Revision or a Hit")
        if rid in out:
            raise InvalidInputError(f"{name} lists revision {rid!r} twice")
        out.append(rid)
    return out


def fetch_revisions(conn: apsw.Connection, ids: Sequence[str], valid: int | None = None) -> list[Revision]:
    """These exact revisions, in the order given.

    Raises:
        NotFoundError: an id names no revision (the message says if it is a memory id).
    """
    found: dict[str, Revision] = {}
    for i in range(0, len(ids), _CHUNK):
        q = rq.revisions_by_id(ids[i:i + _CHUNK])
        for row in conn.execute(q.sql, q.params):
            rev = revision_from_row(row, valid)
            found[rev.rev_id] = rev
    for rid in ids:
        if rid not in found:
            hint = ""
            if conn.execute("SELECT 1 FROM memories WHERE memory_id = ?", (rid,)).fetchone():
                hint = ": that is a memory id; give one of its revision ids (rev_id)"
            raise NotFoundError(f"no revision with id {rid!r}{hint}")
    return [found[rid] for rid in ids]


def staleness_of(conn: apsw.Connection, memory_ids: Sequence[str], known: int) -> dict[str, list[Staleness]]:
    """The staleness of each derived memory in ``memory_ids`` as known at ``known`` (fresh ones absent)."""
    firsts: dict[tuple[str, int], tuple[Any, ...]] = {}
    for i in range(0, len(memory_ids), _CHUNK):
        q = rq.staleness(memory_ids[i:i + _CHUNK], known)
        for row in conn.execute(q.sql, q.params):
            slot = (row[0], row[1])
            if slot not in firsts or row[4] == "erase":  # an erasure outweighs any earlier change
                firsts[slot] = row
    out: dict[str, list[Staleness]] = {}
    for (derived, _pos), (_d, _p, source_rev, source_memory, op, change_rev, at, replaced) \
            in sorted(firsts.items()):
        newer = None
        if op != "erase":
            newer = conn.execute(
                "SELECT rev_id FROM revisions WHERE memory_id = ?1 AND arrived_at <= ?2"
                " ORDER BY hlc DESC, origin DESC, rev_id DESC LIMIT 1", (source_memory, known)).get
        out.setdefault(derived, []).append(Staleness(
            source_rev=source_rev, memory_id=source_memory, reason=_REASONS[op],
            changed_at=from_micros(at), change_rev=change_rev, newer_rev=newer, replaced_by=replaced))
    return out


#: Whether a memory is derived (has provenance links): one probe of the primary key.
IS_DERIVED = "SELECT 1 FROM derivations WHERE memory_id = ?1 LIMIT 1"


def _derived(conn: apsw.Connection, memory_ids: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i in range(0, len(memory_ids), _CHUNK):
        q = rq.derived_among(memory_ids[i:i + _CHUNK])
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


def _sources(conn: apsw.Connection, memory_id: str) -> tuple[str, ...]:
    return tuple(r[0] for r in conn.execute(
        "SELECT source_rev FROM derivations WHERE memory_id = ? ORDER BY position", (memory_id,)))


def provenance(store: Store, memory_id: str, known_at: TimeInput | None) -> Provenance:
    """See :meth:`localmem.store.Store.provenance`."""
    state = store._state(memory_id, writable=False)
    known, _ = store._axes(None, known_at, None, store._zone_for(state.tz, state.user_id))
    sources = _sources(store._conn, memory_id)
    if not sources:
        raise InvalidOperationError(f"memory {memory_id!r} is not derived: it has no sources")
    row = store._conn.execute(queries.GET_AS_OF, (memory_id, known)).fetchone()
    if row is None:
        raise InvalidOperationError(
            f"memory {memory_id!r} was derived at {state.recorded_at.isoformat()!r}, after "
            f"known_at={from_micros(known).isoformat()!r}: it was not known then")
    found = staleness_of(store._conn, [memory_id], known).get(memory_id, [])
    rev = revision_from_row(row, known)
    if found:
        rev = dataclasses.replace(rev, stale=True)
    return Provenance(rev, sources, tuple(found), from_micros(known))


def stale(store: Store, user_id: str, known_at: TimeInput | None) -> list[Provenance]:
    """See :meth:`localmem.store.Store.stale`."""
    check_text(user_id, "user_id")
    known, _ = store._axes(None, known_at, None, store._zone_for(None, user_id))
    conn = store._conn
    q = rq.derived_of_user(user_id, known)
    derived = [r[0] for r in conn.execute(q.sql, q.params)]
    found = staleness_of(conn, derived, known)
    out: list[Provenance] = []
    for memory_id, reasons in found.items():
        row = conn.execute(queries.GET_AS_OF, (memory_id, known)).fetchone()
        if row is None:
            continue
        rev = revision_from_row(row, known)
        if rev.retracted or rev.erased or rev.superseded_by is not None:
            continue  # withdrawn or already restated: nothing left to restate
        out.append(Provenance(dataclasses.replace(rev, stale=True), _sources(conn, memory_id),
                              tuple(reasons), from_micros(known)))
    out.sort(key=lambda p: (p.revision.recorded_at, p.revision.memory_id))
    return out


def _hull(sources: Sequence[Revision]) -> tuple[int, int | None, str]:
    start = min(to_micros(s.valid_from) for s in sources)
    ends = [s.valid_to for s in sources]
    end = None if any(e is None for e in ends) else max(to_micros(e) for e in ends if e is not None)
    precision = max((s.precision for s in sources), key=PRECISIONS.index)
    return start, end, precision


def derive(
    store: Store,
    text: str,
    *,
    from_: Sequence[str | Revision | Hit],
    user_id: str | None,
    kind: str,
    value: Any,
    attributes: Mapping[str, Any] | None,
    valid_from: TimeInput | None,
    valid_to: TimeInput | None,
    precision: str | None,
    source: Any,
    reason: str | None,
    supersedes: str | None,
) -> Revision:
    """See :meth:`localmem.store.Store.derive`."""
    check_text(text)
    check_text(kind, "kind")
    if user_id is not None:
        check_text(user_id, "user_id")
    optional_text(reason, "reason")
    optional_text(supersedes, "supersedes")
    if precision is not None:
        check_precision(precision)
    ids = rev_ids(from_, "from_")
    if not ids:
        raise InvalidInputError("from_=[] is empty: a derived memory needs at least one source revision")
    encoded = (encode_json(value, "value"), encode_attributes(attributes), encode_json(source, "source"))
    with store._write() as now:
        conn = store._conn
        sources = fetch_revisions(conn, ids)
        for s in sources:
            if s.erased:
                raise ErasedError(f"revision {s.rev_id!r} belongs to erased memory {s.memory_id!r}: "
                                  "its content is gone, nothing can be derived from it")
        owner = user_id if user_id is not None else sources[0].user_id
        for s in sources:
            if s.user_id != owner:
                raise InvalidOperationError(
                    f"revision {s.rev_id!r} belongs to user {s.user_id!r}, not {owner!r}: "
                    "a derived memory is computed from one user's memories")
        z = store._zone_for(None, owner)
        if valid_from is not None:
            start = parse_time(valid_from, name="valid_from", tz=z)
            vf, vt, prec, vsrc = to_micros(start.at), None, precision or start.precision, "explicit"
        else:
            vf, vt, hull_precision = _hull(sources)
            prec, vsrc = precision or hull_precision, "assumed"
        if valid_to is not None:
            vt = to_micros(parse_time(valid_to, name="valid_to", tz=z).at)
        check_interval(from_micros(vf), None if vt is None else from_micros(vt))
        old: Revision | None = None
        key = None
        if supersedes is not None:
            old = store._state(supersedes)
            store._check_supersedable(old, owner, vf)
            key = old.key
        memory_id = new_id(now)
        conn.execute(
            "INSERT INTO memories (memory_id, user_id, kind, key, created_at) VALUES (?,?,?,?,?)",
            (memory_id, owner, kind, key, now))
        new = store._append(
            memory_id=memory_id, user_id=owner, kind=kind, key=key, version=1, op="derive",
            valid_from=vf, valid_to=vt, precision=prec, valid_source=vsrc, observed_at=now,
            recorded_at=now, tz=z.key, expires_at=None, retracted=False, corrected=False,
            prev_rev=None, supersedes=old.memory_id if old else None, superseded_by=None,
            text=text, value=encoded[0], attributes=encoded[1], source=encoded[2], reason=reason,
        )
        conn.executemany(
            "INSERT INTO derivations (memory_id, position, source_rev) VALUES (?, ?, ?)",
            [(memory_id, i, rid) for i, rid in enumerate(ids, 1)])
        if old is not None:
            old_to = None if old.valid_to is None else to_micros(old.valid_to)
            store._follow(old, now, "superseded", observed_at=now,
                          valid_to=vf if old_to is None or old_to > vf else old_to,
                          superseded_by=memory_id, reason=reason)
        return new
