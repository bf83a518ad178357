"""Model-based test: the store against a small, obvious reference model of its rules.

The model is written from DESIGN.md and the docstrings of ``localmem.store`` and
``localmem.core.sql``, not from the store's code: a plain list of revisions,
appended per write, and reads that filter that list. A hypothesis state machine
drives both with random writes on a frozen clock (moved forwards, not at all, or
backwards) and compares every read at many (known_at, valid_at) points, chosen
to land exactly on recorded_at values and interval ends, and just before them.

Where the docstrings leave a choice open, the model accepts any of the readings:
which of two key heads with the same valid_from a new value supersedes, which
error a write with several faults raises, and the order of the two revisions
one superseding write appends.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule, run_state_machine_as_test

import localmem
from localmem import UNSET, InvalidIntervalError, InvalidOperationError, LocalmemError, Revision
from localmem.testing import FrozenClock

BASE = datetime(2026, 3, 2, 8, 0, tzinfo=UTC)
END = datetime(2100, 1, 1, tzinfo=UTC)  # known at the end of time: everything written
US = timedelta(microseconds=1)
USERS = ("ann", "bob")
ZONES = {"ann": "UTC", "bob": "Asia/Singapore"}  # a date expiry ends at local midnight
KEYS = (None, "city")
TEXTS = ("alpha", "beta", "gamma")
VALUES = (None, 1, 2)

# -- the model ------------------------------------------------------------------


@dataclass(frozen=True)
class Rev:
    """One revision in the model: a memory's whole state after one write."""

    memory_id: str
    user_id: str
    key: str | None
    version: int
    op: str
    text: str
    value: int | None
    valid_from: datetime
    valid_to: datetime | None
    expires_at: datetime | None
    retracted: bool
    supersedes: str | None
    superseded_by: str | None
    recorded_at: datetime


class Refused(Exception):
    """The model's verdict that a write is invalid: the errors the store may raise for it."""

    def __init__(self, *errors: type[LocalmemError]) -> None:
        super().__init__(*errors)
        self.errors = errors


def is_valid(rev: Rev, at: datetime) -> bool:
    """Valid at V: valid_from <= V < valid_to, an open end being still true."""
    return rev.valid_from <= at and (rev.valid_to is None or at < rev.valid_to)


def is_expired(rev: Rev, at: datetime) -> bool:
    """Expired at V: expires_at <= V."""
    return rev.expires_at is not None and rev.expires_at <= at


def expiry(on: datetime | date, user: str) -> datetime:
    """An expiry as an instant: a date means through that day in the user's zone."""
    if isinstance(on, datetime):
        return on
    midnight = datetime(on.year, on.month, on.day, tzinfo=ZoneInfo(ZONES[user]))
    return (midnight + timedelta(days=1)).astimezone(UTC)


def interval(rev: Rev | None) -> tuple[datetime, datetime | None] | None:
    """A revision's valid interval as (from, to)."""
    return None if rev is None else (rev.valid_from, rev.valid_to)


class Model:
    """The store's rules over a plain list of revisions, in the order they were written."""

    def __init__(self) -> None:
        self.revs: list[Rev] = []

    def now(self, clock_now: datetime) -> datetime:
        """recorded_at of a write: the clock, but never before the newest revision."""
        return max([clock_now, *(r.recorded_at for r in self.revs)])

    def ids(self, user: str | None = None) -> list[str]:
        """Memory ids (of one user, or all), in order of creation."""
        return list(dict.fromkeys(r.memory_id for r in self.revs if user in (None, r.user_id)))

    def known(self, memory_id: str, at: datetime = END) -> Rev | None:
        """Known at K: the newest revision recorded at or before K (a later write wins a tie)."""
        found = None
        for r in self.revs:
            if r.memory_id == memory_id and r.recorded_at <= at:
                if found is None or r.recorded_at >= found.recorded_at:
                    found = r
        return found

    def read(self, user: str, known: datetime, valid: datetime, current_only: bool,
             include_expired: bool, include_retracted: bool) -> list[Rev]:
        """Each memory as known at known, kept if valid / not expired / not retracted at valid."""
        out = []
        for memory_id in self.ids(user):
            r = self.known(memory_id, known)
            if (r is None or (current_only and not is_valid(r, valid))
                    or (not include_expired and is_expired(r, valid))
                    or (not include_retracted and r.retracted)):
                continue
            out.append(r)
        return out

    def snapshot(self, user: str, known: datetime) -> list[Rev]:
        """Every revision of the user's memories recorded at or before known."""
        return [r for r in self.revs if r.user_id == user and r.recorded_at <= known]

    def history(self, memory_id: str, known: datetime = END) -> list[tuple[Any, ...]]:
        """Each change: op, version, old -> new text, old -> new interval, flags, recorded_at."""
        revs = [r for r in self.revs if r.memory_id == memory_id and r.recorded_at <= known]
        return [(r.op, r.version, None if p is None else p.text, r.text, interval(p), interval(r),
                 r.retracted, r.expires_at, r.recorded_at)
                for p, r in zip([None, *revs], revs, strict=False)]

    def key_head(self, user: str, key: str, prefer: str | None) -> Rev | None:
        """The key's current value: its live (not retracted or superseded) memory starting last."""
        heads = [r for r in map(self.known, self.ids(user)) if r and r.key == key
                 and not r.retracted and r.superseded_by is None]
        if not heads:
            return None
        latest = max(r.valid_from for r in heads)
        tied = [r for r in heads if r.valid_from == latest]  # the docstring leaves ties open
        return next((r for r in tied if r.memory_id == prefer), tied[0])

    def _follow(self, rev: Rev, now: datetime, op: str, **changes: Any) -> Rev:
        new = replace(rev, version=rev.version + 1, op=op, recorded_at=now, **changes)
        self.revs.append(new)
        return new

    def add(self, now: datetime, new_id: str, text: str, user: str, valid_from: datetime | None,
            valid_to: datetime | None, expires: datetime | date | None, key: str | None,
            value: int | None, supersedes: str | None, prefer: str | None) -> Rev:
        """Assert a memory; with supersedes= or a key, supersede the old one (see store.add)."""
        vf = now if valid_from is None else valid_from  # assumed: starts when observed
        errors: list[type[LocalmemError]] = []
        if valid_to is not None and valid_to <= vf:
            errors.append(InvalidIntervalError)
        old = None
        if supersedes is not None:
            old = self.known(supersedes)
            assert old is not None
            if old.user_id != user or old.retracted or old.superseded_by is not None:
                errors.append(InvalidOperationError)
            if vf <= old.valid_from:
                errors.append(InvalidIntervalError)
            key = old.key if key is None else key
        elif key is not None:
            old = self.key_head(user, key, prefer)
            if old is not None and vf <= old.valid_from:  # not later: history, or an overlap
                if valid_to is None or valid_to > old.valid_from:
                    errors.append(InvalidIntervalError)
                old = None
        if errors:
            raise Refused(*errors)
        first = Rev(new_id, user, key, 1, "supersede" if old else "assert", text, value, vf,
                    valid_to, None if expires is None else expiry(expires, user), False,
                    None if old is None else old.memory_id, None, now)
        self.revs.append(first)
        if old is not None:  # close the old interval where the new one starts, if it ran past
            end = vf if old.valid_to is None or old.valid_to > vf else old.valid_to
            self._follow(old, now, "superseded", valid_to=end, superseded_by=new_id)
        return first

    def supersede(self, now: datetime, new_id: str, memory_id: str, text: str,
                  valid_from: datetime | None, valid_to: datetime | None,
                  expires: datetime | date | None, value: int | None) -> Rev:
        """The world changed: a new memory of the same user replaces memory_id."""
        old = self.known(memory_id)
        assert old is not None
        return self.add(now, new_id, text, old.user_id, valid_from, valid_to, expires, None,
                        value, memory_id, None)

    def correct(self, now: datetime, memory_id: str, **given: Any) -> Rev:
        """The account was wrong: same memory, the given fields replaced."""
        cur = self.known(memory_id)
        assert cur is not None
        new = replace(cur, **given)
        errors: list[type[LocalmemError]] = []
        if cur.retracted:
            errors.append(InvalidOperationError)
        if new.valid_to is not None and new.valid_to <= new.valid_from:
            errors.append(InvalidIntervalError)
        if new == cur:
            errors.append(InvalidOperationError)  # changes nothing
        if errors:
            raise Refused(*errors)
        return self._follow(cur, now, "correct", **given)

    def retract(self, now: datetime, memory_id: str) -> Rev:
        """The user revoked it: hidden from current reads from now on."""
        cur = self.known(memory_id)
        assert cur is not None
        if cur.retracted:
            raise Refused(InvalidOperationError)
        return self._follow(cur, now, "retract", retracted=True)

    def expire(self, now: datetime, memory_id: str, on: datetime | date) -> Rev:
        """Set or move the expiry."""
        cur = self.known(memory_id)
        assert cur is not None
        if cur.retracted or cur.expires_at == expiry(on, cur.user_id):
            raise Refused(InvalidOperationError)
        return self._follow(cur, now, "expire", expires_at=expiry(on, cur.user_id))


# -- comparing the store with the model ------------------------------------------

FIELDS = ("memory_id", "user_id", "key", "version", "op", "text", "value", "valid_from",
          "valid_to", "expires_at", "retracted", "supersedes", "superseded_by", "recorded_at")


def view(rev: Revision | Rev | None, expired: bool | None = None) -> dict[str, Any] | None:
    """The compared fields of a store or model revision (plus its expired flag, if given)."""
    if rev is None:
        return None
    out = {f: getattr(rev, f) for f in FIELDS}
    if expired is not None:
        out["expired"] = expired
    return out


def store_view(rev: Revision | None) -> dict[str, Any] | None:
    """A store revision's compared fields with the expired flag the store computed."""
    return None if rev is None else view(rev, rev.expired)


def model_view(rev: Rev | None, valid_at: datetime) -> dict[str, Any] | None:
    """A model revision's compared fields with the expired flag the rules give at valid_at."""
    return None if rev is None else view(rev, is_expired(rev, valid_at))


def by_id(views: Iterable[dict[str, Any] | None]) -> list[dict[str, Any] | None]:
    """Views in memory-id order, to compare results as sets."""
    return sorted(views, key=lambda v: "" if v is None else v["memory_id"])


def store_history(changes: list[localmem.Change]) -> list[tuple[Any, ...]]:
    """The store's history in the model's shape."""
    def span(v: localmem.ValidTime | None) -> tuple[datetime, datetime | None] | None:
        return None if v is None else (v.start, v.end)
    return [(c.op, c.version, c.old_text, c.new_text, span(c.old_valid), span(c.new_valid),
             c.retracted, c.expires_at, c.recorded_at) for c in changes]


FLAGS = st.tuples(st.booleans(), st.booleans(), st.booleans())  # current_only, include_*
GRID = st.integers(-24 * 60, 4 * 24 * 60).map(lambda m: BASE + timedelta(minutes=m))


class StoreMachine(RuleBasedStateMachine):
    """Random writes on a frozen clock, each followed by reads compared with the model."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FrozenClock(BASE)
        self.store = localmem.open(":memory:", clock=self.clock)
        self.model = Model()

    def teardown(self) -> None:
        self.store.close()

    # -- times

    def moments(self) -> list[datetime]:
        """Every recorded_at and interval end so far, the clock, and the instant before each."""
        seen = {self.clock()}
        for r in self.model.revs:
            seen.update(t for t in (r.recorded_at, r.valid_from, r.valid_to, r.expires_at) if t)
        return sorted(seen | {t - US for t in seen})

    def time(self, data: st.DataObject, label: str) -> datetime:
        """A time for a write: a valid_from so far, another moment so far, or any minute."""
        starts = sorted({r.valid_from for r in self.model.revs}) or [BASE]
        return data.draw(st.sampled_from(starts) | st.sampled_from(self.moments()) | GRID,
                         label=label)

    def flip(self, data: st.DataObject, label: str) -> bool:
        """A coin toss."""
        return data.draw(st.booleans(), label=f"{label}?")

    def maybe_time(self, data: st.DataObject, label: str) -> datetime | None:
        """None or a time for a write."""
        return self.time(data, label) if self.flip(data, label) else None

    def expires(self, data: st.DataObject, label: str, optional: bool = True,
                ) -> datetime | date | None:
        """An expiry: none (if optional), an instant, or a calendar date."""
        forms = ["none", "instant", "date"] if optional else ["instant", "date"]
        on = data.draw(st.sampled_from(forms), label=f"{label}?")
        if on == "date":
            return data.draw(st.dates(date(2026, 3, 1), date(2026, 3, 6)), label=label)
        return self.time(data, label) if on == "instant" else None

    def memory(self, data: st.DataObject) -> str:
        """An existing memory id, the newest most often."""
        return data.draw(st.sampled_from(self.model.ids()[::-1]), label="memory")  # newest first

    # -- writes

    def fingerprint(self) -> tuple[Any, ...]:
        """Everything the store holds, by revision id, to see that a refused write left it alone."""
        info = self.store.info()
        return (info.memories, info.revisions,
                *(r.rev_id for u in USERS for r in self.store.snapshot(u, known_at=END).revisions))

    def write(self, data: st.DataObject, store_op: Any, model_op: Any) -> None:
        """Run one write on both; they must agree on refusing it, and on what it appended."""
        before = self.fingerprint()
        try:
            got: Revision | LocalmemError = store_op()
        except LocalmemError as exc:
            got = exc
        now = self.model.now(self.clock())
        try:
            want = model_op(now, got)
        except Refused as refusal:
            assert isinstance(got, refusal.errors), f"model: {refusal.errors}, store: {got!r}"
            assert self.fingerprint() == before, "a refused write changed the store"
        else:
            assert isinstance(got, Revision), f"store refused a valid write: {got!r}"
            assert view(got) == view(want)
        self.check(data)

    @rule(minutes=st.integers(0, 24 * 60))
    def tick(self, minutes: int) -> None:
        """Move the clock forward (zero included: equal recorded_at values)."""
        self.clock.advance(minutes=minutes)

    @rule(minutes=st.integers(1, 3 * 24 * 60))
    def rewind(self, minutes: int) -> None:
        """Set the clock backwards: recorded_at must not follow it."""
        self.clock.set(self.clock() - timedelta(minutes=minutes))

    @rule(data=st.data(), user=st.sampled_from(USERS), text=st.sampled_from(TEXTS),
          key=st.sampled_from(KEYS), value=st.sampled_from(VALUES))
    def add(self, data: st.DataObject, user: str, text: str, key: str | None,
            value: int | None) -> None:
        """Assert a memory, maybe with a key, an explicit valid time and an expiry."""
        vf, vt = self.maybe_time(data, "valid_from"), self.maybe_time(data, "valid_to")
        exp = self.expires(data, "expires")
        self.write(
            data,
            lambda: self.store.add(text, user_id=user, tz=ZONES[user], valid_from=vf,
                                   valid_to=vt, expires=exp, key=key, value=value),
            lambda now, got: self.model.add(now, getattr(got, "memory_id", "-"), text, user, vf,
                                            vt, exp, key, value, None,
                                            getattr(got, "supersedes", None)),
        )

    @precondition(lambda self: self.model.revs)
    @rule(data=st.data(), user=st.sampled_from(USERS), text=st.sampled_from(TEXTS))
    def add_superseding(self, data: st.DataObject, user: str, text: str) -> None:
        """Assert a memory that explicitly supersedes another, maybe another user's."""
        old, vf = self.memory(data), self.maybe_time(data, "valid_from")
        self.write(
            data,
            lambda: self.store.add(text, user_id=user, tz=ZONES[user], supersedes=old,
                                   valid_from=vf),
            lambda now, got: self.model.add(now, getattr(got, "memory_id", "-"), text, user, vf,
                                            None, None, None, None, old, None),
        )

    @precondition(lambda self: self.model.revs)
    @rule(data=st.data(), text=st.sampled_from(TEXTS), value=st.sampled_from(VALUES))
    def supersede(self, data: st.DataObject, text: str, value: int | None) -> None:
        """Supersede a memory: the world changed."""
        old = self.memory(data)
        vf, vt = self.maybe_time(data, "valid_from"), self.maybe_time(data, "valid_to")
        exp = self.expires(data, "expires")
        self.write(
            data,
            lambda: self.store.supersede(old, text, valid_from=vf, valid_to=vt, expires=exp,
                                         value=value),
            lambda now, got: self.model.supersede(now, getattr(got, "memory_id", "-"), old, text,
                                                  vf, vt, exp, value),
        )

    @precondition(lambda self: self.model.revs)
    @rule(data=st.data())
    def correct(self, data: st.DataObject) -> None:
        """Correct some of text, value, valid_from and valid_to."""
        memory_id = self.memory(data)
        given: dict[str, Any] = {
            "text": data.draw(st.sampled_from(TEXTS) | st.just(UNSET), label="text"),
            "value": data.draw(st.sampled_from(VALUES) | st.just(UNSET), label="value"),
            "valid_from": self.time(data, "valid_from") if self.flip(data, "valid_from") else UNSET,
            "valid_to": data.draw(st.sampled_from([UNSET, None, "time"]), label="valid_to?"),
        }
        if given["valid_to"] == "time":
            given["valid_to"] = self.time(data, "valid_to")
        given = {k: v for k, v in given.items() if v is not UNSET}
        self.write(data, lambda: self.store.correct(memory_id, **given),
                   lambda now, got: self.model.correct(now, memory_id, **given))

    @precondition(lambda self: self.model.revs)
    @rule(data=st.data())
    def retract(self, data: st.DataObject) -> None:
        """Retract a memory."""
        memory_id = self.memory(data)
        self.write(data, lambda: self.store.retract(memory_id),
                   lambda now, got: self.model.retract(now, memory_id))

    @precondition(lambda self: self.model.revs)
    @rule(data=st.data())
    def expire(self, data: st.DataObject) -> None:
        """Set or move a memory's expiry, to an instant or a local date."""
        memory_id, on = self.memory(data), self.expires(data, "on", optional=False)
        assert on is not None
        self.write(data, lambda: self.store.expire(memory_id, on),
                   lambda now, got: self.model.expire(now, memory_id, on))

    # -- reads

    def check(self, data: st.DataObject) -> None:
        """Compare get, read, snapshot and history at a few (known_at, valid_at) points."""
        ids = self.model.ids()
        for memory_id in ids:
            assert store_history(self.store.history(memory_id)) == self.model.history(memory_id)
        times = st.sampled_from([*self.moments(), END]) | GRID
        for _ in range(3):
            known = data.draw(times, label="known_at")
            mode = data.draw(st.sampled_from(["split", "known only", "as_of"]), label="axes")
            if mode == "split":
                valid = data.draw(times, label="valid_at")
                axes: dict[str, Any] = {"known_at": known, "valid_at": valid}
            else:  # valid_at defaults to known_at; as_of sets both
                valid, axes = known, {"known_at" if mode == "known only" else "as_of": known}
            for memory_id in ids:
                assert (store_view(self.store.get(memory_id, **axes))
                        == model_view(self.model.known(memory_id, known), valid))
                assert (store_history(self.store.history(memory_id, known_at=known))
                        == self.model.history(memory_id, known))
            combos = data.draw(st.lists(FLAGS, min_size=1, max_size=3, unique=True), label="flags")
            for user, flags in itertools.product(USERS, [(True, False, False), *combos]):
                got = self.store.read(user, **axes, current_only=flags[0],
                                      include_expired=flags[1], include_retracted=flags[2])
                want = self.model.read(user, known, valid, *flags)
                assert [r.valid_from for r in got] == sorted(r.valid_from for r in got)
                assert by_id(map(store_view, got)) == by_id(model_view(r, valid) for r in want)
            for user in USERS:
                snap = self.store.snapshot(user, known_at=known)
                revs = self.model.snapshot(user, known)
                stamps = [r.recorded_at for r in snap.revisions]
                assert stamps == sorted(stamps)  # oldest first
                assert ({(r.memory_id, r.version) for r in snap.revisions}
                        == {(r.memory_id, r.version) for r in revs})
                latest = [self.model.known(m, known) for m in self.model.ids(user)]
                assert (by_id(map(store_view, snap.memories))
                        == by_id(model_view(r, known) for r in latest if r))


def test_store_matches_model() -> None:
    """Random writes and clocks leave the store agreeing with the reference model on every read."""
    run_state_machine_as_test(StoreMachine, settings=settings(stateful_step_count=40))


def test_store_matches_model_when_key_heads_are_found_past_a_tiny_window(monkeypatch: Any) -> None:
    """The same, with the key-head lookup's window at one revision, so new key values take both
    paths (found among the latest starts, and the whole key's history) all the time."""
    monkeypatch.setattr(localmem.core.ledger, "KEY_HEAD_WINDOW", 1)
    run_state_machine_as_test(StoreMachine, settings=settings(stateful_step_count=40))
