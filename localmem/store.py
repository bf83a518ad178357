"""The store: the public façade over the write core, the as-of reads, search, replay and sync.

:func:`open` gives a :class:`Store`. Every method checks nothing itself and decides
nothing: it hands over to the module that owns the rule, and the docstrings here
say what each call means to its caller. Where each rule lives:

* writes (add, correct, supersede, retract, expire, erase): :mod:`localmem.core.writes`,
  appending through the write core, :mod:`localmem.core.ledger`, through the
  :class:`~localmem.core.facade.Writes` half of this class;
* reads as of a time (get, read, read_page, snapshot, history): :mod:`localmem.core.reads`,
  with every statement in :mod:`localmem.core.sql` (the as-of rule is stated there once);
* search: :mod:`localmem.search.api` and :mod:`localmem.search.ranking`;
* replay and audit (runs, receipts, derived memories, comparisons): :mod:`localmem.replay`,
  through the :class:`~localmem.replay.facade.Replay` half of this class;
* sync: :mod:`localmem.sync`.

The read defaults: ``known_at`` is ``as_of`` or else now (the store's clock);
``valid_at`` is ``as_of`` or else ``known_at`` — a read pinned in knowledge is
pinned in the world too unless told otherwise. recorded_at comes from the store's
clock only and never goes backwards.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

import apsw

from .core import phrases, reads
from .core.db import (
    APPLICATION_ID,
    DEFAULT_BUSY_TIMEOUT,
    SCHEMA_VERSION,
    check_path,
    connect,
    map_errors,
    optimize,
    schema_sql,
)
from .core.doctor import Check, DoctorReport, StoreInfo, file_info, run_checks
from .core.embedding import Embedder, check_embedder, check_model, load_vec
from .core.facade import Writes
from .core.inputs import check_text
from .core.ledger import Ledger
from .core.revision import Change, Erasure, Revision, Snapshot
from .core.writes import UNSET
from .errors import InvalidInputError, LocalmemError
from .replay.facade import Replay
from .search import api as search_api
from .search.ranking import Hit
from .sync.facade import Sync
from .time.clock import Clock, TimeInput, from_micros, system_clock

__all__ = ["Store", "open", "UNSET", "StoreInfo", "DoctorReport", "Check"]


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    clock: Clock | None = None,
    embedder: Embedder | None = None,
    create: bool = True,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> Store:
    """Open the store at ``path``, creating or migrating it as needed.

    With ``create=False`` nothing is made: a missing file is an error, so a
    read-only tool given a mistyped path leaves no empty database behind (the
    command line opens every read that way, and refuses to make folders for
    ``--db``).

    Args:
        path: a database file; ``":memory:"`` for a throwaway store; None for
            the default file in the user data dir (created with mode 0600;
            missing folders are made).
        clock: returns an aware datetime; the only source of recorded_at.
            Defaults to the system clock.
        embedder: turns text into vectors (:class:`localmem.Embedder`); with
            one, every write stores a vector of its text and search can use
            them. Needs sqlite-vec (``pip install 'localmem[vec]'``). None
            (the default): lexical search only, no model.
        create: make the file if it does not exist (the default); False
            opens only an existing one (what a read-only tool wants).
        busy_timeout: seconds a write waits for another process's write lock
            before raising BusyError.

    Raises:
        CorruptDatabaseError: the file is not a localmem database.
        SchemaVersionError: the file was written by a newer localmem.
        EmbeddingUnavailableError: an embedder was given and sqlite-vec is missing.
        EmbeddingMismatchError: the file holds vectors of the embedder's model
            name with other dimensions.
        DatabaseNotFoundError: ``create`` is False and there is no file at ``path``.
    """
    check_path(path, create)
    conn = connect(path, busy_timeout=busy_timeout)
    try:
        return Store(conn, clock=clock or system_clock, embedder=embedder)
    except BaseException:
        conn.close()
        raise


class Store(Writes, Replay, Sync):
    """A localmem database: append-only memories with two clocks.

    Use :func:`localmem.open` to get one. A Store wraps one connection and is
    not shared between threads; open one Store per thread or process.
    """

    def __init__(
        self, conn: apsw.Connection, *, clock: Clock = system_clock, embedder: Embedder | None = None
    ) -> None:
        checked: Embedder | None = None
        if embedder is not None:
            checked = check_embedder(embedder)
            with map_errors():
                load_vec(conn)
                check_model(conn, checked)
        self._ledger = Ledger(conn, clock, checked)
        self._readers = phrases.Readers()  # add_many's phrase reader processes, started when first needed
        self.device_id: str = self._ledger.device_id

    # -- lifecycle ---------------------------------------------------------

    @property
    def path(self) -> str:
        """The database file name (``""`` for an in-memory store)."""
        return str(self._ledger.connection.filename)

    @property
    def connection(self) -> apsw.Connection:
        """The underlying apsw connection, for read-only inspection."""
        return self._ledger.connection

    @property
    def embedder(self) -> Embedder | None:
        """The embedder this store was opened with (None: lexical search only)."""
        return self._ledger.embedder

    def close(self) -> None:
        """Close the connection (finishing a pending checkpoint, refreshing planner stats)."""
        with contextlib.suppress(LocalmemError):
            self._ledger.checkpoint()
        self._readers.close()
        conn = self._ledger.connection
        optimize(conn)  # refreshes planner statistics unless another process holds the lock
        conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def batch(self) -> Iterator[Store]:
        """Group writes into one transaction: all of them commit, or none.

        Each write stays atomic: one that is refused before it changes a row
        (bad input, an unknown id, a refused operation) leaves the batch as it
        was, and the batch may go on. One that fails after it started changing
        rows (a storage fault, a broken constraint) dooms the batch: every
        later write in the block raises BatchAbortedError, and the block ends
        by rolling the whole batch back and raising it too. (Writes in a batch
        run without a savepoint each: a savepoint costs about a sixth of a write.)
        """
        with self._ledger.transaction():
            yield self

    def resolve_id(self, prefix: str) -> str:
        """The memory id that starts with ``prefix`` (case-insensitive).

        Raises:
            NotFoundError: no memory, or more than one, has that prefix.
        """
        return self._ledger.resolve_id(prefix)

    def last_recorded_at(self) -> datetime | None:
        """The newest recorded time in the file (None when it is empty): a write now is
        recorded at this or later, whatever the clock says."""
        newest = self._ledger.newest_recorded()
        return None if newest is None else from_micros(newest)

    def user_zone(self, user_id: str) -> str:
        """The IANA zone a user's dates are read in: the zone last given for them, else ``"UTC"``."""
        check_text(user_id, "user_id")
        return self._ledger.zone_for(None, user_id).key

    # -- reads -------------------------------------------------------------

    def get(
        self,
        memory_id: str,
        *,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
    ) -> Revision | None:
        """A memory as known at known_at, flagged for valid_at.

        Unlike ``read``, ``get`` does not hide a memory that is retracted,
        expired or outside its valid time: it returns it with its flags (use
        ``rev.valid_at(t)``).

        Returns:
            The newest revision recorded at or before known_at, or None if the
            memory was not yet known then.

        Raises:
            NotFoundError: no memory has this id.
        """
        return reads.get(self._ledger, memory_id, as_of=as_of, known_at=known_at, valid_at=valid_at)

    def read(
        self,
        user_id: str,
        *,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        include_retracted: bool = False,
        kind: str | None = None,
        key: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> list[Revision]:
        """A user's memories as known at known_at.

        The user is the one positional argument (``read("sam")`` or
        ``read(user_id="sam")``); everything else is keyword-only.

        Args:
            current_only: keep only memories valid at valid_at (the default);
                False gives every valid interval known at known_at (history).
            include_expired: keep memories expired at valid_at (flagged).
            include_retracted: keep retracted memories (flagged).
            kind, key: keep only this kind / key.
            filters: a filter tree (see :mod:`localmem.filters`), dates in the
                user's zone; it narrows the read, never widens it.
            limit: at most this many memories, the first in that order
                (None: all of them; :meth:`read_page` pages through very many).

        Returns:
            Each memory's newest revision at known_at, ordered by valid_from.
            Erased memories never appear.

        Raises:
            InvalidFilterError: a malformed filter tree (the message says where).
            InvalidInputError: ``limit`` is not a positive integer.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInputError(f"limit={limit!r} is not a positive integer (or None for all)")
        revs = reads.read(
            self._ledger, user_id, as_of=as_of, known_at=known_at, valid_at=valid_at,
            current_only=current_only, include_expired=include_expired,
            include_retracted=include_retracted, kind=kind, key=key, filters=filters)
        return revs if limit is None else revs[:limit]

    def read_page(
        self,
        user_id: str,
        *,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        include_retracted: bool = False,
        only_expired: bool = False,
        kind: str | None = None,
        key: str | None = None,
        after: str | None = None,
        limit: int = 200,
    ) -> tuple[list[Revision], str | None]:
        """One page of :meth:`read`, for browsing a user with very many memories.

        The same memories as ``read`` with the same arguments, but ordered by
        when their revision (as known at known_at) was recorded, newest first,
        so that a page costs the same however large the store is (it walks an
        index from the cursor). ``only_expired`` keeps only the memories
        expired at valid_at (and implies ``include_expired``).

        Args:
            after: the cursor a previous page returned (None: the first page).
            limit: the page size, 1 to 10,000.

        Returns:
            The page, and the cursor of the next one (None when this is the last).

        Raises:
            InvalidInputError: a malformed cursor or limit.
        """
        return reads.read_page(
            self._ledger, user_id, as_of=as_of, known_at=known_at, valid_at=valid_at,
            current_only=current_only, include_expired=include_expired,
            include_retracted=include_retracted, only_expired=only_expired, kind=kind, key=key,
            after=after, limit=limit)

    def search(
        self,
        query: str,
        *,
        user_id: str,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        valid_at: TimeInput | None = None,
        filters: Mapping[str, Any] | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        limit: int = 10,
        log: bool = True,
        run_id: str | None = None,
    ) -> list[Hit]:
        """The user's memories that best answer ``query``, as known at known_at.

        Full-text relevance (BM25) reranked by how well each memory's time fits
        the query's time phrases, which are read against known_at in the user's
        zone; see :mod:`localmem.search` for the rules. Unless ``log=False``,
        the hits are appended to the usage log (with ``run_id``, at the store's
        recorded time of the search), which later rankings read as of their
        known_at.

        ``current_only`` (the default) keeps what is current *knowledge* at
        valid_at: memories begun by then and not superseded, so a past event
        ("ran a 10K last weekend") stays findable while a replaced fact
        (Lisbon, once Sam moved) does not; False searches every interval.

        Returns:
            Up to ``limit`` hits, best first, each with its score's parts.

        Raises:
            InvalidInputError: the query is not text, or has neither a word nor
                a time phrase; ``limit`` is not a positive integer.
            InvalidFilterError: a malformed filter tree.
        """
        return search_api.search(
            self._ledger, query, user_id=user_id, as_of=as_of, known_at=known_at, valid_at=valid_at,
            filters=filters, current_only=current_only, include_expired=include_expired, limit=limit,
            log=log, run_id=run_id)

    def snapshot(self, user_id: str, *, known_at: TimeInput | None = None) -> Snapshot:
        """Everything the store held about a user at known_at, with no filter.

        The answer to "you forgot": every revision recorded by then, and each
        memory's newest revision then, retracted, expired, superseded and
        erased ones included (flags are computed at known_at).
        """
        return reads.snapshot(self._ledger, user_id, known_at=known_at)

    def history(self, memory_id: str, *, known_at: TimeInput | None = None) -> list[Change]:
        """Every change to one memory, oldest first, ending with its erasure if any.

        Args:
            known_at: only the changes recorded by then (default: all).

        Raises:
            NotFoundError: no memory has this id.
        """
        return reads.history(self._ledger, memory_id, known_at=known_at)

    def erasure(self, memory_id: str) -> Erasure | None:
        """The tombstone of a memory's erasure, or None if it was not erased."""
        return reads.erasure(self._ledger, memory_id)

    def chain(self, memory_id: str) -> list[str]:
        """The ids of a chain of changing facts, oldest first, that contains ``memory_id``."""
        return reads.chain(self._ledger, memory_id)

    def users(self) -> list[str]:
        """Every user id with at least one memory, sorted."""
        return reads.users(self._ledger)

    # -- the file ----------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Counts and identity of this database file."""
        return file_info(self._ledger.connection, self.device_id)

    def doctor(self) -> DoctorReport:
        """Check the file: SQLite's integrity, the FTS index, and localmem's invariants."""
        with map_errors():
            return DoctorReport(tuple(run_checks(
                self._ledger.connection, schema_sql(), SCHEMA_VERSION, APPLICATION_ID)))
