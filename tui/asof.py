"""What the screens read, each at the header's clocks, composed from the library's public reads.

The rule the whole TUI keeps: nothing on a screen was recorded after
known_at. A title, a flag, a link along a chain, a row of a comparison: each
is read with ``known_at`` (and flagged at ``valid_at``), never from the
newest revision. :meth:`localmem.Store.chain` follows the chain as it is
*now*, so :func:`chain_at` walks it again through
``store.get(id, known_at=...)``: a link recorded later does not exist yet.

These are plain functions of a store and two instants, run on a worker;
the property test in ``tests/test_tui.py`` calls them for random clocks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from localmem import Change, Revision, Store
from localmem.present import memory_text

__all__ = ["HistoryData", "read_history", "chain_at", "Pair", "pair_up", "compare_user", "compare_memory"]

#: Up to this many memories missing at B are read one by one; more, with one snapshot.
_GETS = 64
#: Newest-possible known_at: the memory as it stands now, for writes (which append to it).
_NEWEST = "9999-12-31T00:00:00Z"


@dataclass(frozen=True, slots=True)
class HistoryData:
    """What the history screen shows, read in one worker call at one pair of clocks."""

    memory_id: str
    known: datetime
    head: Revision | None  # the memory as known at known_at (None: not recorded yet then)
    changes: list[Change]  # recorded by known_at, oldest first
    chain: list[Revision]  # the chain as known at known_at, oldest first (this memory included)
    latest: Revision | None  # the newest revision, for writes only (never shown as the title)


def chain_at(store: Store, memory_id: str, known: datetime, valid: datetime) -> list[Revision]:
    """The chain of changing facts through ``memory_id`` as the store knew it at ``known``, oldest first.

    Each link is read from the revision known then: a supersession recorded
    later is not a link yet. Empty when the memory itself was not yet known.
    """
    here = store.get(memory_id, known_at=known, valid_at=valid)
    if here is None:
        return []
    back: list[Revision] = []
    seen = {memory_id}
    cur = here.supersedes
    while cur is not None and cur not in seen:
        rev = store.get(cur, known_at=known, valid_at=valid)
        if rev is None:
            break
        seen.add(cur)
        back.append(rev)
        cur = rev.supersedes
    forward: list[Revision] = []
    cur = here.superseded_by
    while cur is not None and cur not in seen:
        rev = store.get(cur, known_at=known, valid_at=valid)
        if rev is None:
            break
        seen.add(cur)
        forward.append(rev)
        cur = rev.superseded_by
    return [*reversed(back), here, *forward]


def read_history(store: Store, memory_id: str, known: datetime, valid: datetime, *,
                 newest: bool = False) -> HistoryData:
    """One memory's history, title and chain, all as known at ``known``.

    ``newest`` also reads the memory as it stands now, which writes append to.
    """
    head = store.get(memory_id, known_at=known, valid_at=valid)
    latest = store.get(memory_id, known_at=_NEWEST) if newest else None
    if head is None:
        return HistoryData(memory_id, known, None, [], [], latest)
    changes = store.history(memory_id, known_at=known)
    return HistoryData(memory_id, known, head, changes, chain_at(store, memory_id, known, valid), latest)


@dataclass(frozen=True, slots=True)
class Pair:
    """One fact under both cutoffs: the memory at A, and what stood for it at B.

    ``b`` is the same memory at B, or, when it was superseded by B, the
    memory that replaced it (``via`` says so): vegetarian at A and "eats
    fish" at B are one row, a change of the fact, not a loss and a gain.
    ``b_state`` is the A memory as known at B when it is no longer shown there
    (retracted, expired, superseded, corrected out of valid_at).
    """

    memory_id: str
    a: Revision | None
    b: Revision | None
    b_state: Revision | None = None
    via: str | None = None  # "superseded" when b is A's successor
    successor: Revision | None = None  # what superseded it by B, when b is still the memory itself

    @property
    def change(self) -> str:
        """What differs, in words: "" (nothing), "corrected", "superseded", "retracted by B", ..."""
        if self.a is None:
            return "new at B" if self.b is not None else ""
        if self.via == "superseded":
            return "superseded"
        if self.b is None:
            s = self.b_state
            if s is None:
                return "not known at B"
            if s.erased:
                return "erased by B"
            if s.retracted and not self.a.retracted:
                return "retracted by B"
            if s.expired and not self.a.expired:
                return "expired by B"
            if s.superseded_by is not None:
                return "superseded"
            return "not current at B"
        if self.b.superseded_by is not None and self.a.superseded_by is None:
            return "superseded"
        if memory_text(self.a) != memory_text(self.b):
            return "corrected"
        if self.a.valid != self.b.valid:
            return "valid time corrected"
        for flag in ("retracted", "expired"):
            if getattr(self.a, flag) != getattr(self.b, flag):
                return f"{flag} by B" if getattr(self.b, flag) else f"no longer {flag}"
        return ""


def pair_up(a: list[Revision], b: list[Revision], states: dict[str, Revision] | None = None) -> list[Pair]:
    """Pair two reads by memory, following supersession: A's order, then B's newcomers.

    ``states`` holds, for each memory of ``a`` missing from ``b``, that memory
    as known at B (from ``store.get``); a superseded one is paired with its
    successor when the successor is in ``b``.
    """
    states = states or {}
    by_b = {r.memory_id: r for r in b}
    used: set[str] = set()
    out: list[Pair] = []
    for r in a:
        if r.memory_id in by_b:
            out.append(Pair(r.memory_id, r, by_b[r.memory_id]))
            used.add(r.memory_id)
            continue
        state = states.get(r.memory_id)
        succ = state.superseded_by if state is not None else None
        if succ is not None and succ in by_b and succ not in used:
            out.append(Pair(r.memory_id, r, by_b[succ], state, via="superseded"))
            used.add(succ)
        else:
            out.append(Pair(r.memory_id, r, None, state))
    seen_a = {r.memory_id for r in a}
    out.extend(Pair(r.memory_id, None, r) for r in b if r.memory_id not in seen_a and r.memory_id not in used)
    return out


def compare_user(store: Store, user: str, a: datetime, b: datetime, valid: datetime, *,
                 current_only: bool, include_expired: bool, include_retracted: bool) -> list[Pair]:
    """A user's memories under cutoffs A and B, valid at ``valid``, differences first."""
    def at(known: datetime) -> list[Revision]:
        return store.read(user, known_at=known, valid_at=valid, current_only=current_only,
                          include_expired=include_expired, include_retracted=include_retracted)

    left, right = at(a), at(b)
    in_b = {r.memory_id for r in right}
    missing = [r.memory_id for r in left if r.memory_id not in in_b]
    states: dict[str, Revision] = {}
    if len(missing) > _GETS:
        # One snapshot instead of thousands of gets; its flags are read at B, so the expiry is
        # judged again at valid_at, as get would have.
        held = {r.memory_id: r for r in store.snapshot(user, known_at=b).memories}
        for mid in missing:
            if mid in held:
                r = held[mid]
                states[mid] = replace(r, expired=r.expires_at is not None and r.expires_at <= valid)
    else:
        for mid in missing:
            state = store.get(mid, known_at=b, valid_at=valid)
            if state is not None:
                states[mid] = state
    pairs = _with_successors(store, pair_up(left, right, states), b, valid)
    changes = {p.memory_id: p.change for p in pairs}
    return sorted(pairs, key=lambda p: changes[p.memory_id] == "")  # stable: differences first


def _with_successors(store: Store, pairs: list[Pair], b: datetime, valid: datetime) -> list[Pair]:
    """Name, as known at B, what superseded each memory still shown on B's side (the first few)."""
    out, fetched = [], 0
    for p in pairs:
        shown = p.b if p.b is not None else p.b_state
        if (p.via is None and shown is not None and shown.superseded_by is not None and fetched < _GETS
                and (p.a is None or p.a.superseded_by is None)):
            fetched += 1
            succ = store.get(shown.superseded_by, known_at=b, valid_at=valid)
            p = replace(p, successor=succ)
        out.append(p)
    return out


def compare_memory(store: Store, memory_id: str, a: datetime, b: datetime, valid: datetime) -> list[Pair]:
    """One memory under cutoffs A and B (its successor at B when it was superseded by then)."""
    left = store.get(memory_id, known_at=a, valid_at=valid)
    right = store.get(memory_id, known_at=b, valid_at=valid)
    if left is not None and right is not None and right.superseded_by is not None \
            and left.superseded_by is None:
        succ = store.get(right.superseded_by, known_at=b, valid_at=valid)
        if succ is not None:
            return [Pair(memory_id, left, succ, right, via="superseded")]
    return _with_successors(store, [Pair(memory_id, left, right)], b, valid)
