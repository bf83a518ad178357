"""The semantic hook's storage half: vectors written with content, read nearest-first as of a time.

With an embedder, every revision with content gets a vector of its text in the
write's own transaction; vectors are immutable like content and go with it on
erase; ``nearest`` compares a query's vector with one user's, as known at a
time, through sqlite-vec's ``vec_distance_cosine``. The embedder is the hashed
bag of words in ``tests/embedders.py``: deterministic, no model.
"""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import apsw
import pytest
from embedders import HashEmbedder

import localmem
from localmem.core import db as _db
from localmem.core import embedding
from localmem.core.db import transaction
from localmem.core.embedding import nearest, pack, unpack
from localmem.testing import FrozenClock
from localmem.time.clock import from_micros, to_micros

T0 = "2026-03-02T08:00:00Z"


@pytest.fixture
def embedder() -> HashEmbedder:
    """A fresh hashed bag-of-words embedder, 64 dimensions."""
    return HashEmbedder()


@pytest.fixture
def vstore(clock: FrozenClock, embedder: HashEmbedder) -> Iterator[localmem.Store]:
    """An in-memory store with the test embedder."""
    s = localmem.open(":memory:", clock=clock, embedder=embedder)
    yield s
    s.close()


@pytest.fixture
def vfile(db_path: Path, clock: FrozenClock, embedder: HashEmbedder) -> Iterator[localmem.Store]:
    """A store in a file with the test embedder."""
    s = localmem.open(db_path, clock=clock, embedder=embedder)
    yield s
    s.close()


def now(store: localmem.Store) -> int:
    """The store's clock now, in microseconds."""
    return to_micros(store._ledger.clock())


def ids(found: Sequence[tuple[int, str, float]]) -> list[str]:
    """The memory ids of nearest()'s rows, in order."""
    return [memory_id for _, memory_id, _ in found]


def rev_seq(store: localmem.Store, rev: localmem.Revision) -> int:
    """The local seq of a revision (what embeddings and nearest() key on)."""
    return int(store.connection.execute("SELECT seq FROM revisions WHERE rev_id = ?", (rev.rev_id,)).get)


def vectors(store: localmem.Store, model: str | None = None) -> dict[int, bytes]:
    """rev_seq -> stored vector, for one model (default: every row)."""
    sql = "SELECT rev_seq, vector FROM embeddings" + ("" if model is None else " WHERE model = ?")
    out: dict[int, bytes] = {}
    for seq, vector in store.connection.execute(sql, () if model is None else (model,)):
        assert isinstance(seq, int) and isinstance(vector, bytes)
        out[seq] = vector
    return out


def text_of(rev: localmem.Revision) -> str:
    """The revision's words (present: none of these memories is erased)."""
    assert rev.text is not None
    return rev.text


def count(store: localmem.Store, table: str) -> int:
    """Rows in a table."""
    return int(store.connection.execute(f"SELECT count(*) FROM {table}").get)


# -- the protocol and the extension -------------------------------------------------------


def test_embedder_protocol_is_exported_and_met_by_plain_attributes(embedder: HashEmbedder) -> None:
    """localmem.Embedder is exported, and a class with name, dimensions and embed() satisfies it."""
    assert "Embedder" in localmem.__all__
    assert isinstance(embedder, localmem.Embedder)
    assert localmem.Embedder is embedding.Embedder


@pytest.mark.parametrize(("name", "dimensions"), [("", 64), (None, 64), ("m", 0), ("m", "64"), ("m", True)])
def test_a_malformed_embedder_is_refused_at_open(name: object, dimensions: object) -> None:
    """An embedder without a name or with non-positive/non-int dimensions raises InvalidInputError at open."""
    bad = HashEmbedder()
    bad.name, bad.dimensions = name, dimensions  # type: ignore[assignment]  # deliberately wrong
    with pytest.raises(localmem.InvalidInputError):
        localmem.open(":memory:", embedder=bad)


def test_missing_sqlite_vec_names_the_extra(monkeypatch: pytest.MonkeyPatch, embedder: HashEmbedder) -> None:
    """Without sqlite-vec, opening with an embedder raises EmbeddingUnavailableError naming the vec extra."""
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)  # import now raises ImportError
    with pytest.raises(localmem.EmbeddingUnavailableError, match=r"localmem\[vec\]") as info:
        localmem.open(":memory:", embedder=embedder)
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, localmem.LocalmemError)


def test_without_an_embedder_nothing_loads_sqlite_vec(store: localmem.Store) -> None:
    """A store opened without an embedder stores no vectors and has not loaded the extension."""
    store.add("Ann lives in Lisbon", user_id="ann")
    assert count(store, "embeddings") == 0
    with pytest.raises(apsw.SQLError, match="no such function"):
        store.connection.execute("SELECT vec_version()").fetchall()


def test_importing_and_using_localmem_without_an_embedder_never_imports_sqlite_vec() -> None:
    """In a fresh interpreter, importing localmem, writing and searching lexically never import sqlite_vec."""
    code = ("import sys, localmem; s = localmem.open(':memory:'); s.add('Ann swims', user_id='ann');"
            " s.search('swims', user_id='ann'); print('sqlite_vec' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=60)
    assert done.stdout.strip() == "False"


# -- writing ------------------------------------------------------------------------------


def test_every_write_that_creates_content_stores_its_vector(
    vstore: localmem.Store, embedder: HashEmbedder, clock: FrozenClock
) -> None:
    """add, correct, supersede, expire and retract each leave a vector for their revision, of its text."""
    a = vstore.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05-01")
    b = vstore.add("Sam likes green tea", user_id="sam")
    clock.advance(minutes=1)
    c = vstore.correct(b.memory_id, text="Sam likes jasmine tea")
    clock.advance(minutes=1)
    d = vstore.supersede(a.memory_id, "Sam lives in Berlin", valid_from="2025-09-01")
    clock.advance(minutes=1)
    e = vstore.expire(b.memory_id, "2026-12-31")
    f = vstore.retract(d.memory_id)

    stored = vectors(vstore)
    all_seqs = [int(s) for (s,) in vstore.connection.execute("SELECT rev_seq FROM content")]
    assert sorted(stored) == sorted(all_seqs)  # the superseded follow-up revision too
    for rev in (a, b, c, d, e, f):
        assert unpack(stored[rev_seq(vstore, rev)]) == pytest.approx(embedder.vector(text_of(rev)), abs=1e-6)
    # expire, retract and 'superseded' keep the text: their vectors were reused, not re-embedded.
    assert sorted(t for call in embedder.calls for t in call) == sorted(
        ["Sam lives in Lisbon", "Sam likes green tea", "Sam likes jasmine tea", "Sam lives in Berlin"])


def test_vectors_are_float32_little_endian(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """A stored vector is dimensions*4 bytes: the embedder's floats packed '<f'."""
    rev = vstore.add("Ann runs every morning", user_id="ann")
    blob = vectors(vstore)[rev_seq(vstore, rev)]
    assert len(blob) == 4 * embedder.dimensions
    assert blob == pack(embedder.vector(text_of(rev)), embedder.dimensions, what="v")
    row = vstore.connection.execute(
        "SELECT model, memory_id, user_id, recorded_at, embedded_at FROM embeddings").fetchone()
    recorded = to_micros(rev.recorded_at)
    assert row == (embedder.name, rev.memory_id, "ann", recorded, recorded)  # embedded as it was written


def test_add_messages_embeds_in_batched_calls(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """A 150-message import embeds its distinct texts in calls of at most BATCH_SIZE, in its transaction."""
    messages = [{"role": "user", "content": f"note number {i} about topic {i % 7}",
                 "sent_at": "2026-03-01T10:00:00Z"} for i in range(150)]
    messages.append({"role": "user", "content": "note number 0 about topic 0",
                     "sent_at": "2026-03-01T11:00:00Z"})
    revs = vstore.add_messages(messages, user_id="sam", tz="UTC")
    assert len(revs) == 151
    assert count(vstore, "embeddings") == 151
    assert [len(c) for c in embedder.calls] == [64, 64, 22]  # 150 distinct texts: the repeat is reused
    assert max(len(c) for c in embedder.calls) <= embedding.BATCH_SIZE


def test_a_batch_embeds_once_at_its_end(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """Writes in store.batch() are embedded together, in one call, when the batch commits."""
    with vstore.batch():
        for word in ("apples", "pears", "plums"):
            vstore.add(f"Ann bought {word}", user_id="ann")
        assert embedder.calls == []
    assert len(embedder.calls) == 1 and len(embedder.calls[0]) == 3
    assert count(vstore, "embeddings") == 3


class Failing(HashEmbedder):
    """Raises on every call."""

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        raise RuntimeError("model server down")


class Short(HashEmbedder):
    """Returns vectors one number short of its dimensions."""

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        return [self.vector(t)[:-1] for t in texts]


class TooFew(HashEmbedder):
    """Returns one vector fewer than it was given texts."""

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        vectors: list[Sequence[float]] = [self.vector(t) for t in texts]
        return vectors[1:]


class NotFinite(HashEmbedder):
    """Returns a NaN in every vector."""

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        return [[float("nan")] + self.vector(t)[1:] for t in texts]


@pytest.mark.parametrize(("bad", "match"), [
    (Failing(), "model server down"), (Short(), "63 numbers: expected 64"),
    (TooFew(), "returned 1 vectors for 2 texts"), (NotFinite(), "NaN"),
], ids=["raises", "short", "too-few", "nan"])
def test_a_failing_embedder_fails_the_write_and_commits_nothing(
    clock: FrozenClock, bad: HashEmbedder, match: str
) -> None:
    """An embedder that raises or returns bad vectors raises EmbeddingError; no row of the batch commits."""
    with localmem.open(":memory:", clock=clock, embedder=bad) as s:
        with pytest.raises(localmem.EmbeddingError, match=match), s.batch():
            s.add("Ann bought apples", user_id="ann")
            s.add("Ann bought pears", user_id="ann")
        for table in ("memories", "revisions", "content", "embeddings", "embedding_models"):
            assert count(s, table) == 0, table


def test_erase_in_the_same_batch_stores_no_vector(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """A memory added and erased in one batch never gets a vector, and its text is never embedded."""
    with vstore.batch():
        kept = vstore.add("Ann bought apples", user_id="ann")
        gone = vstore.add("Ann's PIN is 4711", user_id="ann")
        vstore.erase(gone.memory_id)
    assert [t for c in embedder.calls for t in c] == [kept.text]
    assert list(vectors(vstore)) == [rev_seq(vstore, kept)]


# -- reading: nearest ---------------------------------------------------------------------


@pytest.fixture
def sam(vstore: localmem.Store, clock: FrozenClock) -> dict[str, localmem.Revision]:
    """Sam's memories on a few topics, and Ann's on the same words."""
    out = {
        "knee": vstore.add("Sam hurt his left knee running downhill", user_id="sam"),
        "tea": vstore.add("Sam drinks green tea every afternoon", user_id="sam"),
        "city": vstore.add("Sam lives in Berlin near the park", user_id="sam"),
        "race": vstore.add("Sam signed up for the Berlin half marathon", user_id="sam"),
    }
    vstore.add("Ann hurt her left knee running downhill", user_id="ann")
    clock.advance(minutes=5)
    return out


def test_nearest_finds_the_memory_that_shares_the_query_words(
    vstore: localmem.Store, embedder: HashEmbedder, sam: dict[str, localmem.Revision]
) -> None:
    """The memory sharing the query's words comes first, with the smallest cosine distance."""
    found = nearest(vstore.connection, embedder, user_id="sam", known=now(vstore),
                    query="how is the knee after running downhill", k=3)
    assert ids(found)[0] == sam["knee"].memory_id
    assert found[0][0] == rev_seq(vstore, sam["knee"])
    distances = [d for _, _, d in found]
    assert distances == sorted(distances) and 0.0 <= distances[0] < distances[-1] <= 2.0
    assert len(found) == 3


def test_nearest_distance_is_sqlite_vec_cosine(
    vstore: localmem.Store, embedder: HashEmbedder, sam: dict[str, localmem.Revision]
) -> None:
    """The distance is 1 - cosine similarity of the two vectors (as vec_distance_cosine computes it)."""
    query = "green tea"
    (seq, _, d), *_ = nearest(vstore.connection, embedder, user_id="sam", known=now(vstore), query=query, k=1)
    a, b = embedder.vector(text_of(sam["tea"])), embedder.vector(query)
    assert seq == rev_seq(vstore, sam["tea"])
    assert d == pytest.approx(1 - sum(x * y for x, y in zip(a, b, strict=True)), abs=1e-5)


def test_nearest_never_returns_another_users_memories(
    vstore: localmem.Store, embedder: HashEmbedder, sam: dict[str, localmem.Revision]
) -> None:
    """Ann's identical knee memory is never among Sam's results, however large k is."""
    found = nearest(vstore.connection, embedder, user_id="sam", known=now(vstore),
                    query="hurt her left knee running downhill", k=100)
    assert set(ids(found)) == {r.memory_id for r in sam.values()}
    ann = nearest(vstore.connection, embedder, user_id="ann", known=now(vstore), query="knee", k=100)
    assert len(ann) == 1 and ann[0][1] not in ids(found)
    assert nearest(vstore.connection, embedder, user_id="nobody", known=now(vstore), query="knee", k=5) == []


def test_nearest_ties_are_broken_by_seq(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """Two memories with the same text are equally near; the earlier revision comes first."""
    first = vstore.add("Sam ran ten kilometres", user_id="sam")
    second = vstore.add("Sam ran ten kilometres", user_id="sam")
    found = nearest(vstore.connection, embedder, user_id="sam", known=now(vstore), query="ran ten", k=2)
    assert [seq for seq, _, _ in found] == [rev_seq(vstore, first), rev_seq(vstore, second)]
    assert found[0][2] == found[1][2]


def test_nearest_never_returns_a_revision_recorded_after_known(
    vstore: localmem.Store, embedder: HashEmbedder, clock: FrozenClock
) -> None:
    """A memory recorded after known is absent; known exactly at its recorded_at includes it (half-open)."""
    early = vstore.add("Sam likes cycling to work", user_id="sam")
    t_early = now(vstore)
    clock.advance(hours=1)
    late = vstore.add("Sam likes cycling in the mountains", user_id="sam")
    t_late = now(vstore)
    query = "cycling mountains"
    before = nearest(vstore.connection, embedder, user_id="sam", known=t_late - 1, query=query, k=5)
    assert ids(before) == [early.memory_id]
    at = nearest(vstore.connection, embedder, user_id="sam", known=t_late, query=query, k=5)
    assert ids(at) == [late.memory_id, early.memory_id]
    assert nearest(vstore.connection, embedder, user_id="sam", known=t_early - 1, query="cycling", k=5) == []


def test_nearest_compares_the_revision_an_as_of_read_returns(
    vstore: localmem.Store, embedder: HashEmbedder, clock: FrozenClock
) -> None:
    """After a correction, the old text's vector no longer speaks for the memory; before it, it does."""
    rev1 = vstore.add("Sam's knee hurts after long runs", user_id="sam")
    t1 = now(vstore)
    clock.advance(days=1)
    rev2 = vstore.correct(rev1.memory_id, text="Sam's ankle hurts after long runs")
    t2 = now(vstore)
    clock.advance(days=1)
    rev3 = vstore.expire(rev1.memory_id, "2026-12-31")  # same text: a reused vector
    t3 = now(vstore)

    then = nearest(vstore.connection, embedder, user_id="sam", known=t1, query="knee", k=5)
    assert [seq for seq, _, _ in then] == [rev_seq(vstore, rev1)]
    for known, rev in ((t2, rev2), (t3, rev3)):
        found = nearest(vstore.connection, embedder, user_id="sam", known=known, query="knee", k=5)
        # One row per memory: the revision an as-of read returns.
        assert [seq for seq, _, _ in found] == [rev_seq(vstore, rev)]
        as_of = vstore.get(rev1.memory_id, known_at=from_micros(known))
        assert as_of is not None and as_of.rev_id == rev.rev_id
        assert found[0][2] > then[0][2]  # 'knee' is further from the ankle text


def test_nearest_respects_k_and_validates_its_arguments(
    vstore: localmem.Store, embedder: HashEmbedder, sam: dict[str, localmem.Revision]
) -> None:
    """k bounds the rows; a bad k, query, user or known raises InvalidInputError."""
    conn, t = vstore.connection, now(vstore)
    assert len(nearest(conn, embedder, user_id="sam", known=t, query="Sam", k=2)) == 2
    for bad in ({"k": 0}, {"k": True}, {"query": " "}, {"user_id": ""}, {"known": "now"}):
        args: dict[str, object] = {"user_id": "sam", "known": t, "query": "Sam", "k": 2, **bad}
        with pytest.raises(localmem.InvalidInputError):
            nearest(conn, embedder, **args)  # type: ignore[arg-type]  # deliberately wrong


def test_a_zero_vector_is_stored_but_never_returned(vstore: localmem.Store, embedder: HashEmbedder) -> None:
    """Text without words has the zero vector: stored, never a result; a wordless query finds nothing."""
    vstore.add("...", user_id="sam")
    words = vstore.add("Sam swims on Sundays", user_id="sam")
    assert count(vstore, "embeddings") == 2
    found = nearest(vstore.connection, embedder, user_id="sam", known=now(vstore), query="swims", k=5)
    assert ids(found) == [words.memory_id]
    assert nearest(vstore.connection, embedder, user_id="sam", known=now(vstore), query="?!", k=5) == []


def test_nearest_with_a_model_the_file_has_no_vectors_of_finds_nothing(
    vstore: localmem.Store, sam: dict[str, localmem.Revision]
) -> None:
    """An embedder whose model name was never used on this file finds nothing (until embed_missing)."""
    other = HashEmbedder(name="another-model-v2", dimensions=32)
    assert nearest(vstore.connection, other, user_id="sam", known=now(vstore), query="knee", k=5) == []
    assert other.calls == []  # the query is not even embedded


def test_nearest_loads_sqlite_vec_on_a_connection_without_it(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """nearest() on a connection of a store opened without an embedder loads sqlite-vec itself."""
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        rev = s.add("Sam plays chess on Fridays", user_id="sam")
    with localmem.open(db_path, clock=clock) as plain:
        found = nearest(plain.connection, embedder, user_id="sam", known=now(plain), query="chess", k=1)
        assert ids(found) == [rev.memory_id]


# -- erase ----------------------------------------------------------------------------------


def raw(path: Path) -> bytes:
    """The bytes of the database file, its -wal and its -shm."""
    return b"".join(Path(f"{path}{s}").read_bytes() for s in ("", "-wal", "-shm")
                    if Path(f"{path}{s}").exists())


def test_erase_destroys_the_vectors_down_to_the_bytes(
    vfile: localmem.Store, embedder: HashEmbedder, clock: FrozenClock, db_path: Path
) -> None:
    """After erase (and close) no vector of the erased memory is in the file's bytes; kept vectors are."""
    kept = vfile.add("Ann grew up with a cat called Vexmorthian", user_id="ann")
    gone = vfile.add("Ann's secret nickname is Zorbluxia", user_id="ann")
    clock.advance(minutes=1)
    fixed = vfile.correct(gone.memory_id, text="Ann's secret nicknames are Zorbluxias and quaffelnixes")
    blobs = {r.text: pack(embedder.vector(text_of(r)), 64, what="v") for r in (kept, gone, fixed)}
    assert all(b in raw(db_path) for b in blobs.values()), "the vectors should be on disk before the erase"

    erasure = vfile.erase(gone.memory_id, reason="user request")

    assert erasure.checkpointed
    assert list(vectors(vfile)) == [rev_seq(vfile, kept)]
    assert nearest(vfile.connection, embedder, user_id="ann", known=now(vfile), query="nickname", k=5)[0][1] \
        == kept.memory_id
    data = raw(db_path)
    assert blobs[gone.text] not in data and blobs[fixed.text] not in data
    assert blobs[kept.text] in data
    vfile.add("Ann bought a new bike", user_id="ann")
    vfile.close()
    data = raw(db_path)
    assert blobs[gone.text] not in data and blobs[fixed.text] not in data
    assert blobs[kept.text] in data


def test_erase_without_sqlite_vec_loaded_still_destroys_vectors(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """A store opened without an embedder, and the stdlib sqlite3 module, can erase: vectors go too."""
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        one = s.add("Ann's PIN is 4711", user_id="ann")
        two = s.add("Ann's locker code is 1234", user_id="ann")
    with localmem.open(db_path, clock=clock) as plain:
        plain.erase(one.memory_id)
        assert count(plain, "embeddings") == 1
        assert plain.doctor().ok
    with contextlib.closing(sqlite3.connect(db_path, isolation_level=None)) as conn:
        conn.execute("INSERT INTO erasures (memory_id, tomb_id, user_id, erased_at, origin)"
                     " VALUES (?, ?, 'ann', 9000000000000000, 'shell')", (two.memory_id, "T" * 26))
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone() == (0,)


# -- immutability from SQL -------------------------------------------------------------------


@pytest.fixture
def filled(vfile: localmem.Store, clock: FrozenClock) -> localmem.Store:
    """A file store with vectors of live and corrected memories."""
    rev = vfile.add("Ann lives in Lisbon", user_id="ann", key="home_city")
    vfile.add("Ann likes green tea", user_id="ann")
    clock.advance(minutes=5)
    vfile.correct(rev.memory_id, text="Ann lives in Porto")
    return vfile


REFUSED = {
    "update-vector": "UPDATE embeddings SET vector = zeroblob(length(vector))",
    "update-model": "UPDATE embedding_models SET dimensions = dimensions + 1",
    "delete-vectors": "DELETE FROM embeddings",
    "delete-model": "DELETE FROM embedding_models",
    "replace-vector": "INSERT OR REPLACE INTO embeddings (seq, rev_seq, model, memory_id, user_id,"
                      " recorded_at, embedded_at, vector) SELECT seq, rev_seq, model, memory_id,"
                      " user_id, recorded_at, embedded_at, zeroblob(length(vector)) FROM embeddings",
    "replace-key": "INSERT OR REPLACE INTO embeddings (rev_seq, model, memory_id, user_id, recorded_at,"
                   " embedded_at, vector) SELECT rev_seq, model, memory_id, user_id, recorded_at,"
                   " embedded_at, zeroblob(length(vector)) FROM embeddings",
    "upsert-vector": "INSERT INTO embeddings SELECT * FROM embeddings WHERE true"
                     " ON CONFLICT (seq) DO UPDATE SET vector = zeroblob(length(vector))",
    "replace-model": "INSERT OR REPLACE INTO embedding_models SELECT model, dimensions + 1"
                     " FROM embedding_models",
}


def table_rows(store: localmem.Store) -> tuple[list[apsw.SQLiteValues], list[apsw.SQLiteValues]]:
    """Every row of the two vector tables."""
    c = store.connection
    return (c.execute("SELECT * FROM embeddings ORDER BY seq").fetchall(),
            c.execute("SELECT * FROM embedding_models ORDER BY model").fetchall())


@pytest.mark.parametrize("sql", REFUSED.values(), ids=REFUSED.keys())
def test_vectors_are_immutable_through_apsw(filled: localmem.Store, sql: str) -> None:
    """UPDATE, DELETE, INSERT OR REPLACE, upsert on the vector tables raise ImmutableError, change nothing."""
    before = table_rows(filled)
    with pytest.raises(localmem.ImmutableError, match="immutable"), transaction(filled.connection) as conn:
        conn.execute(sql)
    assert table_rows(filled) == before


@pytest.mark.parametrize("sql", REFUSED.values(), ids=REFUSED.keys())
def test_vectors_are_immutable_through_stdlib_sqlite3(filled: localmem.Store, sql: str) -> None:
    """The same statements through the stdlib sqlite3 module (no sqlite-vec) fail with 'immutable'."""
    before = table_rows(filled)
    with contextlib.closing(sqlite3.connect(filled.path, isolation_level=None)) as conn, \
            pytest.raises(sqlite3.IntegrityError, match="immutable"):
        conn.execute(sql)
    assert table_rows(filled) == before


BAD_INSERTS = {
    "as-is": ("vector", "vector", None),
    "other-user": ("user_id", "'mallory'", "must match a revision"),
    "other-time": ("recorded_at", "recorded_at + 1", "must match a revision"),
    "other-memory": ("memory_id", "'M' || substr(memory_id, 2)", "must match a revision"),
    "other-revision": ("rev_seq", "rev_seq + 1000", "must match a revision"),
    "wrong-length": ("vector", "zeroblob(8)", "dimensions"),
    "embedded-before-recorded": ("embedded_at", "recorded_at - 1", "CHECK constraint failed"),
    "unknown-model": ("model", "'never-registered'", "dimensions"),
}


@pytest.mark.parametrize(("column", "value", "match"), BAD_INSERTS.values(), ids=BAD_INSERTS.keys())
def test_a_vector_must_match_its_revision_and_model(
    filled: localmem.Store, column: str, value: str, match: str | None
) -> None:
    """A vector copied to a second registered model is accepted as is, and refused with a column changed."""
    cols = ["rev_seq", "model", "memory_id", "user_id", "recorded_at", "embedded_at", "vector"]
    picked = ", ".join(value if c == column else ("'second'" if c == "model" else c) for c in cols)
    copy = f"INSERT INTO embeddings ({', '.join(cols)}) SELECT {picked} FROM embeddings WHERE seq = 1"
    before = table_rows(filled)
    with contextlib.ExitStack() as stack:
        if match is not None:
            stack.enter_context(pytest.raises(localmem.IntegrityError, match=match))
        conn = stack.enter_context(transaction(filled.connection))
        conn.execute("INSERT INTO embedding_models (model, dimensions) VALUES ('second', 64)")
        conn.execute(copy)
    if match is not None:
        assert table_rows(filled) == before
    else:
        assert count(filled, "embeddings") == len(before[0]) + 1


def test_a_vector_for_an_erased_memory_is_refused(filled: localmem.Store) -> None:
    """Re-inserting an erased memory's vector (saved beforehand) fails: its content is gone."""
    rev = filled.add("Ann's PIN is 4711", user_id="ann")
    seq = rev_seq(filled, rev)
    saved = filled.connection.execute(
        "SELECT rev_seq, model, memory_id, user_id, recorded_at, embedded_at, vector FROM embeddings"
        " WHERE rev_seq = ?", (seq,)).fetchone()
    filled.erase(rev.memory_id)
    with pytest.raises(localmem.IntegrityError, match="must match a revision with content"), \
            transaction(filled.connection) as conn:
        conn.execute("INSERT INTO embeddings (rev_seq, model, memory_id, user_id, recorded_at, embedded_at,"
                     " vector) VALUES (?,?,?,?,?,?,?)", saved)


# -- backfill, models and mismatches ---------------------------------------------------------


def test_embed_missing_backfills_and_is_idempotent(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """Content written without an embedder gets vectors from embed_missing, batched; a rerun does nothing."""
    with localmem.open(db_path, clock=clock) as plain:
        revs = [plain.add(f"Sam note {i} about running", user_id="sam") for i in range(70)]
        ann = plain.add("Ann note about running", user_id="ann")
        plain.expire(revs[0].memory_id, "2026-12-31")  # same text: reused, not re-embedded
        gone = plain.add("Sam's PIN is 4711", user_id="sam")
        plain.erase(gone.memory_id)
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        assert count(s, "embeddings") == 0
        assert s.embed_missing(user_id="ann") == 1
        assert s.embed_missing() == 71
        assert embedder.texts_embedded == 71 and all(len(c) <= embedding.BATCH_SIZE for c in embedder.calls)
        assert s.embed_missing() == 0
        assert embedder.texts_embedded == 71
        all_seqs = {int(q) for (q,) in s.connection.execute("SELECT rev_seq FROM content")}
        assert set(vectors(s)) == all_seqs
        found = nearest(s.connection, embedder, user_id="sam", known=now(s), query="note 42", k=1)
        assert ids(found) == [revs[42].memory_id]
        assert ann.memory_id not in ids(nearest(s.connection, embedder, user_id="sam", known=now(s),
                                                query="Ann note", k=100))


def test_a_backfill_is_not_seen_by_a_search_replayed_as_of_before_it(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """Vectors backfilled at T2 for a memory recorded at T1 are seen as of T2, not as of T1: replays hold."""
    with localmem.open(db_path, clock=clock) as plain:
        rev = plain.add("Sam sprained his wrist climbing", user_id="sam")
        t1 = now(plain)
    clock.advance(days=3)
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        assert s.embed_missing() == 1
        t2 = now(s)
        embedded_at = s.connection.execute("SELECT embedded_at FROM embeddings").get
        assert embedded_at == t2 > t1
        assert nearest(s.connection, embedder, user_id="sam", known=t1, query="wrist", k=5) == []
        assert nearest(s.connection, embedder, user_id="sam", known=t2 - 1, query="wrist", k=5) == []
        assert ids(nearest(s.connection, embedder, user_id="sam", known=t2, query="wrist", k=5)) \
            == [rev.memory_id]


def test_embed_missing_without_an_embedder_is_refused(store: localmem.Store) -> None:
    """embed_missing() on a store without an embedder raises InvalidOperationError saying how to give one."""
    with pytest.raises(localmem.InvalidOperationError, match="embedder="):
        store.embed_missing()


def test_same_model_name_with_other_dimensions_is_refused(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """Reopening with the model name the file holds but another dimension raises EmbeddingMismatchError."""
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        s.add("Sam swims", user_id="sam")
    wider = HashEmbedder(name=embedder.name, dimensions=128)
    with pytest.raises(localmem.EmbeddingMismatchError, match=r"dimensions=128.*64 dimensions") as info:
        localmem.open(db_path, clock=clock, embedder=wider)
    assert isinstance(info.value, ValueError)
    with localmem.open(db_path, clock=clock) as plain, pytest.raises(localmem.EmbeddingMismatchError):
        nearest(plain.connection, wider, user_id="sam", known=now(plain), query="swims", k=1)


def test_a_new_model_gets_its_own_vectors_beside_the_old(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """A second model's vectors are stored per model; each model's nearest reads only its own."""
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        first = s.add("Sam swims on Sundays", user_id="sam")
    newer = HashEmbedder(name="test-hash-bow-v2", dimensions=32)
    with localmem.open(db_path, clock=clock, embedder=newer) as s:
        second = s.add("Sam climbs on Mondays", user_id="sam")
        assert s.embed_missing() == 1
        assert len(vectors(s, embedder.name)) == 1 and len(vectors(s, newer.name)) == 2
        assert ids(nearest(s.connection, newer, user_id="sam", known=now(s), query="swims", k=5)) \
            == [first.memory_id, second.memory_id]
        assert ids(nearest(s.connection, embedder, user_id="sam", known=now(s), query="climbs", k=5)) \
            == [first.memory_id]  # the old model never saw the second memory
        models = s.connection.execute(
            "SELECT model, dimensions FROM embedding_models ORDER BY model").fetchall()
        assert models == [(embedder.name, 64), (newer.name, 32)]
        assert s.doctor().ok


# -- files: opening without an embedder, migrating from version 3 -------------------------------


def test_a_v4_file_with_vectors_opens_and_works_without_an_embedder(
    db_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """Without an embedder a file with vectors opens, reads, searches and takes writes (without vectors)."""
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        rev = s.add("Sam lives in Berlin", user_id="sam")
    with localmem.open(db_path, clock=clock) as plain:
        assert plain.embedder is None
        assert [r.memory_id for r in plain.read("sam")] == [rev.memory_id]
        hits = plain.search("Berlin", user_id="sam", log=False)
        assert [h.revision.memory_id for h in hits] == [rev.memory_id]
        clock.advance(minutes=1)
        plain.correct(rev.memory_id, text="Sam lives in Hamburg")
        assert count(plain, "embeddings") == 1
        assert plain.doctor().ok
    with contextlib.closing(sqlite3.connect(db_path)) as conn:  # the stdlib module reads it too
        assert conn.execute("SELECT count(*) FROM embeddings").fetchone() == (1,)


#: The objects schema version 4 added, as sqlite_schema holds them.
VECTOR_SCHEMA = "SELECT type, name, sql FROM sqlite_schema WHERE name LIKE '%embedding%' ORDER BY name"


def _version_3_file(path: Path) -> None:
    """A file as schema version 3 made it: the kept v1 schema, then steps 2 and 3, with a memory."""
    conn = apsw.Connection(str(path))
    try:
        conn.execute((Path(__file__).parent / "data" / "schema_v1.sql").read_text(encoding="utf-8"))
        conn.pragma("application_id", _db.APPLICATION_ID)
        conn.execute("INSERT INTO store_meta (name, value)"
                     " VALUES ('device_id', 'v3'), ('schema_created', '1')")
        for step in (2, 3):
            conn.execute(_db.MIGRATIONS[step])
        conn.pragma("user_version", 3)
        conn.execute("INSERT INTO memories (memory_id, user_id, kind, key, created_at)"
                     " VALUES (?, 'sam', 'fact', NULL, 1)", ("M" * 26,))
        conn.execute(
            "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, precision,"
            " valid_source, observed_at, recorded_at, tz, retracted, corrected, origin)"
            " VALUES (?, ?, 'sam', 1, 'assert', 1, 'instant', 'assumed', 1, 1, 'UTC', 0, 0, 'v3')",
            ("R" * 26, "M" * 26))
        conn.execute("INSERT INTO content (rev_seq, memory_id, text) VALUES (1, ?, 'Sam hurt his knee')",
                     ("M" * 26,))
    finally:
        conn.close()


def test_a_version_3_file_migrates_forward_and_backfills(
    db_path: Path, tmp_path: Path, clock: FrozenClock, embedder: HashEmbedder
) -> None:
    """Opening a v3 file runs step 4 on (its schema then a fresh file's), and its memory can be backfilled."""
    _version_3_file(db_path)
    with localmem.open(db_path, clock=clock, embedder=embedder) as s:
        assert s.connection.pragma("user_version") == _db.SCHEMA_VERSION >= 4
        assert s.embed_missing() == 1
        found = nearest(s.connection, embedder, user_id="sam", known=now(s), query="knee", k=1)
        assert ids(found) == ["M" * 26]
        assert s.doctor().ok
        migrated = s.connection.execute(VECTOR_SCHEMA).fetchall()
    with localmem.open(tmp_path / "fresh.db", clock=clock) as fresh:
        expected = fresh.connection.execute(VECTOR_SCHEMA).fetchall()
    assert migrated == expected and len(expected) >= 13
