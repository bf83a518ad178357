"""add_many: many memories in one write, as add would write them, appended in bulk."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from embedders import HashEmbedder

import localmem
from localmem.testing import FrozenClock

#: Fields that differ between two stores writing the same thing: ids, the device.
_OWN = {"rev_id", "memory_id", "origin"}

ITEMS: list[dict[str, Any]] = [
    {"text": "I went to the dentist yesterday", "user_id": "sam", "tz": "Europe/Berlin",
     "source": {"session": "s1"}},
    {"text": "Prefers the window seat", "user_id": "sam", "kind": "preference",
     "attributes": {"topic": "travel"}, "value": {"seat": "window"}},
    {"text": "Ann's passport", "user_id": "ann", "valid_from": "2025-05", "expires": "2026-04-01",
     "reason": "told us"},
    {"text": "Booked the trip", "user_id": "ann", "observed_at": "2026-03-01T09:00:00Z",
     "valid_from": "2026-02-10", "valid_to": "2026-02-14", "precision": "week"},
]


def _same(a: localmem.Revision, b: localmem.Revision) -> dict[str, tuple[Any, Any]]:
    return {f.name: (getattr(a, f.name), getattr(b, f.name)) for f in fields(a)
            if f.name not in _OWN and getattr(a, f.name) != getattr(b, f.name)}


@pytest.fixture
def twin(clock: FrozenClock) -> Iterator[localmem.Store]:
    s = localmem.open(":memory:", clock=clock)
    yield s
    s.close()


def test_each_item_is_written_as_add_would_write_it(store: localmem.Store, twin: localmem.Store) -> None:
    """Same arguments, same clock: add_many's revisions equal add's field by field; get reads them back."""
    with twin.batch():
        added = [twin.add(**item) for item in ITEMS]
    many = store.add_many(ITEMS)
    assert [m.revision.text for m in many] == [a.text for a in added]
    for m, a in zip(many, added, strict=True):
        assert _same(m.revision, a) == {}
        assert store.get(m.memory_id) == m.revision
        assert m.revision.memory_id == m.memory_id and m.revision.rev_id == m.rev_id
    first = many[0].revision
    assert first.valid_source == "resolved" and first.source["message"] == ITEMS[0]["text"]
    assert store.doctor().ok


def test_the_hashes_are_the_ones_add_computes(store: localmem.Store, clock: FrozenClock) -> None:
    """doctor recomputes every hash and the local chain: bulk rows and one-row writes interleave in it."""
    store.add("before", user_id="sam")
    store.add_many([{"text": f"line {i}", "user_id": "sam"} for i in range(5)])
    clock.advance(minutes=1)
    store.add("after", user_id="sam")
    report = store.doctor()
    assert report.ok, [c for c in report.checks if not c.ok]
    seqs = [r[0] for r in store.connection.execute("SELECT seq FROM revisions ORDER BY seq")]
    assert seqs == list(range(1, 8))


def test_keyed_items_supersede_in_their_place(store: localmem.Store, clock: FrozenClock) -> None:
    """An item with a key takes add's path in its place in the order; its neighbours still go in bulk."""
    old = store.add("lives in Porto", user_id="sam", key="home_city")
    clock.advance(days=1)
    out = store.add_many([{"text": "a", "user_id": "sam"},
                          {"text": "lives in Lisbon", "user_id": "sam", "key": "home_city"},
                          {"text": "b", "user_id": "sam", "supersedes": None}])
    assert out[1].revision.supersedes == old.memory_id
    after = store.get(old.memory_id)
    assert after is not None and after.superseded_by == out[1].memory_id
    texts = [t for (t,) in store.connection.execute(
        "SELECT c.text FROM revisions AS r JOIN content AS c ON c.rev_seq = r.seq ORDER BY r.seq")]
    assert texts == ["lives in Porto", "a", "lives in Lisbon", "lives in Porto", "b"]
    assert store.doctor().ok


def test_a_bad_item_refuses_the_whole_call_naming_it(store: localmem.Store) -> None:
    """Every item is checked before anything is written: the error names the item, the file is unchanged."""
    store.add("kept", user_id="sam")
    bad: list[dict[str, Any]] = [{"text": "fine", "user_id": "sam"}, {"text": "  ", "user_id": "sam"}]
    with pytest.raises(localmem.InvalidInputError, match=r"items\[1\]: text="):
        store.add_many(bad)
    with pytest.raises(localmem.InvalidInputError, match=r"items\[0\].*colour"):
        store.add_many([{"text": "x", "user_id": "sam", "colour": "red"}])
    with pytest.raises(localmem.InvalidInputError, match=r"items\[0\] needs text and user_id"):
        store.add_many([{"text": "x"}])
    with pytest.raises(localmem.InvalidInputError, match=r"items\[0\]: value="):
        store.add_many([{"text": "x", "user_id": "sam", "value": {1, 2}}])
    with pytest.raises(localmem.InvalidInputError, match=r"items\[1\]: user_id=\['sam'\] is not text"):
        store.add_many([{"text": "x", "user_id": "sam"}, {"text": "y", "user_id": ["sam"]}])
    with pytest.raises(localmem.InvalidInputError, match="not a list of mappings"):
        store.add_many("text")  # type: ignore[arg-type]
    with pytest.raises(localmem.InvalidInputError, match="resolve="):
        store.add_many([], resolve="yes")  # type: ignore[arg-type]
    assert store.connection.execute("SELECT count(*) FROM revisions").get == 1


def test_a_refused_key_value_rolls_the_call_back(store: localmem.Store) -> None:
    """A write refused half way (a key value that overlaps the current one) leaves nothing of the call."""
    store.add("lives in Porto", user_id="sam", key="home_city", valid_from="2026-03-01")
    with pytest.raises(localmem.InvalidIntervalError):
        store.add_many([{"text": "a", "user_id": "sam"},
                        {"text": "lives in Lisbon", "user_id": "sam", "key": "home_city",
                         "valid_from": "2026-02-01"}])
    assert store.connection.execute("SELECT count(*) FROM revisions").get == 1


def test_a_zone_given_for_a_user_holds_for_the_users_later_items(store: localmem.Store) -> None:
    """As with add: the zone last given for a user is the one the user's next items are read in."""
    out = store.add_many([{"text": "a", "user_id": "sam", "tz": "Asia/Tokyo"},
                          {"text": "on 2026-03-01", "user_id": "sam", "valid_from": "2026-03-01"},
                          {"text": "c", "user_id": "ann"}])
    assert [o.revision.tz for o in out] == ["Asia/Tokyo", "Asia/Tokyo", "UTC"]
    assert out[1].revision.valid_from.isoformat() == "2026-02-28T15:00:00+00:00"
    assert store.user_zone("sam") == "Asia/Tokyo"


def test_bulk_rows_are_searchable_and_erasable(store: localmem.Store) -> None:
    """The full-text index follows the bulk rows; an erase takes their words out of it again."""
    out = store.add_many([{"text": "hill repeats on Tuesday", "user_id": "sam"},
                          {"text": "tempo run", "user_id": "sam"}], resolve=False)
    [hit] = store.search("hill repeats", user_id="sam", log=False)
    assert hit.revision.memory_id == out[0].memory_id
    store.erase(out[0].memory_id)
    assert store.search("hill repeats", user_id="sam", log=False) == []
    assert store.doctor().ok


def test_inside_a_batch_it_commits_with_the_batch(file_store: localmem.Store) -> None:
    """Nested in batch(), the items are part of the batch: rolled back with it."""
    with pytest.raises(RuntimeError), file_store.batch():
        file_store.add_many([{"text": "gone", "user_id": "sam"}])
        raise RuntimeError("the app changed its mind")
    assert file_store.connection.execute("SELECT count(*) FROM revisions").get == 0
    with file_store.batch():
        [kept] = file_store.add_many([{"text": "kept", "user_id": "sam"}])
    assert file_store.get(kept.memory_id) is not None
    assert file_store.add_many([]) == []


def test_an_item_refused_inside_a_batch_leaves_the_chain_whole(store: localmem.Store) -> None:
    """A bad ``expires`` is found while the rows are built, inside batch()'s transaction: the call
    is refused and writes nothing, and the batch's later writes still chain onto the file's head."""
    store.add("before", user_id="sam")
    with store.batch():
        with pytest.raises(localmem.InvalidTimeError, match="not a date"):
            store.add_many([{"text": "fine", "user_id": "sam"},
                            {"text": "bad", "user_id": "sam", "expires": "not a date"}])
        store.add("after", user_id="sam")
    assert store.connection.execute("SELECT count(*) FROM revisions").get == 2
    assert store.doctor().ok


def test_an_embedder_embeds_every_bulk_row(clock: FrozenClock, tmp_path: Path) -> None:
    """With an embedder, each item's text gets its vector in the call's own transaction."""
    s = localmem.open(tmp_path / "v.db", clock=clock, embedder=HashEmbedder())
    try:
        s.add_many([{"text": f"note {i}", "user_id": "sam"} for i in range(3)])
        assert s.connection.execute("SELECT count(*) FROM embeddings").get == 3
        assert s.doctor().ok
    finally:
        s.close()


def test_the_result_is_light_until_its_revision_is_read(store: localmem.Store) -> None:
    """Added carries the ids; .revision is built once, then kept."""
    [a] = store.add_many([{"text": "x", "user_id": "sam"}])
    assert repr(a) == f"Added(memory_id={a.memory_id!r}, rev_id={a.rev_id!r})"
    assert a.revision is a.revision


#: The stored columns that differ between two stores writing the same thing: ids, the device, and
#: the hashes that cover them.
_ROW = ("SELECT r.version, r.op, r.user_id, r.valid_from, r.valid_to, r.precision, r.valid_source,"
        " r.observed_at, r.recorded_at, r.tz, r.expires_at, r.retracted, r.corrected, r.hlc, r.arrived_at,"
        " hex(r.content_hash), m.kind, m.key, m.created_at, c.text, c.value, c.attributes, c.source, c.reason"
        " FROM revisions AS r JOIN memories AS m USING (memory_id) JOIN content AS c ON c.rev_seq = r.seq"
        " ORDER BY r.seq")

MIXED: list[dict[str, Any]] = [
    {"text": text, "user_id": f"u{i % 3}", "source": {"turn": i} if i % 4 else None,
     **({"tz": "America/New_York"} if i == 5 else {}), **({"kind": "plan"} if i % 7 == 0 else {})}
    for i, text in enumerate(
        ["dinner next Friday at 7pm", "no time here", "I moved to Lisbon on Sept 1", "ok then",
         "from Monday to Wednesday I am away", "see you tomorrow morning", "we met 3 days ago",
         "until 09:00", "nothing", "last week I started running"] * 30)
]


@pytest.mark.parametrize("workers", [0, 1])
def test_the_stored_rows_are_the_rows_add_stores(store: localmem.Store, twin: localmem.Store,
                                                  workers: int) -> None:
    """300 items with and without time phrases, read here or shared with a reader process: the file
    holds, column by column, what add item by item writes (but ids and the hashes over them)."""
    with twin.batch():
        for item in MIXED:
            twin.add(**item)
    store.add_many(MIXED, workers=workers)
    mine, theirs = store.connection.execute(_ROW).fetchall(), twin.connection.execute(_ROW).fetchall()
    assert len(mine) == len(MIXED) and mine == theirs
    assert sum(row[6] == "resolved" for row in mine) > len(MIXED) // 3
    assert store.doctor().ok


def test_a_bad_item_among_many_names_itself_and_writes_nothing(store: localmem.Store) -> None:
    """A batch big enough to share its reading: the bad item is still named, before anything is written."""
    bad = [*MIXED, {"text": "x", "user_id": "sam", "observed_at": "yesterday-ish"}]
    with pytest.raises(localmem.InvalidTimeError, match=rf"items\[{len(MIXED)}\]: observed_at="):
        store.add_many(bad, workers=1)
    with pytest.raises(localmem.InvalidInputError, match="workers="):
        store.add_many(MIXED, workers=-1)
    assert store.connection.execute("SELECT count(*) FROM revisions").get == 0


def test_by_default_a_big_batch_starts_no_reader_process(store: localmem.Store,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Reader processes are opt-in: a library starts no process unasked, however idle the machine."""
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    started: list[object] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    store.add_many(MIXED)
    assert started == [] and store.connection.execute("SELECT count(*) FROM revisions").get == len(MIXED)


def test_a_text_said_again_in_the_batch_is_read_once(store: localmem.Store, twin: localmem.Store,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Ten texts said thirty times by three users, one of whom moves to New York: each (text, zone)
    is read once, and the rows are still add's."""
    from localmem.core import phrases

    read: list[int] = []
    real = phrases.read_chunk

    def counted(tasks: Any) -> Any:
        read.append(len(tasks))
        return real(tasks)

    monkeypatch.setattr(phrases, "read_chunk", counted)
    store.add_many(MIXED)
    zones = {"u0": "UTC", "u1": "UTC", "u2": "UTC"}
    distinct = set()
    for item in MIXED:
        zones[item["user_id"]] = item.get("tz", zones[item["user_id"]])
        distinct.add((item["text"], zones[item["user_id"]]))
    assert read == [len(distinct)] and len(distinct) < len(MIXED)
    with twin.batch():
        for item in MIXED:
            twin.add(**item)
    assert store.connection.execute(_ROW).fetchall() == twin.connection.execute(_ROW).fetchall()
