"""The bitemporal store: append-only writes and as-of reads.

Every write appends revisions and never changes one; every read names its
reference times (``as_of``, or ``known_at`` and ``valid_at`` apart). The rules:

* **known at K**: a memory as known at K is its newest revision recorded at or
  before K. A revision recorded exactly at K is known at K (half-open).
* **valid at V**: ``valid_from <= V < valid_to``; an open ``valid_to`` is
  still true. Expiry is on the same axis: a memory is expired at V when
  ``expires_at <= V``.
* Defaults: ``known_at`` is ``as_of`` or else now (the store's clock);
  ``valid_at`` is ``as_of`` or else ``known_at`` — a read pinned in knowledge
  is pinned in the world too unless told otherwise.
* recorded_at comes from the store's clock only and never goes backwards: if
  the clock reads earlier than the newest revision, the newest time is used.

Writes:

* ``add`` asserts a new memory. With a ``key``, it supersedes the key's current
  value when it starts later, and is kept as history when it ends before that
  value starts; any other overlap is refused.
* ``correct`` says the earlier account was wrong: same memory, new text/value
  (and, if given, a corrected valid time).
* ``supersede`` says the world changed: the old memory's interval closes where
  the new one starts, and both are linked.
* ``retract`` hides a memory from current reads from now on (history and as-of
  reads before the retraction still show it). It does not reopen a memory it
  superseded: correct that one if it is true again.
* ``expire`` sets or moves the expiry; a date means "visible through that day"
  in the memory's zone.
* ``erase`` destroys the content of every revision of a memory and leaves a
  tombstone; erased memories take no further writes and never appear in reads.
"""

from __future__ import annotations

import contextlib
import enum
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import apsw

from .core import sql as queries
from .core.db import APPLICATION_ID, SCHEMA_VERSION, connect, map_errors, schema_sql, transaction
from .core.doctor import Check, DoctorReport, run_checks
from .core.ids import new_id
from .core.inputs import check_text, encode_attributes, encode_json, observed_micros, optional_text
from .core.messages import import_messages, read_times
from .core.reads import Reads
from .core.revision import (
    Erasure,
    Revision,
    _new_revision,
    loads_json,
    revision_from_row,
)
from .errors import (
    BatchAbortedError,
    ErasedError,
    InvalidInputError,
    InvalidIntervalError,
    InvalidOperationError,
    LocalmemError,
    NaiveDatetimeError,
    NotFoundError,
    StorageError,
)
from .replay.facade import Replay
from .search.embedding import BATCH_SIZE, Embedder, Pending, check_embedder, check_model, load_vec, missing
from .search.embedding import store_vectors as _store_vectors
from .sync import files as _sync
from .sync.files import ExportSummary, ImportSummary, SyncSummary
from .time.clock import (
    Clock,
    Moment,
    TimeInput,
    from_micros,
    instant_micros,
    parse_time,
    period_end,
    system_clock,
    to_micros,
    zone,
)
from .time.interval import check_interval, check_precision

__all__ = ["Store", "open", "UNSET", "StoreInfo", "DoctorReport", "Check"]


#: How many of a user's latest-starting revisions a new key value looks among for the key's
#: current value before it reads the key's whole history.
KEY_HEAD_WINDOW = 64


class _Unset(enum.Enum):
    UNSET = "UNSET"


#: Marks an argument of ``correct`` that was not given (None is a value there).
UNSET = _Unset.UNSET

_LATEST = 2**62  # "known at the end of time": the newest revision of all
#: The greatest hybrid logical clock among a memory's revisions (one probe of revisions_asof).
_MAX_HLC = "SELECT max(hlc) FROM revisions WHERE memory_id = ?"


def open(
    path: str | os.PathLike[str] | None = None,
    *,
    clock: Clock | None = None,
    embedder: Embedder | None = None,
) -> Store:
    """Open the store at ``path``, creating or migrating it as needed.

    Args:
        path: a database file; ``":memory:"`` for a throwaway store; None for
            the default file in the user data dir (created with mode 0600).
        clock: returns an aware datetime; the only source of recorded_at.
            Defaults to the system clock.
        embedder: turns text into vectors (:class:`localmem.Embedder`); with
            one, every write stores a vector of its text and search can use
            them. Needs sqlite-vec (``pip install 'localmem[vec]'``). None
            (the default): lexical search only, no model.

    Raises:
        CorruptDatabaseError: the file is not a localmem database.
        SchemaVersionError: the file was written by a newer localmem.
        EmbeddingUnavailableError: an embedder was given and sqlite-vec is missing.
        EmbeddingMismatchError: the file holds vectors of the embedder's model
            name with other dimensions.
    """
    conn = connect(path)
    try:
        return Store(conn, clock=clock or system_clock, embedder=embedder)
    except BaseException:
        conn.close()
        raise


def _encoded(value: Any, attributes: Any, source: Any) -> tuple[str | None, str | None, str | None]:
    return encode_json(value, "value"), encode_attributes(attributes), encode_json(source, "source")


@dataclass(frozen=True, slots=True)
class StoreInfo:
    """What ``Store.info()`` reports about a database file."""

    path: str
    schema_version: int
    device_id: str
    users: int
    memories: int
    revisions: int
    erasures: int
    size_bytes: int


class Store(Reads, Replay):
    """A localmem database: append-only memories with two clocks.

    Use :func:`localmem.open` to get one. A Store wraps one connection and is
    not shared between threads; open one Store per thread or process.
    """

    def __init__(
        self, conn: apsw.Connection, *, clock: Clock = system_clock, embedder: Embedder | None = None
    ) -> None:
        self._conn = conn
        self._clock = clock
        self._embedder: Embedder | None = None
        if embedder is not None:
            self._embedder = check_embedder(embedder)
            with map_errors():
                load_vec(conn)
                check_model(conn, self._embedder)
        # Content written in the open transaction that still needs a vector;
        # embedded in one go (batched) just before the transaction commits.
        self._unembedded: list[Pending] = []
        self._depth = 0  # nesting of batch()/write transactions
        self._doomed: str | None = None  # why the open batch must roll back
        # Known while a write transaction is open (and only then): the newest
        # recorded_at and each user's last zone, saving a query per write.
        self._txn_newest: int | None = None
        self._txn_zones: dict[str, str] = {}
        self._erased_in_txn = False  # the open transaction erased something
        self._checkpoint_pending = False  # an erase's words may still be in the WAL
        self.device_id: str = conn.execute(
            "SELECT value FROM store_meta WHERE name = 'device_id'"
        ).get

    # -- lifecycle ---------------------------------------------------------

    @property
    def path(self) -> str:
        """The database file name (``""`` for an in-memory store)."""
        return str(self._conn.filename)

    @property
    def connection(self) -> apsw.Connection:
        """The underlying apsw connection, for read-only inspection."""
        return self._conn

    @property
    def embedder(self) -> Embedder | None:
        """The embedder this store was opened with (None: lexical search only)."""
        return self._embedder

    def close(self) -> None:
        """Close the connection (finishing a pending checkpoint, refreshing planner stats)."""
        with contextlib.suppress(LocalmemError):
            self._checkpoint()
        with contextlib.suppress(apsw.Error):
            self._conn.pragma("optimize")
        self._conn.close()

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
        with self._transaction():
            yield self

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        if self._depth:
            yield from self._nested()
            return
        self._depth = 1
        self._doomed = None
        self._txn_newest = None
        self._txn_zones.clear()
        try:
            with transaction(self._conn):
                yield
                if self._doomed is not None:
                    raise BatchAbortedError(
                        f"a write in this batch failed after changing rows ({self._doomed}); "
                        "the whole batch was rolled back"
                    )
                if self._unembedded and self._embedder is not None:
                    # In the writes' own transaction: an embedder that fails
                    # fails them, and a vector never lands without its text.
                    _store_vectors(self._conn, self._embedder, self._unembedded)
                if self._erased_in_txn:
                    # Merge the full-text index into one new segment so no old
                    # segment or page key still holds an erased token.
                    self._conn.execute("INSERT INTO content_fts (content_fts) VALUES ('optimize')")
        except BaseException:
            self._erased_in_txn = False
            raise
        finally:
            self._depth = 0
            self._doomed = None
            self._txn_newest = None
            self._txn_zones.clear()
            self._unembedded.clear()
        if self._erased_in_txn:
            self._erased_in_txn = False
            self._checkpoint_pending = True
        # A failed checkpoint leaves the flag set; the next commit retries.
        with contextlib.suppress(StorageError):
            self._checkpoint()

    def _nested(self) -> Iterator[None]:
        """A write (or batch) inside a batch: no savepoint; a failure after changes dooms it."""
        if self._conn.getautocommit():
            raise StorageError(
                "this batch was rolled back by SQLite after a storage error; nothing in it "
                "was committed: leave the `with store.batch():` block and start again"
            )
        if self._doomed is not None:
            raise BatchAbortedError(
                f"an earlier write in this batch failed after changing rows ({self._doomed}); "
                "the batch will be rolled back: leave the `with store.batch():` block"
            )
        changes = self._conn.total_changes()
        self._depth += 1
        try:
            with map_errors():
                yield
        except BaseException as exc:
            if self._conn.total_changes() != changes:
                self._doomed = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._depth -= 1

    def _checkpoint(self) -> bool:
        """Copy the WAL into the main file and truncate it, if an erase asked for it.

        Returns True when nothing is pending any more.
        """
        if self._checkpoint_pending and self.path in ("", ":memory:"):
            self._checkpoint_pending = False
        if not self._checkpoint_pending or not self._conn.getautocommit():
            return not self._checkpoint_pending
        with map_errors():
            busy, log, done = self._wal_checkpoint()
        if busy == 0 and log == done:
            self._checkpoint_pending = False
        return not self._checkpoint_pending

    def _wal_checkpoint(self) -> tuple[int, int, int]:
        row = self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert row is not None
        return int(row[0]), int(row[1]), int(row[2])

    # -- time --------------------------------------------------------------

    def _now(self) -> datetime:
        now = self._clock()
        if not isinstance(now, datetime):
            raise InvalidInputError(f"the clock returned {now!r}: expected an aware datetime")
        if now.tzinfo is None or now.utcoffset() is None:
            raise NaiveDatetimeError(
                f"the clock returned a naive datetime {now.isoformat()!r}: expected an aware one"
            )
        return now

    def _recorded_now(self) -> int:
        """The recorded_at of a write now: the clock, never before the newest row."""
        newest = self._txn_newest
        if newest is None:
            newest = int(self._conn.execute(
                # Two-argument max() is NULL if either is; coalesce keeps the other.
                "SELECT max(coalesce((SELECT max(arrived_at) FROM revisions), -9e18),"
                " coalesce((SELECT max(erased_at) FROM erasures), -9e18))"
            ).get)
        # Within one write transaction nobody else can commit, so the newest
        # recorded time is what this transaction last used.
        self._txn_newest = max(to_micros(self._now()), newest)
        return self._txn_newest

    def user_zone(self, user_id: str) -> str:
        """The user's IANA zone: the one their newest memory was first written in (UTC if none).

        The rule writes use when a call gives no ``tz``, so interfaces show times on that clock.
        """
        return self._user_zone(user_id) or "UTC"

    def _user_zone(self, user_id: str) -> str | None:
        if user_id in self._txn_zones:
            return self._txn_zones[user_id]
        tz: str | None = self._conn.execute(
            # Only a memory's first revision is given a zone; later ones copy it.
            "SELECT tz FROM revisions WHERE user_id = ? AND version = 1"
            " ORDER BY arrived_at DESC, seq DESC LIMIT 1",
            (user_id,),
        ).get
        if self._depth and tz is not None:
            self._txn_zones[user_id] = tz
        return tz

    def _axes(
        self,
        as_of: TimeInput | None,
        known_at: TimeInput | None,
        valid_at: TimeInput | None,
        tz: ZoneInfo,
    ) -> tuple[int, int]:
        """(known, valid) in microseconds: see the module docstring for the defaults."""
        base = None if as_of is None else instant_micros(as_of, name="as_of", tz=tz)
        if known_at is not None:
            known = instant_micros(known_at, name="known_at", tz=tz)
        else:
            known = base if base is not None else to_micros(self._now())
        if valid_at is not None:
            valid = instant_micros(valid_at, name="valid_at", tz=tz)
        else:
            valid = base if base is not None else known
        return known, valid

    @contextlib.contextmanager
    def _write(self) -> Iterator[int]:
        with self._transaction():
            yield self._recorded_now()

    # -- lookups used by writes -------------------------------------------

    def resolve_id(self, prefix: str) -> str:
        """The memory id that starts with ``prefix`` (case-insensitive).

        Raises:
            NotFoundError: no memory, or more than one, has that prefix.
        """
        if not isinstance(prefix, str) or not prefix.strip():
            raise NotFoundError(f"memory id {prefix!r} is not an id: expected a memory id")
        p = prefix.strip().upper()
        rows = self._conn.execute(
            "SELECT memory_id FROM memories WHERE memory_id >= ? AND memory_id < ? "
            "ORDER BY memory_id LIMIT 2",
            (p, p + "~"),
        ).fetchall()
        if not rows:
            raise NotFoundError(f"no memory with id {prefix!r}")
        if len(rows) > 1 and rows[0][0] != p:
            raise NotFoundError(f"memory id prefix {prefix!r} is ambiguous: give more characters")
        return str(rows[0][0])

    def _state(self, memory_id: str, *, writable: bool = True) -> Revision:
        """The newest revision of a memory (for a write to follow)."""
        if not isinstance(memory_id, str):
            raise NotFoundError(f"memory id {memory_id!r} is not an id: expected a string")
        q = queries.get_as_of(memory_id, _LATEST)
        row = self._conn.execute(q.sql, q.params).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        rev = revision_from_row(row, None)
        if writable and rev.erased:
            raise ErasedError(f"memory {memory_id!r} was erased: it takes no more writes")
        return rev

    def _zone_for(self, tz: str | ZoneInfo | None, user_id: str) -> ZoneInfo:
        if tz is not None:
            return zone(tz)
        return zone(self._user_zone(user_id) or "UTC")

    # -- the append ----------------------------------------------------------

    def _append(
        self,
        *,
        memory_id: str,
        user_id: str,
        kind: str,
        key: str | None,
        version: int,
        op: str,
        valid_from: int,
        valid_to: int | None,
        precision: str,
        valid_source: str,
        observed_at: int,
        recorded_at: int,
        tz: str,
        expires_at: int | None,
        retracted: bool,
        corrected: bool,
        prev_rev: str | None,
        supersedes: str | None,
        superseded_by: str | None,
        text: str,
        value: str | None,
        attributes: str | None,
        source: str | None,
        reason: str | None,
    ) -> Revision:
        """Insert one revision and its content; return it as a read at recorded_at would.

        Its hybrid logical clock is its recorded time (shifted past a 10-bit counter), or
        one more than the greatest clock among the memory's revisions if that is later
        (a device whose wall clock lags another's still orders its write after what it saw).
        """
        rev_id = new_id(recorded_at)
        hlc = recorded_at << 10
        if version > 1:
            seen = self._conn.execute(_MAX_HLC, (memory_id,)).get
            if seen is not None and seen >= hlc:
                hlc = seen + 1
        self._conn.execute(
            "INSERT INTO revisions (rev_id, memory_id, user_id, version, op, valid_from, valid_to,"
            " precision, valid_source, observed_at, recorded_at, tz, expires_at, retracted,"
            " corrected, prev_rev, supersedes, superseded_by, origin, hlc, arrived_at)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (rev_id, memory_id, user_id, version, op, valid_from, valid_to, precision,
             valid_source, observed_at, recorded_at, tz, expires_at, int(retracted),
             int(corrected), prev_rev, supersedes, superseded_by, self.device_id, hlc, recorded_at),
        )
        rev_seq = self._conn.last_insert_rowid()
        self._conn.execute(
            "INSERT INTO content (rev_seq, memory_id, text, value, attributes, source, reason)"
            " VALUES (?,?,?,?,?,?,?)",
            (rev_seq, memory_id, text, value, attributes, source, reason),
        )
        if self._embedder is not None:
            self._unembedded.append(Pending(rev_seq, memory_id, user_id, recorded_at, text))
        built: Revision = _new_revision(
            rev_id=rev_id, memory_id=memory_id, user_id=user_id, kind=kind, key=key,
            version=version, op=op, text=text, value=loads_json(value), attributes=loads_json(attributes),
            source=loads_json(source), reason=reason, valid_from=from_micros(valid_from),
            valid_to=None if valid_to is None else from_micros(valid_to), precision=precision,
            valid_source=valid_source, observed_at=from_micros(observed_at),
            recorded_at=from_micros(recorded_at), tz=tz,
            expires_at=None if expires_at is None else from_micros(expires_at),
            prev_rev=prev_rev, supersedes=supersedes, superseded_by=superseded_by,
            origin=self.device_id, retracted=retracted, corrected=corrected, erased=False,
            expired=expires_at is not None and expires_at <= recorded_at, stale=False,
        )
        return built

    def _follow(self, rev: Revision, recorded_at: int, op: str, **changes: Any) -> Revision:
        """Append a revision that copies ``rev`` forward with ``changes``."""
        row: dict[str, Any] = {
            "memory_id": rev.memory_id,
            "user_id": rev.user_id,
            "kind": rev.kind,
            "key": rev.key,
            "version": rev.version + 1,
            "op": op,
            "valid_from": to_micros(rev.valid_from),
            "valid_to": None if rev.valid_to is None else to_micros(rev.valid_to),
            "precision": rev.precision,
            "valid_source": rev.valid_source,
            "observed_at": recorded_at,
            "recorded_at": recorded_at,
            "tz": rev.tz,
            "expires_at": None if rev.expires_at is None else to_micros(rev.expires_at),
            "retracted": rev.retracted,
            "corrected": rev.corrected,
            "prev_rev": rev.rev_id,
            "supersedes": rev.supersedes,
            "superseded_by": rev.superseded_by,
            "text": rev.text,
            "value": encode_json(rev.value, "value"),
            "attributes": encode_json(rev.attributes, "attributes"),
            "source": encode_json(rev.source, "source"),
            "reason": None,
        }
        row.update(changes)
        return self._append(**row)

    # -- writes ----------------------------------------------------------------

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
        check_text(text)
        check_text(user_id, "user_id")
        check_text(kind, "kind")
        optional_text(key, "key")
        optional_text(reason, "reason")
        if precision is not None:
            check_precision(precision)
        if tz is not None:
            zone(tz)
        encoded = _encoded(value, attributes, source)  # bad JSON is refused before the write begins
        if not isinstance(resolve, bool):
            raise InvalidInputError(f"resolve={resolve!r} is not a bool")
        with self._write() as now:
            z = self._zone_for(tz, user_id)
            observed = observed_micros(observed_at, now, z)
            state = key is not None or supersedes is not None
            reading = resolve and valid_from is None
            text, said_source, said = read_times(text, source, observed, z, reading, state)
            if said_source is not source:  # the message was kept in it: encode the new source only
                encoded = (encoded[0], encoded[1], encode_json(said_source, "source"))
            return self._assert(
                text, user_id=user_id, now=now, zone_=z, observed=observed, said=said,
                valid_from=valid_from, valid_to=valid_to, precision=precision, expires=expires,
                key=key, supersedes=supersedes, kind=kind, encoded=encoded, reason=reason,
            )

    def add_messages(
        self,
        messages: Sequence[Mapping[str, Any]],
        user_id: str,
        tz: str | ZoneInfo | None = None,
        *,
        roles: Sequence[str] = ("user",),
        kind: str = "message",
        source: Mapping[str, Any] | None = None,
    ) -> list[Revision]:
        """Import a conversation, mem0-style: one memory per message from ``roles``.

        Each message is ``{"role", "content", "sent_at"}``; its time phrases are
        resolved against its own ``sent_at`` in ``tz``, never against today.
        Messages from other roles (the assistant's replies) are skipped. Every
        message is checked before anything is written, and all are written in
        one transaction: the import lands whole or not at all.

        Returns:
            The first revision of each memory written, in message order.

        Raises:
            InvalidInputError: a message is not a mapping, lacks a field, or
                has an empty content; ``source`` is not a mapping.
            NaiveDatetimeError, InvalidTimeError, UnknownZoneError: a bad
                ``sent_at`` or zone.
        """
        return import_messages(self, messages, user_id, tz, roles=roles, kind=kind, source=source)

    def _assert(
        self,
        text: str,
        *,
        user_id: str,
        now: int,
        zone_: ZoneInfo,
        observed: int,
        said: tuple[int, int | None, str] | None,
        valid_from: TimeInput | None,
        valid_to: TimeInput | None,
        precision: str | None,
        expires: TimeInput | None,
        key: str | None,
        supersedes: str | None,
        kind: str,
        encoded: tuple[str | None, str | None, str | None],
        reason: str | None,
    ) -> Revision:
        vt = None
        if valid_from is not None:
            start = parse_time(valid_from, name="valid_from", tz=zone_)
            vf, prec, vsrc = to_micros(start.at), precision or start.precision, "explicit"
        elif said is not None:
            vf, vt, prec = said
            prec, vsrc = precision or prec, "resolved"
        else:
            vf, prec, vsrc = observed, precision or "instant", "assumed"
        if valid_to is not None:
            end = parse_time(valid_to, name="valid_to", tz=zone_).at
            check_interval(from_micros(vf), end)
            vt = to_micros(end)
        exp = self._expiry(expires, zone_)

        old: Revision | None = None
        if supersedes is not None:
            old = self._state(supersedes)
            self._check_supersedable(old, user_id, vf)
            if key is None:
                key = old.key
        elif key is not None:
            old = self._key_head(user_id, key, vf, vt)

        memory_id = new_id(now)
        self._conn.execute(
            "INSERT INTO memories (memory_id, user_id, kind, key, created_at) VALUES (?,?,?,?,?)",
            (memory_id, user_id, kind, key, now),
        )
        value, attributes, source = encoded
        new = self._append(
            memory_id=memory_id, user_id=user_id, kind=kind, key=key, version=1,
            op="supersede" if old else "assert",
            valid_from=vf, valid_to=vt, precision=prec, valid_source=vsrc,
            observed_at=observed, recorded_at=now, tz=zone_.key, expires_at=exp,
            retracted=False, corrected=False, prev_rev=None,
            supersedes=old.memory_id if old else None, superseded_by=None,
            text=text, value=value, attributes=attributes, source=source, reason=reason,
        )
        self._txn_zones[user_id] = zone_.key  # this user's last given zone, from now on
        if old is not None:
            old_to = old.valid_to
            closes = old_to is None or to_micros(old_to) > vf
            self._follow(
                old, now, "superseded",
                observed_at=observed,
                valid_to=vf if closes else to_micros(old_to),  # type: ignore[arg-type]
                superseded_by=memory_id,
                reason=reason,
            )
        return new

    def _expiry(self, expires: TimeInput | None, z: ZoneInfo) -> int | None:
        if expires is None:
            return None
        moment: Moment = parse_time(expires, name="expires", tz=z)
        return to_micros(period_end(moment, z))

    def _check_supersedable(self, rev: Revision, user_id: str, valid_from: int) -> None:
        if rev.user_id != user_id:
            raise InvalidOperationError(
                f"memory {rev.memory_id!r} belongs to user {rev.user_id!r}, not {user_id!r}: "
                "a memory can only be superseded by one about the same user"
            )
        if rev.retracted:
            raise InvalidOperationError(f"memory {rev.memory_id!r} is retracted: nothing to supersede")
        if rev.superseded_by is not None:
            raise InvalidOperationError(
                f"memory {rev.memory_id!r} is already superseded by {rev.superseded_by!r}: "
                "supersede that one instead"
            )
        if valid_from <= to_micros(rev.valid_from):
            raise InvalidIntervalError(
                f"valid_from={from_micros(valid_from).isoformat()!r} is not after the superseded "
                f"memory's start {rev.valid_from.isoformat()!r}: a new fact must start after the "
                "one it replaces (use correct() if the old account was wrong)"
            )

    def _key_head_row(self, user_id: str, key: str) -> tuple[Any, ...] | None:
        """The key's current value (queries.KEY_HEAD), found among the user's latest-starting
        revisions first: a key that changes daily for years would otherwise make every new
        value read all the earlier ones."""
        boundary = self._conn.execute(queries.NTH_LATEST_START, (user_id, KEY_HEAD_WINDOW)).fetchone()
        after = -(2**63) if boundary is None else boundary[0]
        row: tuple[Any, ...] | None = self._conn.execute(
            queries.KEY_HEAD_AFTER, (user_id, key, after)
        ).fetchone()
        if row is None and boundary is not None:  # the value starts before the window: look everywhere
            row = self._conn.execute(queries.KEY_HEAD, (user_id, key)).fetchone()
        return row

    def _key_head(self, user_id: str, key: str, vf: int, vt: int | None) -> Revision | None:
        """The memory a new value for ``key`` supersedes (None: keep both apart)."""
        row = self._key_head_row(user_id, key)
        if row is None:
            return None
        head = revision_from_row(row, None)
        start = to_micros(head.valid_from)
        if vf > start:
            return head
        if vt is not None and vt <= start:
            return None  # an earlier value of the key: history, not a change
        raise InvalidIntervalError(
            f"key {key!r} of user {user_id!r} already holds {head.text!r} from "
            f"{head.valid_from.isoformat()!r}: a new value must start after it (it then "
            "supersedes it) or end at or before it (it is then history)"
        )

    def correct(
        self,
        memory_id: str,
        *,
        text: str | _Unset = UNSET,
        value: Any = UNSET,
        valid_from: TimeInput | _Unset = UNSET,
        valid_to: TimeInput | None | _Unset = UNSET,
        precision: str | _Unset = UNSET,
        attributes: Mapping[str, Any] | None | _Unset = UNSET,
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
        if text is not UNSET:
            check_text(text)
        if precision is not UNSET:
            check_precision(precision)
        optional_text(reason, "reason")
        new_value = encode_json(value, "value") if value is not UNSET else UNSET
        new_attrs = encode_attributes(attributes) if attributes is not UNSET else UNSET
        new_source = encode_json(source, "source") if source is not UNSET else UNSET
        with self._write() as now:
            rev = self._state(memory_id)
            if rev.retracted:
                raise InvalidOperationError(
                    f"memory {memory_id!r} is retracted: add a new memory instead of correcting it"
                )
            z = zone(rev.tz)
            changes: dict[str, Any] = {}
            if text is not UNSET and text != rev.text:
                changes["text"] = text
            if new_value is not UNSET and new_value != encode_json(rev.value, "value"):
                changes["value"] = new_value
            if new_attrs is not UNSET and new_attrs != encode_json(rev.attributes, "attributes"):
                changes["attributes"] = new_attrs
            vf, vt = to_micros(rev.valid_from), (None if rev.valid_to is None
                                                  else to_micros(rev.valid_to))
            if valid_from is not UNSET:
                start = parse_time(valid_from, name="valid_from", tz=z)
                vf = to_micros(start.at)
                if precision is UNSET and start.precision != rev.precision and start.is_date:
                    changes["precision"] = start.precision
            if valid_to is not UNSET:
                vt = None if valid_to is None else to_micros(
                    parse_time(valid_to, name="valid_to", tz=z).at)
            check_interval(from_micros(vf), None if vt is None else from_micros(vt))
            if vf != to_micros(rev.valid_from):
                changes["valid_from"] = vf
                changes["valid_source"] = "explicit"
            if vt != (None if rev.valid_to is None else to_micros(rev.valid_to)):
                changes["valid_to"] = vt
            if precision is not UNSET and precision != rev.precision:
                changes["precision"] = precision
            if not changes:
                raise InvalidOperationError(
                    f"correct({memory_id!r}) changes nothing: give a different text, value, "
                    "attributes, valid time or precision"
                )
            if new_source is not UNSET:
                changes["source"] = new_source
            if observed_at is not None:
                changes["observed_at"] = to_micros(
                    parse_time(observed_at, name="observed_at", tz=z).at)
            return self._follow(rev, now, "correct", corrected=True, reason=reason, **changes)

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
        check_text(text)
        optional_text(reason, "reason")
        if precision is not None:
            check_precision(precision)
        encoded = _encoded(value, attributes, source)  # bad JSON is refused before the write begins
        if not isinstance(resolve, bool):
            raise InvalidInputError(f"resolve={resolve!r} is not a bool")
        with self._write() as now:
            old = self._state(memory_id)
            z = zone(old.tz)
            observed = observed_micros(observed_at, now, z)
            reading = resolve and valid_from is None
            text, said_source, said = read_times(text, source, observed, z, reading, True)
            if said_source is not source:  # the message was kept in it: encode the new source only
                encoded = (encoded[0], encoded[1], encode_json(said_source, "source"))
            return self._assert(
                text, user_id=old.user_id, now=now, zone_=z, observed=observed, said=said,
                valid_from=valid_from, valid_to=valid_to, precision=precision, expires=expires,
                key=old.key, supersedes=memory_id, kind=old.kind, encoded=encoded, reason=reason,
            )

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
        optional_text(reason, "reason")
        with self._write() as now:
            state = self._state(memory_id)
            if state.retracted:
                raise InvalidOperationError(f"memory {memory_id!r} is already retracted")
            obs = now if observed_at is None else to_micros(
                parse_time(observed_at, name="observed_at", tz=zone(state.tz)).at)
            return self._follow(state, now, "retract", retracted=True, reason=reason,
                                observed_at=obs)

    def expire(
        self, memory_id: str, on: TimeInput, *, reason: str | None = None
    ) -> Revision:
        """Set or move a memory's expiry.

        Args:
            memory_id: the memory.
            on: a date (the memory stays visible through that local day in the
                memory's zone) or an instant (hidden from that instant on).
            reason: why.

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is retracted, or already expires then.
        """
        optional_text(reason, "reason")
        with self._write() as now:
            state = self._state(memory_id)
            if state.retracted:
                raise InvalidOperationError(f"memory {memory_id!r} is retracted: nothing to expire")
            exp = self._expiry(on, zone(state.tz))
            if state.expires_at is not None and to_micros(state.expires_at) == exp:
                raise InvalidOperationError(
                    f"memory {memory_id!r} already expires at {state.expires_at.isoformat()!r}"
                )
            return self._follow(state, now, "expire", expires_at=exp, reason=reason)

    def erase(self, memory_id: str, reason: str | None = None, *, by: str | None = None) -> Erasure:
        """Destroy the content of every revision of a memory (privacy erasure).

        The words are removed from the content table and the full-text index
        (which is merged anew before the transaction commits, so no stale
        segment keeps them), freed pages are zeroed, and the WAL is
        checkpointed and truncated once the transaction commits. If that
        checkpoint cannot finish (another reader, a storage fault), the erase is
        still committed; ``Erasure.checkpointed`` is False and the checkpoint is
        retried after every later write and on close. A tombstone (who, when,
        why) remains, as do the revision rows without their content. Keep
        ``reason`` free of the erased content: it is kept. Merging the index
        costs time in proportion to its size (see the README's benchmarks).

        Raises:
            NotFoundError: no such memory.
            ErasedError: it is already erased.
        """
        optional_text(reason, "reason")
        optional_text(by, "by")
        with self._write() as now:
            rev = self._state(memory_id)
            tomb_id = new_id(now)
            self._conn.execute(
                "INSERT INTO erasures (memory_id, tomb_id, user_id, erased_at, erased_by, reason,"
                " origin) VALUES (?,?,?,?,?,?,?)",
                (memory_id, tomb_id, rev.user_id, now, by, reason, self.device_id),
            )
            self._erased_in_txn = True
        done = self._depth == 0 and not self._checkpoint_pending
        return Erasure(memory_id, rev.user_id, from_micros(now), by, reason, tomb_id, done)

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
        embedder = self._embedder
        if embedder is None:
            raise InvalidOperationError(
                "embed_missing() needs an embedder: open the store with localmem.open(path, embedder=...)")
        if user_id is not None:
            check_text(user_id, "user_id")
        total, after = 0, 0
        while True:
            with self._transaction():
                batch = missing(self._conn, embedder.name, user_id=user_id, after=after, limit=BATCH_SIZE)
                if batch:
                    total += _store_vectors(self._conn, embedder, batch, embedded_at=self._recorded_now())
                    after = batch[-1].rev_seq
            if len(batch) < BATCH_SIZE:
                return total

    # -- sync --------------------------------------------------------------------

    def export(self, path: str | os.PathLike[str], *, since: int | None = None,
               user_id: str | None = None) -> ExportSummary:
        """Write this store's rows to a sync file another device can import.

        The file is gzip'd JSON lines: a header (format and schema versions, this
        device's id, created_at, the watermark range, row counts), the rows (memories,
        revisions with their content, derivations, every tombstone), and a trailer with
        the SHA-256 of all lines before it. It is written beside ``path`` and renamed
        into place when whole. Rows are streamed, never held in memory together.

        Args:
            path: the file to write (replaced if it exists).
            since: a watermark from an earlier export (``ExportSummary.watermark``):
                only revisions recorded here after it travel (tombstones always do).
            user_id: only this user's rows.

        Raises:
            InvalidInputError: a bad ``since`` or ``user_id``.
        """
        return _sync.export(self, path, since=since, user_id=user_id)

    def import_(self, path: str | os.PathLike[str]) -> ImportSummary:
        """Apply a sync file from another device: verified first, then all or nothing.

        The header, versions and checksum are checked by reading the whole file before
        anything is written; the rows are then applied in one transaction. Rows already
        here are skipped, so importing a file twice changes nothing the second time
        (``ImportSummary.changed`` is False). Each revision keeps its origin's recorded_at,
        device and clock; it becomes visible to reads known at K only if it had arrived
        here by K. A revision of a memory erased here is stored without its content.

        Raises:
            SyncFileError: the file is empty, not gzip, truncated, altered (checksum) or
                malformed; SyncVersionError: another format or schema version;
                SyncParentError: a row refers to something neither here nor earlier in it.
        """
        return _sync.import_(self, path)

    def sync_dir(self, directory: str | os.PathLike[str]) -> SyncSummary:
        """Sync through a folder every device can see (a USB stick, a synced drive).

        Imports, in order, every other device's export files there that this store has
        not imported yet (a watermark per peer, kept in ``sync_peers``), then writes this
        device's own incremental export (``<device>.<n>.lmsync.gz``) if anything is new.
        """
        return _sync.sync_dir(self, directory)

    def digest(self) -> str:
        """A SHA-256 of every row that syncs, in canonical order: equal on converged replicas."""
        return _sync.digest(self)

    # -- the file ----------------------------------------------------------------

    def info(self) -> StoreInfo:
        """Counts and identity of this database file."""
        c = self._conn
        size = 0
        if self.path not in ("", ":memory:"):
            size = sum(Path(self.path + s).stat().st_size
                       for s in ("", "-wal") if Path(self.path + s).exists())
        return StoreInfo(
            path=self.path or ":memory:",
            schema_version=c.pragma("user_version"),
            device_id=self.device_id,
            users=c.execute("SELECT count(DISTINCT user_id) FROM memories").get,
            memories=c.execute("SELECT count(*) FROM memories").get,
            revisions=c.execute("SELECT count(*) FROM revisions").get,
            erasures=c.execute("SELECT count(*) FROM erasures").get,
            size_bytes=size,
        )

    def doctor(self) -> DoctorReport:
        """Check the file: SQLite's integrity, the FTS index, and localmem's invariants."""
        with map_errors():
            return DoctorReport(tuple(run_checks(
                self._conn, schema_sql(), SCHEMA_VERSION, APPLICATION_ID)))
