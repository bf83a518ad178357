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
* The seed is read for the ids a scan of the file finds; the import's checksum of what it
  read must be the scan's, so a file replaced between the two is refused, not half-checked.
* Idempotent: a row already on the hub is seeded into the staging store, where the device
  import skips it; a repeated file adds nothing and records nothing.
* Concurrent ingesters: each file's transaction takes ``pg_advisory_xact_lock`` on a hash of
  each user its rows name (in a fixed order, so two ingesters never deadlock) before it
  reads what it seeds, so two files of one user are checked and applied one after the
  other, each seeing the other's rows.
* Arrival: the staging store's clock is the hub's (injected: ``clock``), so each revision's
  ``arrived_at`` is what a device importing the file then would give it: the later of the
  file's arrival and its origin's recorded time (never before the file reached the hub).
  The file's arrival is recorded in ``hub_files``.
* An erasure a file brings erases, on the hub too, what was derived from the memory; those
  tombstones are the hub's own (origin: the hub's id), as a device's would be its own.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import psycopg

from ..core import sql as core_sql
from ..core.db import connect as connect_device
from ..core.ledger import Ledger
from ..errors import HubError, InvalidInputError, SyncFileError
from ..sync.apply import import_
from ..sync.files import (
    CONTENT_FIELDS,
    MEMORY_FIELDS,
    REVISION_FIELDS,
    TOMBSTONE_FIELDS,
    ImportSummary,
    check_header,
    line_pieces,
    open_regular,
    parse_line,
    read_header,
)
from ..time.clock import Clock, from_micros, to_micros
from . import db

__all__ = ["Ingested", "FixedClock", "ingest", "ingest_paths", "export_files"]

#: The revision columns the hub stores from a staging row (the device's, minus its local chain).
HUB_REVISION_COLUMNS = (*REVISION_FIELDS, "arrived_at")
_TOMB = ", ".join(TOMBSTONE_FIELDS)
_REV = ", ".join(f"r.{c}" for c in HUB_REVISION_COLUMNS)
_CONTENT = ", ".join(f"c.{c}" for c in CONTENT_FIELDS)


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


@dataclass
class _Wanted:
    """The ids a file's rows name: what the staging store must hold to check them; and what the
    scan read: the header (None if it is not one) and the checksum of the lines it read, in the
    import's terms (the header and rows, not the trailer)."""

    users: set[str] = field(default_factory=set)
    memories: set[str] = field(default_factory=set)
    revisions: set[str] = field(default_factory=set)
    tombs: set[str] = field(default_factory=set)
    erased: set[str] = field(default_factory=set)
    derived: set[str] = field(default_factory=set)
    header: dict[str, Any] | None = None
    sha256: str = ""


#: Each id field as the device's export writes it (no escapes in an id, one line): found in a
#: batch of lines without parsing them.
#: One pass over a batch's text finds every id field, named (measured 0.8x the CPU of a pass per
#: set of ids: the engine stops at each quote once, not four times).
_IDS_NAMED = re.compile(r'"(user_id|memory_id|supersedes|superseded_by|rev_id|prev_rev|source_rev|tomb_id)"'
                        r':"([^"\\\n]*)"')
_SET_OF = {"user_id": "users", "memory_id": "memories", "supersedes": "memories", "superseded_by": "memories",
           "rev_id": "revisions", "prev_rev": "revisions", "source_rev": "revisions", "tomb_id": "tombs"}
_ID_FIELD = re.compile(rb'"(user_id|memory_id|supersedes|superseded_by|rev_id|prev_rev|source_rev|tomb_id)"'
                       rb':"([^"\\]*)"')
_KIND = re.compile(rb'^\{"t":"(memory|revision|derivation|tombstone)",')
_PLAIN = (b'{"t":"memory",', b'{"t":"revision",')  # lines whose ids need nothing but the patterns
_TRAILER = b'{"end"'


def _scan_row(want: _Wanted, kind: object, fields: Iterable[tuple[str, object]]) -> None:
    for name, value in fields:
        if not isinstance(value, str):
            continue
        if name == "user_id":
            want.users.add(value)
        elif name in ("memory_id", "supersedes", "superseded_by"):
            want.memories.add(value)
            if name == "memory_id" and kind == "tombstone":
                want.erased.add(value)
            elif name == "memory_id" and kind == "derivation":
                want.derived.add(value)
        elif name in ("rev_id", "prev_rev", "source_rev"):
            want.revisions.add(value)
        elif name == "tomb_id":
            want.tombs.add(value)


def _scan_batch(want: _Wanted, batch: list[bytes], joined: bytes) -> None:
    """Add the ids of ``batch``'s lines (``joined`` is them joined by newlines) to ``want``."""
    sets: dict[str, set[str]] = {name: getattr(want, kind) for name, kind in _SET_OF.items()}
    for name, value in _IDS_NAMED.findall(joined.decode("utf-8", "replace")):
        sets[name].add(value)
    plain = sum(joined.count(b"\n" + p) + joined.startswith(p) for p in _PLAIN)
    if b"\\" not in joined and plain == len(batch):
        return  # every line a memory or revision as the device writes them: the patterns found all
    for line in batch:
        if line.startswith(_PLAIN) and b"\\" not in line:
            continue
        kind = _KIND.match(line)  # a tombstone or provenance link: what it erases or derives
        if kind is not None and b"\\" not in line:
            _scan_row(want, kind.group(1).decode(), ((m.group(1).decode("utf-8", "replace"),
                                                     m.group(2).decode("utf-8", "replace"))
                                                    for m in _ID_FIELD.finditer(line)))
            continue
        try:
            o = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(o, dict):
            _scan_row(want, o.get("t"), o.items())


def _scan(path: Path) -> _Wanted:
    """The ids a file's rows name, its header and its checksum. Lenient: a malformed row, or a
    damaged file, is left to the import to refuse (with the device's message), so this finds
    what it can and says nothing.

    The ids of lines as the device writes them (no backslash in them) are found by patterns,
    over a piece of lines at once; any other line is parsed, so an id spelled with escapes is
    still found (seeding more than needed is harmless; seeding less would let a check miss a
    row the hub holds). The checksum is the import's (the lines before the trailer, each with
    its newline): the same as the import's only if the import read the file this scan read.
    """
    want = _Wanted()
    digest = hashlib.sha256()
    try:
        with line_pieces(path) as pieces:
            for first, found, ended in pieces:
                end = next((i for i, line in enumerate(found) if line.startswith(_TRAILER)), len(found))
                body = found[:end]
                if not body:
                    continue
                joined = b"\n".join(body)
                digest.update(joined)
                if ended:
                    digest.update(b"\n")
                if first == 1:
                    with contextlib.suppress(SyncFileError):
                        header = parse_line(body[0], 1, path)
                        check_header(header, path)
                        want.header = header
                    body = body[1:]
                    joined = joined[len(joined) if not body else joined.index(b"\n") + 1:]
                _scan_batch(want, body, joined)
    except SyncFileError:
        pass
    want.sha256 = digest.hexdigest()
    return want


# What the staging store is seeded with, read from the hub (every id a global ULID). Each is a
# join of the ids with an index, probed once per id: the ingest's transaction turns sequential
# scans, hash joins and merge joins off. The planner's statistics lag behind bulk loads, and it
# reads the number of ids from the parameter: for a file's 10,000 ids it hashes or merges the
# whole table instead (through an index, as scans are off), which costs what the table holds —
# measured 100 ms of server CPU per 1,000-revision file into a hub of 60k revisions, growing
# with the hub, on each connection's first statements (before psycopg prepares them).
_DERIVED_CLOSURE = """WITH RECURSIVE d (user_id, memory_id) AS (
    SELECT dv.user_id, dv.memory_id FROM unnest(%(erased)s::text[]) AS i (id)
    JOIN memories AS m ON m.memory_id = i.id
    JOIN revisions AS r ON r.user_id = m.user_id AND r.memory_id = m.memory_id
    JOIN derivations AS dv ON dv.source_rev = r.rev_id
    UNION
    SELECT dv.user_id, dv.memory_id FROM d
    JOIN revisions AS r ON r.user_id = d.user_id AND r.memory_id = d.memory_id
    JOIN derivations AS dv ON dv.source_rev = r.rev_id)
SELECT memory_id FROM d"""
#: A set of ids as a query takes it (:func:`_ids`): one text, newline-separated, and the rare
#: ids with a newline in them as an array (dumping a list of 100k strings costs a second).
_IDS = "unnest(string_to_array(%s, E'\\n') || %s::text[]) AS i (id)"
_SEED_DERIVATIONS = (f"SELECT d.memory_id, d.position, d.source_rev FROM {_IDS}"
                     " JOIN derivations AS d ON d.memory_id = i.id")
_REVISION_SEED = f"""SELECT r.seq, {_REV}, c.rev_id IS NOT NULL, {_CONTENT} FROM {_IDS}
{{join}}
LEFT JOIN content AS c ON c.user_id = r.user_id AND c.rev_id = r.rev_id"""
_SEED_REVISIONS = _REVISION_SEED.format(join="JOIN revisions AS r ON r.rev_id = i.id")
_SEED_WHOLE = _REVISION_SEED.format(join="JOIN memories AS m ON m.memory_id = i.id JOIN revisions AS r"
                                    " ON r.user_id = m.user_id AND r.memory_id = m.memory_id")
_SEED_MEMORIES = (f"SELECT {', '.join('m.' + c for c in MEMORY_FIELDS)} FROM {_IDS}"
                  " JOIN memories AS m ON m.memory_id = i.id")
_ERASURE_SEED = (f"SELECT e.seq, {', '.join('e.' + c for c in TOMBSTONE_FIELDS)} FROM {_IDS}"
                 " JOIN erasures AS e ON e.{column} = i.id")
_SEED_ERASURES = _ERASURE_SEED.format(column="memory_id")
_SEED_TOMBS = _ERASURE_SEED.format(column="tomb_id")
_SEED_EXTRA = (f"SELECT {', '.join('x.' + c for c in TOMBSTONE_FIELDS)} FROM {_IDS}"
               " JOIN extra_tombstones AS x ON x.tomb_id = i.id")


def _ids(values: Iterable[str]) -> tuple[str, list[str]]:
    """Ids as :data:`_IDS` takes them. An id with a NUL in it cannot be on the hub (PostgreSQL
    text holds none): it is left out, and the import finds it in neither store."""
    ids = list(values)
    joined = "\n".join(ids)
    if joined.count("\n") == max(len(ids) - 1, 0) and "\x00" not in joined:
        return joined, []
    plain = [v for v in ids if "\n" not in v and "\x00" not in v]
    return "\n".join(plain), [v for v in ids if "\n" in v and "\x00" not in v]


def _by_seq(*found: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Rows that start with their hub seq, once each, in hub order, without the seq."""
    rows = {row[0]: row[1:] for part in found for row in part}
    return [rows[k] for k in sorted(rows)]


def _q(columns: Sequence[str]) -> str:
    return ", ".join("?" * len(columns))


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


def _seed(cur: psycopg.Cursor[tuple[Any, ...]], ledger: Ledger, want: _Wanted) -> dict[str, int]:
    """Copy into the staging store every hub row the file's rows are checked against.

    Returns the staging tables' highest rowids after seeding: the rows above them are the import's.
    """
    cur.execute(b"SET LOCAL enable_seqscan = off; SET LOCAL enable_hashjoin = off;"
                b" SET LOCAL enable_mergejoin = off")
    closure = [str(r[0]) for r in cur.execute(_DERIVED_CLOSURE, {"erased": list(want.erased)})] \
        if want.erased else []
    derivations = cur.execute(_SEED_DERIVATIONS, _ids(want.derived | set(closure))).fetchall()
    rev_ids = want.revisions | {str(d[2]) for d in derivations}
    revisions = _by_seq(cur.execute(_SEED_REVISIONS, _ids(rev_ids)).fetchall(),
                        cur.execute(_SEED_WHOLE, _ids(closure)).fetchall() if closure else [])
    memories = _ids(want.memories | set(closure) | {str(r[1]) for r in revisions})
    memory_rows = cur.execute(_SEED_MEMORIES, memories).fetchall()
    tombs = _ids(want.tombs)
    erasures = _by_seq(cur.execute(_SEED_ERASURES, memories).fetchall(),
                       cur.execute(_SEED_TOMBS, tombs).fetchall())
    extra = cur.execute(_SEED_EXTRA, tombs).fetchall()
    conn = ledger.connection
    conn.pragma("foreign_keys", False)  # the seed is a consistent subset: its parents may stay on the hub
    try:
        with conn:
            conn.executemany(core_sql.INSERT_MEMORY, memory_rows)
            nr = len(HUB_REVISION_COLUMNS)
            cols = (*HUB_REVISION_COLUMNS, "chain")
            insert = f"INSERT INTO revisions ({', '.join(cols)}) VALUES ({_q(cols)})"
            for row in revisions:
                conn.execute(insert, (*row[:nr], None))
                if row[nr]:
                    conn.execute(core_sql.INSERT_CONTENT, (conn.last_insert_rowid(), row[1], *row[nr + 1:]))
            conn.executemany("INSERT INTO derivations (memory_id, position, source_rev) VALUES (?, ?, ?)",
                             derivations)
            conn.executemany(core_sql.INSERT_ERASURE, erasures)
            conn.executemany(f"INSERT INTO extra_tombstones ({_TOMB}) VALUES ({_q(TOMBSTONE_FIELDS)})", extra)
    finally:
        conn.pragma("foreign_keys", True)
    marks = {}
    for table in ("memories", "revisions", "derivations", "erasures", "extra_tombstones"):
        marks[table] = int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").get)
    return marks


#: Each hub table's column types, by hub id (fixed by its schema, whose version db.hub_id checks).
_COLUMN_TYPES: dict[tuple[str, str], dict[str, str]] = {}


def _copy(cur: psycopg.Cursor[tuple[Any, ...]], hub: str, staging: Any, table: str, columns: Sequence[str],
          exprs: Sequence[str], rest: str, params: dict[str, int]) -> None:
    """COPY into ``table`` the rows ``SELECT exprs rest`` of the staging store, in COPY's binary
    format (psycopg formats each row in C; the server then parses no numbers: measured 11% less
    server CPU per revision than the text format, the same on this side)."""
    types = _COLUMN_TYPES.get((hub, table))
    if types is None:
        found = cur.execute("SELECT attname, format_type(atttypid, NULL) FROM pg_attribute"
                            " WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped", (table,))
        types = _COLUMN_TYPES[(hub, table)] = {str(r[0]): str(r[1]) for r in found}
    with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN (FORMAT BINARY)".encode()) as copy:
        copy.set_types([types[c] for c in columns])
        for row in staging.execute(f"SELECT {', '.join(exprs)} {rest}", params):
            copy.write_row(row)


def _write(cur: psycopg.Cursor[tuple[Any, ...]], hub: str, ledger: Ledger, marks: dict[str, int],
           summary: ImportSummary, created_at: int, arrived: int) -> int:
    """Copy the rows the staging import added into the hub; returns the file's hub_files id."""
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
    # to its revisions in the staging store's order (its seq, which the import numbers on).
    mark = marks["revisions"]
    count, top = (int(v) for v in s.execute(
        "SELECT count(*), coalesce(max(seq), 0) FROM revisions WHERE seq > ?", (mark,)).fetchone() or (0, 0))
    seqs: list[int] = []
    if count:
        # The sequence's name once, as a constant: a call per row would look it up per row.
        name = cur.execute("SELECT pg_get_serial_sequence('revisions', 'seq')").fetchone()
        assert name is not None
        taken = cur.execute("SELECT array_agg(nextval(%s::regclass)) FROM generate_series(1, %s)",
                            (name[0], count)).fetchone()
        assert taken is not None
        seqs = sorted(taken[0])
    rest = "FROM revisions AS r WHERE r.seq > :mark"
    if seqs and seqs[-1] - seqs[0] == count - 1 and top - mark == count:
        # One run of numbers (no other ingest took any meanwhile) for one run of staged revisions.
        seq = f"{seqs[0] - 1 - mark} + r.seq"
    else:  # interleaved with another ingest's: each revision's by its place in the file
        s.execute("CREATE TEMP TABLE IF NOT EXISTS hub_seq (local INTEGER PRIMARY KEY, seq INTEGER NOT NULL);"
                  " DELETE FROM temp.hub_seq")
        local = s.execute("SELECT seq FROM revisions WHERE seq > ? ORDER BY seq", (mark,))
        s.executemany("INSERT INTO temp.hub_seq (local, seq) VALUES (?, ?)",
                      zip((int(r[0]) for r in local), seqs, strict=True))
        seq, rest = "h.seq", rest.replace(" WHERE", " JOIN temp.hub_seq AS h ON h.local = r.seq WHERE")
    _copy(cur, hub, s, "memories", MEMORY_FIELDS, MEMORY_FIELDS,
          "FROM memories WHERE rowid > :mark ORDER BY user_id, memory_id", {"mark": marks["memories"]})
    _copy(cur, hub, s, "revisions", (*HUB_REVISION_COLUMNS, "file_id", "seq"),
          (*(f"r.{c}" for c in HUB_REVISION_COLUMNS), ":file_id", seq),
          rest + " ORDER BY r.user_id, r.memory_id, r.seq", {"file_id": file_id, "mark": mark})
    _copy(cur, hub, s, "content", ("user_id", "rev_id", "memory_id", *CONTENT_FIELDS),
          ("r.user_id", "r.rev_id", "r.memory_id", *(f"c.{c}" for c in CONTENT_FIELDS)),
          "FROM revisions AS r JOIN content AS c ON c.rev_seq = r.seq WHERE r.seq > :mark"
          " ORDER BY r.user_id, r.memory_id, r.seq", {"mark": mark})
    _copy(cur, hub, s, "derivations", ("user_id", "memory_id", "position", "source_rev"),
          ("m.user_id", "d.memory_id", "d.position", "d.source_rev"),
          "FROM derivations AS d JOIN memories AS m ON m.memory_id = d.memory_id WHERE d.rowid > :mark"
          " ORDER BY d.rowid", {"mark": marks["derivations"]})
    # Row by row: each tombstone's trigger destroys its memory's content on the hub.
    for table in ("erasures", "extra_tombstones"):
        rows = s.execute(f"SELECT {_TOMB} FROM {table} WHERE rowid > ? ORDER BY rowid", (marks[table],))
        tombs = list(rows)
        if tombs:
            cur.executemany(f"INSERT INTO {table} ({_TOMB}) VALUES ({', '.join(['%s'] * 7)})".encode(), tombs)
    return file_id


def _lock_users(cur: psycopg.Cursor[tuple[Any, ...]], users: set[str]) -> None:
    """Serialise the ingests of each user (transaction-scoped advisory locks, taken in one order)."""
    if users:
        cur.execute("SELECT pg_advisory_xact_lock(h) FROM (SELECT DISTINCT hashtextextended(u, 0) AS h"
                    " FROM unnest(%s::text[]) AS u ORDER BY 1) AS t", (sorted(users),))


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
    want = _scan(source)  # a damaged file is refused by the import below, before anything is written
    with db.errors(f"cannot ingest {str(source)!r}"), conn.transaction(), conn.cursor() as cur:
        _lock_users(cur, want.users)
        arrived = to_micros(clock())  # read once the file's users are ours: arrivals stay in order
        ledger = _staging(hub, lambda: from_micros(arrived))
        marks = _seed(cur, ledger, want)
        summary = import_(ledger, source)
        if summary.sha256 != want.sha256 or want.header is None:
            raise SyncFileError(f"{str(source)!r} changed while it was being ingested (the rows checked are "
                                "not the rows read for them); nothing was applied")
        file_id = None
        if summary.changed:
            file_id = _write(cur, hub, ledger, marks, summary, int(want.header["created_at"]), arrived)
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
