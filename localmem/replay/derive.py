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
- **Staleness, as known at a time** (:mod:`localmem.core.staleness`, which every read
  uses to flag stale memories). A derived memory is *stale* at known_at K
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
from typing import Any

import apsw

from ..core import sql
from ..core.inputs import check_text, encode_attributes, encode_json, optional_text
from ..core.ledger import Ledger
from ..core.reads import fetch_revisions
from ..core.revision import Revision, revision_from_row
from ..core.staleness import Staleness, staleness_of
from ..errors import ErasedError, InvalidInputError, InvalidOperationError
from ..search.ranking import Hit
from ..time.clock import Micros, TimeInput, from_micros, to_micros
from ..time.interval import PRECISIONS, Precision, check_precision
from . import sql as rq

__all__ = ["Provenance", "derive", "provenance", "stale", "rev_ids"]


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


def _sources(conn: apsw.Connection, memory_id: str) -> tuple[str, ...]:
    return tuple(r[0] for r in conn.execute(rq.SOURCES, (memory_id,)))


def provenance(ledger: Ledger, memory_id: str, known_at: TimeInput | None) -> Provenance:
    """See :meth:`localmem.store.Store.provenance`."""
    state = ledger.state(memory_id, writable=False)
    known, _ = ledger.axes(None, known_at, None, ledger.zone_for(state.tz, state.user_id))
    conn = ledger.connection
    sources = _sources(conn, memory_id)
    if not sources:
        raise InvalidOperationError(f"memory {memory_id!r} is not derived: it has no sources")
    row = conn.execute(sql.GET_AS_OF, (memory_id, known)).fetchone()
    if row is None:
        raise InvalidOperationError(
            f"memory {memory_id!r} was derived at {state.recorded_at.isoformat()!r}, after "
            f"known_at={from_micros(known).isoformat()!r}: it was not known then")
    found = staleness_of(conn, [memory_id], known).get(memory_id, [])
    rev = revision_from_row(row, known)
    if found:
        rev = dataclasses.replace(rev, stale=True)
    return Provenance(rev, sources, tuple(found), from_micros(known))


def stale(ledger: Ledger, user_id: str, known_at: TimeInput | None) -> list[Provenance]:
    """See :meth:`localmem.store.Store.stale`."""
    check_text(user_id, "user_id")
    known, _ = ledger.axes(None, known_at, None, ledger.zone_for(None, user_id))
    conn = ledger.connection
    q = rq.derived_of_user(user_id, known)
    derived = [r[0] for r in conn.execute(q.sql, q.params)]
    found = staleness_of(conn, derived, known)
    out: list[Provenance] = []
    for memory_id, reasons in found.items():
        row = conn.execute(sql.GET_AS_OF, (memory_id, known)).fetchone()
        if row is None:
            continue
        rev = revision_from_row(row, known)
        if rev.retracted or rev.erased or rev.superseded_by is not None:
            continue  # withdrawn or already restated: nothing left to restate
        out.append(Provenance(dataclasses.replace(rev, stale=True), _sources(conn, memory_id),
                              tuple(reasons), from_micros(known)))
    out.sort(key=lambda p: (p.revision.recorded_at, p.revision.memory_id))
    return out


def _hull(sources: Sequence[Revision]) -> tuple[Micros, Micros | None, Precision]:
    start = min(to_micros(s.valid_from) for s in sources)
    ends = [s.valid_to for s in sources]
    end = None if any(e is None for e in ends) else max(to_micros(e) for e in ends if e is not None)
    precision = max((s.precision for s in sources), key=PRECISIONS.index)
    return start, end, precision


def derive(
    ledger: Ledger,
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
    with ledger.write() as now:
        conn = ledger.connection
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
        z = ledger.zone_for(None, owner)
        hull_from, hull_to, hull_precision = _hull(sources)
        span = ledger.valid_time(z, valid_from=valid_from, valid_to=valid_to,
                                 precision=None if precision is None else check_precision(precision),
                                 otherwise=(hull_from, hull_to, hull_precision, "assumed"))
        old: Revision | None = None
        key = None
        if supersedes is not None:
            old = ledger.state(supersedes)
            ledger.check_supersedable(old, owner, span[0])
            key = old.key
        memory_id = ledger.new_memory(user_id=owner, kind=kind, key=key, at=now, tz=z.key)
        new = ledger.first_revision(
            memory_id, user_id=owner, kind=kind, key=key, op="derive", span=span, observed_at=now,
            recorded_at=now, tz=z.key, expires_at=None, supersedes=old.memory_id if old else None,
            text=text, encoded=encoded, reason=reason)
        conn.executemany(rq.INSERT_DERIVATION, [(memory_id, i, rid) for i, rid in enumerate(ids, 1)])
        if old is not None:
            ledger.close_superseded(old, by=memory_id, starts=span[0], at=now, observed=now, reason=reason)
        return new
