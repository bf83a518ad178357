"""The hub at scale: ingest rate and peak memory, then as-of reads beside the same reads on a device.

Builds (once, cached under --cache) DEVICES devices' histories through the public API in
batches, each exported in FILES incremental files (100 files in all by default), totalling
--revisions revisions (a tenth of them corrections) for 1,000 users. Then, on a throwaway
PostgreSQL 15 cluster (tests/pg.py; or --dsn), it ingests every file in the order they were
written, each arriving a minute after its export (an injected clock), and prints the rate
(revisions/s) and the peak RSS of this process and of the server. A *receiver* device
imports the same files at the same times (cached too), and the same random as-of reads run
on both, interleaved: ``read(user)`` and ``get(memory)`` as of a random moment in the files'
arrivals, ``snapshot(user)``; p50/p95 in ms. ``--jobs N`` ingests with N processes (as
``hub ingest --jobs``). ``--keep-hub`` keeps the ingested hub (the cluster's data directory,
under the cache) and, when a kept one is there, skips the ingest and reads it: for iterating
on reads. Its last line is the figures as JSON (for benchmarks/ab.py). Prints,
never asserts.

    python benchmarks/hub.py                        # 100k revisions
    python benchmarks/hub.py --revisions 1000000    # the issue's size
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta
from multiprocessing import get_context
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import pg  # noqa: E402 - the tests' throwaway cluster
from provenance import git_commit  # noqa: E402

import localmem  # noqa: E402
from localmem.core.db import SCHEMA_VERSION  # noqa: E402
from localmem.hub import db, ingest, reads  # noqa: E402
from localmem.testing import FrozenClock  # noqa: E402

START = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
WORDS = "run knee swim fish lisbon berlin coach tempo interval recovery sleep protein".split()
USERS = 1000


def _rss_mb() -> float:
    """The peak RSS of this process or of its largest ingest process (``--jobs``), in MB."""
    who = (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    return max(resource.getrusage(w).ru_maxrss for w in who) / 1024


def _build_device(args: tuple[int, int, int, int, str]) -> list[str]:
    """One device's history, exported in ``files`` incremental files; returns their paths."""
    d, devices, per_device, files, cache = args
    clock = FrozenClock(START + timedelta(seconds=d))
    out: list[str] = []
    users = [f"u{u:04d}" for u in range(d, USERS, devices)]
    mark = 0
    with localmem.open(":memory:", clock=clock) as store:
        ids: list[str] = []
        done = 0
        for k in range(files):
            upto = per_device * (k + 1) // files
            while done < upto:
                with store.batch():
                    for _ in range(min(2000, upto - done)):
                        clock.advance(seconds=devices)
                        if ids and done % 10 == 9:
                            store.correct(ids[(done * 7919) % len(ids)], text=f"corrected note {d}.{done}")
                        else:
                            w = " ".join(WORDS[(done + j) % len(WORDS)] for j in range(6))
                            ids.append(store.add(f"note {d}.{done}: {w}", user_id=users[done % len(users)],
                                                 resolve=False).memory_id)
                        done += 1
            path = Path(cache) / f"dev{d:03d}.{k + 1}.lmsync.gz"
            mark = store.export(path, since=mark).watermark
            out.append(str(path))
    return out


def build(cache: Path, revisions: int, devices: int, files: int, jobs: int) -> list[tuple[datetime, Path]]:
    """The export files (cached), each with its arrival time, in arrival order."""
    cache.mkdir(parents=True, exist_ok=True)
    done = cache / "done"
    if not done.exists():
        t0 = time.perf_counter()
        tasks = [(d, devices, revisions // devices, files, str(cache)) for d in range(devices)]
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(_build_device, tasks))
        done.write_text("ok")
        print(f"built {revisions} revisions as {devices * files} files in {time.perf_counter() - t0:.0f} s")
    found = []
    for p in sorted(cache.glob("dev*.lmsync.gz")):
        header = _header(p)
        found.append((datetime.fromtimestamp(header["created_at"] / 1e6, tz=START.tzinfo)
                      + timedelta(minutes=1), p))
    return sorted(found)


def _header(path: Path) -> dict[str, Any]:
    from localmem.sync.files import read_header

    return read_header(path)


def _server_rss_mb(cluster: pg.Cluster | None) -> str:
    """The peak RSS of the cluster's processes (VmHWM, summed), or "?" without a local cluster."""
    if cluster is None:
        return "?"
    total = 0
    main_pid = (cluster.data / "postmaster.pid").read_text().split()[0]
    children = subprocess.run(["pgrep", "-P", main_pid], capture_output=True, text=True, check=False).stdout
    for pid in [main_pid, *children.split()]:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1])
    return f"{total / 1024:.0f}"


def _server_cpu_s(cluster: pg.Cluster | None) -> float | None:
    """The CPU seconds the cluster has used so far: the postmaster's, its exited children's (which
    it reaped) and its live children's. None without a local cluster."""
    if cluster is None:
        return None
    main_pid = (cluster.data / "postmaster.pid").read_text().split()[0]
    children = subprocess.run(["pgrep", "-P", main_pid], capture_output=True, text=True, check=False).stdout
    ticks = 0
    for n, pid in enumerate([main_pid, *children.split()]):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks += int(fields[11]) + int(fields[12]) + (int(fields[13]) + int(fields[14]) if n == 0 else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def _client_cpu_s() -> float:
    """The CPU seconds this process and its reaped children (the ingest processes) have used."""
    return sum(r.ru_utime + r.ru_stime for r in map(resource.getrusage,
                                                    (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def ingest_device(dsn: str, files: list[tuple[datetime, Path]]) -> None:
    """One device's files in order, each arriving at its own time (the injected clock)."""
    with db.connect(dsn) as conn:
        for at, p in files:
            ingest.ingest(conn, p, clock=FrozenClock(at))


def _ingest(dsn: str, arrivals: list[tuple[datetime, Path]], jobs: int, total: int,
            cluster: pg.Cluster | None) -> dict[str, Any]:
    """Create the hub and ingest every file (``jobs`` processes); prints and returns the figures."""
    with db.connect(dsn) as conn:
        db.init(conn)
    by_device: dict[str, list[tuple[datetime, Path]]] = {}
    for at, p in arrivals:
        by_device.setdefault(p.name.split(".")[0], []).append((at, p))
    t0, client0, server0 = time.perf_counter(), _client_cpu_s(), _server_cpu_s(cluster)
    if jobs == 1:
        ingest_device(dsn, arrivals)
    else:  # several ingesters at once (processes, as `hub ingest --jobs`), each device's files in order
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as procs:
            list(procs.map(ingest_device, [dsn] * len(by_device), by_device.values()))
    took = time.perf_counter() - t0
    client_us = (_client_cpu_s() - client0) / total * 1e6
    server1 = _server_cpu_s(cluster)
    server_us = None if server0 is None or server1 is None else (server1 - server0) / total * 1e6
    figures: dict[str, Any] = {"ingest_rev_per_s": round(total / took), "ingest_s": round(took, 2),
                               "peak_rss_mb": round(_rss_mb()), "ingest_client_cpu_us": round(client_us, 1)}
    if server_us is not None:
        figures["ingest_server_cpu_us"] = round(server_us, 1)
    print(f"hub ingest: {total} revisions from {len(arrivals)} files in {took:.1f} s = "
          f"{total / took:,.0f} rev/s (jobs {jobs}); peak RSS {_rss_mb():.0f} MB here, "
          f"{_server_rss_mb(cluster)} MB server (sum over its processes); load {os.getloadavg()[0]:.2f}")
    # CPU per revision does not depend on what else the machine runs, as the rate does.
    print(f"  CPU per revision: {client_us:.1f} us ingesting (this process and its ingest processes), "
          + ("?" if server_us is None else f"{server_us:.1f}") + " us server")
    return figures


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--revisions", type=int, default=100_000)
    ap.add_argument("--devices", type=int, default=20)
    ap.add_argument("--files-per-device", type=int, default=5)
    ap.add_argument("--reads", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=1, help="ingest connections at once")
    ap.add_argument("--dsn", help="an existing PostgreSQL (its search_path schema must be empty)")
    ap.add_argument("--cache", default="/tmp/localmem-hub-bench")
    ap.add_argument("--keep-hub", action="store_true",
                    help="keep the ingested hub under the cache; reuse a kept one (no ingest): reads only")
    args = ap.parse_args()
    cache = Path(args.cache) / f"{args.revisions}-{args.devices}x{args.files_per_device}"
    print(f"commit {git_commit()}, load {os.getloadavg()[0]:.2f} at start")
    arrivals = build(cache, args.revisions, args.devices, args.files_per_device, 2)
    total = sum(int(_header(p)["counts"]["revision"]) for _, p in arrivals)
    kept = cache / f"hub-v{db.HUB_VERSION}" if args.keep_hub and not args.dsn else None
    reuse = kept is not None and (kept / "ingested").exists()
    cluster = None if args.dsn else pg.start(port=55499, data=None if kept is None else kept / "pg")
    try:
        if cluster is None:
            dsn = args.dsn
        elif kept is not None:  # a kept hub lives in schema "hub" (a fresh one per run otherwise)
            dsn = f"{cluster.dsn} options='-c search_path=hub'"
        else:
            dsn = pg.fresh_dsn(cluster)
        figures: dict[str, Any] = {}
        if reuse:
            print(f"hub: the one kept in {kept} (ingested by an earlier run: no ingest)")
        else:
            if kept is not None and cluster is not None:
                with db.connect(cluster.dsn) as conn:
                    conn.execute("DROP SCHEMA IF EXISTS hub CASCADE")
                    conn.execute("CREATE SCHEMA hub")
            figures = _ingest(dsn, arrivals, args.jobs, total, cluster)
            if kept is not None:
                (kept / "ingested").write_text("ok")
        # One receiver per device schema: a newer localmem migrates the file it opens, which an
        # older one (ab.py's other side) then refuses.
        receiver_path = cache / f"receiver-{SCHEMA_VERSION}.db"
        if not receiver_path.exists():
            rclock = FrozenClock(arrivals[0][0])
            t0 = time.perf_counter()
            with localmem.open(cache / "receiver.partial.db", clock=rclock) as receiver:
                for at, p in arrivals:
                    rclock.set(at)
                    receiver.import_(p)
            os.replace(cache / "receiver.partial.db", receiver_path)
            print(f"device import of the same files: {total / (time.perf_counter() - t0):,.0f} rev/s")
        with db.connect(dsn) as conn:
            conn.execute("VACUUM ANALYZE")
            found = conn.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class AS c JOIN pg_namespace AS n"
                " ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            ).fetchone()
            size = int(str(found[0])) if found and found[0] is not None else 0
            print(f"hub tables with their indexes: {size / 1e6:.0f} MB = {size / total:.0f} bytes/revision")
        with db.connect(dsn) as conn, localmem.open(receiver_path, create=False) as device:
            rng = random.Random(7)
            users = [f"u{u:04d}" for u in range(USERS)]
            mems = [(str(r[1]), str(r[0])) for r in device.connection.execute(
                "SELECT memory_id, user_id FROM memories ORDER BY memory_id")]
            lo, hi = arrivals[0][0], arrivals[-1][0] + timedelta(minutes=1)
            span = (hi - lo).total_seconds()
            hub_clock = FrozenClock(hi)
            times: dict[str, dict[str, list[float]]] = {}
            rows = {"hub": 0, "device": 0}

            Probe = Callable[[str, datetime, str, str], Any]
            probes: list[tuple[str, Probe, Probe]] = [
                ("read(user)", lambda u, t, mu, m: reads.read(conn, u, clock=hub_clock, as_of=t),
                 lambda u, t, mu, m: device.read(u, as_of=t)),
                ("get(memory)", lambda u, t, mu, m: reads.get(conn, mu, m, clock=hub_clock, as_of=t),
                 lambda u, t, mu, m: device.get(m, as_of=t)),
                ("snapshot(user)", lambda u, t, mu, m: reads.snapshot(conn, u, clock=hub_clock, known_at=t),
                 lambda u, t, mu, m: device.snapshot(u, known_at=t)),
            ]
            for _ in range(args.reads):
                user = rng.choice(users)
                at = lo + timedelta(seconds=rng.random() * span)
                mem_user, mem = rng.choice(mems)
                for name, on_hub, on_device in probes:
                    for side, f in (("hub", on_hub), ("device", on_device)):
                        t = time.perf_counter()
                        got = f(user, at, mem_user, mem)
                        took_ms = (time.perf_counter() - t) * 1000
                        times.setdefault(name, {}).setdefault(side, []).append(took_ms)
                        if name == "read(user)":
                            rows[side] += len(got)
            print(f"as-of reads at {total} revisions ({args.reads} each, interleaved; ms p50 / p95):")
            for name, sides in times.items():
                h, d = sides["hub"], sides["device"]
                print(f"  {name:<15} hub {statistics.median(h):7.2f} / {pct(h, 0.95):7.2f}   device "
                      f"{statistics.median(d):7.2f} / {pct(d, 0.95):7.2f}   hub/device p50 "
                      f"{statistics.median(h) / statistics.median(d):.1f}x")
            for name, sides in times.items():
                figures[name] = {side: {"p50_ms": round(statistics.median(xs), 3),
                                        "p95_ms": round(pct(xs, 0.95), 3)} for side, xs in sides.items()}
            same = "the same" if rows["hub"] == rows["device"] else "DIFFERENT"
            print(f"  read(user) rows returned: hub {rows['hub']}, device {rows['device']} ({same}); "
                  f"load {os.getloadavg()[0]:.2f} at the end")
            print(json.dumps(figures))  # last: what benchmarks/ab.py compares
    finally:
        if cluster is not None:
            cluster.stop()


if __name__ == "__main__":
    main()
