"""What a write costs in the file: WAL frames per one-row commit, by B-tree, and the CPU of a write.

    python benchmarks/frames.py [--seed-lines 2000] [--adds 1000] [--timed 2000] [--batches 20]
    python benchmarks/ab.py REF --same-script -- benchmarks/frames.py

Seeds a fresh store with ``--seed-lines`` memories (``add_many(resolve=False)``, 20 users), then
with checkpoints off makes ``--adds`` one-row ``Store.add(resolve=False)`` writes, each its own
transaction, the clock a second apart, and reads the WAL's frame headers: frames per commit,
each frame's page mapped to its table or index by ``dbstat`` (``page1`` is the header page,
``freelist`` a page no B-tree holds). Then, with ``synchronous=OFF`` (so the figures are CPU, not
the disk's flushes): the p50 of ``--timed`` more one-row adds, and the median CPU of ``--batches``
``add_many(resolve=False)`` calls of 1,000 lines each, into a second fresh store. Prints each
figure and last one JSON object (for ``benchmarks/ab.py``). Never asserts.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import struct
import tempfile
import time
from pathlib import Path

import apsw
from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

import localmem
from localmem.testing import FrozenClock

USERS = 20


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seed-lines", type=int, default=2000)
    ap.add_argument("--adds", type=int, default=1000)
    ap.add_argument("--timed", type=int, default=2000)
    ap.add_argument("--batches", type=int, default=20)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="localmem-frames-"))
    clock = FrozenClock("2026-01-01T00:00:00Z")
    path = tmp / "adds.db"
    store = localmem.open(path, clock=clock)
    store.add_many([{"text": f"seed line {i} about topic {i % 97} and cats", "user_id": f"u{i % USERS}"}
                    for i in range(args.seed_lines)], resolve=False)
    conn = store.connection
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
    store.close()
    one_add = statistics.median(took) * 1e6
    print(f"one-row add(resolve=False), synchronous=OFF: p50 {one_add:.1f} us")
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
                      "load": load}))


if __name__ == "__main__":
    main()
