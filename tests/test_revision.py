"""Revisions as reads return them: get's lazily decoded revision behaves as an eager one."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

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
