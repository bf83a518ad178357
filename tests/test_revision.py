"""Revisions as reads return them: get's lazily decoded revision behaves as an eager one."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from datetime import timedelta

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock


def test_get_returns_a_revision_indistinguishable_from_an_eager_one(store: localmem.Store) -> None:
    """Equality both ways, hash, repr, to_dict, asdict, pickling, copying: as the revision read() returns."""
    m = store.add("Booked the dentist for tomorrow", user_id="sam", attributes={"topic": "health"},
                  value={"fee": 40}, expires="2026-12-31")
    got = store.get(m.memory_id)
    [read] = store.read("sam", current_only=False)
    assert got is not None and isinstance(got, localmem.Revision)
    assert got == read and read == got and got == m and not got != read
    assert repr(got) == repr(read) and got.to_dict() == read.to_dict()
    assert dataclasses.asdict(got) == dataclasses.asdict(read)
    assert pickle.loads(pickle.dumps(got)) == read and copy.deepcopy(got) == read
    assert got.valid == read.valid and got.valid_at(read.valid_from)
    plain = store.add("no dicts here", user_id="ann", resolve=False)
    plain_got = store.get(plain.memory_id)
    assert plain_got is not None and hash(plain_got) == hash(plain) and {plain: 1}[plain_got] == 1


def test_a_lazy_revision_is_frozen_and_replace_gives_an_eager_copy(store: localmem.Store) -> None:
    """Assignment raises as on any Revision; dataclasses.replace builds an ordinary one."""
    m = store.add("likes tea", user_id="sam")
    got = store.get(m.memory_id)
    assert got is not None
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.text = "likes coffee"  # type: ignore[misc]
    changed = dataclasses.replace(got, stale=True)
    assert type(changed) is localmem.Revision and changed.stale and changed.text == "likes tea"
    assert not got.stale


def test_its_flags_are_the_reads(store: localmem.Store, clock: FrozenClock) -> None:
    """expired is judged at the read's valid_at; erased from the tombstone."""
    m = store.add("parking permit", user_id="sam", expires="2026-03-10")
    before = store.get(m.memory_id, valid_at="2026-03-05")
    after = store.get(m.memory_id, valid_at="2026-04-01")
    assert before is not None and after is not None and not before.expired and after.expired
    clock.advance(days=1)
    store.erase(m.memory_id)
    gone = store.get(m.memory_id)
    assert gone is not None and gone.erased and gone.text is None



def test_what_a_write_returns_behaves_as_an_eager_revision(store: localmem.Store, clock: FrozenClock) -> None:
    """add, correct and retract return the revision over the row they wrote, decoded when read:
    equal to the read at its recorded time, frozen, pickled and replaced as an eager one."""
    added = store.add("Booked the dentist for tomorrow", user_id="sam", value={"fee": 40},
                      attributes={"topic": "health"}, expires="2026-03-01")
    clock.advance(hours=1)
    corrected = store.correct(added.memory_id, value={"fee": 45})
    clock.advance(hours=1)
    retracted = store.retract(added.memory_id, "cancelled")
    for rev in (added, corrected, retracted):
        read = store.get(rev.memory_id, known_at=rev.recorded_at, valid_at=rev.recorded_at)
        assert isinstance(rev, localmem.Revision) and rev == read and read == rev
        assert repr(rev) == repr(read) and rev.to_dict() == read.to_dict()
        assert pickle.loads(pickle.dumps(rev)) == read and copy.deepcopy(rev) == read
        with pytest.raises(dataclasses.FrozenInstanceError):
            rev.text = "other"  # type: ignore[misc]
        assert type(dataclasses.replace(rev, reason="r")) is localmem.Revision
    assert corrected.value == {"fee": 45} and corrected.version == 2 and corrected.corrected
    assert retracted.retracted and retracted.reason == "cancelled" and retracted.expires_at is not None
    assert retracted.expired == (retracted.expires_at <= retracted.recorded_at)
    plain = store.add("no dicts here", user_id="ann", resolve=False)
    assert hash(plain) == hash(store.get(plain.memory_id)) and plain.valid_source == "assumed"
    past = store.add("old permit", user_id="ann", expires="2020-01-01T00:00:00Z", resolve=False)
    assert past.expired and past.expires_at is not None

#: One write of a random history: (what, which memory (an index into those made so far), hours later).
WRITES = st.lists(
    st.tuples(st.sampled_from(["add", "add keyed", "correct", "retract", "expire", "erase", "derive"]),
              st.integers(0, 5), st.integers(0, 30)),
    min_size=1, max_size=14)


@settings(max_examples=examples(25), deadline=None)
@given(writes=WRITES, probes=st.lists(st.tuples(st.integers(0, 15), st.integers(-40, 400)), min_size=1,
                                      max_size=6))
def test_get_is_the_eager_reads_revision_on_random_histories(
        writes: list[tuple[str, int, int]], probes: list[tuple[int, int]]) -> None:
    """At any known_at and valid_at, get (its datetime fast path and its general path alike) returns the
    revision an eager read of the same moment builds: snapshot's, field for field (stale, erased, kind
    and key included), with expired judged at the get's valid_at; None where snapshot has no memory."""
    clock = FrozenClock("2026-03-02T08:00:00Z")
    with localmem.open(":memory:", clock=clock) as store:
        made: list[localmem.Revision] = []
        moments = [clock()]
        for i, (what, pick, hours) in enumerate(writes):
            clock.advance(hours=hours, seconds=1)
            moments.append(clock())
            target = made[pick % len(made)].memory_id if made else None
            try:
                if what.startswith("add") or target is None:
                    made.append(store.add(f"note {i}", user_id="sam", kind="note", value={"n": i},
                                          key="city" if what == "add keyed" else None, resolve=False,
                                          expires=clock() + timedelta(hours=hours) if i % 3 == 0 else None))
                elif what == "correct":
                    store.correct(target, text=f"note {i}, corrected")
                elif what == "retract":
                    store.retract(target)
                elif what == "expire":
                    store.expire(target, clock() + timedelta(hours=pick))
                elif what == "erase":
                    store.erase(target)
                else:
                    made.append(store.derive(f"summary {i}", from_=[made[pick % len(made)]], user_id="sam"))
            except localmem.LocalmemError:
                pass  # refused (an erased memory takes no writes): the history goes on without it
        for at, hours in probes:
            known = moments[at % len(moments)]
            eager = {r.memory_id: r for r in store.snapshot("sam", known_at=known).memories}
            for memory_id in {m.memory_id for m in made}:
                seen = eager.get(memory_id)
                end = None if seen is None else seen.expires_at
                # valid_at anywhere, and at the expiry and just before it (where expired flips)
                edges = [] if end is None else [end, end - timedelta(microseconds=1)]
                for valid in [known + timedelta(hours=hours), *edges]:
                    fast = store.get(memory_id, known_at=known, valid_at=valid)
                    general = store.get(memory_id, known_at=known.isoformat(), valid_at=valid.isoformat())
                    if seen is None:
                        assert fast is None and general is None
                        continue
                    want = dataclasses.replace(
                        seen, expired=seen.expires_at is not None and seen.expires_at <= valid)
                    assert fast == want and general == want and repr(fast) == repr(want)
                    assert fast is not None and fast.to_dict() == want.to_dict()


def test_a_read_revision_is_a_plain_frozen_revision_equal_to_one_built_by_its_constructor(
        store: localmem.Store) -> None:
    """read()'s eager revisions (built slot by slot, without __init__) are Revisions in every way."""
    store.add("Booked the dentist for tomorrow", user_id="sam", attributes={"topic": "health"},
              value={"fee": 40}, expires="2026-12-31")
    [read] = store.read("sam", current_only=False)
    assert type(read) is localmem.Revision
    built = localmem.Revision(**{f.name: getattr(read, f.name) for f in dataclasses.fields(read)})
    assert read == built and repr(read) == repr(built) and read.to_dict() == built.to_dict()
    assert pickle.loads(pickle.dumps(read)) == built and copy.copy(read) == built
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.text = "cancelled"  # type: ignore[misc]
