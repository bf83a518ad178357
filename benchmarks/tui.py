"""TUI benchmark: time to first paint and to scroll 10k rows on a large store.

    python benchmarks/tui.py [--revisions 100000] [--db PATH] [--rows 10000]
    python benchmarks/tui.py --revisions 1000000 --db /tmp/tui-1m.db   # the 1M figure (build ≈ 10 min)

Builds (or reuses, with ``--db`` pointing at a file built before) a store through
the public API in batches: one heavy user ``heavy`` who holds 90% of the revisions
(new memories, a tenth of them corrected, keyed facts that get superseded), and
100 light users for the rest. The heavy user is the TUI's worst case: the first
screen lists their current memories, and they have far more than fit a screen.

Then it starts the TUI headless (Textual's ``run_test``, 120×40) on the file and prints:

* **first paint**: from creating the app to the memories table holding its first
  rows with the screen refreshed (opening the file, finding the users and their
  zone, the first page of ``read_page``);
* **scroll N rows**: from there, pressing PageDown until the cursor reaches row N,
  pages loading on a worker as the cursor nears the end;
* ``read_page`` latency (p50/p95 of a 200-row page) straight from the library;
* **longest UI stall** per step: the most the event loop went without running
  (a 2 ms ticker on the app's own loop, so any synchronous work on the UI thread
  shows up), while opening, scrolling, the whole-user Compare (``3``), setting
  cutoff B, going back to the memories (``1``), a search, and a user switch.
  Store work runs on workers; the target is under 100 ms for every step.

Figures are printed, never asserted; the last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from provenance import git_commit  # benchmarks/ is on sys.path when a script here runs

import localmem
from localmem.testing import FrozenClock

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tui import LocalmemApp  # noqa: E402  (after the path: runs from a checkout)
from tui.widgets.paged_table import PagedTable  # noqa: E402

WORDS = ("run", "knee", "coffee", "sister", "dentist", "garden", "piano", "budget", "trip", "yoga",
         "report", "cat", "bike", "salary", "flight", "book", "movie", "lunch", "meeting", "swim")
KEYS = ("home_city", "employer", "diet", "gym", "car", "phone", "bank", "doctor")


def build(path: Path, revisions: int, seed: int) -> float:
    """Write about ``revisions`` revisions through the public API; returns the seconds taken."""
    rng = random.Random(seed)
    clock = FrozenClock("2020-01-01T00:00:00Z")
    store = localmem.open(path, clock=clock)
    t0 = time.perf_counter()
    written = 0
    mids: list[str] = []
    batch = 1000
    while written < revisions:
        with store.batch():
            for _ in range(batch):
                clock.advance(seconds=30)
                user = "heavy" if rng.random() < 0.9 else f"light-{rng.randrange(100):03d}"
                r = rng.random()
                if r < 0.08 and mids and user == "heavy":
                    mid = rng.choice(mids)
                    try:
                        store.correct(mid, text=" ".join(rng.choices(WORDS, k=6)) + " (corrected)")
                        written += 1
                    except localmem.LocalmemError:
                        pass
                    continue
                text = " ".join(rng.choices(WORDS, k=7))
                day = clock().isoformat()
                if r < 0.12:
                    key = rng.choice(KEYS)
                    rev = store.add(f"{key}: {text}", user_id=user, key=f"{key}-{rng.randrange(50)}",
                                    valid_from=day, resolve=False, tz="Europe/Berlin")
                    written += 1 if rev.supersedes is None else 2
                else:
                    rev = store.add(text, user_id=user, valid_from=day, resolve=False, tz="Europe/Berlin",
                                    expires=None if r > 0.15 else "2020-06-01")
                    written += 1
                if user == "heavy" and len(mids) < 50_000:
                    mids.append(rev.memory_id)
        if written // 50_000 != (written - batch) // 50_000:
            print(f"  … {written:,} revisions, {written / (time.perf_counter() - t0):,.0f} rev/s", flush=True)
    store.close()
    return time.perf_counter() - t0


class StallMeter:
    """The longest time the UI thread spent in one event-loop callback, per named step.

    Every callback the loop runs (a message handler, a timer, a render) is
    timed twice: wall time, which on a loaded machine also counts the time the
    process was not scheduled or waited for the GIL, and the UI thread's own CPU
    time (``time.thread_time``), which is what the callback costs whatever the
    load. A stall the user feels is the wall time; the code's share of it is
    the CPU time. A 2 ms ticker also records the longest gap between its ticks.
    """

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.gap: dict[str, float] = {}
        self.idle_gc: dict[str, float] = {}  # the app's full collection while the user is idle
        self.in_idle_gc = False
        self.what: dict[str, str] = {}
        self.step = "open"
        self._task: asyncio.Task[None] | None = None
        self._orig = asyncio.events.Handle._run

    def _record(self, table: dict[str, float], ms: float) -> bool:
        if ms > table.get(self.step, 0.0):
            table[self.step] = ms
            return True
        return False

    async def _tick(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.002)
            now = time.perf_counter()
            self._record(self.gap, (now - last - 0.002) * 1000)
            last = now

    def start(self) -> None:
        meter, orig = self, self._orig

        def timed(handle: asyncio.events.Handle) -> None:
            w, c = time.perf_counter(), time.thread_time()
            meter.in_idle_gc = False
            try:
                orig(handle)
            finally:
                if meter.in_idle_gc:  # not a stall in answer to input: counted on its own
                    meter._record(meter.idle_gc, (time.perf_counter() - w) * 1000)
                else:
                    meter._record(meter.wall, (time.perf_counter() - w) * 1000)
                    if meter._record(meter.cpu, (time.thread_time() - c) * 1000):
                        meter.what[meter.step] = repr(handle)[:120]

        asyncio.events.Handle._run = timed  # type: ignore[method-assign,assignment]
        self._task = asyncio.get_running_loop().create_task(self._tick())

    def stop(self) -> None:
        asyncio.events.Handle._run = self._orig  # type: ignore[method-assign]
        if self._task is not None:
            self._task.cancel()


async def _idle(app: LocalmemApp, pilot: object, seconds: float = 60) -> None:
    """Wait until no worker runs and the app has handled what they posted."""
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        await pilot.pause()  # type: ignore[attr-defined]
        if not any(w.state.name in ("PENDING", "RUNNING") for w in app.workers):
            await pilot.pause()  # type: ignore[attr-defined]
            return
        await asyncio.sleep(0.01)


async def stalls(path: Path) -> tuple[StallMeter, dict[str, float]]:
    """The UI stalls (see :class:`StallMeter`) and the wall time (s) of each step, on the heavy user."""
    meter = StallMeter()
    meter.start()
    took: dict[str, float] = {}
    app = LocalmemApp(path=path, user="heavy")
    collect = app._collect_when_idle

    def flagged() -> None:
        meter.in_idle_gc = True
        collect()

    app._collect_when_idle = flagged  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        steps: list[tuple[str, list[str]]] = [
            ("open", []), ("scroll 40 pages", ["pagedown"] * 40), ("whole-user compare (3)", ["3"]),
            ("cutoff B = 2020-01-05", ["b"]), ("back to memories (1)", ["1"]),
            ("search 'coffee garden'", ["slash", *"coffee garden", "enter"]),
            ("history (enter)", ["enter"]), ("user switch", ["escape", "u"]),
        ]
        for name, keys in steps:
            meter.step = name
            t = time.perf_counter()
            if name.startswith("cutoff B"):
                await pilot.press("b")
                await pilot.pause()
                box = app.screen.query("Input").first()
                box.value = "2020-01-05"  # type: ignore[attr-defined]
                await pilot.press("enter")
            elif name == "user switch":
                await pilot.press("escape", "u")
                await _idle(app, pilot)
                await pilot.press("down", "enter")
            else:
                for k in keys:
                    await pilot.press(k)
            await _idle(app, pilot)
            took[name] = time.perf_counter() - t
    meter.stop()
    return meter, took


async def measure(path: Path, rows: int) -> dict[str, float]:
    """First paint and scroll times of the TUI on ``path``."""
    t0 = time.perf_counter()
    app = LocalmemApp(path=path, user="heavy")
    out: dict[str, float] = {}
    async with app.run_test(size=(120, 40)) as pilot:
        table: PagedTable | None = None
        while True:
            await asyncio.sleep(0.005)
            found = app.screen.query(PagedTable)
            if found and found.first().row_count:
                table = found.first()
                break
            if time.perf_counter() - t0 > 60:
                raise SystemExit("no rows after 60 s")
        await pilot.pause()
        out["first_paint_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        stalls = 0
        while table.cursor_row < rows - 1:
            before = table.cursor_row
            await pilot.press("pagedown")
            if table.cursor_row == before:  # at the loaded end: wait for the next page
                stalls += 1
                await asyncio.sleep(0.005)
                if time.perf_counter() - t1 > 600:
                    raise SystemExit(f"stuck at row {table.cursor_row}")
        out["scroll_s"] = time.perf_counter() - t1
        out["rows_loaded"] = table.row_count
        out["waits_at_the_end"] = stalls
    return out


def page_latency(path: Path) -> tuple[float, float]:
    """p50/p95 ms of read_page(200) walking the heavy user's first 10k rows."""
    store = localmem.open(path)
    times = []
    cursor = None
    for _ in range(50):
        t = time.perf_counter()
        _, cursor = store.read_page("heavy", after=cursor, limit=200)
        times.append((time.perf_counter() - t) * 1000)
        if cursor is None:
            break
    store.close()
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--revisions", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=10_000, help="how far to scroll")
    parser.add_argument("--db", type=Path, help="build here, or reuse a file built before")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stalls-only", action="store_true", help="skip first paint and scrolling")
    args = parser.parse_args()
    tmp = None
    if args.db is None:
        tmp = tempfile.TemporaryDirectory()
        args.db = Path(tmp.name) / "tui-bench.db"
    build_s = None
    if not args.db.exists():
        print(f"building {args.revisions:,} revisions at {args.db} …", flush=True)
        build_s = build(args.db, args.revisions, args.seed)
    store = localmem.open(args.db)
    info = store.info()
    store.close()
    print(f"store: {info.revisions:,} revisions, {info.memories:,} memories, {info.users} users, "
          f"{info.size_bytes / 1e6:,.0f} MB" + (f" (built in {build_s:,.0f} s)" if build_s else ""))
    p50, p95 = page_latency(args.db)
    print(f"read_page(200) walking the heavy user: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    figures: dict[str, float] = {}
    if not args.stalls_only:
        figures = asyncio.run(measure(args.db, args.rows))
        print(f"first paint: {figures['first_paint_s'] * 1000:,.0f} ms   (target < 1 s)")
        print(f"scroll to row {args.rows:,}: {figures['scroll_s']:.2f} s "
              f"({figures['rows_loaded']:,.0f} rows loaded, "
              f"waited for a page {figures['waits_at_the_end']:.0f} times)")
    meter, took = asyncio.run(stalls(args.db))
    print("longest UI-thread callback per step (target < 100 ms), ms: CPU (its own work) / wall / ticker gap"
          " [the app's full garbage collection while no key was pressed, wall]")
    for name in took:
        idle = f"  [idle collection {meter.idle_gc[name]:.0f} ms]" if name in meter.idle_gc else ""
        print(f"  {name:<26} {meter.cpu.get(name, 0):7.1f} / {meter.wall.get(name, 0):7.1f} / "
              f"{meter.gap.get(name, 0):7.1f}   (step took {took[name]:.2f} s){idle}")
    longest = max(meter.cpu.values())
    wall = max(meter.wall.values())
    print(f"longest UI stall overall: {longest:.1f} ms of UI-thread CPU, {wall:.1f} ms wall "
          f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print(json.dumps({"commit": git_commit(), "revisions": info.revisions, "memories": info.memories,
                      "read_page_p50_ms": round(p50, 2), "read_page_p95_ms": round(p95, 2),
                      **{k: round(v, 3) for k, v in figures.items()},
                      "longest_ui_stall_cpu_ms": round(longest, 1),
                      "longest_ui_stall_wall_ms": round(max(meter.wall.values()), 1),
                      "ui_stall_cpu_ms": {k: round(v, 1) for k, v in meter.cpu.items()},
                      "idle_collection_ms": {k: round(v, 1) for k, v in meter.idle_gc.items() if v}}))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
