"""The store: the public façade over the write core, the as-of reads, search, replay and sync.

:func:`open` gives a :class:`Store`. Every method checks nothing itself and decides
nothing: it hands over to the module that owns the rule, and the docstrings here
say what each call means to its caller. Where each rule lives:

* writes (add, correct, supersede, retract, expire, erase): :mod:`localmem.core.writes`,
  appending through the write core, :mod:`localmem.core.ledger`;
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
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import apsw

from .core import bulk, phrases, reads, writes
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
from .core.inputs import check_text
from .core.ledger import Ledger
from .core.revision import Added, Change, Erasure, Revision, Snapshot
from .core.writes import UNSET, Unset
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


def _pick(name: str, old: Any, new: Any) -> Any:
    """An argument given the deprecated way or the new one, refused if given both ways."""
    if old is not None and new is not None:
        raise InvalidInputError(f"{name} given twice (by position and by keyword): give it once, by keyword")
    return new if old is None else old


class Store(Replay, Sync):
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

    # -- writes ------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        user_id: str,
        observed_at: TimeInput | None = None,
        tz: str | ZoneInfo | None = None,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        precision: str | None = None,
        expires: TimeInput | None = None,
        key: str | None = None,
        supersedes: str | None = None,
        kind: str = "fact",
        value: Any = None,
        attributes: Mapping[str, Any] | None = None,
        source: Any = None,
        reason: str | None = None,
        resolve: bool = True,
    ) -> Revision:
        """Assert a new memory.

        Args:
            text: what the memory says.
            user_id: whom it is about.
            observed_at: when the fact reached the app (default: now).
            tz: the user's IANA zone (default: the zone last given for this
                user, else UTC). Calendar dates are read in it.
            valid_from: when it became true. Without it, a time phrase in the
                text ("yesterday", "last weekend", "since January") is
                resolved against observed_at in ``tz`` and gives the valid
                time and its precision (``valid_source="resolved"``); the
                stored text names absolute dates and the original message is
                kept in ``source["message"]``. With no phrase the valid time
                is *assumed* to start at observed_at, with precision instant.
            valid_to: when it stopped being true (exclusive); None = still true.
            precision: how precise the valid time is; defaults from the form of
                valid_from (a date is a day, "2023-05" a month, ...).
            expires: hide it from default reads after this: a date means
                "through that local day", an instant means from that instant.
            key: a slot like ``home_city``; a new value supersedes the current one.
            supersedes: the id of a memory this one replaces (explicit chain).
            kind: a free label (fact, preference, event, ...).
            value: a JSON value (numbers, for the fee).
            attributes: a dict of JSON values, for filters.
            source: provenance (session, message id, import batch): JSON.
            reason: why this was recorded.
            resolve: read time phrases in ``text`` (default); False stores the
                text as given and assumes the valid time.

        Returns:
            The new memory's first revision.

        Raises:
            InvalidInputError: bad text, ids, JSON or precision.
            NaiveDatetimeError, InvalidTimeError, InvalidIntervalError,
            UnknownZoneError: bad times or zone.
            NotFoundError, InvalidOperationError: a bad ``supersedes`` target.
        """
        return writes.add(
            self._ledger, text, user_id=user_id, observed_at=observed_at, tz=tz, valid_from=valid_from,
            valid_to=valid_to, precision=precision, expires=expires, key=key, supersedes=supersedes,
            kind=kind, value=value, attributes=attributes, source=source, reason=reason, resolve=resolve)

    def add_many(self, items: Iterable[Mapping[str, Any]], *, resolve: bool = True,
                 workers: int | None = None) -> list[Added]:
        """Assert many memories in one transaction: each item is ``add``'s keyword arguments
        (``{"text": ..., "user_id": ..., "source": ...}``), written as ``add`` would, in order.

        Faster than ``add`` in a ``batch()`` (items without ``key`` or ``supersedes`` are
        appended in bulk), it returns a light :class:`~localmem.Added` per item: the new
        ``memory_id`` and ``rev_id``, and ``.revision`` (what ``add`` returns) built when read.
        Every item is checked and its time phrases read before anything is written, and all
        are recorded at one instant (two values of one key then need explicit valid times):
        the call lands whole or not at all. ``workers``: processes sharing a big batch's phrase
        reading (:mod:`localmem.core.phrases`; None: automatic, 0: none); same results either way.

        Raises:
            InvalidInputError (and add's other errors): the first bad item, named ``items[i]``.
        """
        return bulk.add_many(self._ledger, items, resolve=resolve, workers=workers, readers=self._readers)

    def add_messages(
        self,
        messages: Sequence[Mapping[str, Any]],
        _user_id: str | None = None,
        _tz: str | ZoneInfo | None = None,
        /,
        *,
        user_id: str | None = None,
        tz: str | ZoneInfo | None = None,
        roles: Sequence[str] = ("user",),
        kind: str = "message",
        source: Mapping[str, Any] | None = None,
        backfill: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Revision]:
        """Import a conversation, mem0-style: one memory per message from ``roles``.

        Each message is ``{"role", "content", "sent_at"}``; its time phrases are
        resolved against its own ``sent_at`` in ``tz``, never against today.
        Messages from other roles (the assistant's replies) are skipped. Every
        message is checked before anything is written, and all are written in
        one transaction: the import lands whole or not at all.

        Each memory is recorded now (the store's clock): a replay as of last
        March does not see a chat imported today. ``backfill=True`` is for an app
        migrating its *own* log, which knew each message when it was sent: each
        memory is then recorded at its ``sent_at``. Recorded time still never goes
        backwards, so a backfill needs the messages in send order, none before the
        newest time already in the store (an empty store takes any log) and none
        after the store's now.

        Args:
            messages: the conversation, oldest first.
            user_id: whose messages they are (keyword-only; passing it, or ``tz``,
                by position still works but is deprecated).
            tz: the user's IANA zone (default: the zone last given, else UTC).
            roles: the roles to import.
            kind: the kind of every memory written.
            source: provenance merged into every memory's source.
            backfill: record each message at its ``sent_at`` (see above).
            progress: called with (done, total) as the import goes on.

        Returns:
            The first revision of each memory written, in message order.

        Raises:
            InvalidInputError: a message is not a mapping, lacks a field, or
                has an empty content; ``source`` is not a mapping; with
                ``backfill``, a message sent before the store's newest time,
                before the message imported just before it, or after now.
            NaiveDatetimeError, InvalidTimeError, UnknownZoneError: a bad
                ``sent_at`` or zone.
        """
        if _user_id is not None or _tz is not None:
            warnings.warn("add_messages(messages, user_id, tz) is deprecated: pass user_id= and tz= "
                          "by keyword", DeprecationWarning, stacklevel=2)
        who = _pick("user_id", _user_id, user_id)
        if who is None:
            raise InvalidInputError("add_messages() needs user_id=: whose messages they are")
        return writes.add_messages(self._ledger, messages, who, _pick("tz", _tz, tz), roles=roles,
                                   kind=kind, source=source, backfill=backfill, progress=progress)

    def correct(
        self,
        memory_id: str,
        *,
        text: str | Unset = UNSET,
        value: Any = UNSET,
        valid_from: TimeInput | Unset = UNSET,
        valid_to: TimeInput | None | Unset = UNSET,
        precision: str | Unset = UNSET,
        attributes: Mapping[str, Any] | None | Unset = UNSET,
        observed_at: TimeInput | None = None,
        source: Any = UNSET,
        reason: str | None = None,
    ) -> Revision:
        """Record that the earlier account was wrong: same memory, new content.

        Only the arguments given change; ``value=None`` clears the value,
        ``valid_to=None`` reopens the interval.

        Raises:
            NotFoundError: no such memory.
            ErasedError: the memory was erased.
            InvalidOperationError: it is retracted, or nothing would change.
        """
        return writes.correct(
            self._ledger, memory_id, text=text, value=value, valid_from=valid_from, valid_to=valid_to,
            precision=precision, attributes=attributes, observed_at=observed_at, source=source,
            reason=reason)

    def supersede(
        self,
        memory_id: str,
        text: str,
        *,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        precision: str | None = None,
        observed_at: TimeInput | None = None,
        expires: TimeInput | None = None,
        value: Any = None,
        attributes: Mapping[str, Any] | None = None,
        source: Any = None,
        reason: str | None = None,
        resolve: bool = True,
    ) -> Revision:
        """Record that the world changed: a new memory replaces ``memory_id`` from valid_from.

        The old memory stays true for its interval, which now closes at the new
        valid_from; the two are linked (``superseded_by`` / ``supersedes``).
        The new memory keeps the old one's user, kind, key and zone.

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is retracted or already superseded.
            InvalidIntervalError: the new fact does not start after the old one.

        Without ``valid_from``, a time phrase in ``text`` says when the new
        fact began ("moved to Berlin on Sept 1"), as in :meth:`add`; the new
        fact stays open-ended. ``resolve=False`` turns that off.
        """
        return writes.supersede(
            self._ledger, memory_id, text, valid_from=valid_from, valid_to=valid_to, precision=precision,
            observed_at=observed_at, expires=expires, value=value, attributes=attributes, source=source,
            reason=reason, resolve=resolve)

    def retract(
        self, memory_id: str, reason: str | None = None, *, observed_at: TimeInput | None = None
    ) -> Revision:
        """Record that the user revoked a memory ("forget that").

        It disappears from current reads; history and as-of reads from before
        the retraction still show it.

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is already retracted.
        """
        return writes.retract(self._ledger, memory_id, reason, observed_at=observed_at)

    def expire(
        self,
        memory_id: str,
        expires: TimeInput | None = None,
        *,
        reason: str | None = None,
        on: TimeInput | None = None,
    ) -> Revision:
        """Set or move a memory's expiry.

        Args:
            memory_id: the memory.
            expires: a date (the memory stays visible through that local day in
                the memory's zone) or an instant (hidden from that instant on);
                the same as ``add(expires=...)``.
            reason: why.
            on: the old name of ``expires`` (deprecated).

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is retracted, or already expires then.
            InvalidInputError: no expiry given.
        """
        if on is not None:
            warnings.warn("expire(memory_id, on=...) is deprecated: pass expires=", DeprecationWarning,
                          stacklevel=2)
        when = _pick("expires", on, expires)
        if when is None:
            raise InvalidInputError("expire() needs expires=: a date or an instant")
        return writes.expire(self._ledger, memory_id, when, reason=reason)

    def erase(self, memory_id: str, reason: str | None = None, *, by: str | None = None) -> Erasure:
        """Destroy the content of every revision of a memory (privacy erasure).

        The words are removed from the content table and the full-text index
        (which is merged anew before the transaction commits, so no stale
        segment keeps them), freed pages are zeroed, and the WAL is
        checkpointed and truncated once the transaction commits. If that
        checkpoint cannot finish (another reader, a storage fault), the erase is
        still committed; ``Erasure.checkpointed`` is False and the checkpoint is
        retried after every later write and on close; a crash before it finishes
        leaves a marker file, and the next open checkpoints first. A tombstone (who, when,
        why) remains, as do the revision rows without their content. Every memory
        derived from this one (a summary quotes its sources) is erased with it, each
        with its own tombstone (``Erasure.derived``). Keep
        ``reason`` free of the erased content: it is kept. Merging the index
        costs time in proportion to its size (see the README's benchmarks).

        Raises:
            NotFoundError: no such memory.
            ErasedError: it is already erased.
        """
        return writes.erase(self._ledger, memory_id, reason, by=by)

    def embed_missing(self, user_id: str | None = None) -> int:
        """Store a vector for every revision that has content but none of this embedder's model.

        For content written before the store had an embedder, or by another
        model. The vectors are stamped with the store's recorded time now, so a
        search as of an earlier time does not see them (it replays as it ran).
        Runs through the revisions in order, embedding :data:`BATCH_SIZE`
        texts per call, and commits each batch on its own: an interrupted run
        keeps what it stored, and running it again carries on. Idempotent: a
        second run stores nothing and returns 0.

        Args:
            user_id: only this user's revisions (default: everyone's).

        Returns:
            How many vectors were stored (revisions that keep their memory's text
            reuse its vector without a model call, and are counted too).

        Raises:
            InvalidOperationError: the store has no embedder.
            EmbeddingError: the embedder failed (batches stored before stay).
        """
        return writes.embed_missing(self._ledger, user_id)

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
