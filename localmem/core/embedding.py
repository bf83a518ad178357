"""Embeddings: the vectors behind the semantic half of search, and the nearest-neighbour read.

The default store is lexical only and needs no model. Given an :class:`Embedder`
(``localmem.open(path, embedder=...)``), every write that creates content also
stores a vector of its text, and :func:`nearest` finds a user's memories whose
text is closest to a query's, as known at a time, for search to fuse with BM25.

Decisions:

* **A plain table, not a vec0 virtual table.** Vectors live in the STRICT table
  ``embeddings`` (schema version 4) as float32 little-endian BLOBs. Every
  statement that touches a ``vec0`` table fails with "no such module" unless
  the connection loaded sqlite-vec: an erase (whose trigger deletes the
  memory's vectors) would fail in localmem without the ``vec`` extra, in
  Python's stdlib ``sqlite3`` and in the ``sqlite3`` shell, and so would
  opening a file whose migration creates one. sqlite-vec is used only for its
  distance function, ``vec_distance_cosine``, in a brute-force scan of one
  user's vectors: a phone holds thousands to tens of thousands of memories,
  which a scan reads in tens of milliseconds, and there is no approximate
  index to keep in step with erasures.
* **Vectors follow the content table's rules**: immutable (triggers refuse
  UPDATE, DELETE and INSERT OR REPLACE from any client), and an erase destroys
  them with the words they were made from; a trigger refuses a vector for a
  revision without content, so none can be written for an erased memory.
* **Per-model rows.** A vector is stored per (revision, model name); the name
  identifies the model and its version. Rows are never deleted, so a store
  bound to its first model could never change models; instead a new model's
  vectors are added beside the old ones (:meth:`Store.embed_missing` backfills
  them) and a read uses only its own model's. A model name is registered once
  with its dimensions (``embedding_models``); an embedder giving the same name a
  different length raises :class:`~localmem.errors.EmbeddingMismatchError`.
* **Every revision with content has a vector**, so :func:`nearest` can keep, per
  memory, exactly the revision an as-of read returns. Revisions that keep their
  memory's text (expire, retract, superseded, a correction of the value) reuse
  the vector already stored for that text: no model call.
* **Vectors have a recorded time** (``embedded_at``): a write's vectors share
  its revisions' recorded_at; a backfill's are stamped when it runs. A read as
  of a time sees only vectors embedded by then, so replays stay exact.
* **Vectors are written in the write's transaction**, at its end: a single write
  embeds one text; a batch (``store.batch()``, ``add_messages``) embeds its new
  texts in calls of :data:`BATCH_SIZE`. An embedder that fails or returns
  something other than one vector of its dimensions per text fails the write
  (:class:`~localmem.errors.EmbeddingError`) and nothing of it is committed.
* An embedder must be a pure function of the text: equal texts share a vector.
* A zero vector has no direction, so its cosine distance is undefined: it is
  stored but never returned, and a query whose vector is zero finds nothing.
"""

from __future__ import annotations

import importlib
import math
import struct
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol, cast, runtime_checkable

import apsw

from ..errors import (
    EmbeddingError,
    EmbeddingMismatchError,
    EmbeddingUnavailableError,
    InvalidInputError,
    LocalmemError,
)
from .sql import latest_revision

__all__ = [
    "Embedder",
    "BATCH_SIZE",
    "Pending",
    "check_embedder",
    "load_vec",
    "check_model",
    "pack",
    "unpack",
    "embed",
    "store_vectors",
    "missing",
    "nearest_sql",
    "nearest",
]

#: At most this many texts go to one ``Embedder.embed`` call.
BATCH_SIZE = 64


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors: what ``localmem.open(..., embedder=)`` takes.

    ``name`` identifies the model and its version (``"bge-small-en-v1.5"``):
    vectors are stored and compared per name, so a new version needs a new
    name. ``dimensions`` is the length of every vector ``embed`` returns.
    ``embed`` returns one vector per text, in order, and must be a pure
    function of the text. Plain attributes satisfy ``name`` and ``dimensions``.

    Optionally, ``min_similarity`` (a float; 0 when absent): a search takes a
    memory as near the query's meaning only when their cosine similarity is
    above it. Set it to where the model's unrelated texts fall (many models put
    unrelated sentences at 0.1-0.3), or the nearest of unrelated memories
    would rank as if related.
    """

    @property
    def name(self) -> str:
        """The model and its version."""
        ...

    @property
    def dimensions(self) -> int:
        """The length of every vector."""
        ...

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        """One vector of ``dimensions`` floats per text, in order."""
        ...


class Pending(NamedTuple):
    """A revision's content that needs a vector: its row's keys and its text."""

    rev_seq: int
    memory_id: str
    user_id: str
    recorded_at: int
    text: str


def check_embedder(embedder: object) -> Embedder:
    """``embedder`` if it has a usable name, dimensions and embed method.

    Raises:
        InvalidInputError: one of them is missing or has the wrong type.
    """
    name = getattr(embedder, "name", None)
    dims = getattr(embedder, "dimensions", None)
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(
            f"embedder {embedder!r:.60} has name={name!r}: expected a non-empty string naming "
            "the model and its version")
    if not isinstance(dims, int) or isinstance(dims, bool) or dims < 1:
        raise InvalidInputError(
            f"embedder {name!r} has dimensions={dims!r}: expected a positive int")
    if not callable(getattr(embedder, "embed", None)):
        raise InvalidInputError(f"embedder {name!r} has no embed(texts) method")
    return cast(Embedder, embedder)


def load_vec(conn: apsw.Connection) -> None:
    """Load sqlite-vec into ``conn`` unless it is there already.

    Raises:
        EmbeddingUnavailableError: sqlite-vec is not installed, or this SQLite
            cannot load extensions.
    """
    try:
        conn.execute("SELECT vec_version()").fetchall()
        return
    except apsw.SQLError:
        pass
    try:
        # Optional (the vec extra): only stores with an embedder need it. Imported by
        # name: it ships no type information, and type checks must pass without it.
        sqlite_vec = importlib.import_module("sqlite_vec")
    except ImportError as exc:
        raise EmbeddingUnavailableError(
            "an embedder needs sqlite-vec for vector distances, and it is not installed: "
            "pip install 'localmem[vec]'"
        ) from exc
    try:
        conn.enable_load_extension(True)
        try:
            conn.load_extension(str(sqlite_vec.loadable_path()))
        finally:
            conn.enable_load_extension(False)
    except apsw.Error as exc:
        raise EmbeddingUnavailableError(
            f"sqlite-vec is installed but could not be loaded into SQLite {apsw.sqlite_lib_version()} "
            f"({type(exc).__name__}: {exc}); reinstall it with pip install 'localmem[vec]'"
        ) from exc


def check_model(conn: apsw.Connection, embedder: Embedder) -> bool:
    """Whether the embedder's model is registered in this file (True) or new (False).

    Raises:
        EmbeddingMismatchError: the name is registered with other dimensions.
    """
    stored = conn.execute(
        "SELECT dimensions FROM embedding_models WHERE model = ?", (embedder.name,)).get
    if stored is None:
        return False
    if stored != embedder.dimensions:
        raise EmbeddingMismatchError(
            f"embedder {embedder.name!r} has dimensions={embedder.dimensions}, but this file holds "
            f"{embedder.name!r} vectors of {stored} dimensions: a different model (or version) "
            "needs a different name"
        )
    return True


def pack(vector: object, dimensions: int, *, what: str) -> bytes:
    """A vector as float32 little-endian bytes, checked: ``dimensions`` finite numbers.

    Raises:
        EmbeddingError: it is not a sequence of that many finite numbers.
    """
    if isinstance(vector, (str, bytes)) or not isinstance(vector, Iterable):
        raise EmbeddingError(f"{what} is {vector!r:.60}: expected a sequence of {dimensions} floats")
    try:
        values = [float(x) for x in vector]
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{what} holds a value that is not a number: {exc}") from exc
    if len(values) != dimensions:
        raise EmbeddingError(f"{what} has {len(values)} numbers: expected {dimensions}")
    if not all(math.isfinite(v) for v in values):
        raise EmbeddingError(f"{what} holds NaN or infinity: expected finite numbers")
    try:
        return struct.pack(f"<{dimensions}f", *values)
    except OverflowError as exc:
        raise EmbeddingError(f"{what} holds a number too large for float32: {exc}") from exc


def unpack(blob: bytes) -> tuple[float, ...]:
    """The floats of a stored vector."""
    return struct.unpack(f"<{len(blob) // 4}f", blob)


def embed(embedder: Embedder, texts: Sequence[str]) -> list[bytes]:
    """Packed vectors of ``texts``, in calls of at most :data:`BATCH_SIZE` texts.

    Raises:
        EmbeddingError: the embedder raised, or did not return one vector of
            its dimensions per text.
    """
    out: list[bytes] = []
    for start in range(0, len(texts), BATCH_SIZE):
        chunk = list(texts[start:start + BATCH_SIZE])
        try:
            vectors = embedder.embed(chunk)
        except LocalmemError:
            raise
        except Exception as exc:
            raise EmbeddingError(
                f"embedder {embedder.name!r} failed on {len(chunk)} texts "
                f"({type(exc).__name__}: {exc}); nothing was written") from exc
        # A list is what the protocol asks for; any iterable of rows (a numpy
        # array) is taken too.
        if isinstance(vectors, (str, bytes)) or not isinstance(vectors, Iterable):
            raise EmbeddingError(
                f"embedder {embedder.name!r} returned {vectors!r:.60} for {len(chunk)} texts: "
                "expected a list of one vector per text")
        vectors = list(vectors)
        if len(vectors) != len(chunk):
            raise EmbeddingError(
                f"embedder {embedder.name!r} returned {len(vectors)} vectors for {len(chunk)} texts: "
                "expected one per text")
        for i, vector in enumerate(vectors):
            out.append(pack(vector, embedder.dimensions,
                            what=f"embedder {embedder.name!r}'s vector for text #{start + i}"))
    return out


_REUSE = """SELECT e.vector FROM embeddings AS e JOIN content AS c ON c.rev_seq = e.rev_seq
WHERE e.memory_id = ? AND e.model = ? AND c.text = ? LIMIT 1"""

_INSERT = """INSERT INTO embeddings (rev_seq, model, memory_id, user_id, recorded_at, embedded_at, vector)
VALUES (?, ?, ?, ?, ?, ?, ?)"""


def store_vectors(
    conn: apsw.Connection, embedder: Embedder, items: Sequence[Pending], *, embedded_at: int | None = None
) -> int:
    """Store the embedder's vector of each item's text; run inside a write transaction.

    Items whose content is gone (erased in the same transaction) or that have
    a vector of this model already are skipped. A text the memory already has
    a vector of reuses it; the other texts are embedded, each distinct text once.
    ``embedded_at`` is the store's recorded time of a backfill; None (a write
    embedding its own revisions) stamps each vector with its revision's recorded_at.

    Returns:
        How many vectors were stored.

    Raises:
        EmbeddingError, EmbeddingMismatchError: see :func:`embed`, :func:`check_model`.
    """
    model = embedder.name
    live = [
        it for it in items
        if conn.execute("SELECT 1 FROM content WHERE rev_seq = ?", (it.rev_seq,)).get is not None
        and conn.execute("SELECT 1 FROM embeddings WHERE rev_seq = ? AND model = ?",
                         (it.rev_seq, model)).get is None
    ]
    if not live:
        return 0
    if not check_model(conn, embedder):
        conn.execute("INSERT INTO embedding_models (model, dimensions) VALUES (?, ?)",
                     (model, embedder.dimensions))
    by_text: dict[str, bytes] = {}
    wanted: dict[str, None] = {}  # texts to embed, in first-seen order
    for it in live:
        if it.text in by_text or it.text in wanted:
            continue
        known = conn.execute(_REUSE, (it.memory_id, model, it.text)).get
        if known is not None:
            by_text[it.text] = known
        else:
            wanted[it.text] = None
    if wanted:
        by_text.update(zip(wanted, embed(embedder, list(wanted)), strict=True))
    conn.executemany(_INSERT, [
        (it.rev_seq, model, it.memory_id, it.user_id, it.recorded_at,
         it.recorded_at if embedded_at is None else max(embedded_at, it.recorded_at), by_text[it.text])
        for it in live
    ])
    return len(live)


def missing(
    conn: apsw.Connection, model: str, *, user_id: str | None, after: int, limit: int
) -> list[Pending]:
    """Up to ``limit`` revisions after seq ``after`` with content but no vector of ``model``."""
    where = "" if user_id is None else " AND r.user_id = :user_id"
    sql = f"""SELECT c.rev_seq, r.memory_id, r.user_id, r.recorded_at, c.text
FROM content AS c JOIN revisions AS r ON r.seq = c.rev_seq
WHERE c.rev_seq > :after{where}
  AND NOT EXISTS (SELECT 1 FROM embeddings AS e WHERE e.rev_seq = c.rev_seq AND e.model = :model)
ORDER BY c.rev_seq LIMIT :limit"""
    params = {"after": after, "model": model, "limit": limit, "user_id": user_id}
    return [Pending(*row) for row in conn.execute(sql, params)]


def nearest_sql() -> str:
    """The nearest-neighbour scan: named parameters model, user_id, known, query, k.

    One row per memory of the user, not erased, whose newest revision recorded
    at or before ``known`` (the revision an as-of read returns) has a vector of
    the model embedded by ``known``: (rev_seq, memory_id, cosine distance),
    nearest first, ties by rev_seq; a zero vector's undefined (NULL) distance
    sorts last. (embedded_at >= recorded_at, so the first term bounds both.)
    """
    return f"""SELECT e.rev_seq, e.memory_id, vec_distance_cosine(e.vector, :query) AS distance
FROM embeddings AS e
WHERE e.model = :model AND e.user_id = :user_id AND e.embedded_at <= :known
  AND e.rev_seq = {latest_revision("e.memory_id", known=":known")}
  AND NOT EXISTS (SELECT 1 FROM erasures AS x WHERE x.memory_id = e.memory_id)
ORDER BY distance NULLS LAST, e.rev_seq
LIMIT :k"""


def nearest(
    conn: apsw.Connection, embedder: Embedder, *, user_id: str, known: int, query: str, k: int
) -> list[tuple[int, str, float]]:
    """The ``k`` memories of ``user_id`` whose text is nearest ``query``'s, as known at ``known``.

    Per memory, only the revision an as-of read at ``known`` returns competes
    (its newest recorded at or before ``known``), and only if it has a vector
    of this embedder's model stored by ``known``: a vector backfilled later
    (:meth:`Store.embed_missing`) is not seen by a search replayed as of an
    earlier time, so a replay gives the same results after any later write.
    Erased memories never appear. No scope, validity or expiry filter is
    applied: search joins the results with its own scope on ``rev_seq``.

    Args:
        conn: the store's connection (sqlite-vec is loaded into it if needed).
        embedder: embeds the query; its ``name`` picks the vectors compared.
        user_id: whose memories.
        known: the known-at cutoff, UTC microseconds (inclusive).
        query: the text to embed and compare.
        k: how many to return at most.

    Returns:
        ``(rev_seq, memory_id, distance)`` tuples, cosine distance in [0, 2],
        nearest first, ties broken by rev_seq. Empty when the query's vector
        is zero or nothing of the user's has a vector of this model.

    Raises:
        InvalidInputError: a bad user_id, known, query or k.
        EmbeddingError, EmbeddingMismatchError, EmbeddingUnavailableError:
            the embedder failed, disagrees with the stored model, or
            sqlite-vec is missing.
    """
    if not isinstance(user_id, str) or not user_id:
        raise InvalidInputError(f"user_id={user_id!r} is not a non-empty string")
    if not isinstance(known, int) or isinstance(known, bool):
        raise InvalidInputError(f"known={known!r} is not an int (UTC microseconds)")
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError(f"query={query!r} is not a non-empty string")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InvalidInputError(f"k={k!r} is not a positive int")
    load_vec(conn)
    if not check_model(conn, embedder):
        return []
    (vector,) = embed(embedder, [query])
    params = {"model": embedder.name, "user_id": user_id, "known": known, "query": vector, "k": k}
    return [(int(seq), str(mid), float(d))
            for seq, mid, d in conn.execute(nearest_sql(), params) if d is not None]
