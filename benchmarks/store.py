"""Store benchmark: write rate and as-of read latency as the store grows.

    python benchmarks/store.py --revisions 100000 [--db PATH] [--seed 0]

Builds a store of N revisions through the public API only (``localmem.open``
with a FrozenClock that moves forward with every write), for a mix that looks
like real use: many users, keyed facts that get superseded (``home_city``,
``employer``...), explicit supersedes, corrections (some corrected twice),
retractions and expiries, written in batches. At each checkpoint (10k, 100k
and 1M revisions, those up to N, and N itself) it measures:

* the API's batch write rate next to a raw apsw ``executemany`` of the very
  same rows into the same tables without triggers or full-text index;
* ``get`` as of random (known_at, valid_at) points, next to the one indexed
  SQL probe it stands on (the physical limit);
* ``read``, ``snapshot`` and ``history`` latency;
* file size per revision.

It prints figures and the targets they are meant to meet; it never asserts a
timing (a slow machine is not a failure). The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import apsw
from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

import localmem
from localmem.core import sql as queries
from localmem.testing import FrozenClock

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = (10_000, 100_000, 1_000_000)
#: The tables the raw baseline writes: those one API write touches.
RAW_TABLES = ("memories", "revisions", "content")

# Targets, printed next to the figures they judge.
TARGET_WRITE_RATIO = 0.30  # API rate / raw executemany rate
TARGET_GET_P50_US = 50.0  # get p50 at 1M revisions
TARGET_GET_VS_RAW = 3.0  # get p50 / raw probe p50
TARGET_GET_GROWTH = 1.5  # get p50 / its own 10k figure

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_START = "2025-01-01T00:00:00Z"
_MEAN_STEP_S = 30.0  # clock step between writes: 1M writes span about a year

# The as-of probe the store's get() cannot beat: one descent of revisions_asof.
# It runs on its own connection with the query planner stability guarantee
# (QPSG) on from the start: without it, the SQLite here (3.54) re-prepares a
# cached statement every time a parameter compared with `=` is rebound (the
# planner peeks at the bound value, sqlite3ExprIsInteger, and marks the
# statement as depending on it), so the "limit" would include a full parse
# and plan on every call.
# The as-of rule since sync (schema 7): among the revisions arrived by known_at, the
# greatest hybrid logical clock (revisions_asof serves exactly this order).
RAW_ASOF_SQL = (
    "SELECT * FROM revisions WHERE memory_id = ? AND arrived_at <= ?"
    " ORDER BY hlc DESC, origin DESC, rev_id DESC LIMIT 1"
)

ZONES = ("Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC", "Australia/Sydney",
         "America/Sao_Paulo", "Europe/London", "Asia/Kolkata")
WORDS = """
account address agenda allergy apartment appointment aunt bakery bank birthday
book brother budget cafe call car cat cinema class coffee colleague concert
contract cousin daughter deadline dentist dinner doctor dog email exam family
father festival flight friend garden gift gym holiday hotel house husband
insurance interview invoice jacket job journey kitchen lawyer lesson library
lunch manager market meeting mother museum neighbour office parents park party
passport payment pharmacy piano plan present project recipe rent report
restaurant salary school shop sister son station subscription teacher team
ticket train trip uncle vacation visit wedding weekend wife work yoga
always usually never prefers likes dislikes wants needs booked cancelled moved
started finished asked promised forgot remembered mentioned planned paid sent
early late tomorrow yesterday monthly weekly every morning evening spicy vegan
quiet loud new old small big cheap expensive favourite important urgent
""".split()
CITIES = ("Berlin", "Lisbon", "Toronto", "Osaka", "Melbourne", "Austin", "Leeds", "Porto",
          "Montreal", "Kyoto", "Denver", "Hamburg", "Valencia", "Dublin", "Seoul", "Oslo")
COMPANIES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Tyrell")
KEYS = {  # key -> (sentence template, the values it takes)
    "home_city": ("lives in {}", CITIES),
    "employer": ("works at {}", COMPANIES),
    "diet": ("eats {}", ("vegan", "vegetarian", "everything", "pescatarian", "no gluten")),
    "partner": ("is dating {}", ("Sam", "Alex", "Robin", "Kim", "Jo", "Noa", "Ari")),
    "gym": ("trains at {}", ("FitHub", "IronWorks", "the park", "home", "Yoga Loft")),
    "phone": ("uses a {}", ("Pixel", "iPhone", "Fairphone", "Galaxy")),
    "manager": ("reports to {}", ("Priya", "Tom", "Lena", "Omar", "Ines", "Mark")),
    "team": ("supports {}", ("Benfica", "Arsenal", "Celtic", "Ajax", "Boca", "Napoli")),
}

T = TypeVar("T")


def micros(at: datetime) -> int:
    """Microseconds since the epoch, the store's storage format."""
    d = at - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def instant(us: int) -> datetime:
    """The aware UTC datetime of a microsecond count."""
    return _EPOCH + timedelta(microseconds=us)


_START_US = micros(datetime.fromisoformat(_START))


class Pool:
    """A set of ids with O(1) add, remove and uniform random choice."""

    def __init__(self) -> None:
        self._items: list[str] = []
        self._index: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, item: str) -> bool:
        return item in self._index

    def add(self, item: str) -> None:
        if item not in self._index:
            self._index[item] = len(self._items)
            self._items.append(item)

    def discard(self, item: str) -> None:
        i = self._index.pop(item, None)
        if i is None:
            return
        last = self._items.pop()
        if i < len(self._items):  # move the last item into the hole
            self._items[i] = last
            self._index[last] = i

    def choice(self, rng: random.Random) -> str:
        return self._items[rng.randrange(len(self._items))]


@dataclass
class User:
    """What the workload must know about a user to make only valid writes."""

    user_id: str
    tz: str
    live: Pool = field(default_factory=Pool)  # not retracted: correct/expire/retract
    heads: Pool = field(default_factory=Pool)  # keyless, not superseded: supersede()
    keys: dict[str, str] = field(default_factory=dict)  # key -> its current memory
    corrected_once: Pool = field(default_factory=Pool)  # candidates for a second correction
    has_memories: bool = False


class Workload:
    """Writes a realistic mix through the public API, keeping just enough state
    on the side (which memories are live, superseded, keyed) never to make a
    write the store refuses: a refused write would measure error paths."""

    # Cumulative thresholds over one uniform draw: the op mix.
    MIX = (
        (0.38, "add"),        # a keyless fact, some with valid time or expiry
        (0.60, "add_key"),    # a new value for a key: supersedes its head (2 revisions)
        (0.65, "supersede"),  # explicit supersede of a keyless fact (2 revisions)
        (0.80, "correct"),    # the earlier account was wrong
        (0.90, "expire"),
        (1.00, "retract"),
    )

    def __init__(self, store: localmem.Store, clock: FrozenClock, users: int, seed: int,
                 resolve: bool = True) -> None:
        self.store = store
        self.resolve = resolve  # read time phrases on add (the default), or not
        self.clock = clock
        self.rng = random.Random(seed)
        self.users = [User(f"user-{i:06d}", self.rng.choice(ZONES)) for i in range(users)]
        self.active: list[User] = []  # users with at least one memory
        self.memory_ids: list[str] = []
        self.memory_created: list[int] = []  # recorded_at (µs) of each memory's first revision
        self.key_of: dict[str, str] = {}  # memory id -> key, for keyed memories
        self.expiry: dict[str, datetime] = {}  # the expiry last set by expire()
        self.corrections: dict[str, int] = {}  # memory id -> times corrected
        self.revisions = 0
        self.api_ns = 0  # time spent inside the store's write methods
        self.counts: dict[str, int] = dict.fromkeys(
            ("assert", "assert_key", "supersede_key", "supersede", "correct", "recorrect",
             "expire", "retract"), 0)

    def call(self, write: Callable[..., localmem.Revision], *args: Any,
             **kwargs: Any) -> localmem.Revision:
        """Run one store write, adding its time to api_ns: choosing the write and
        its arguments is the benchmark's work, not the API's."""
        t0 = time.perf_counter_ns()
        try:
            return write(*args, **kwargs)
        finally:
            self.api_ns += time.perf_counter_ns() - t0

    def sentence(self, lo: int = 5, hi: int = 14) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(lo, hi)))

    def source(self) -> dict[str, Any]:
        n = self.revisions
        return {"session": f"s{n // 40}", "message": n}

    def step(self, remaining: int) -> int:
        """Make one write; return how many revisions it appended (never more than remaining)."""
        self.clock.advance(seconds=1.0 + self.rng.expovariate(1.0 / (_MEAN_STEP_S - 1.0)))
        user = self.users[self.rng.randrange(len(self.users))]
        draw = self.rng.random()
        op = next(name for limit, name in self.MIX if draw < limit)
        if remaining < 2 and op in ("add_key", "supersede"):
            op = "add"  # both may append two revisions
        if op in ("correct", "expire", "retract") and not user.live:
            op = "add"
        if op == "supersede" and not user.heads:
            op = "add"
        written: int = getattr(self, "_" + op)(user)
        self.revisions += written
        return written

    def _new_memory(self, user: User, rev: localmem.Revision) -> None:
        self.memory_ids.append(rev.memory_id)
        self.memory_created.append(micros(rev.recorded_at))
        user.live.add(rev.memory_id)
        if not user.has_memories:
            user.has_memories = True
            self.active.append(user)

    def _add(self, user: User) -> int:
        rng = self.rng
        kwargs: dict[str, Any] = {"source": self.source()}
        if not user.has_memories:
            kwargs["tz"] = user.tz  # later writes take the user's zone from the store
        roll = rng.random()
        if roll < 0.10:  # "since May 2019": a month, read in the user's zone
            kwargs["valid_from"] = f"{rng.randint(2015, 2024)}-{rng.randint(1, 12):02d}"
        elif roll < 0.15:  # an event on a past day, with an end
            d = date(rng.randint(2015, 2024), rng.randint(1, 12), rng.randint(1, 28))
            kwargs["valid_from"] = d
            kwargs["valid_to"] = d + timedelta(days=rng.randint(1, 14))
        elif roll < 0.25:  # to be forgotten soon: "through that day"
            kwargs["expires"] = self.clock().date() + timedelta(days=rng.randint(1, 30))
        if rng.random() < 0.2:
            kwargs["observed_at"] = self.clock() - timedelta(seconds=rng.randint(1, 3600))
        if rng.random() < 0.5:
            kwargs["attributes"] = {"topic": rng.choice(WORDS), "confidence": rng.random()}
        if rng.random() < 0.1:
            kwargs["value"] = {"amount": round(rng.uniform(1, 500), 2), "currency": "EUR"}
        kind = rng.choice(("fact", "fact", "preference", "event"))
        rev = self.call(self.store.add, self.sentence(), user_id=user.user_id, kind=kind,
                        resolve=self.resolve, **kwargs)
        self._new_memory(user, rev)
        if rev.valid_from is None or rev.valid_from <= self.clock():
            # "... tomorrow" made a fact that starts later: nothing can supersede it yet.
            user.heads.add(rev.memory_id)
        self.counts["assert"] += 1
        return 1

    def _add_key(self, user: User) -> int:
        key = self.rng.choice(tuple(KEYS))
        template, values = KEYS[key]
        choice = self.rng.choice(values)
        kwargs: dict[str, Any] = {"source": self.source(), "value": {key: choice}}
        if not user.has_memories:
            kwargs["tz"] = user.tz
        rev = self.call(self.store.add, template.format(choice), user_id=user.user_id, key=key,
                        resolve=self.resolve,
                        **kwargs)
        self._new_memory(user, rev)
        self.key_of[rev.memory_id] = key
        user.keys[key] = rev.memory_id
        if rev.supersedes is None:
            self.counts["assert_key"] += 1
            return 1
        self.counts["supersede_key"] += 1
        return 2

    def _supersede(self, user: User) -> int:
        old = user.heads.choice(self.rng)
        # resolve=False: a random "yesterday" would date the new fact before the old one.
        rev = self.call(self.store.supersede, old, self.sentence(), source=self.source(),
                        reason="the situation changed", resolve=False)
        user.heads.discard(old)
        self._new_memory(user, rev)
        user.heads.add(rev.memory_id)
        self.counts["supersede"] += 1
        return 2

    def _correct(self, user: User) -> int:
        # Three in ten go to a memory corrected once already: corrected twice.
        again = len(user.corrected_once) > 0 and self.rng.random() < 0.3
        memory_id = (user.corrected_once if again else user.live).choice(self.rng)
        # The numeral keeps the new text different from the old (an unchanged
        # correction is refused).
        text = f"{self.sentence()} (corrected, {self.revisions})"
        self.call(self.store.correct, memory_id, text=text, reason="the user said otherwise",
                  source=self.source())
        n = self.corrections[memory_id] = self.corrections.get(memory_id, 0) + 1
        if n == 1:
            user.corrected_once.add(memory_id)
        else:
            user.corrected_once.discard(memory_id)
            self.counts["recorrect"] += 1
        self.counts["correct"] += 1
        return 1

    def _expire(self, user: User) -> int:
        memory_id = user.live.choice(self.rng)
        # Some in the past (hidden at once), most in the coming weeks.
        on = self.clock() + timedelta(days=self.rng.uniform(-3, 60))
        if self.expiry.get(memory_id) == on:
            on += timedelta(seconds=1)  # the same expiry again is refused
        self.call(self.store.expire, memory_id, on, reason="no longer relevant")
        self.expiry[memory_id] = on
        self.counts["expire"] += 1
        return 1

    def _retract(self, user: User) -> int:
        memory_id = user.live.choice(self.rng)
        self.call(self.store.retract, memory_id, reason="the user asked to forget it")
        user.live.discard(memory_id)
        user.heads.discard(memory_id)
        user.corrected_once.discard(memory_id)
        key = self.key_of.get(memory_id)
        if key is not None and user.keys.get(key) == memory_id:
            del user.keys[key]  # a retracted head ends the chain; the next value starts anew
        self.counts["retract"] += 1
        return 1


def raw_ddl(schema: str) -> list[str]:
    """The CREATE TABLE/INDEX statements of RAW_TABLES, taken from schema.sql.

    SQLite parses the schema (into a throwaway in-memory database) and keeps
    each statement's text in sqlite_schema, so the raw tables are exactly the
    schema's own, with no hand-copied DDL and no fragile splitting of the file.
    Triggers, views, the FTS table and the other tables are left out.
    """
    scratch = apsw.Connection(":memory:")
    try:
        scratch.execute(schema)
        placeholders = ",".join("?" * len(RAW_TABLES))
        return [sql for (sql,) in scratch.execute(
            "SELECT sql FROM sqlite_schema WHERE type IN ('table', 'index')"
            f" AND tbl_name IN ({placeholders}) AND sql IS NOT NULL ORDER BY rowid",
            RAW_TABLES)]
    finally:
        scratch.close()


class RawMirror:
    """The raw baseline: the same rows, in the same batches, by executemany.

    Same tables, indexes, CHECKs and foreign keys as the store, and the same
    journal (WAL) and foreign-key pragmas; no triggers, no full-text index, and
    none of the API's Python.
    """

    def __init__(self, path: str, schema: str) -> None:
        self.path = path
        self.conn = apsw.Connection(path)
        self.conn.pragma("journal_mode", "wal")
        self.conn.pragma("foreign_keys", True)
        with self.conn:
            for ddl in raw_ddl(schema):
                self.conn.execute(ddl)
        self.done = 0  # revisions copied so far (seq runs 1..N with no gaps)

    def replay(self, source: apsw.Connection, ends: Sequence[int]) -> int:
        """Copy the store's revisions up to each seq in ``ends``, one transaction
        per batch as the API wrote them; return the nanoseconds spent writing
        (reading the rows out of the store is not timed)."""
        spent = 0
        for end in ends:
            lo, hi = self.done + 1, end
            memories = source.execute(
                "SELECT m.* FROM revisions AS r JOIN memories AS m ON m.memory_id = r.memory_id"
                " WHERE r.seq BETWEEN ? AND ? AND r.version = 1 ORDER BY r.seq", (lo, hi)).fetchall()
            revisions = source.execute(
                "SELECT * FROM revisions WHERE seq BETWEEN ? AND ? ORDER BY seq", (lo, hi)).fetchall()
            content = source.execute(
                "SELECT * FROM content WHERE rev_seq BETWEEN ? AND ? ORDER BY rev_seq",
                (lo, hi)).fetchall()
            t0 = time.perf_counter_ns()
            with self.conn:
                for table, rows in (("memories", memories), ("revisions", revisions),
                                    ("content", content)):
                    if rows:
                        marks = ",".join("?" * len(rows[0]))
                        self.conn.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
            spent += time.perf_counter_ns() - t0
            self.done = end
        return spent


def file_bytes(conn: apsw.Connection, path: str) -> int:
    """The database's size on disk after the WAL is copied back and truncated."""
    conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
    return sum(os.path.getsize(path + s) for s in ("", "-wal") if os.path.exists(path + s))


def percentile(ns: Sequence[int], q: float) -> float:
    """The q-quantile (nearest rank) of nanosecond samples, in µs."""
    s = sorted(ns)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))] / 1000


def interleaved(calls: dict[str, Callable[[T], object]], inputs: Sequence[T],
                warmup: int) -> dict[str, list[int]]:
    """Time each call on each input, alternating calls per input, so that every
    figure sees the same inputs and the same cache state; ``warmup`` inputs
    first, untimed (statement cache, pages).

    Which call goes first rotates: the first to touch a fresh input pays its
    cold page reads (at 1M revisions the OS has dropped some of the file's
    pages), and that must not always be the same call.
    """
    for x in inputs[:warmup]:
        for fn in calls.values():
            fn(x)
    items = list(calls.items())
    out: dict[str, list[int]] = {name: [] for name in calls}
    clock = time.perf_counter_ns
    for i, x in enumerate(inputs[warmup:]):
        for j in range(len(items)):
            name, fn = items[(i + j) % len(items)]
            t0 = clock()
            fn(x)
            out[name].append(clock() - t0)
    return out


def p50_p95(ns: Sequence[int]) -> dict[str, float]:
    return {"p50": percentile(ns, 0.50), "p95": percentile(ns, 0.95)}


def probe_connection(path: str) -> apsw.Connection:
    """A read connection to the store's file for the raw probe (see RAW_ASOF_SQL)."""
    conn = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
    return conn


def measure_reads(w: Workload, probe: apsw.Connection, samples: int, warmup: int,
                  seed: int) -> dict[str, Any]:
    """Latency of get (with its raw probes), read, snapshot and history."""
    # Its own random stream: measuring must not change the writes that follow.
    store, rng = w.store, random.Random(f"{seed}:{w.revisions}")
    conn = store.connection
    now_us = micros(w.clock())
    n = samples + warmup

    # get: random memories, known_at anywhere in the memory's life (so that
    # it is known), valid_at anywhere in the store's span.
    picks = []
    for _ in range(n):
        i = rng.randrange(len(w.memory_ids))
        known = rng.randint(w.memory_created[i], now_us)
        valid = rng.randint(_START_US, now_us)
        # The statement get() runs, joins included, built from the library's own builder.
        q = queries.get_as_of(w.memory_ids[i], known)
        picks.append((w.memory_ids[i], instant(known), instant(valid), known, q))
    for mid, known_dt, valid_dt, known, _ in picks[:warmup]:  # both find the same revision
        rev = store.get(mid, known_at=known_dt, valid_at=valid_dt)
        raw = probe.execute(RAW_ASOF_SQL, (mid, known)).fetchone()
        if rev is None or raw is None or rev.rev_id != raw[1]:
            raise RuntimeError(f"get and the raw probe disagree on {mid} at {known}")
    gets = interleaved({
        "get": lambda p: store.get(p[0], known_at=p[1], valid_at=p[2]),
        "raw": lambda p: probe.execute(RAW_ASOF_SQL, (p[0], p[3])).fetchone(),
        # Diagnostics: get()'s own SQL without its Python, on the store's
        # connection as the library runs it, and on the QPSG connection.
        "sql": lambda p: conn.execute(p[4].sql, p[4].params).fetchone(),
        "sql_qpsg": lambda p: probe.execute(p[4].sql, p[4].params).fetchone(),
    }, picks, warmup)

    users = [w.active[rng.randrange(len(w.active))].user_id for _ in range(n)]
    sizes: dict[str, list[int]] = {"read": [], "snapshot": [], "history": []}

    def read(u: str) -> None:
        sizes["read"].append(len(store.read(u)))

    def snapshot(p: tuple[str, datetime]) -> None:
        sizes["snapshot"].append(len(store.snapshot(p[0], known_at=p[1]).revisions))

    def history(m: str) -> None:
        sizes["history"].append(len(store.history(m)))

    reads = interleaved({"read": read}, users, warmup)
    snap_at = [(u, instant(rng.randint(_START_US, now_us))) for u in users]
    snaps = interleaved({"snapshot": snapshot}, snap_at, warmup)
    hist_ids = [w.memory_ids[rng.randrange(len(w.memory_ids))] for _ in range(n)]
    hists = interleaved({"history": history}, hist_ids, warmup)

    return {
        "get": p50_p95(gets["get"]),
        "raw_probe": p50_p95(gets["raw"]),
        "get_sql": p50_p95(gets["sql"]),
        "get_sql_qpsg": p50_p95(gets["sql_qpsg"]),
        "read": p50_p95(reads["read"]),
        "snapshot": p50_p95(snaps["snapshot"]),
        "history": p50_p95(hists["history"]),
        "rows": {k: sum(v) / len(v) for k, v in sizes.items()},  # mean rows returned
    }


@dataclass
class Segment:
    """The writes from one checkpoint to the next."""

    start: int
    end: int
    api_ns: int = 0
    raw_ns: int = 0

    @property
    def revisions(self) -> int:
        return self.end - self.start

    def rate(self, ns: int) -> float:
        return self.revisions / (ns / 1e9) if ns else 0.0


def build(w: Workload, target: int, batch: int) -> tuple[int, list[int]]:
    """Write through the API until the store holds ``target`` revisions, in
    transactions of about ``batch`` revisions; return the nanoseconds spent in
    the API (the writes, and each batch's BEGIN and COMMIT) and the revision
    count at the end of each batch (the raw replay commits at the same points)."""
    clock = time.perf_counter_ns
    w.api_ns = 0
    spent, ends = 0, []
    while w.revisions < target:
        goal = min(target, w.revisions + batch)
        t0 = clock()
        with w.store.batch():
            t1 = clock()
            while w.revisions < goal:
                w.step(goal - w.revisions)
            t2 = clock()
        spent += (t1 - t0) + (clock() - t2)
        ends.append(w.revisions)
    return spent + w.api_ns, ends


def fmt_us(d: dict[str, float]) -> str:
    return f"{d['p50']:,.1f} / {d['p95']:,.1f}"


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def report(args: argparse.Namespace, w: Workload, segments: list[Segment],
           points: list[dict[str, Any]], env: dict[str, str]) -> dict[str, Any]:
    """Print the tables; return the figures for the JSON line."""
    total = Segment(0, w.revisions, sum(s.api_ns for s in segments),
                    sum(s.raw_ns for s in segments))
    ratio = total.rate(total.api_ns) / total.rate(total.raw_ns)
    c = w.counts
    print(f"localmem store benchmark: {w.revisions:,} revisions, {len(w.users):,} users, "
          f"{len(w.memory_ids):,} memories, seed {args.seed}")
    print(f"  localmem {env['localmem']}, {env['python']}, SQLite {env['sqlite']}, "
          f"apsw {env['apsw']}; {env['cpus']} CPUs, load average {env['load_before']} at start, "
          f"{env['load_after']} at end; {env['elapsed_s']} s in all")
    print(f"  db {args.db}")
    print(f"  writes: {c['assert']:,} add, {c['assert_key']:,} add of a new key, "
          f"{c['supersede_key']:,} add superseding a key (2 revisions), {c['supersede']:,} "
          f"supersede (2), {c['correct']:,} correct ({c['recorrect']:,} of a memory corrected "
          f"before), {c['expire']:,} expire, {c['retract']:,} retract")
    print()

    print(f"Batch writes ({args.batch:,} revisions per transaction)")
    head = f"  {'revisions':<24}{'API rev/s':>12}{'raw rev/s':>12}{'API/raw':>10}   target"
    print(head)
    for s in [*segments, total]:
        label = "all" if s is total else f"{s.start:,} .. {s.end:,}"
        r = s.rate(s.api_ns) / s.rate(s.raw_ns)
        tail = f"   >= {TARGET_WRITE_RATIO:.0%}  {verdict(r >= TARGET_WRITE_RATIO)}" \
            if s is total else ""
        print(f"  {label:<24}{s.rate(s.api_ns):>12,.0f}{s.rate(s.raw_ns):>12,.0f}{r:>10.1%}{tail}")
    print("  raw = apsw executemany of the same rows into memories/revisions/content,")
    print("        same indexes, CHECKs and foreign keys; no triggers, no FTS, no API")
    print()

    base = next((p for p in points if p["revisions"] == CHECKPOINTS[0]), points[0])
    last = points[-1]
    cols = "".join(f"{'at ' + format(p['revisions'], ','):>26}" for p in points)
    print("As-of get(memory_id, known_at=, valid_at=), µs p50 / p95")
    print(f"  {'':<34}{cols}   target")

    def row(label: str, cells: list[str], target: str = "") -> None:
        print(f"  {label:<34}" + "".join(f"{x:>26}" for x in cells) + (f"   {target}" if target else ""))

    growth_ok = last["get"]["p50"] <= TARGET_GET_GROWTH * base["get"]["p50"]
    at_1m = last["revisions"] >= CHECKPOINTS[-1]
    p50_ok = last["get"]["p50"] <= TARGET_GET_P50_US
    p50_target = (f"p50 <= {TARGET_GET_P50_US:.0f} at 1M  "
                  + (verdict(p50_ok) if at_1m else f"(1M not reached; {verdict(p50_ok)} at "
                     f"{last['revisions']:,})"))
    row("store.get", [fmt_us(p["get"]) for p in points], p50_target)
    row("raw probe", [fmt_us(p["raw_probe"]) for p in points])
    row("get's SQL, store connection", [fmt_us(p["get_sql"]) for p in points])
    row("get's SQL, QPSG connection", [fmt_us(p["get_sql_qpsg"]) for p in points])
    vs_raw = [p["get"]["p50"] / p["raw_probe"]["p50"] for p in points]
    row("get / raw probe, p50", [f"{x:.1f}x" for x in vs_raw],
        f"<= {TARGET_GET_VS_RAW:.0f}x  {verdict(all(x <= TARGET_GET_VS_RAW for x in vs_raw))}")
    row(f"get p50 / at {base['revisions']:,}", [f"{p['get']['p50'] / base['get']['p50']:.2f}x"
                                               for p in points],
        f"<= {TARGET_GET_GROWTH}x  {verdict(growth_ok)}")
    print(f"  raw probe = {RAW_ASOF_SQL}")
    print("    through apsw on its own read-only connection with SQLITE_DBCONFIG_ENABLE_QPSG")
    print("    on, so the cached statement is not re-planned at each bind. The get's SQL rows")
    print("    run get()'s own statement (joins included) without its Python, on the store's")
    print("    connection and on the QPSG one: a gap between them means the store re-plans.")
    print()

    print("Reads, µs p50 / p95 (mean rows returned)")
    print(f"  {'':<34}{cols}")
    for name, label in (("read", "store.read(user)"),
                        ("snapshot", "store.snapshot(user, known_at=)"),
                        ("history", "store.history(memory_id)")):
        row(label, [f"{fmt_us(p[name])} ({p['rows'][name]:.0f})" for p in points])
    print()

    print("Size on disk, bytes per revision (file + WAL after a checkpoint)")
    print(f"  {'':<34}{cols}")
    row("store", [f"{p['bytes_per_revision']:,.0f}" for p in points])
    row("raw tables (no FTS)", [f"{p['raw_bytes_per_revision']:,.0f}" for p in points])

    return {
        "benchmark": "localmem.store",
        "revisions": w.revisions,
        "users": len(w.users),
        "memories": len(w.memory_ids),
        "seed": args.seed,
        "batch": args.batch,
        "samples": args.samples,
        "env": env,
        "ops": c,
        "writes": {
            "api_rev_per_s": round(total.rate(total.api_ns), 1),
            "raw_rev_per_s": round(total.rate(total.raw_ns), 1),
            "api_over_raw": round(ratio, 4),
            "target_api_over_raw": TARGET_WRITE_RATIO,
            "segments": [{"start": s.start, "end": s.end,
                          "api_rev_per_s": round(s.rate(s.api_ns), 1),
                          "raw_rev_per_s": round(s.rate(s.raw_ns), 1)} for s in segments],
        },
        "checkpoints": points,
        "targets": {
            "get_p50_us_at_1m": TARGET_GET_P50_US,
            "get_over_raw": TARGET_GET_VS_RAW,
            "get_growth_over_10k": TARGET_GET_GROWTH,
        },
    }


def load_average() -> str:
    """The 1-minute load average: other work on the machine skews every figure."""
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--revisions", type=int, default=100_000,
                        help="revisions to write (default 100000)")
    parser.add_argument("--db", help="store file to create (default: a temporary file)")
    parser.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    parser.add_argument("--no-resolve", action="store_true",
                        help="add without reading time phrases, to see what reading them costs")
    parser.add_argument("--batch", type=int, default=1_000,
                        help="revisions per write transaction (default 1000)")
    parser.add_argument("--samples", type=int, default=2_000,
                        help="timed calls per latency figure (default 2000)")
    parser.add_argument("--warmup", type=int, default=200,
                        help="untimed calls before each latency figure (default 200)")
    args = parser.parse_args(argv)
    if args.revisions < 1:
        parser.error("--revisions must be at least 1")

    tmp = tempfile.TemporaryDirectory(prefix="localmem-bench-")
    if args.db is None:
        args.db = os.path.join(tmp.name, "store.db")
    elif os.path.exists(args.db):
        parser.error(f"--db {args.db!r} exists: the benchmark builds a new store")
    schema = (ROOT / "schema.sql").read_text(encoding="utf-8")
    env = {"python": f"Python {platform.python_version()}", "sqlite": apsw.sqlite_lib_version(),
           "apsw": apsw.apsw_version(), "localmem": f"{localmem.__version__} {git_commit()}",
           "cpus": str(os.cpu_count()), "load_before": load_average()}
    started = time.perf_counter()

    clock = FrozenClock(_START)
    store = localmem.open(args.db, clock=clock)
    raw = RawMirror(os.path.join(tmp.name, "raw.db"), schema)
    w = Workload(store, clock, users=max(1, args.revisions // 200), seed=args.seed,
                 resolve=not args.no_resolve)
    stops = sorted({c for c in CHECKPOINTS if c <= args.revisions} | {args.revisions})

    segments: list[Segment] = []
    points: list[dict[str, Any]] = []
    try:
        for stop in stops:
            seg = Segment(w.revisions, stop)
            seg.api_ns, ends = build(w, stop, args.batch)
            seg.raw_ns = raw.replay(store.connection, ends)
            segments.append(seg)
            stored = store.connection.execute("SELECT count(*) FROM revisions").get
            if stored != w.revisions:
                raise RuntimeError(f"the store holds {stored} revisions, the workload counted "
                                   f"{w.revisions}: the benchmark's bookkeeping is wrong")
            point: dict[str, Any] = {"revisions": w.revisions}
            point["bytes_per_revision"] = file_bytes(store.connection, args.db) / w.revisions
            point["raw_bytes_per_revision"] = file_bytes(raw.conn, raw.path) / w.revisions
            probe = probe_connection(args.db)
            try:
                point.update(measure_reads(w, probe, args.samples, args.warmup, args.seed))
            finally:
                probe.close()
            points.append(point)
            print(f"[{time.strftime('%H:%M:%S')}] {w.revisions:,} revisions: "
                  f"get p50 {point['get']['p50']:.1f} µs", file=sys.stderr, flush=True)
        env["load_after"] = load_average()
        env["elapsed_s"] = f"{time.perf_counter() - started:.0f}"
        print()
        result = report(args, w, segments, points, env)
    finally:
        store.close()
        raw.conn.close()
        tmp.cleanup()
    print()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
