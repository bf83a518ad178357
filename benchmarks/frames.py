"""What a write costs in the file: WAL frames per one-row commit, by B-tree, and the CPU of a write.

    python benchmarks/frames.py [--seed-lines 2000] [--adds 1000] [--timed 2000] [--batches 20]
                                [--floor 600]
    python benchmarks/ab.py REF --same-script -- benchmarks/frames.py

Seeds a fresh store with ``--seed-lines`` memories (``add_many(resolve=False)``, 20 users), then
with checkpoints off makes ``--adds`` one-row ``Store.add(resolve=False)`` writes, each its own
transaction, the clock a second apart, and reads the WAL's frame headers: frames per commit,
each frame's page mapped to its table or index by ``dbstat`` (``page1`` is the header page,
``freelist`` a page no B-tree holds). Then, with ``synchronous=OFF`` (so the figures are CPU, not
the disk's flushes): the p50 of ``--timed`` more one-row adds, and the median CPU of ``--batches``
``add_many(resolve=False)`` calls of 1,000 lines each, into a second fresh store.

``--floor N`` (0: skip) then measures what no Python can go below: the SQL floor of a one-row add,
the very statements an add runs (BEGIN IMMEDIATE, the three INSERTs with their triggers and the
full-text index, COMMIT) with every value made beforehand, on copies of the seeded file with the
store's pragmas (QPSG, secure_delete, WAL, ``synchronous=OFF``): the schema as it is, and as it
would be with ``memories`` WITHOUT ROWID and without ``revisions_arrived`` (two B-trees fewer),
and without the full-text trigger; interleaved with ``Store.add(resolve=False)`` and, if
installed (the bench extra), LangGraph's ``SqliteStore.put`` on its own fresh file. Each prints
its p50 and WAL frames per commit. Prints each figure and last one JSON object (for
``benchmarks/ab.py``). Never asserts.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import sqlite3
import statistics
import struct
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

import localmem
from localmem.testing import FrozenClock

USERS = 20

#: ``memories`` as a WITHOUT ROWID table keyed by its id (its table and its id's index are then
#: one B-tree), its dependants made again around it: the floor's first variant.
_MEMORIES_WITHOUT_ROWID = """
DROP TRIGGER content_fts_insert; DROP TRIGGER content_fts_delete;
DROP TRIGGER memories_no_replace; DROP TRIGGER memories_no_update; DROP TRIGGER memories_no_delete;
DROP VIEW memory_latest; DROP VIEW revision_log; DROP VIEW content_indexed;
CREATE TABLE memories_by_id (
    memory_id TEXT PRIMARY KEY CHECK (length(memory_id) = 26),
    user_id TEXT NOT NULL CHECK (length(user_id) > 0), kind TEXT NOT NULL CHECK (length(kind) > 0),
    key TEXT CHECK (key IS NULL OR length(key) > 0), created_at INTEGER NOT NULL) STRICT, WITHOUT ROWID;
INSERT INTO memories_by_id SELECT memory_id, user_id, kind, key, created_at FROM memories;
DROP TABLE memories; ALTER TABLE memories_by_id RENAME TO memories;
CREATE INDEX memories_user_key ON memories (user_id, key) WHERE key IS NOT NULL;
CREATE VIEW content_indexed AS SELECT c.rev_seq AS rev_seq, c.text AS text, 'u' || hex(m.user_id) AS owner
    FROM content AS c JOIN memories AS m ON m.memory_id = c.memory_id;
CREATE TRIGGER content_fts_insert AFTER INSERT ON content BEGIN
    INSERT INTO content_fts (rowid, text, owner) VALUES (NEW.rev_seq, NEW.text,
        (SELECT 'u' || hex(user_id) FROM memories WHERE memory_id = NEW.memory_id));
END;
CREATE TRIGGER memories_no_replace BEFORE INSERT ON memories
WHEN EXISTS (SELECT 1 FROM memories WHERE memory_id = NEW.memory_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: memories are immutable: an existing memory cannot be replaced');
END;
"""
#: The floor's schemas: the store's, two B-trees fewer, and no full-text index written.
FLOOR_SCHEMAS = {
    "schema": "",
    "two_btrees_fewer": _MEMORIES_WITHOUT_ROWID + "DROP INDEX revisions_arrived;",
    "no_fts_trigger": "DROP TRIGGER content_fts_insert;",
}


def wal_frames(path: Path, page_size: int) -> list[tuple[int, int]]:
    """(page number, commit size or 0) of every frame in the WAL beside ``path``."""
    data = Path(f"{path}-wal").read_bytes()
    frames, off = [], 32  # the WAL header is 32 bytes; each frame a 24-byte header and a page
    while off + 24 + page_size <= len(data):
        frames.append(struct.unpack(">II", data[off:off + 8]))
        off += 24 + page_size
    return frames


def by_btree(conn: apsw.Connection, frames: list[tuple[int, int]]) -> dict[str, float]:
    """Frames per commit, by the table or index holding each frame's page."""
    names = {int(pg): str(name) for name, pg in conn.execute("SELECT name, pageno FROM dbstat")}
    commits = sum(1 for _, c in frames if c)
    counts = collections.Counter("page1" if pg == 1 else names.get(pg, "freelist") for pg, _ in frames)
    return {name: round(n / commits, 2) for name, n in counts.most_common()}


def commits_and_frames(path: Path, page_size: int) -> float:
    """WAL frames per commit in the WAL beside ``path``."""
    frames = wal_frames(path, page_size)
    return len(frames) / max(1, sum(1 for _, c in frames if c))


def floor(seeded: Path, tmp: Path, store: localmem.Store, clock: FrozenClock, n: int) -> dict[str, Any]:
    """The SQL floor of a one-row add on each of :data:`FLOOR_SCHEMAS` (copies of ``seeded``), next
    to ``store.add(resolve=False)`` and LangGraph's put: p50 µs and WAL frames per commit."""
    from localmem.core import sql  # the store's own statements
    from localmem.core.ids import new_ids

    conns: dict[str, tuple[apsw.Connection, Path]] = {}
    for name, ddl in FLOOR_SCHEMAS.items():
        path = tmp / f"floor-{name}.db"
        shutil.copy(seeded, path)
        conn = apsw.Connection(str(path))
        conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
        if ddl:
            with conn:
                conn.execute(ddl)
        for pragma, value in (("journal_mode", "wal"), ("secure_delete", True), ("foreign_keys", True),
                              ("synchronous", "OFF"), ("wal_autocheckpoint", 0)):
            conn.pragma(pragma, value)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conns[name] = (conn, path)
    first = next(iter(conns.values()))[0]
    template = list(first.execute("SELECT * FROM revisions ORDER BY seq DESC LIMIT 1").fetchone() or ())
    insert_revision = f"INSERT INTO revisions VALUES ({', '.join('?' * len(template))})"
    ids = iter(new_ids(to_micros_now(clock), 2 * len(conns) * (n + 50)))

    def sql_only(conn: apsw.Connection) -> Callable[[int], None]:
        def write(i: int) -> None:
            memory_id, rev_id = next(ids), next(ids)
            row = [None, rev_id, memory_id, f"u{i % USERS}", *template[4:]]
            conn.execute("BEGIN IMMEDIATE")
            conn.execute(sql.INSERT_MEMORY, (memory_id, row[3], "fact", None, row[11]))
            conn.execute(insert_revision, row)
            conn.execute(sql.INSERT_CONTENT, (conn.last_insert_rowid(), memory_id,
                                              f"floor add {i} mentions word{i % 13} and owls", None, None,
                                              None, None))
            conn.execute("COMMIT")
        return write

    calls: dict[str, Callable[[int], None]] = {f"floor_{k}": sql_only(c) for k, (c, _) in conns.items()}

    def add(i: int) -> None:
        clock.advance(seconds=1)
        store.add(f"floor-side add {i} mentions word{i % 13} and owls", user_id=f"u{i % USERS}",
                  resolve=False)

    calls["add_noresolve"] = add
    try:
        from langgraph.store.sqlite import SqliteStore
    except ImportError:
        lg = None
    else:
        lg = SqliteStore(sqlite3.connect(tmp / "lg.db", check_same_thread=False, isolation_level=None))
        lg.conn.execute("PRAGMA journal_mode=WAL")
        lg.setup()
        lg.conn.execute("PRAGMA synchronous=OFF")

        def put(i: int) -> None:
            assert lg is not None
            lg.put(("memories", f"u{i % USERS}"), uuid.uuid4().hex,
                   {"text": f"floor put {i} mentions word{i % 13} and owls"})

        calls["langgraph_put"] = put
    took: dict[str, list[float]] = {k: [] for k in calls}
    order = list(calls)
    for i in range(n + 50):
        for j in range(len(order)):  # which goes first rotates
            name = order[(i + j) % len(order)]
            start = time.perf_counter()
            calls[name](i)
            if i >= 50:
                took[name].append(time.perf_counter() - start)
    out: dict[str, Any] = {k: round(statistics.median(v) * 1e6, 1) for k, v in took.items()}
    for k, (c, path) in conns.items():
        out[f"frames_{k}"] = round(commits_and_frames(path, int(c.pragma("page_size"))), 2)
        c.close()
    if lg is not None:
        lg.conn.close()
    return out


def to_micros_now(clock: FrozenClock) -> int:
    """The frozen clock's reading in microseconds."""
    from localmem.time.clock import to_micros
    return to_micros(clock())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seed-lines", type=int, default=2000)
    ap.add_argument("--adds", type=int, default=1000)
    ap.add_argument("--timed", type=int, default=2000)
    ap.add_argument("--batches", type=int, default=20)
    ap.add_argument("--floor", type=int, default=600, help="one-row writes per floor contender (0: skip)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="localmem-frames-"))
    clock = FrozenClock("2026-01-01T00:00:00Z")
    path = tmp / "adds.db"
    store = localmem.open(path, clock=clock)
    store.add_many([{"text": f"seed line {i} about topic {i % 97} and cats", "user_id": f"u{i % USERS}"}
                    for i in range(args.seed_lines)], resolve=False)
    conn = store.connection
    seeded = tmp / "seeded.db"
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(path, seeded)  # the floor's files start from this seed
    conn.pragma("wal_autocheckpoint", 0)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for i in range(args.adds):
        clock.advance(seconds=1)
        store.add(f"one row add {i} mentions word{i % 13} and dogs", user_id=f"u{i % USERS}", resolve=False)
    frames = wal_frames(path, int(conn.pragma("page_size")))
    commits = sum(1 for _, c in frames if c)
    per_commit = len(frames) / commits
    split = by_btree(conn, frames)
    print(f"one-row add: {per_commit:.2f} WAL frames per commit ({commits} commits)")
    for name, n in split.items():
        print(f"  {name:32} {n:5.2f}")
    conn.pragma("synchronous", "OFF")
    took = []
    for i in range(args.timed):
        clock.advance(seconds=1)
        start = time.perf_counter()
        store.add(f"timed add {i} mentions word{i % 13} and birds", user_id=f"u{i % USERS}", resolve=False)
        took.append(time.perf_counter() - start)
    one_add = statistics.median(took) * 1e6
    print(f"one-row add(resolve=False), synchronous=OFF: p50 {one_add:.1f} us")
    floors = floor(seeded, tmp, store, clock, args.floor) if args.floor else {}
    store.close()
    if floors:
        put = floors.get("langgraph_put")
        print("one-row write CPU, synchronous=OFF, interleaved: p50 us (x LangGraph put), "
              "WAL frames per commit")
        for k, v in floors.items():
            if not k.startswith("frames_"):
                ratio = f" ({v / put:.2f}x put)" if put else ""
                fpc = floors.get(f"frames_{k.removeprefix('floor_')}")
                print(f"  {k:28} {v:8.1f}{ratio}" + ("" if fpc is None else f"  {fpc:.2f} frames"))
    many = localmem.open(tmp / "many.db", clock=clock)
    many.connection.pragma("synchronous", "OFF")
    cpu = []
    for b in range(args.batches):
        clock.advance(minutes=1)
        items = [{"text": f"batch {b} line {i}: knee swim fish lisbon {i % 31}", "user_id": f"u{i % 100}"}
                 for i in range(1000)]
        start = time.process_time()
        many.add_many(items, resolve=False)
        cpu.append(time.process_time() - start)
    many.close()
    batch_ms = statistics.median(cpu) * 1e3
    print(f"add_many(resolve=False) of 1,000 lines, synchronous=OFF: CPU {batch_ms:.1f} ms")
    load = os.getloadavg()[0]
    print(f"load {load:.2f}, commit {git_commit()}")
    print(json.dumps({"frames_per_commit": round(per_commit, 2), "frames": split,
                      "one_add_cpu_p50_us": round(one_add, 1), "add_many_1000_cpu_ms": round(batch_ms, 1),
                      "floor": floors, "load": load}))


if __name__ == "__main__":
    main()
