"""The write core: the one place rows are appended, and the rules every write follows.

A :class:`Ledger` wraps one connection and the store's clock. The store's writes
(:mod:`localmem.core.writes`), derived memories, runs and receipts
(:mod:`localmem.replay`) and sync's imports (:mod:`localmem.sync`) all go
through its named methods; none of them opens a transaction or appends a
revision any other way. The rules it holds:

* **One transaction per write.** :meth:`Ledger.transaction` is BEGIN IMMEDIATE at
  the top (a savepoint-free nesting inside it: see :meth:`Ledger.transaction`), and
  :meth:`Ledger.write` is a transaction that also yields the write's recorded time.
* **Recorded time never goes backwards.** A write records at the clock's time, or at
  the newest time already in the file (its newest arrival or erasure) if the clock
  reads earlier.
* **A revision carries its memory's whole state.** :meth:`Ledger.append` writes the
  revision and its content; :meth:`Ledger.follow` copies a memory's current revision
  forward with changes; its hybrid logical clock orders it after every revision of
  the memory it saw.
* **A supersession closes the old memory** where the new one starts
  (:meth:`Ledger.close_superseded`), and only a live memory of the same user can be
  superseded (:meth:`Ledger.check_supersedable`).
* **Vectors with their words.** With an embedder, each appended text is embedded in
  the write's own transaction, just before it commits.
* **Erased words leave the file.** A transaction that erased something merges the
  full-text index before it commits and checkpoints the WAL after. Before it commits
  it leaves a marker file beside the database (``<db>-erasing``), removed once the
  checkpoint is done: a crash in between leaves the marker, and the next open
  checkpoints (scrubbing the main file) before anything else; ``doctor`` fails while
  a marker is there.
* **Erasing a memory erases what was derived from it.** A summary quotes its sources,
  so keeping it would keep the erased words: every memory derived (directly or not)
  from an erased one is erased in the same transaction, with its own tombstone.
* **Recorded times stay in a bounded range**, :data:`EARLIEST_RECORDED` to
  :data:`LATEST_RECORDED` (1970 to 2200 UTC): a hybrid clock (microseconds shifted
  past a 10-bit counter) then always fits SQLite's 64-bit integers. A clock outside
  it makes every write fail with InvalidTimeError, before anything is written.
* **Every revision is hashed** (:mod:`localmem.core.chain`): its content, its fields
  chained to the revision it follows, and the store's local chain.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import apsw

from ..errors import (
    BatchAbortedError,
    ErasedError,
    InvalidInputError,
    InvalidIntervalError,
    InvalidOperationError,
    InvalidTimeError,
    LocalmemError,
    NaiveDatetimeError,
    NotFoundError,
    StorageError,
)
from ..time.clock import (
    Clock,
    Micros,
    TimeInput,
    from_micros,
    instant_micros,
    parse_time,
    period_end,
    to_micros,
    zone,
)
from ..time.interval import Precision, check_interval, check_precision
from . import chain, sql
from .db import map_errors, transaction
from .embedding import Embedder, Pending, store_vectors
from .ids import new_id
from .inputs import check_memory_id, encode_json
from .revision import Op, Revision, ValidSource, loads_json, new_revision, revision_from_row

__all__ = ["Ledger", "LATEST", "KEY_HEAD_WINDOW", "EARLIEST_RECORDED", "LATEST_RECORDED",
           "ValidSpan", "erase_marker"]

#: A valid time worked out for a write: (valid_from, valid_to or None, precision, valid_source).
ValidSpan = tuple[Micros, Micros | None, Precision, ValidSource]

#: "Known at the end of time": a read at LATEST sees the newest revision of all.
LATEST: Micros = 2**62
#: The newest instant the file holds in any append-only log: what a backfill must not go before.
_NEWEST_ANY = (
    "SELECT max(coalesce((SELECT max(arrived_at) FROM revisions), -9e18),"
    " coalesce((SELECT max(erased_at) FROM erasures), -9e18),"
    " coalesce((SELECT max(used_at) FROM usage), -9e18),"
    " coalesce((SELECT max(recorded_at) FROM run_events), -9e18),"
    " coalesce((SELECT max(recorded_at) FROM decisions), -9e18))"
)
#: How many of a user's latest-starting revisions a new key value looks among for the key's
#: current value before it reads the key's whole history.
KEY_HEAD_WINDOW = 64
#: The earliest recorded time a write takes: 1970-01-01T00:00Z (ids carry unsigned milliseconds).
EARLIEST_RECORDED: Micros = 0
#: The end of the recorded times a write takes: 2200-01-01T00:00Z. Its hybrid clock,
#: ``micros << 10``, is about 7.4e18, leaving room below 2**63 for the counters.
LATEST_RECORDED: Micros = 7_258_118_400_000_000


#: Where :meth:`Ledger.append_new` finds a revision row's seq, memory, user, recorded time and zone.
_AT = tuple(sql.STAGED[1].columns.index(c) for c in ("seq", "memory_id", "user_id", "recorded_at", "tz"))


def erase_marker(conn: apsw.Connection) -> str | None:
    """The marker file that says an erase's checkpoint is unfinished (None for an in-memory store)."""
    name = str(conn.filename)
    return None if name in ("", ":memory:") else name + "-erasing"


class Ledger:
    """One connection's writes and the state a write transaction keeps.

    Not shared between threads: the store that owns it is one per thread or process.
    """

    def __init__(self, conn: apsw.Connection, clock: Clock, embedder: Embedder | None) -> None:
        self.connection = conn
        self.clock = clock
        self.embedder = embedder
        self.device_id: str = conn.execute("SELECT value FROM store_meta WHERE name = 'device_id'").get
        # Content written in the open transaction that still needs a vector; embedded in
        # one go (batched) just before the transaction commits.
        self._unembedded: list[Pending] = []
        self._depth = 0  # nesting of transaction()
        self._doomed: str | None = None  # why the open transaction must roll back
        # Known while a write transaction is open (and only then): the newest recorded_at
        # and each user's last zone, saving a query per write.
        self._txn_newest: Micros | None = None
        self._txn_zones: dict[str, str] = {}
        self._erased_in_txn = False  # the open transaction erased something
        self._checkpoint_pending = False  # an erase's words may still be in the WAL
        self._txn_head: bytes | None = None  # the chain head, once read in the open transaction
        self._head_known = False
        marker = erase_marker(conn)
        if marker is not None and os.path.exists(marker):
            # An erase committed but its checkpoint never finished (a crash): scrub now.
            self._checkpoint_pending = True
            # Best effort: a reader in another process, or a read-only file, leaves it for later
            # (after the next write, or at close; doctor reports it meanwhile).
            with contextlib.suppress(LocalmemError, apsw.Error):
                self.checkpoint()

    # -- transactions ------------------------------------------------------------

    @property
    def in_transaction(self) -> bool:
        """Whether a write transaction (a batch, or a write) is open."""
        return self._depth > 0

    @property
    def checkpoint_pending(self) -> bool:
        """Whether an erase's words may still be in the WAL (the checkpoint after it did not finish)."""
        return self._checkpoint_pending

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction: everything inside commits, or nothing does.

        Nested inside another, it runs without a savepoint of its own (a savepoint costs a
        sixth of a write): a write refused before it changed a row leaves the outer one as
        it was; one that fails after changing rows dooms it, every later write in it raises
        BatchAbortedError, and the outer block rolls back and raises it too.
        """
        if self._depth:
            yield from self._nested()
            return
        self._depth = 1
        self._doomed = None
        self._txn_newest = None
        self._txn_zones.clear()
        self._head_known = False
        try:
            with transaction(self.connection):
                yield
                if self._doomed is not None:
                    raise BatchAbortedError(
                        f"a write in this batch failed after changing rows ({self._doomed}); "
                        "the whole batch was rolled back"
                    )
                if self._unembedded and self.embedder is not None:
                    # In the writes' own transaction: an embedder that fails fails them,
                    # and a vector never lands without its text.
                    store_vectors(self.connection, self.embedder, self._unembedded)
                if self._erased_in_txn:
                    # Merge the full-text index into one new segment so no old segment or
                    # page key still holds an erased token.
                    self.connection.execute("INSERT INTO content_fts (content_fts) VALUES ('optimize')")
                    self._mark_erasure()
        except BaseException:
            if self._erased_in_txn and not self._checkpoint_pending:
                # Rolled back: no erase committed, so none awaits a checkpoint.
                self._unmark_erasure()
            self._erased_in_txn = False
            raise
        finally:
            self._depth = 0
            self._doomed = None
            self._txn_newest = None
            self._txn_zones.clear()
            self._unembedded.clear()
            self._head_known = False
        if self._erased_in_txn:
            self._erased_in_txn = False
            self._checkpoint_pending = True
        # A failed checkpoint leaves the flag set; the next commit retries.
        with contextlib.suppress(StorageError):
            self.checkpoint()

    def _nested(self) -> Iterator[None]:
        if self.connection.getautocommit():
            raise StorageError(
                "this batch was rolled back by SQLite after a storage error; nothing in it "
                "was committed: leave the `with store.batch():` block and start again"
            )
        if self._doomed is not None:
            raise BatchAbortedError(
                f"an earlier write in this batch failed after changing rows ({self._doomed}); "
                "the batch will be rolled back: leave the `with store.batch():` block"
            )
        changes = self.connection.total_changes()
        self._depth += 1
        try:
            with map_errors():
                yield
        except BaseException as exc:
            if self.connection.total_changes() != changes:
                self._doomed = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            self._depth -= 1

    @contextlib.contextmanager
    def write(self, backfill: tuple[Micros, str] | None = None,
              reading: Micros | None = None) -> Iterator[Micros]:
        """A write transaction, yielding the write's recorded time (see :meth:`recorded_now`, with
        the ``reading`` taken before it began if given; with ``backfill=(at, name)``,
        :meth:`recorded_backfill`)."""
        with self.transaction():
            yield self.recorded_now(reading) if backfill is None else self.recorded_backfill(*backfill)

    def note_erasure(self) -> None:
        """Say that the open transaction destroyed content (an erase, or an imported tombstone):
        the index is merged before it commits and the WAL checkpointed after."""
        self._erased_in_txn = True

    def checkpoint(self) -> bool:
        """Copy the WAL into the main file and truncate it, if an erase asked for it.

        Returns True when nothing is pending any more.
        """
        if self._checkpoint_pending and str(self.connection.filename) in ("", ":memory:"):
            self._checkpoint_pending = False
        if not self._checkpoint_pending or not self.connection.getautocommit():
            return not self._checkpoint_pending
        with map_errors():
            row = self.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert row is not None
        busy, log, done = int(row[0]), int(row[1]), int(row[2])
        if busy == 0 and log == done:
            self._checkpoint_pending = False
            self._unmark_erasure()
        return not self._checkpoint_pending

    def _unmark_erasure(self) -> None:
        marker = erase_marker(self.connection)
        if marker is not None:
            with contextlib.suppress(OSError):
                os.unlink(marker)

    def _mark_erasure(self) -> None:
        # Durable before the commit is: a crash after the commit finds it on the next open.
        marker = erase_marker(self.connection)
        if marker is None:
            return
        try:
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            dfd = os.open(os.path.dirname(os.path.abspath(marker)), os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError as exc:
            raise StorageError(
                f"cannot write the erase marker {marker!r} ({exc.strerror or exc}); nothing was erased"
            ) from exc

    # -- time ----------------------------------------------------------------------

    def now(self) -> datetime:
        """The clock's reading, checked: an aware datetime."""
        now = self.clock()
        if not isinstance(now, datetime):
            raise InvalidInputError(f"the clock returned {now!r}: expected an aware datetime")
        if now.tzinfo is None or now.utcoffset() is None:
            raise NaiveDatetimeError(
                f"the clock returned a naive datetime {now.isoformat()!r}: expected an aware one"
            )
        return now

    def newest_recorded(self) -> Micros | None:
        """The newest recorded time in the file (its newest arrival or erasure); None when empty."""
        newest = int(self.connection.execute(sql.NEWEST_RECORDED).get)
        return None if newest < -(2**62) else newest

    def recorded_now(self, reading: Micros | None = None) -> Micros:
        """The recorded_at of a write now: the clock (or ``reading``, a time :meth:`clock_reading`
        gave just before the write began), never before the newest row."""
        newest = self._txn_newest
        if newest is None:
            newest = int(self.connection.execute(sql.NEWEST_RECORDED).get)
        # Within one write transaction nobody else can commit, so the newest recorded
        # time is what this transaction last used.
        at = max(self.clock_reading(newest) if reading is None else reading, newest)
        self._txn_newest = at
        return at

    def clock_reading(self, newest: Micros | None = None) -> Micros:
        """What the recorded time of a write now would be, read without taking the write lock:
        the clock, never before ``newest`` (default: the newest time the file holds).

        Work that needs a write's time before the write begins (reading a message's time
        phrases) uses this, so it runs outside the transaction; the write then records at
        this reading, or later if another process recorded something later meanwhile.

        Raises:
            InvalidTimeError: the clock reads outside the range localmem records.
        """
        if newest is None:
            newest = self._txn_newest if self._depth and self._txn_newest is not None else int(
                self.connection.execute(sql.NEWEST_RECORDED).get)
        now = self.now()
        at = max(to_micros(now), newest)
        if not EARLIEST_RECORDED <= at < LATEST_RECORDED:
            shown = now.isoformat() if to_micros(now) == at else from_micros(at).isoformat()
            raise InvalidTimeError(
                f"the store's clock reads {shown!r}: localmem records writes between "
                "1970-01-01T00:00Z and 2200-01-01T00:00Z (check the system clock or --now)")
        return at

    def recorded_backfill(self, at: Micros, name: str) -> Micros:
        """The recorded_at of a backfilled write: ``at`` itself (when the app knew it), checked.

        Backfill is how an app migrating its own log records each message as known
        when it was sent. Recorded time still never goes backwards: ``at`` must not be
        before anything already in the file (a revision's arrival, an erasure, a search
        logged as usage, a run's event or a decision) nor before the previous backfilled
        write, and not after the clock's now (the store cannot have known the future).

        Raises:
            InvalidInputError: ``at`` is before the newest time in the file, or after now.
        """
        newest = self._txn_newest
        if newest is None:
            newest = int(self.connection.execute(_NEWEST_ANY).get)
        if at < newest:
            raise InvalidInputError(
                f"{name}={from_micros(at).isoformat()!r} is before {from_micros(newest).isoformat()!r}, "
                "the newest time already recorded here: a backfill records each message when it was "
                "sent, so it needs messages in send order, all after everything in the store"
            )
        now = to_micros(self.now())
        if at > now:
            raise InvalidInputError(
                f"{name}={from_micros(at).isoformat()!r} is after the store's now "
                f"{from_micros(now).isoformat()!r}: a backfill cannot record the future"
            )
        self._txn_newest = at
        return at

    def axes(
        self, as_of: TimeInput | None, known_at: TimeInput | None, valid_at: TimeInput | None, tz: ZoneInfo
    ) -> tuple[Micros, Micros]:
        """A read's (known, valid): ``known_at`` else ``as_of`` else now; ``valid_at`` else
        ``as_of`` else known — a read pinned in knowledge is pinned in the world too."""
        base = None if as_of is None else instant_micros(as_of, name="as_of", tz=tz)
        if known_at is not None:
            known = instant_micros(known_at, name="known_at", tz=tz)
        else:
            known = base if base is not None else to_micros(self.now())
        if valid_at is not None:
            valid = instant_micros(valid_at, name="valid_at", tz=tz)
        else:
            valid = base if base is not None else known
        return known, valid

    def expiry(self, expires: TimeInput | None, z: ZoneInfo) -> Micros | None:
        """When ``expires`` hides a memory: a date means through the end of that local period."""
        if expires is None:
            return None
        return to_micros(period_end(parse_time(expires, name="expires", tz=z), z))

    def valid_time(
        self, z: ZoneInfo, *, valid_from: TimeInput | None, valid_to: TimeInput | None,
        precision: Precision | None, otherwise: ValidSpan,
    ) -> ValidSpan:
        """A new memory's valid time: an explicit ``valid_from`` wins (its form gives the precision),
        else ``otherwise`` (what the text said, the sources' hull, or the observed instant); an
        explicit ``valid_to`` ends it and ``precision`` overrides. The interval is checked."""
        source: ValidSource
        if valid_from is not None:
            start = parse_time(valid_from, name="valid_from", tz=z)
            vf, vt, prec, source = to_micros(start.at), None, check_precision(start.precision), "explicit"
        else:
            vf, vt, prec, source = otherwise
        if valid_to is not None:
            vt = to_micros(parse_time(valid_to, name="valid_to", tz=z).at)
        check_interval(from_micros(vf), None if vt is None else from_micros(vt))
        return vf, vt, precision or prec, source

    # -- users and memories ---------------------------------------------------------

    def user_zone(self, user_id: str) -> str | None:
        """The IANA zone last given for a user (None if none was)."""
        if user_id in self._txn_zones:
            return self._txn_zones[user_id]
        tz: str | None = self.connection.execute(sql.USER_ZONE, (user_id,)).get
        if self._depth and tz is not None:
            self._txn_zones[user_id] = tz
        return tz

    def zone_for(self, tz: str | ZoneInfo | None, user_id: str | None) -> ZoneInfo:
        """``tz`` if given, else the user's last zone, else UTC."""
        if tz is not None:
            return zone(tz)
        return zone((self.user_zone(user_id) if user_id is not None else None) or "UTC")

    def resolve_id(self, prefix: str) -> str:
        """The memory id that starts with ``prefix`` (case-insensitive)."""
        check_memory_id(prefix)
        if not prefix.strip():
            raise NotFoundError(f"memory id {prefix!r} is not an id: expected a memory id")
        p = prefix.strip().upper()
        rows = self.connection.execute(sql.MEMORY_ID_PREFIX, (p, p + "~")).fetchall()
        if not rows:
            raise NotFoundError(f"no memory with id {prefix!r}")
        if len(rows) > 1 and rows[0][0] != p:
            raise NotFoundError(f"memory id prefix {prefix!r} is ambiguous: give more characters")
        return str(rows[0][0])

    def state(self, memory_id: str, *, writable: bool = True) -> Revision:
        """The newest revision of a memory: what a write follows.

        Raises:
            NotFoundError: no such memory. ErasedError: it is erased and ``writable``.
        """
        check_memory_id(memory_id)
        row = self.connection.execute(sql.GET_AS_OF, (memory_id, LATEST)).fetchone()
        if row is None:
            raise NotFoundError(f"no memory with id {memory_id!r}")
        rev = revision_from_row(row, None)
        if writable and rev.erased:
            raise ErasedError(f"memory {memory_id!r} was erased: it takes no more writes")
        return rev

    def exists(self, memory_id: str) -> bool:
        """Whether a memory has this exact id."""
        return self.connection.execute(sql.MEMORY_EXISTS, (memory_id,)).fetchone() is not None

    # -- appending ------------------------------------------------------------------

    def new_memory(self, *, user_id: str, kind: str, key: str | None, at: Micros, tz: str) -> str:
        """Create a memory's identity row (its first revision is appended next); returns its id."""
        memory_id = new_id(at)
        self.connection.execute(sql.INSERT_MEMORY, (memory_id, user_id, kind, key, at))
        self._txn_zones[user_id] = tz  # this user's last given zone, from now on
        return memory_id

    def append(self, **row: Any) -> Revision:
        """Insert one revision and its content; return it as a read at recorded_at would.

        ``row`` holds every column of STORED_REVISION_COLUMNS except rev_id, origin, hlc and
        arrived_at (the ledger's), plus kind and key, and the content's columns (value,
        attributes and source as JSON text). Its hybrid logical clock is its recorded time
        (shifted past a 10-bit counter), or one more than the greatest clock among the
        memory's revisions if that is later (a device whose wall clock lags another's still
        orders its write after what it saw).
        """
        recorded_at: Micros = row["recorded_at"]
        memory_id: str = row["memory_id"]
        rev_id = new_id(recorded_at)
        hlc = recorded_at << 10
        prev_hash: bytes | None = None
        if row["version"] > 1:
            found = self.connection.execute(
                sql.MAX_HLC_AND_PREV_HASH, (memory_id, row["prev_rev"])).fetchone()
            assert found is not None  # an aggregate always gives a row
            seen, prev_hash = found
            if seen is not None and seen >= hlc:
                hlc = seen + 1
        content = chain.content_hash(*(row[c] for c in sql.CONTENT_COLUMNS))
        stored = {**row, "rev_id": rev_id, "origin": self.device_id, "hlc": hlc, "arrived_at": recorded_at,
                  "retracted": int(row["retracted"]), "corrected": int(row["corrected"]),
                  "content_hash": content}
        stored["rev_hash"] = chain.rev_hash(
            [stored[c] for c in chain.HASHED_FIELDS], row["kind"], row["key"], content, prev_hash)
        stored["chain"] = self.link(stored["rev_hash"], recorded_at)
        self.connection.execute(sql.INSERT_REVISION, tuple(stored[c] for c in sql.STORED_REVISION_COLUMNS))
        self._txn_head = stored["chain"]
        rev_seq = self.connection.last_insert_rowid()
        self.connection.execute(
            sql.INSERT_CONTENT, (rev_seq, memory_id, *(row[c] for c in sql.CONTENT_COLUMNS)))
        if self.embedder is not None:
            self._unembedded.append(Pending(rev_seq, memory_id, row["user_id"], recorded_at, row["text"]))
        expires_at = row["expires_at"]
        built: Revision = new_revision(
            rev_id=rev_id, memory_id=memory_id, user_id=row["user_id"], kind=row["kind"], key=row["key"],
            version=row["version"], op=row["op"], text=row["text"], value=loads_json(row["value"]),
            attributes=loads_json(row["attributes"]), source=loads_json(row["source"]),
            reason=row["reason"], valid_from=from_micros(row["valid_from"]),
            valid_to=None if row["valid_to"] is None else from_micros(row["valid_to"]),
            precision=row["precision"], valid_source=row["valid_source"],
            observed_at=from_micros(row["observed_at"]), recorded_at=from_micros(recorded_at),
            tz=row["tz"], expires_at=None if expires_at is None else from_micros(expires_at),
            prev_rev=row["prev_rev"], supersedes=row["supersedes"], superseded_by=row["superseded_by"],
            origin=self.device_id, retracted=bool(row["retracted"]), corrected=bool(row["corrected"]),
            erased=False, expired=expires_at is not None and expires_at <= recorded_at, stale=False,
        )
        return built

    def newest_seq(self) -> int:
        """The newest local revision number (0 in an empty file)."""
        return int(self.connection.execute(sql.NEWEST_SEQ).get)

    def append_new(self, memories: list[tuple[Any, ...]], revisions: list[tuple[Any, ...]],
                   contents: list[tuple[Any, ...]]) -> None:
        """Append new memories with their first revisions and content, one statement per table
        (:data:`~localmem.core.sql.STAGED`, whose column orders the rows follow): ``add_many``'s
        rows, seqs given and hashes chained through :meth:`link` and :meth:`set_head`."""
        conn = self.connection
        for staged, rows in zip(sql.STAGED, (memories, revisions, contents), strict=True):
            conn.execute(staged.create)
            conn.executemany(staged.stage, rows)
            conn.execute(staged.insert)
            conn.execute(staged.clear)
        seq, memory, user, recorded, tz = _AT
        for rev, content in zip(revisions, contents, strict=True):
            self._txn_zones[rev[user]] = rev[tz]  # this user's last given zone, from now on
            if self.embedder is not None:
                self._unembedded.append(Pending(rev[seq], rev[memory], rev[user], rev[recorded], content[2]))

    def link(self, revision_hash: bytes | None, arrived_at: Micros) -> bytes:
        """The local chain value of the next revision (see :mod:`localmem.core.chain`); the caller
        inserts it and sets the head (``_txn_head``) once the row is in."""
        if not self._head_known:
            self._txn_head = self.connection.execute(sql.CHAIN_HEAD).get
            self._head_known = True
        return chain.link(self._txn_head, revision_hash, arrived_at)

    def set_head(self, head: bytes) -> None:
        """Say that a revision with local chain value ``head`` was just inserted (by an import)."""
        self._txn_head = head

    def follow(self, rev: Revision, recorded_at: Micros, op: Op, **changes: Any) -> Revision:
        """Append a revision that copies ``rev`` forward with ``changes`` (observed now, no reason
        unless given)."""
        row: dict[str, Any] = {
            "memory_id": rev.memory_id, "user_id": rev.user_id, "kind": rev.kind, "key": rev.key,
            "version": rev.version + 1, "op": op,
            "valid_from": to_micros(rev.valid_from),
            "valid_to": None if rev.valid_to is None else to_micros(rev.valid_to),
            "precision": rev.precision, "valid_source": rev.valid_source,
            "observed_at": recorded_at, "recorded_at": recorded_at, "tz": rev.tz,
            "expires_at": None if rev.expires_at is None else to_micros(rev.expires_at),
            "retracted": rev.retracted, "corrected": rev.corrected, "prev_rev": rev.rev_id,
            "supersedes": rev.supersedes, "superseded_by": rev.superseded_by, "text": rev.text,
            "value": encode_json(rev.value, "value"), "attributes": encode_json(rev.attributes, "attributes"),
            "source": encode_json(rev.source, "source"), "reason": None,
        }
        row.update(changes)
        return self.append(**row)

    def first_revision(self, memory_id: str, *, user_id: str, kind: str, key: str | None, op: Op,
                       span: ValidSpan, observed_at: Micros, recorded_at: Micros, tz: str,
                       expires_at: Micros | None, supersedes: str | None, text: str,
                       encoded: tuple[str | None, str | None, str | None], reason: str | None) -> Revision:
        """Append a new memory's first revision (op assert, supersede or derive)."""
        vf, vt, precision, valid_source = span
        value, attributes, source = encoded
        return self.append(
            memory_id=memory_id, user_id=user_id, kind=kind, key=key, version=1, op=op,
            valid_from=vf, valid_to=vt, precision=precision, valid_source=valid_source,
            observed_at=observed_at, recorded_at=recorded_at, tz=tz, expires_at=expires_at,
            retracted=False, corrected=False, prev_rev=None, supersedes=supersedes, superseded_by=None,
            text=text, value=value, attributes=attributes, source=source, reason=reason,
        )

    # -- supersession -------------------------------------------------------------------

    def check_supersedable(self, rev: Revision, user_id: str, valid_from: Micros) -> None:
        """Refuse to supersede a memory of another user, a retracted or superseded one, or one
        that does not start before ``valid_from``."""
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

    def close_superseded(self, old: Revision, *, by: str, starts: Micros, at: Micros, observed: Micros,
                         reason: str | None) -> Revision:
        """Mark ``old`` superseded by memory ``by``: its interval closes where the new one starts
        (unless it already ended before), and the two are linked."""
        old_to = None if old.valid_to is None else to_micros(old.valid_to)
        return self.follow(old, at, "superseded", observed_at=observed,
                           valid_to=starts if old_to is None or old_to > starts else old_to,
                           superseded_by=by, reason=reason)

    def key_head_row(self, user_id: str, key: str) -> tuple[Any, ...] | None:
        """The key's current value (:data:`~localmem.core.sql.KEY_HEAD`'s row), found among the
        user's latest-starting revisions first: a key that changes daily for years would
        otherwise make every new value read all the earlier ones."""
        conn = self.connection
        boundary = conn.execute(sql.NTH_LATEST_START, (user_id, KEY_HEAD_WINDOW)).fetchone()
        after = -(2**63) if boundary is None else boundary[0]
        row: tuple[Any, ...] | None = conn.execute(sql.KEY_HEAD_AFTER, (user_id, key, after)).fetchone()
        if row is None and boundary is not None:  # the value starts before the window: look everywhere
            row = conn.execute(sql.KEY_HEAD, (user_id, key)).fetchone()
        return row

    def key_head(self, user_id: str, key: str, vf: Micros, vt: Micros | None) -> Revision | None:
        """The memory a new value for ``key`` starting at ``vf`` supersedes (None: keep both apart).

        Raises:
            InvalidIntervalError: the new value overlaps the current one without starting after it.
        """
        row = self.key_head_row(user_id, key)
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

    # -- erasure and usage ------------------------------------------------------------------

    def record_erasure(self, rev: Revision, *, at: Micros, by: str | None, reason: str | None) -> str:
        """Insert a memory's tombstone (its trigger destroys the content); returns the tomb id."""
        tomb_id = new_id(at)
        self.connection.execute(
            sql.INSERT_ERASURE, (tomb_id, rev.memory_id, rev.user_id, at, by, reason, self.device_id))
        self.note_erasure()
        return tomb_id

    def erase_derived(self, memory_ids: list[str], *, at: Micros, by: str | None) -> list[str]:
        """Erase every memory derived, directly or through others, from these erased ones; returns
        their ids. Each gets its own tombstone, whose reason names the memory it was derived from."""
        done: list[str] = []
        todo = list(memory_ids)
        while todo:
            source = todo.pop()
            for row in self.connection.execute(sql.DERIVED_FROM, (source,)).fetchall():
                derived = str(row[0])
                rev = self.state(derived, writable=False)
                if rev.erased:
                    continue
                self.record_erasure(rev, at=at, by=by, reason=f"derived from erased memory {source}")
                done.append(derived)
                todo.append(derived)
        return done

    def log_usage(self, user_id: str, memory_ids: list[str], run_id: str | None) -> None:
        """Append that a search returned these memories (best first), at the recorded time now."""
        with self.write() as now:
            self.connection.executemany(
                sql.INSERT_USAGE, [(user_id, m, now, run_id, i) for i, m in enumerate(memory_ids, 1)])
