"""Write and point-get benchmark: localmem next to raw apsw and LangGraph's SqliteStore, interleaved.

    python benchmarks/writes.py [--lines 100000] [--users 100] [--batch 1000] [--rounds 3]
                                [--singles 1000] [--gets 2000] [--get-revisions 1000000 --get-db PATH]
                                [--get-cache warm|cold|both]

Writes ``--lines`` chat lines for ``--users`` users, ``--batch`` lines per transaction,
into a fresh file per contender (WAL on every one), and times each contender's writes
only. The lines are drawn at random, half from the shared time-phrase dev set (each has
a date or a time phrase) and half from ``benchmarks/data/phrase_free.txt`` (none has):
``--phrase-share`` sets the split. Contenders, in one run, their order rotated each round:

* ``add_many`` — localmem's batched add (``Store.add_many``), time phrases read
  (``resolve=True``, the default, and the default ``workers=0``: no reader process), read
  with one reader process whatever the load (``add_many_readers``, ``workers=1``: its start
  and CPU counted) and not read (``add_many_noresolve``). CPU
  seconds are printed for each: this process's during the timed calls, and the readers'
  whole lives. On a localmem without ``add_many`` (an older commit under ``ab.py
  --same-script``) the same lines go through ``add`` in ``batch()``, under the same names
  (without ``workers``, add_many_readers is add_many);
* ``raw`` — apsw ``executemany`` of the very rows the localmem store holds into the same
  three tables (memories, revisions, content; same indexes, CHECKs and foreign keys; no
  triggers), ``raw_fts5`` — the same plus the same FTS5 index filled by executemany:
  the physical limits;
* ``langgraph_put`` — LangGraph's ``SqliteStore.batch`` of ``PutOp`` (namespace
  ``("memories", user)``, the line and its source as the value).

Then, on the stores just built: one-row writes (``Store.add`` outside a batch, phrases read
and not, each its own transaction, next to ``SqliteStore.put``), interleaved, ``--singles``
of each; and point
gets: ``Store.get(id, known_at=, valid_at=)`` next to the raw as-of probe it stands on (one
descent of ``revisions_asof`` on its own read-only connection) and ``SqliteStore.get``, in an
order drawn afresh for each id.
With ``--get-revisions N`` the gets are measured again on a store of N memories (made with
``add_many(resolve=False)``, kept at ``--get-db`` and reused if it is there), once with the
file read through into the OS page cache first (``warm``) and once with it evicted first
(``cold``, ``posix_fadvise(DONTNEED)`` on that file alone), each printed apart
(``--get-cache`` picks one): a file half in the cache measured the disk, not get. On the cold
file the two contenders take separate ids (on shared ones the second would find the first's
pages read for it).

Figures are medians over rounds (latencies: over every sample). It prints ratios and
the targets of issue 19; it never asserts. The last line is JSON.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

import localmem
from localmem.core.db import schema_sql
from localmem.testing import FrozenClock

ROOT = Path(__file__).resolve().parent.parent
DEV = next(
    (
        d / "shared" / "timephrases" / "dev.jsonl"
        for d in (ROOT.parent, ROOT.parent.parent)
        if (d / "shared" / "timephrases" / "dev.jsonl").is_file()
    ),
    None,
)
PHRASE_FREE = ROOT / "benchmarks" / "data" / "phrase_free.txt"
START = "2026-01-01T00:00:00Z"
RAW_TABLES = ("memories", "revisions", "content")
#: The as-of probe get() cannot beat (benchmarks/store.py's): one descent of revisions_asof.
RAW_ASOF_SQL = (
    "SELECT * FROM revisions WHERE memory_id = ? AND arrived_at <= ?"
    " ORDER BY hlc DESC, origin DESC, rev_id DESC LIMIT 1"
)
# Issue 19's targets, printed next to the figures they judge.
TARGET_VS_RAW_FTS5 = 0.3
TARGET_VS_LANGGRAPH = 0.5
TARGET_GET_VS_RAW = 2.0
#: How the big store's gets are printed for each page-cache state (see page_cache).
CACHE_STATES = {"warm": "in the page cache", "cold": "evicted from the page cache"}

Item = dict[str, Any]


def chat_lines(n: int, users: int, share: float, seed: int) -> list[tuple[str, str]]:
    """``n`` (text, user) pairs: a line with a time phrase with probability ``share``, else one without."""
    if DEV is None:
        raise SystemExit("the shared time-phrase dev set (shared/timephrases/dev.jsonl) was not found")
    with DEV.open(encoding="utf-8") as f:
        timed = [json.loads(line)["text"] for line in f if line.strip()]
    free = [
        line.strip()
        for line in PHRASE_FREE.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    rng = random.Random(seed)
    return [
        (rng.choice(timed) if rng.random() < share else rng.choice(free), f"user-{rng.randrange(users):03d}")
        for _ in range(n)
    ]


def items_of(lines: Sequence[tuple[str, str]], start: int) -> list[Item]:
    return [
        {"text": t, "user_id": u, "source": {"session": f"s{(start + i) // 40}", "turn": start + i}}
        for i, (t, u) in enumerate(lines)
    ]


def open_store(path: str) -> tuple[localmem.Store, FrozenClock]:
    clock = FrozenClock(START)
    return localmem.open(path, clock=clock), clock


def children_cpu() -> float:
    """CPU seconds of this process's finished children (reader processes, once stopped)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def localmem_writes(
    path: str, lines: Sequence[tuple[str, str]], batch: int, resolve: bool, workers: int | None = None
) -> tuple[float, float, float]:
    """Seconds to write every line through the batched add, this process's CPU seconds in those
    calls, and the CPU seconds of the reader processes it started; the store is left at ``path``."""
    store, clock = open_store(path)
    many = getattr(store, "add_many", None)
    extra = (
        {"workers": workers}
        if many is not None and workers is not None and "workers" in inspect.signature(many).parameters
        else {}
    )
    spent = cpu = 0.0
    kids = children_cpu()
    try:
        for i in range(0, len(lines), batch):
            items = items_of(lines[i : i + batch], i)
            clock.advance(seconds=len(items))
            c0, t0 = time.process_time(), time.perf_counter()
            if many is not None:
                many(items, resolve=resolve, **extra)
            else:  # an older localmem: add in a batch
                with store.batch():
                    for item in items:
                        store.add(**item, resolve=resolve)
            spent += time.perf_counter() - t0
            cpu += time.process_time() - c0
    finally:
        store.close()  # stops (and waits for) its readers: their CPU is counted below
    return spent, cpu, children_cpu() - kids


def raw_ddl(fts: bool) -> list[str]:
    """The schema's own CREATE statements for RAW_TABLES (and, with ``fts``, the full-text index)."""
    scratch = apsw.Connection(":memory:")
    try:
        scratch.execute(schema_sql())
        names = [*RAW_TABLES, *(("content_indexed", "content_fts") if fts else ())]
        marks = ",".join("?" * len(names))
        return [
            q
            for (q,) in scratch.execute(
                "SELECT sql FROM sqlite_schema WHERE type IN ('table', 'index', 'view')"
                f" AND name NOT LIKE 'content_fts_%' AND tbl_name IN ({marks}) AND sql IS NOT NULL"
                " ORDER BY rowid",
                names,
            )
        ]
    finally:
        scratch.close()


def rows_of(path: str) -> list[tuple[list[Any], list[Any], list[Any]]]:
    """The localmem store's rows, by seq, in its batches' sizes: what the raw contenders write."""
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        memories = conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()
        revisions = conn.execute("SELECT * FROM revisions ORDER BY seq").fetchall()
        content = conn.execute("SELECT * FROM content ORDER BY rev_seq").fetchall()
        owners: dict[Any, Any] = {
            m: o for m, o in conn.execute("SELECT memory_id, 'u' || hex(user_id) FROM memories")
        }
    finally:
        conn.close()
    return [([m], [r], [(*c, owners[c[1]])]) for m, r, c in zip(memories, revisions, content, strict=True)]


def raw_writes(
    path: str, rows: Sequence[tuple[list[Any], list[Any], list[Any]]], batch: int, fts: bool
) -> float:
    """Seconds for apsw executemany of the rows, ``batch`` memories per transaction."""
    conn = apsw.Connection(path)
    conn.pragma("journal_mode", "wal")
    conn.pragma("foreign_keys", True)
    with conn:
        for ddl in raw_ddl(fts):
            conn.execute(ddl)
    spent = 0.0
    try:
        for i in range(0, len(rows), batch):
            chunk = rows[i : i + batch]
            memories = [m for c in chunk for m in c[0]]
            revisions = [r for c in chunk for r in c[1]]
            content = [x for c in chunk for x in c[2]]
            t0 = time.perf_counter()
            with conn:
                conn.executemany(
                    f"INSERT INTO memories VALUES ({','.join('?' * len(memories[0]))})", memories
                )
                conn.executemany(
                    f"INSERT INTO revisions VALUES ({','.join('?' * len(revisions[0]))})", revisions
                )
                conn.executemany(
                    f"INSERT INTO content VALUES ({','.join('?' * 7)})", [x[:7] for x in content]
                )
                if fts:
                    conn.executemany(
                        "INSERT INTO content_fts (rowid, text, owner) VALUES (?, ?, ?)",
                        [(x[0], x[2], x[7]) for x in content],
                    )
            spent += time.perf_counter() - t0
    finally:
        conn.close()
    return spent


def langgraph_store(path: str) -> Any:
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    lg = SqliteStore(conn)
    lg.setup()
    return lg


def langgraph_writes(
    path: str, lines: Sequence[tuple[str, str]], batch: int
) -> tuple[float, list[tuple[Any, str]]]:
    """Seconds for SqliteStore.batch of PutOps, ``batch`` per call; the (namespace, key) written."""
    from langgraph.store.base import PutOp

    lg = langgraph_store(path)
    keys: list[tuple[Any, str]] = []
    spent = 0.0
    try:
        for i in range(0, len(lines), batch):
            ops = []
            for item in items_of(lines[i : i + batch], i):
                ns, key = ("memories", item["user_id"]), uuid.uuid4().hex
                ops.append(PutOp(ns, key, {"text": item["text"], "source": item["source"]}))
                keys.append((ns, key))
            t0 = time.perf_counter()
            lg.batch(ops)
            spent += time.perf_counter() - t0
    finally:
        lg.conn.close()
    return spent, keys


def interleaved(
    calls: dict[str, Callable[[Any], object]],
    inputs: Sequence[Any],
    warmup: int,
    shuffle: random.Random | None = None,
) -> dict[str, list[int]]:
    """Nanoseconds of each call on each input, the calls alternating per input (which goes first
    rotates; with ``shuffle``, their order is drawn afresh for each input), after ``warmup``
    untimed inputs. Rotating keeps the cyclic order: of three calls, each always runs right after
    the same other one (the gets' raw probe right after get, on the same id, ~10% faster for it)."""
    for x in inputs[:warmup]:
        for fn in calls.values():
            fn(x)
    items = list(calls.items())
    out: dict[str, list[int]] = {name: [] for name in calls}
    for i, x in enumerate(inputs[warmup:]):
        if shuffle is not None:
            shuffle.shuffle(items)
        for j in range(len(items)):
            name, fn = items[(i + j) % len(items)]
            t0 = time.perf_counter_ns()
            fn(x)
            out[name].append(time.perf_counter_ns() - t0)
    return out


def quantile(ns: Sequence[int], q: float) -> float:
    """The q-quantile (nearest rank) of nanosecond samples, in µs."""
    s = sorted(ns)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] / 1000


def singles(store_path: str, lg_path: str, lines: Sequence[tuple[str, str]], n: int) -> dict[str, list[int]]:
    """One-row writes, each its own transaction: Store.add (phrases read, and not) next to
    SqliteStore.put, interleaved."""
    store, clock = open_store(store_path)
    clock.set(datetime.fromisoformat("2027-01-01T00:00:00+00:00"))
    lg = langgraph_store(lg_path)
    try:

        def add(x: tuple[int, str, str]) -> None:
            clock.advance(seconds=1)
            store.add(x[1], user_id=x[2], source={"session": "single", "turn": x[0]})

        def add_noresolve(x: tuple[int, str, str]) -> None:
            clock.advance(seconds=1)
            store.add(x[1], user_id=x[2], source={"session": "single", "turn": x[0]}, resolve=False)

        def put(x: tuple[int, str, str]) -> None:
            lg.put(
                ("memories", x[2]),
                uuid.uuid4().hex,
                {"text": x[1], "source": {"session": "single", "turn": x[0]}},
            )

        picks = [(i, *lines[i % len(lines)]) for i in range(n + 50)]
        calls: dict[str, Callable[[Any], object]] = {
            "one_add": add,
            "one_add_noresolve": add_noresolve,
            "langgraph_one_put": put,
        }
        return interleaved(calls, picks, 50)
    finally:
        store.close()
        lg.conn.close()


def page_cache(path: str, state: str) -> str:
    """Put the file's pages in the OS page cache (``warm``: read it through once) or out of it
    (``cold``: ``posix_fadvise(DONTNEED)``, this file only), before a round of gets; what was done."""
    if state == "warm":
        t0, size = time.perf_counter(), 0
        with open(path, "rb") as f:
            while chunk := f.read(1 << 24):
                size += len(chunk)
        return f"read through ({size / 1e6:,.0f} MB in {time.perf_counter() - t0:.1f} s)"
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return "evicted (posix_fadvise DONTNEED)"


def gets(
    store_path: str,
    lg: tuple[str, Sequence[tuple[Any, str]]] | None,
    n: int,
    seed: int,
    cache: str | None = None,
) -> dict[str, list[int]]:
    """Point gets: Store.get as of a random (known, valid) in the memory's life, the raw probe at
    the same known, and (if given) SqliteStore.get of a random key.

    ``cache`` (``warm`` or ``cold``, see :func:`page_cache`) sets the file's page-cache state
    first; None leaves it as it is (a store just written). On a cold file the probe and get each
    take their own ids (drawn alike, still alternating): on shared ids whichever ran second would
    find the other's pages read from disk for it.
    """
    if cache is not None:
        print(f"[{time.strftime('%H:%M:%S')}] gets on {store_path}: {page_cache(store_path, cache)}",
              file=sys.stderr, flush=True)
    store, clock = open_store(store_path)
    conn = store.connection
    ids = [(m, c) for m, c in conn.execute("SELECT memory_id, created_at FROM memories")]
    newest = int(conn.execute("SELECT max(arrived_at) FROM revisions").get)
    clock.set(datetime.fromisoformat("2028-01-01T00:00:00+00:00"))
    probe = apsw.Connection(store_path, flags=apsw.SQLITE_OPEN_READONLY)
    probe.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
    lg_store = None if lg is None else langgraph_store(lg[0])
    rng = random.Random(seed)
    epoch = datetime.fromisoformat("1970-01-01T00:00:00+00:00")
    def pick() -> tuple[Any, ...]:
        mid, created = ids[rng.randrange(len(ids))]
        known = rng.randint(created, newest)
        return (
            mid,
            epoch + timedelta(microseconds=known),
            epoch + timedelta(microseconds=rng.randint(created, newest)),
            known,
            None if lg is None else lg[1][rng.randrange(len(lg[1]))],
        )

    # Each input is (get's pick, the probe's pick): the same one, or on a cold file two.
    picks = [(p, p if cache != "cold" else pick()) for p in (pick() for _ in range(n + 200))]
    try:
        calls: dict[str, Callable[[Any], object]] = {
            "get": lambda x: store.get(x[0][0], known_at=x[0][1], valid_at=x[0][2]),
            "raw_probe": lambda x: probe.execute(RAW_ASOF_SQL, (x[1][0], x[1][3])).fetchone(),
        }
        if lg_store is not None:
            calls["langgraph_get"] = lambda x: lg_store.get(*x[0][4])
        for p, _ in picks[:5]:  # both find the same revision
            rev, raw = (
                store.get(p[0], known_at=p[1], valid_at=p[2]),
                probe.execute(RAW_ASOF_SQL, (p[0], p[3])).fetchone(),
            )
            if rev is None or raw is None or rev.rev_id != raw[1]:
                raise RuntimeError(f"get and the raw probe disagree on {p[0]}")
        return interleaved(calls, picks, 200, shuffle=random.Random(seed))
    finally:
        store.close()
        probe.close()
        if lg_store is not None:
            lg_store.conn.close()


def rows_without_copies(path: str) -> int:
    """Revisions without schema 9's kind/key copies (a store built before it): get reads their memory."""
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("SELECT count(*) FROM revisions WHERE memory_kind IS NULL").get)
    except apsw.SQLError:  # not yet migrated to schema 9: no row has them
        return int(conn.execute("SELECT count(*) FROM revisions").get)
    finally:
        conn.close()


def big_store(path: str, n: int, users: int, batch: int, seed: int) -> None:
    """A store of ``n`` memories for the get at scale (reused when ``path`` exists)."""
    if os.path.exists(path):
        return
    print(f"[{time.strftime('%H:%M:%S')}] building {n:,} memories at {path} ...", file=sys.stderr, flush=True)
    lines = chat_lines(min(n, 100_000), users, 0.5, seed)
    store, clock = open_store(path)
    try:
        for i in range(0, n, batch):
            items = items_of([lines[(i + j) % len(lines)] for j in range(min(batch, n - i))], i)
            clock.advance(seconds=len(items))
            store.add_many(items, resolve=False)
    finally:
        store.close()


def load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--singles", type=int, default=1_000, help="one-row writes of each kind per round")
    parser.add_argument("--gets", type=int, default=2_000, help="timed gets of each kind per round")
    parser.add_argument("--phrase-share", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--get-revisions", type=int, default=0, help="also measure get on a store this big")
    parser.add_argument("--get-db", default=None, help="where that store is kept (reused if present)")
    parser.add_argument(
        "--get-cache", choices=("warm", "cold", "both"), default="both",
        help="that store's page-cache state for its gets: read through first, evicted first, or each in turn",
    )
    parser.add_argument("--no-langgraph", action="store_true")
    args = parser.parse_args(argv)
    env = {
        "localmem": f"{localmem.__version__} {git_commit()}",
        "python": platform.python_version(),
        "sqlite": apsw.sqlite_lib_version(),
        "cpus": str(os.cpu_count()),
        "load_before": load(),
    }
    lines = chat_lines(args.lines, args.users, args.phrase_share, args.seed)
    with_lg = not args.no_langgraph
    writers = ["add_many", "add_many_readers", "add_many_noresolve", "raw", "raw_fts5",
               *(["langgraph_put"] if with_lg else [])]
    rates: dict[str, list[float]] = {w: [] for w in writers}
    cpus: dict[str, list[tuple[float, float]]] = {}  # localmem contender: (own, readers') CPU s per round
    lat: dict[str, list[int]] = {}
    started = time.perf_counter()
    for r in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="localmem-writes-", dir=os.environ.get("BENCH_TMP")) as tmp:
            paths = {w: os.path.join(tmp, f"{w}.db") for w in writers}
            # add_many first: the raw contenders write its rows; the rest in rotating order.
            rest = writers[1:]
            order = ["add_many", *rest[r % len(rest) :], *rest[: r % len(rest)]]
            lg_keys: list[tuple[Any, str]] = []
            rows: list[Any] = []
            for w in order:
                used = ""
                if w.startswith("add_many"):
                    resolve, workers = w != "add_many_noresolve", 1 if w == "add_many_readers" else None
                    spent, cpu, kids = localmem_writes(paths[w], lines, args.batch, resolve, workers)
                    cpus.setdefault(w, []).append((cpu, kids))
                    used = f" (CPU {cpu:.1f} s here, {kids:.1f} s in readers)"
                    if w == "add_many":
                        rows = rows_of(paths[w])
                elif w in ("raw", "raw_fts5"):
                    spent = raw_writes(paths[w], rows, args.batch, w == "raw_fts5")
                else:
                    spent, lg_keys = langgraph_writes(paths[w], lines, args.batch)
                rates[w].append(len(lines) / spent)
                print(
                    f"[{time.strftime('%H:%M:%S')}] round {r + 1}: {w} {len(lines) / spent:,.0f}/s{used}",
                    file=sys.stderr,
                    flush=True,
                )
            if with_lg and args.singles:
                for k, v in singles(paths["add_many"], paths["langgraph_put"], lines, args.singles).items():
                    lat.setdefault(k, []).extend(v)
            if args.gets:
                lg = (paths["langgraph_put"], lg_keys) if with_lg else None
                for k, v in gets(paths["add_many"], lg, args.gets, args.seed + r).items():
                    lat.setdefault(k, []).extend(v)
    big: dict[str, dict[str, list[int]]] = {}  # page-cache state -> contender -> ns
    copyless = 0
    if args.get_revisions:
        path = args.get_db or os.path.join(tempfile.gettempdir(), f"localmem-get-{args.get_revisions}.db")
        big_store(path, args.get_revisions, args.users, args.batch, args.seed)
        copyless = rows_without_copies(path)
        states = ["warm", "cold"] if args.get_cache == "both" else [args.get_cache]
        for r in range(args.rounds):
            for state in states[r % len(states):] + states[: r % len(states)]:
                for k, v in gets(path, None, args.gets, args.seed + r, cache=state).items():
                    big.setdefault(state, {}).setdefault(k, []).extend(v)
    env["load_after"] = load()
    env["elapsed_s"] = f"{time.perf_counter() - started:.0f}"
    med = {w: statistics.median(v) for w, v in rates.items()}
    pct: dict[str, dict[str, float]] = {
        k: {"p50": quantile(v, 0.5), "p95": quantile(v, 0.95)} for k, v in lat.items()
    }
    big_pct = {
        state: {k: {"p50": quantile(v, 0.5), "p95": quantile(v, 0.95)} for k, v in by.items()}
        for state, by in big.items()
    }

    print(
        f"localmem writes benchmark: {args.lines:,} chat lines ({args.phrase_share:.0%} with a time phrase), "
        f"{args.users} users, {args.batch:,} per transaction, WAL, {args.rounds} rounds (medians)"
    )
    print(
        f"  localmem {env['localmem']}, Python {env['python']}, SQLite {env['sqlite']}; {env['cpus']} CPUs, "
        f"load {env['load_before']} at start, {env['load_after']} at end; {env['elapsed_s']} s"
    )
    print()
    print(f"  {'batched writes':<32}{'lines/s':>10}{'vs raw+FTS5':>13}{'vs LangGraph':>14}")
    for w in writers:
        vs_lg = f"{med[w] / med['langgraph_put']:.2f}x" if with_lg else "-"
        print(f"  {w:<32}{med[w]:>10,.0f}{med[w] / med['raw_fts5']:>12.2f}x{vs_lg:>14}")
    out: dict[str, Any] = {
        "benchmark": "localmem.writes",
        "lines": args.lines,
        "env": env,
        "rates": {w: round(v, 1) for w, v in med.items()},
        "ratios": {"add_many_vs_raw_fts5": round(med["add_many"] / med["raw_fts5"], 4)},
    }
    for w, per_round in cpus.items():
        own, kids = (statistics.median(c[k] for c in per_round) for k in (0, 1))
        print(f"  {w + ' CPU, s':<32}{own:>10.1f} here{kids:>8.1f} in readers (medians)")
        out.setdefault("cpu_s", {})[w] = {"here": round(own, 2), "readers": round(kids, 2)}
    print(
        f"  targets: add_many >= {TARGET_VS_RAW_FTS5}x raw+FTS5"
        + (f" and >= {TARGET_VS_LANGGRAPH}x LangGraph" if with_lg else "")
    )
    if with_lg:
        out["ratios"]["add_many_vs_langgraph"] = round(med["add_many"] / med["langgraph_put"], 4)
    print()
    if pct:
        print(f"  {'latency, µs':<32}{'p50':>10}{'p95':>10}")
        for k, q in pct.items():
            print(f"  {k:<32}{q['p50']:>10,.1f}{q['p95']:>10,.1f}")
        if "one_add" in pct:
            ratio = pct["one_add"]["p50"] / pct["langgraph_one_put"]["p50"]
            out["ratios"]["one_add_vs_langgraph_put_p50"] = round(ratio, 4)
            print(f"  one-row add / LangGraph put, p50: {ratio:.2f}x (target <= 1x)")
            ratio = pct["one_add_noresolve"]["p50"] / pct["langgraph_one_put"]["p50"]
            out["ratios"]["one_add_noresolve_vs_langgraph_put_p50"] = round(ratio, 4)
            print(f"  one-row add, resolve=False / LangGraph put, p50: {ratio:.2f}x")
        if "get" in pct:
            ratio = pct["get"]["p50"] / pct["raw_probe"]["p50"]
            out["ratios"]["get_vs_raw_p50"] = round(ratio, 4)
            print(
                f"  get / raw as-of probe, p50 at {args.lines:,}: {ratio:.2f}x"
                f" (target <= {TARGET_GET_VS_RAW}x)"
            )
            if "langgraph_get" in pct:
                print(f"  get / LangGraph get, p50: {pct['get']['p50'] / pct['langgraph_get']['p50']:.2f}x")
    for state, bp in big_pct.items():
        ratio = bp["get"]["p50"] / bp["raw_probe"]["p50"]
        out["ratios"][f"get_vs_raw_p50_big_{state}"] = round(ratio, 4)
        print(
            f"  at {args.get_revisions:,} memories, file {CACHE_STATES[state]}: get p50/p95 "
            f"{bp['get']['p50']:.1f} / {bp['get']['p95']:.1f} µs, raw probe {bp['raw_probe']['p50']:.1f} / "
            f"{bp['raw_probe']['p95']:.1f} µs: {ratio:.2f}x (target <= {TARGET_GET_VS_RAW}x)"
        )
    if copyless:
        print(f"  (that store has {copyless:,} revisions without schema 9's kind/key copies: their gets"
              " also read the memories table; rebuild it for a schema-9 figure)")
    out["latency_us"] = pct
    out["latency_big_us"] = big_pct
    print()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
