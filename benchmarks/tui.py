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
* ``read_page`` latency (p50/p95 of a 200-row page) straight from the library.

Figures are printed, never asserted; the last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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
    figures = asyncio.run(measure(args.db, args.rows))
    print(f"first paint: {figures['first_paint_s'] * 1000:,.0f} ms   (target < 1 s)")
    print(f"scroll to row {args.rows:,}: {figures['scroll_s']:.2f} s "
          f"({figures['rows_loaded']:,.0f} rows loaded, "
          f"waited for a page {figures['waits_at_the_end']:.0f} times)")
    print(json.dumps({"commit": git_commit(), "revisions": info.revisions, "memories": info.memories,
                      "read_page_p50_ms": round(p50, 2), "read_page_p95_ms": round(p95, 2),
                      **{k: round(v, 3) for k, v in figures.items()}}))
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
