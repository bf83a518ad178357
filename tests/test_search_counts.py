"""The counts a search keeps from the full-text index: reused while the store is unchanged,
forgotten as soon as anything is written, by this connection or another."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import localmem
from localmem.search.counts import counts_for
from localmem.testing import FrozenClock

AS_OF = datetime(2025, 6, 1, tzinfo=UTC)


def _coffee_store(path: Path | str, clock: FrozenClock) -> localmem.Store:
    """Sam's 150 lines about coffee (more than one seek returns, so a search counts them in SQL)
    and a few about tea, before AS_OF."""
    store = localmem.open(path, clock=clock)
    items = [
        {"text": f"coffee number {i} with {'tea' if i % 10 == 0 else 'milk'}", "user_id": "sam", "tz": "UTC"}
        for i in range(150)
    ]
    store.add_many(items, resolve=False)
    return store


def _seen(hits: list[localmem.Hit]) -> list[tuple[str | None, float, float | None]]:
    return [(h.revision.text, h.score, h.bm25) for h in hits]


def _read(answers: list[int], value: int) -> int:
    answers.append(value)
    return value


def test_an_answer_is_read_once_while_the_store_is_unchanged(tmp_path: Path) -> None:
    store = _coffee_store(tmp_path / "m.db", FrozenClock("2025-05-01T00:00:00Z"))
    reads: list[int] = []
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 1)) == 1
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 2)) == 1
    assert reads == [1]


def test_a_write_by_this_connection_forgets_every_answer(tmp_path: Path) -> None:
    store = _coffee_store(tmp_path / "m.db", FrozenClock("2025-05-01T00:00:00Z"))
    reads: list[int] = []
    counts_for(store.connection).get(("q",), lambda: _read(reads, 1))
    store.add("one more coffee", user_id="sam", tz="UTC")
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 2)) == 2
    assert reads == [1, 2]


def test_a_logged_search_keeps_the_answers_its_usage_does_not_change(tmp_path: Path) -> None:
    store = _coffee_store(tmp_path / "m.db", FrozenClock("2025-05-01T00:00:00Z"))
    reads: list[int] = []
    counts_for(store.connection).get(("q",), lambda: _read(reads, 1))
    assert store.search("coffee", user_id="sam")  # logged: appends usage rows
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 2)) == 1
    assert reads == [1]


def test_a_rolled_back_write_forgets_the_answers_read_while_it_was_open(tmp_path: Path) -> None:
    """Answers read inside a transaction that is then rolled back are forgotten; so are they when
    another write takes the rolled-back revision's number."""
    store = _coffee_store(tmp_path / "m.db", FrozenClock("2025-05-01T00:00:00Z"))
    reads: list[int] = []
    try:
        with store.batch():
            store.add("coffee that never was", user_id="sam", tz="UTC")
            counts_for(store.connection).get(("q",), lambda: _read(reads, 1))
            raise RuntimeError("abandon the batch")
    except RuntimeError:
        pass
    store.add("coffee that was", user_id="sam", tz="UTC")
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 2)) == 2


def test_a_commit_by_another_connection_forgets_every_answer(tmp_path: Path) -> None:
    clock = FrozenClock("2025-05-01T00:00:00Z")
    store = _coffee_store(tmp_path / "m.db", clock)
    other = localmem.open(tmp_path / "m.db", clock=clock)
    reads: list[int] = []
    counts_for(store.connection).get(("q",), lambda: _read(reads, 1))
    other.add("coffee on the other device", user_id="sam", tz="UTC")
    assert counts_for(store.connection).get(("q",), lambda: _read(reads, 2)) == 2
    other.close()


def test_after_an_erasure_a_search_counts_as_a_fresh_connection_does(tmp_path: Path) -> None:
    """The same question as of the same time, asked before and after an erasure: the second
    answer is the one a connection that never searched gives (the erased line no longer counts)."""
    clock = FrozenClock("2025-05-01T00:00:00Z")
    store = _coffee_store(tmp_path / "m.db", clock)
    clock.set(AS_OF + timedelta(days=1))
    before = store.search("coffee tea", user_id="sam", as_of=AS_OF, log=False)
    again = store.search("coffee tea", user_id="sam", as_of=AS_OF, log=False)
    assert _seen(again) == _seen(before)
    store.erase(before[0].revision.memory_id)
    after = store.search("coffee tea", user_id="sam", as_of=AS_OF, log=False)
    fresh = localmem.open(tmp_path / "m.db", clock=clock)
    expected = fresh.search("coffee tea", user_id="sam", as_of=AS_OF, log=False)
    assert _seen(after) == _seen(expected)
    assert [h.bm25 for h in after[:3]] != [h.bm25 for h in before[1:4]]  # the counts did change
    fresh.close()
