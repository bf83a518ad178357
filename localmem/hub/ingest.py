"""Ingesting device export files into the hub, with exactly the device's validation.

The rule: a file is applied to the hub if and only if a device holding the hub's rows
would import it, and then it adds what that device would add. That is made true by
construction, not by a second copy of the checks: each file is imported by the device's
own code (:func:`localmem.sync.apply.import_`, which checks the file as it reads it and
rolls back if anything — rows, checksum, trailer — is refused) into a *staging* store, an in-memory device
database seeded with every hub row the file's rows can be checked against (the memories,
revisions, tombstones and provenance links its ids name, the revisions they follow, and
what is derived from the memories it erases). The import raises the device's own error,
with the device's message, or adds rows to the staging store; those rows, and only those,
are then copied into PostgreSQL (COPY), in one PostgreSQL transaction per file.

* Forged or damaged files change nothing: the error is raised before anything is written
  to PostgreSQL, and the transaction is rolled back.
* The seed is read chunk by chunk, for the ids of the rows the import has just parsed, before
  it checks them (:mod:`localmem.hub.seed`): the file is read once, and each row is checked
  against the hub rows its own ids name.
* Idempotent: a row already on the hub is seeded into the staging store, where the device
  import skips it; a repeated file adds nothing and records nothing.
* Concurrent ingesters: each file's transaction takes ``pg_advisory_xact_lock`` on a hash of
  each user its rows name (found by a pattern over its lines first, in a fixed order, so two
  ingesters never deadlock) before it reads what it seeds, so two files of one user are
  checked and applied one after the other, each seeing the other's rows. A row naming a user
  the pattern missed makes the ingest start again with that user locked too.
* Arrival: the staging store's clock is the hub's (injected: ``clock``), so each revision's
  ``arrived_at`` is what a device importing the file then would give it: the later of the
  file's arrival and its origin's recorded time (never before the file reached the hub).
  The file's arrival is recorded in ``hub_files``.
* An erasure a file brings erases, on the hub too, what was derived from the memory; those
  tombstones are the hub's own (origin: the hub's id), as a device's would be its own.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import psycopg

from ..core.db import connect as connect_device
from ..core.ledger import Ledger
from ..errors import HubError, InvalidInputError, SyncFileError
from ..sync.apply import import_
from ..sync.files import (
    CONTENT_FIELDS,
    MEMORY_FIELDS,
    TOMBSTONE_FIELDS,
    ImportSummary,
    open_regular,
    read_header,
)
from ..time.clock import Clock, from_micros, to_micros
from . import db
from .seed import HUB_REVISION_COLUMNS, MoreUsers, Seeder, file_users

__all__ = ["Ingested", "FixedClock", "ingest", "ingest_paths", "export_files"]

_TOMB = ", ".join(TOMBSTONE_FIELDS)
_TOMB_AT = TOMBSTONE_FIELDS.index("tomb_id")


@dataclass(frozen=True, slots=True)
class Ingested:
    """What ``hub ingest`` did with one file: the device import's summary, and where it went.

    ``file_id`` is the file's ``hub_files`` row (None when it added nothing).
    """

    summary: ImportSummary
    file_id: int | None
    arrived_at: int

    def describe(self) -> str:
        """One line for people."""
        return self.summary.describe().replace("imported from", "ingested from")


#: What the staging store has instead of a device's full-text index and read indexes, which
#: no check reads. A large file's import sets the FTS trigger and those indexes aside and puts
#: them back by name (:mod:`localmem.sync.bulk`), so each keeps its name: the trigger never
#: fires (WHEN 0), the indexes hold no row (WHERE 0), and ``content_fts`` is a view whose
#: inserts (the bulk window's indexing of the content it wrote, an erasure's 'optimize') do
#: nothing. ``revisions_user`` is the order the hub writes a file's rows in (by user and
#: memory, :func:`_write`), so that reading them needs no sort.
_STAGING_STUBS = """
DROP TRIGGER content_fts_insert;
DROP TRIGGER content_fts_delete;
DROP TABLE content_fts;
CREATE VIEW content_fts (rowid, content_fts, text, owner, rank) AS
    SELECT NULL, NULL, NULL, NULL, NULL WHERE 0;
CREATE TRIGGER content_fts_discard INSTEAD OF INSERT ON content_fts BEGIN SELECT 0; END;
CREATE TRIGGER content_fts_insert AFTER INSERT ON content WHEN 0 BEGIN SELECT 0; END;
DROP INDEX revisions_user;
CREATE INDEX revisions_user ON revisions (user_id, memory_id);
DROP INDEX revisions_arrived;
CREATE INDEX revisions_arrived ON revisions (arrived_at) WHERE 0;
DROP INDEX revisions_valid;
CREATE INDEX revisions_valid ON revisions (user_id) WHERE 0;
DROP INDEX memories_user_key;
"""


_local = threading.local()  # each thread's staging connection: (hub id, connection, empty image)


def _staging(hub: str, clock: Clock) -> Ledger:
    """An empty in-memory device database that is the hub (its device id is the hub's id).

    The device's schema, triggers and checks, without what only a device's own reads need
    (the full-text index and its triggers, the read indexes: :data:`_STAGING_STUBS`), which
    nothing the import checks reads.
    Made once per thread (connect() configures the connection as every device's is); each
    file then starts from that empty image again (``deserialize``), which costs microseconds.
    """
    cached = getattr(_local, "staging", None)
    if cached is not None and cached[0] == hub:
        cached[1].deserialize("main", cached[2])
        return Ledger(cached[1], clock, None)
    conn = connect_device(":memory:")
    conn.execute("DROP TRIGGER store_meta_no_update")
    conn.execute("UPDATE store_meta SET value = ? WHERE name = 'device_id'", (hub,))
    conn.execute(_STAGING_STUBS)
    _local.staging = (hub, conn, conn.serialize("main"))
    return Ledger(conn, clock, None)


#: Each hub table's column types, by hub id (fixed by its schema, whose version db.hub_id checks).
_COLUMN_TYPES: dict[tuple[str, str], dict[str, str]] = {}


def _copy(cur: psycopg.Cursor[tuple[Any, ...]], hub: str, staging: Any, table: str, columns: Sequence[str],
          exprs: Sequence[str], rest: str, params: dict[str, int], *,
          seeded: Callable[[tuple[Any, ...]], bool] | None = None) -> None:
    """COPY into ``table`` the rows ``SELECT exprs rest`` of the staging store (but those
    ``seeded`` says are the hub's own), in COPY's binary format (psycopg formats each row in C;
    the server then parses no numbers: measured 11% less server CPU per revision than the text
    format, the same on this side)."""
    types = _COLUMN_TYPES.get((hub, table))
    if types is None:
        found = cur.execute("SELECT attname, format_type(atttypid, NULL) FROM pg_attribute"
                            " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped", (table,))
        types = _COLUMN_TYPES[(hub, table)] = {str(r[0]): str(r[1]) for r in found}
    rows = staging.execute(f"SELECT {', '.join(exprs)} {rest}", params)
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)".encode()) as copy:
        copy.set_types([types[c] for c in columns])
        write = copy.write_row
        if seeded is None:
            for row in rows:
                write(row)
        else:
            for row in rows:
                if not seeded(row):
                    write(row)


def _take_seqs(cur: psycopg.Cursor[tuple[Any, ...]], count: int) -> list[int]:
    """``count`` numbers from the hub's revision sequence, ascending."""
    if not count:
        return []
    # The sequence's name once per file, as a constant: a call per row would look it up per row.
    found = cur.execute("SELECT pg_get_serial_sequence('revisions', 'seq')").fetchone()
    assert found is not None
    taken = cur.execute("SELECT array_agg(nextval(%s::regclass)) FROM generate_series(1, %s)",
                        (found[0], count)).fetchone()
    assert taken is not None
    return sorted(taken[0])


def _write(cur: psycopg.Cursor[tuple[Any, ...]], hub: str, ledger: Ledger, seeder: Seeder,
           summary: ImportSummary, created_at: int, arrived: int) -> int:
    """Copy the rows the staging import added into the hub; returns the file's hub_files id.

    The import's revisions are the staging store's from seq 1 (the seeded ones lie below,
    :data:`~localmem.hub.seed.SEED_SEQ_BASE`); its other rows are those the seeder did not seed.
    """
    row = cur.execute(
        "INSERT INTO hub_files (file_sha256, origin, created_at, mark_from, mark_to, arrived_at, memories,"
        " revisions, tombstones, derivations) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " RETURNING file_id",
        (summary.sha256, summary.origin, created_at, *summary.watermark, arrived,
         summary.memories, summary.revisions, summary.tombstones, summary.derivations)).fetchone()
    assert row is not None
    file_id = int(row[0])
    s = ledger.connection
    # Each table's rows go in by user and memory, so that one user's rows of a file share pages
    # (a read of a user touches a few pages, not one per memory). The revisions keep their
    # hub order (seq) all the same: this file's seqs are taken from the sequence first and given
    # to its revisions in the staging store's order (its seq, which the import numbers from 1;
    # the seeded revisions lie below 0).
    count, top = (int(v) for v in s.execute(
        "SELECT count(*), coalesce(max(seq), 0) FROM revisions WHERE seq > 0").fetchone() or (0, 0))
    seqs = _take_seqs(cur, count)
    rest = "FROM revisions AS r WHERE r.seq > 0"
    if seqs and seqs[-1] - seqs[0] == count - 1 and top == count:
        # One run of numbers (no other ingest took any meanwhile) for one run of staged revisions.
        seq = f"{seqs[0] - 1} + r.seq"
    else:  # interleaved with another ingest's: each revision's by its place in the file
        s.execute("CREATE TEMP TABLE IF NOT EXISTS hub_seq (local INTEGER PRIMARY KEY, seq INTEGER NOT NULL);"
                  " DELETE FROM temp.hub_seq")
        local = s.execute("SELECT seq FROM revisions WHERE seq > 0 ORDER BY seq")
        s.executemany("INSERT INTO temp.hub_seq (local, seq) VALUES (?, ?)",
                      zip((int(r[0]) for r in local), seqs, strict=True))
        seq, rest = "h.seq", rest.replace(" WHERE", " JOIN temp.hub_seq AS h ON h.local = r.seq WHERE")
    memories = seeder.memories_seeded
    _copy(cur, hub, s, "memories", MEMORY_FIELDS, MEMORY_FIELDS, "FROM memories ORDER BY user_id, memory_id",
          {}, seeded=(lambda m: m[0] in memories) if memories else None)
    _copy(cur, hub, s, "revisions", (*HUB_REVISION_COLUMNS, "file_id", "seq"),
          (*(f"r.{c}" for c in HUB_REVISION_COLUMNS), ":file_id", seq),
          rest + " ORDER BY r.user_id, r.memory_id, r.seq", {"file_id": file_id})
    _copy(cur, hub, s, "content", ("user_id", "rev_id", "memory_id", *CONTENT_FIELDS),
          ("r.user_id", "r.rev_id", "r.memory_id", *(f"c.{c}" for c in CONTENT_FIELDS)),
          # revisions first, in the index's order (user, memory, seq): no sort of the rows
          "FROM revisions AS r INDEXED BY revisions_user CROSS JOIN content AS c ON c.rev_seq = r.seq"
          " WHERE r.seq > 0 ORDER BY r.user_id, r.memory_id, r.seq", {})
    derivations = seeder.derivations_seeded
    _copy(cur, hub, s, "derivations", ("user_id", "memory_id", "position", "source_rev"),
          ("m.user_id", "d.memory_id", "d.position", "d.source_rev"),
          "FROM derivations AS d JOIN memories AS m ON m.memory_id = d.memory_id ORDER BY d.rowid", {},
          seeded=lambda d: (d[1], d[2]) in derivations)
    # Row by row: each tombstone's trigger destroys its memory's content on the hub.
    tombs_seeded = seeder.tombs_seeded
    for table in ("erasures", "extra_tombstones"):
        tombs = [t for t in s.execute(f"SELECT {_TOMB} FROM {table} ORDER BY rowid")
                 if t[_TOMB_AT] not in tombs_seeded]
        if tombs:
            cur.executemany(f"INSERT INTO {table} ({_TOMB}) VALUES ({', '.join(['%s'] * 7)})".encode(), tombs)
    return file_id


def _lock_users(cur: psycopg.Cursor[tuple[Any, ...]], users: set[str]) -> None:
    """Serialise the ingests of each user (transaction-scoped advisory locks, taken in one order)."""
    if users:
        cur.execute("SELECT pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(u, 0) AS h"
                    " FROM unnest(%s::text[]) AS u ORDER BY 1) AS t", (sorted(users),))


#: How many times an ingest starts again with more users locked (:class:`~localmem.hub.seed.MoreUsers`)
#: before it takes the file for one that keeps changing.
_ATTEMPTS = 3


def ingest(conn: psycopg.Connection[tuple[Any, ...]], path: str | os.PathLike[str], *, clock: Clock,
           hub: str | None = None) -> Ingested:
    """Apply one device export file to the hub, in one transaction (see the module docstring).

    Raises:
        SyncFileError (and its subclasses, exactly as ``Store.import_`` raises them): the file
            is refused; nothing was written.
        HubError: the hub cannot be reached or refused a statement; nothing was written.
    """
    source = Path(path)
    hub = hub or db.hub_id(conn)
    users = file_users(source)  # a damaged file is refused by the import below, before anything is written
    for _ in range(_ATTEMPTS):
        try:
            return _ingest(conn, source, clock, hub, users)
        except MoreUsers as more:
            users = users | more.users
    raise SyncFileError(f"{str(source)!r} changed while it was being ingested (its rows name users that "
                        "were not in it when it was first read); nothing was applied")


def _ingest(conn: psycopg.Connection[tuple[Any, ...]], source: Path, clock: Clock, hub: str,
            users: set[str]) -> Ingested:
    with db.errors(f"cannot ingest {str(source)!r}"), conn.transaction(), conn.cursor() as cur:
        _lock_users(cur, users)
        arrived = to_micros(clock())  # read once the file's users are ours: arrivals stay in order
        ledger = _staging(hub, lambda: from_micros(arrived))
        seeder = Seeder(cur, ledger, users)
        # No reader process beside it: the hub runs files side by side (--jobs), and a reader
        # takes more CPU in all than it saves this process (sync's benchmark, 1M revisions).
        summary = import_(ledger, source, before_chunk=seeder, aside=False)
        file_id = None
        if summary.changed:
            created_at = int(ledger.connection.execute("SELECT created_at FROM imports").get)
            file_id = _write(cur, hub, ledger, seeder, summary, created_at, arrived)
    return Ingested(summary, file_id, arrived)


def export_files(root: Path) -> list[Path]:
    """The export files under a directory, by name (``*.lmsync.gz`` and any other gzip'd file)."""
    found = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.name.endswith(".partial"):
            try:
                with open_regular(p) as f:
                    if f.read(2) == b"\x1f\x8b":
                        found.append(p)
            except SyncFileError:
                continue
    return found


@dataclass(frozen=True, slots=True)
class FixedClock:
    """A clock stopped at one instant that another process can be given (a lambda cannot be
    pickled): ``--now`` for ``hub ingest --jobs N``."""

    at: datetime

    def __call__(self) -> datetime:
        return self.at


def _ingest_group(dsn: str, paths: list[Path], clock: Clock) -> list[Ingested | SyncFileError]:
    """One connection's share of :func:`ingest_paths`: these files in order, each on its own."""
    out: list[Ingested | SyncFileError] = []
    with db.connect(dsn) as conn:
        hub = db.hub_id(conn)
        for path in paths:
            try:
                out.append(ingest(conn, path, clock=clock, hub=hub))
            except SyncFileError as exc:
                out.append(exc)
    return out


def _picklable(clock: Clock) -> bool:
    try:
        pickle.dumps(clock)
    except (pickle.PicklingError, TypeError, AttributeError):
        return False
    return True


def ingest_paths(dsn: str, paths: Sequence[str | os.PathLike[str]], *, clock: Clock,
                 jobs: int = 1) -> list[Ingested | SyncFileError]:
    """Ingest files and directories of files, each file on its own (a refused one is reported and
    the rest go on); returns each file's result or its refusal, in the order given.

    With ``jobs`` > 1, that many processes ingest at once, each on its own connection (the
    import is Python: threads would share one core): the files of one origin device stay in
    order in one process (an incremental file after the one it follows); different devices'
    files go in parallel (the advisory locks order any user they share). The clock goes to
    those processes, so it must be picklable (:func:`localmem.time.clock.system_clock`,
    :class:`FixedClock`); one that is not (a lambda) makes the jobs threads instead.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= 64:
        raise InvalidInputError(f"jobs={jobs!r} is not acceptable: expected an integer from 1 to 64")
    files: list[Path] = []
    for p in map(Path, paths):
        files.extend(export_files(p) if p.is_dir() else [p])
    if not files:
        raise HubError(f"no export files in {[str(p) for p in paths]!r}")
    groups: dict[str, list[int]] = {}
    for i, f in enumerate(files):
        try:
            origin = str(read_header(f)["origin"])
        except SyncFileError:
            origin = ""  # refused again, with the device's message, when its turn comes
        groups.setdefault(origin if jobs > 1 else "", []).append(i)
    out: list[Ingested | SyncFileError | None] = [None] * len(files)
    if jobs == 1 or len(groups) == 1:
        for indexes in groups.values():
            for i, r in zip(indexes, _ingest_group(dsn, [files[i] for i in indexes], clock), strict=True):
                out[i] = r
        return [r for r in out if r is not None]
    pool: Executor = (ProcessPoolExecutor(max_workers=min(jobs, len(groups)), mp_context=get_context("spawn"))
                      if _picklable(clock) else ThreadPoolExecutor(max_workers=jobs))
    with pool:
        # The largest groups first, so that no long group starts last.
        order = sorted(groups.values(), key=lambda g: -sum(files[i].stat().st_size for i in g))
        done = [(g, pool.submit(_ingest_group, dsn, [files[i] for i in g], clock)) for g in order]
        for indexes, future in done:
            for i, r in zip(indexes, future.result(), strict=True):
                out[i] = r
    return [r for r in out if r is not None]
