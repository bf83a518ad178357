"""Write transactions and the recorded time they take: the base of :class:`~localmem.core.ledger.Ledger`.

:class:`Transactions` holds one connection, the store's clock and embedder, and the
state a write transaction keeps; the ledger builds its appends on it. The rules it holds:

* **One transaction per write.** :meth:`Transactions.transaction` is BEGIN IMMEDIATE at
  the top (a savepoint-free nesting inside it: see :meth:`Transactions.transaction`), and
  :meth:`Transactions.write` is a transaction that also yields the write's recorded time.
* **Recorded time never goes backwards.** A write records at the clock's time, or at
  the newest time already in the file (its newest arrival or erasure) if the clock
  reads earlier.
* **Vectors with their words.** With an embedder, each appended text is embedded in
  the write's own transaction, just before it commits.
* **Erased words leave the file.** A transaction that erased something merges the
  full-text index before it commits and checkpoints the WAL after. Before it commits
  it leaves a marker file beside the database (``<db>-erasing``), removed once the
  checkpoint is done: a crash in between leaves the marker, and the next open
  checkpoints (scrubbing the main file) before anything else; ``doctor`` fails while
  a marker is there.
* **Recorded times stay in a bounded range**, :data:`EARLIEST_RECORDED` to
  :data:`LATEST_RECORDED` (1970 to 2200 UTC): a hybrid clock (microseconds shifted
  past a 10-bit counter) then always fits SQLite's 64-bit integers. A clock outside
  it makes every write fail with InvalidTimeError, before anything is written.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from datetime import datetime

import apsw

from ..errors import (
    BatchAbortedError,
    InvalidInputError,
    InvalidTimeError,
    LocalmemError,
    NaiveDatetimeError,
    StorageError,
)
from ..time.clock import Clock, Micros, from_micros, to_micros
from . import sql
from .db import map_errors, transaction
from .embedding import Embedder, Pending, store_vectors

__all__ = ["Transactions", "LATEST", "EARLIEST_RECORDED", "LATEST_RECORDED", "erase_marker"]

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
#: The earliest recorded time a write takes: 1970-01-01T00:00Z (ids carry unsigned milliseconds).
EARLIEST_RECORDED: Micros = 0
#: The end of the recorded times a write takes: 2200-01-01T00:00Z. Its hybrid clock,
#: ``micros << 10``, is about 7.4e18, leaving room below 2**63 for the counters.
LATEST_RECORDED: Micros = 7_258_118_400_000_000


def erase_marker(conn: apsw.Connection) -> str | None:
    """The marker file that says an erase's checkpoint is unfinished (None for an in-memory store)."""
    name = str(conn.filename)
    return None if name in ("", ":memory:") else name + "-erasing"


class Transactions:
    """One connection's write transactions, their recorded time, and the state an open one keeps.

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
