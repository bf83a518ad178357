"""Sync: export and import at 100k and 1M revisions, peak memory, the growth, and the limits beside them.

For each size it builds (once, cached under ``--cache``) a store of N revisions on a
frozen clock through the public API in batches (a tenth of them corrections, 7 users),
then, each in a process of its own so that its peak resident memory (ru_maxrss) is its
own: exports it to a file, imports the file into an empty store, and the two limits the
issue names, on the same rows:

* ``session``: an apsw Session changeset of the memories, revisions and content tables
  (``Session.diff`` against an empty store, streamed to a file), applied to an empty store;
* ``executemany``: the same rows read from the source and written with executemany into
  an empty store in one transaction (its triggers, indexes and full-text index as they are).

Neither limit checks anything: an import verifies the file, checks every row and hash
and chains them. Prints each figure, the 100k -> 1M growth of export + import (wall and
CPU), the load average, and last one JSON object (for ``benchmarks/ab.py``). Never asserts.

    python benchmarks/sync.py                          # 100k and 1M (the 1M store takes ~4 min, once)
    python benchmarks/sync.py --sizes 100000           # 100k only
    python benchmarks/ab.py 803eb23 --same-script -- benchmarks/sync.py --sizes 100000
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import apsw

import localmem
from localmem.testing import FrozenClock

WORDS = "run knee swim fish lisbon berlin coach tempo interval recovery sleep protein".split()
TABLES = ("memories", "revisions", "content")


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def build(path: Path, n: int) -> float:
    """A store of ``n`` revisions written through the API (1,000... 5,000 per batch, no phrase reading)."""
    clock = FrozenClock("2026-01-01T00:00:00Z")
    t0 = time.perf_counter()
    with localmem.open(path, clock=clock) as store:
        ids: list[str] = []
        done = 0
        while done < n:
            with store.batch():
                for _ in range(min(5000, n - done)):
                    clock.advance(seconds=1)
                    if ids and done % 10 == 9:
                        store.correct(ids[done % len(ids)], text=f"corrected note {done}")
                    else:
                        w = " ".join(WORDS[(done + k) % len(WORDS)] for k in range(6))
                        ids.append(store.add(f"note {done}: {w}", user_id=f"u{done % 7}",
                                             resolve=False).memory_id)
                    done += 1
    return time.perf_counter() - t0


def _fresh(path: Path) -> None:
    for p in path.parent.glob(path.name + "*"):
        p.unlink()
    with localmem.open(path, clock=FrozenClock("2026-06-01T00:00:00Z")):
        pass


# -- the phases, each run in a child process ---------------------------------------------------


def child_export(src: Path, file: Path) -> dict[str, Any]:
    with localmem.open(src) as store:
        t0, c0 = time.perf_counter(), time.process_time()
        out = store.export(file)
        return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                "revisions": out.revisions, "bytes": out.bytes}


def child_import(file: Path, dst: Path) -> dict[str, Any]:
    with localmem.open(dst, clock=FrozenClock("2026-06-01T00:00:00Z")) as target:
        t0, c0 = time.perf_counter(), time.process_time()
        got = target.import_(file)
        reader = resource.getrusage(resource.RUSAGE_CHILDREN)  # the reader process, if one ran
        return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                "revisions": got.revisions, "reader_cpu": reader.ru_utime + reader.ru_stime,
                "reader_rss_mb": reader.ru_maxrss / (1024 * 1024 if sys.platform == "darwin" else 1024)}


def _raw(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.pragma("foreign_keys", True)
    conn.pragma("recursive_triggers", True)
    return conn


def child_executemany(src: Path, dst: Path) -> dict[str, Any]:
    """The same rows, read from the source and written with executemany into an empty store."""
    _fresh(dst)
    source = apsw.Connection(str(src), flags=apsw.SQLITE_OPEN_READONLY)
    conn = _raw(dst)
    cols = {t: [str(r[1]) for r in source.execute(f"PRAGMA table_info({t})")] for t in TABLES}
    t0, c0 = time.perf_counter(), time.process_time()
    conn.execute("BEGIN IMMEDIATE")
    for t in TABLES:
        q = f"INSERT INTO {t} ({', '.join(cols[t])}) VALUES ({', '.join('?' * len(cols[t]))})"
        cursor = source.execute(f"SELECT {', '.join(cols[t])} FROM {t} ORDER BY rowid")
        while rows := list(itertools.islice(cursor, 5000)):  # bounded memory
            conn.executemany(q, rows)
    conn.execute("COMMIT")
    return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def child_session(src: Path, dst: Path, file: Path) -> dict[str, Any]:
    """An apsw Session changeset of the rows (diff against an empty store), applied to an empty store."""
    empty = dst.with_name("session-empty.db")
    _fresh(empty)
    _fresh(dst)
    t0, c0 = time.perf_counter(), time.process_time()
    conn = apsw.Connection(str(src), flags=apsw.SQLITE_OPEN_READONLY)
    conn.execute("ATTACH ? AS empty", (str(empty),))
    session = apsw.Session(conn, "main")
    for t in TABLES:
        session.attach(t)
        session.diff("empty", t)
    with open(file, "wb") as out:
        def write(data: memoryview) -> None:
            out.write(data)
        session.changeset_stream(write)
    session.close()
    conn.close()
    made = time.perf_counter() - t0
    target = _raw(dst)
    with open(file, "rb") as inp:
        apsw.Changeset.apply(inp.read, target)
    return {"seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0, "changeset_seconds": made,
            "bytes": file.stat().st_size}


def _child(argv: list[str]) -> None:
    phase, *paths = argv
    fn = {"export": child_export, "import": child_import, "executemany": child_executemany,
          "session": child_session}[phase]
    result = fn(*(Path(p) for p in paths))  # type: ignore[operator]
    result["rss_mb"] = _rss_mb()
    print(json.dumps(result))


def _run(*args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True,
                          check=False, env={**os.environ})
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def source(cache: Path, n: int) -> Path:
    """The cached store of ``n`` revisions, built the first time."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"src-{n}.db"
    if not path.exists():
        partial = cache / f"src-{n}.partial.db"
        for p in cache.glob(partial.name + "*"):
            p.unlink()
        took = build(partial, n)
        for suffix in ("-wal", "-shm"):
            if Path(str(partial) + suffix).exists():
                os.replace(str(partial) + suffix, str(path) + suffix)
        os.replace(partial, path)
        print(f"built {n:,} revisions in {took:.0f} s (cached at {path})", flush=True)
    return path


def measure(cache: Path, n: int, limits: bool, session: bool) -> dict[str, Any]:
    src = source(cache, n)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        file, dst = Path(tmp) / "export.lmsync.gz", Path(tmp) / "dst.db"
        exp = _run("export", str(src), str(file))
        imp = _run("import", str(file), str(dst))
        out["export"], out["import"] = exp, imp
        print(f"{n:>9,}  export {exp['seconds']:6.1f} s ({exp['cpu']:5.1f} s CPU) = "
              f"{n / exp['seconds']:>7,.0f} rev/s, file {exp['bytes'] / n:.0f} B/rev, peak RSS "
              f"{exp['rss_mb']:.0f} MB", flush=True)
        print(f"{'':9}  import {imp['seconds']:6.1f} s ({imp['cpu']:5.1f} s CPU) = "
              f"{n / imp['seconds']:>7,.0f} rev/s, peak RSS {imp['rss_mb']:.0f} MB; its reader process "
              f"{imp.get('reader_cpu', 0):.1f} s CPU, peak RSS {imp.get('reader_rss_mb', 0):.0f} MB",
              flush=True)
        total = exp["seconds"] + imp["seconds"]
        out["total_seconds"] = total
        out["total_cpu"] = exp["cpu"] + imp["cpu"]
        print(f"{'':9}  export + import {total:.1f} s ({out['total_cpu']:.1f} s CPU)", flush=True)
        if limits:
            many = _run("executemany", str(src), str(Path(tmp) / "many.db"))
            out["executemany"] = many
            print(f"{'':9}  limit: executemany of the same rows {many['seconds']:.1f} s "
                  f"({many['cpu']:.1f} s CPU, {many['rss_mb']:.0f} MB); import / executemany "
                  f"{imp['seconds'] / many['seconds']:.2f}x wall, {imp['cpu'] / many['cpu']:.2f}x CPU",
                  flush=True)
        if limits and session:
            ses = _run("session", str(src), str(Path(tmp) / "session.db"), str(Path(tmp) / "changeset"))
            out["session"] = ses
            print(f"{'':9}  limit: Session changeset + apply {ses['seconds']:.1f} s ({ses['cpu']:.1f} s CPU, "
                  f"{ses['rss_mb']:.0f} MB); import / session {imp['seconds'] / ses['seconds']:.2f}x wall",
                  flush=True)
    return out


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        _child(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100000,1000000", help="revision counts, comma separated")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "localmem-bench-sync",
                    help="where the source stores are built once and kept")
    ap.add_argument("--no-limits", action="store_true", help="skip the Session and executemany contenders")
    ap.add_argument("--session-max", type=int, default=100_000,
                    help="the largest size the Session contender runs at (its apply defers foreign keys, "
                         "and its changes come in hash order: each parent then scans revisions.prev_rev, "
                         "which has no index, so it grows with the square of the rows)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"sync benchmark: load average {os.getloadavg()[0]:.2f} (2-core machine; wall times move with it)")
    results = {str(n): measure(args.cache, n, not args.no_limits, n <= args.session_max) for n in sizes}
    summary: dict[str, Any] = {"sizes": results, "load": os.getloadavg()[0]}
    if len(sizes) >= 2:
        small, large = results[str(sizes[0])], results[str(sizes[-1])]
        growth = large["total_seconds"] / small["total_seconds"]
        growth_cpu = large["total_cpu"] / small["total_cpu"]
        summary["growth"] = {"wall": growth, "cpu": growth_cpu, "sizes": sizes[-1] / sizes[0]}
        print(f"growth {sizes[0]:,} -> {sizes[-1]:,} ({sizes[-1] / sizes[0]:.0f}x the rows): export + import "
              f"{growth:.1f}x wall, {growth_cpu:.1f}x CPU  (target <= 11x; 1M < 60 s, < 300 MB)")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
