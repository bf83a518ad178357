"""Sync: export and import rates, peak memory, bytes per revision.

Builds a store of N revisions (a tenth of them corrections) on a frozen clock,
exports it to a file, imports the file into an empty store, and prints:
export and import rates (revisions/s), the file's size per revision, and the
peak resident memory of the process (ru_maxrss) after each phase. Never asserts.

    python benchmarks/sync.py                       # 100k revisions
    python benchmarks/sync.py --revisions 1000000   # the issue's 1M target (< 60 s, < 300 MB)
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import localmem
from localmem.testing import FrozenClock

WORDS = "run knee swim fish lisbon berlin coach tempo interval recovery sleep protein".split()


def _rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def build(path: Path, n: int) -> float:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--revisions", type=int, default=100_000)
    args = ap.parse_args()
    n = args.revisions
    with tempfile.TemporaryDirectory() as tmp:
        src, dst, file = Path(tmp) / "src.db", Path(tmp) / "dst.db", Path(tmp) / "export.lmsync.gz"
        built = build(src, n)
        print(f"built {n} revisions in {built:.1f} s (peak RSS so far {_rss_mb():.0f} MB)")
        with localmem.open(src) as store:
            t0 = time.perf_counter()
            out = store.export(file)
            t_exp = time.perf_counter() - t0
        rss_exp = _rss_mb()
        print(f"export: {out.revisions} revisions in {t_exp:.1f} s = {out.revisions / t_exp:,.0f} rev/s; "
              f"file {out.bytes / 1e6:.1f} MB = {out.bytes / out.revisions:.0f} bytes/revision; "
              f"peak RSS {rss_exp:.0f} MB")
        with localmem.open(dst, clock=FrozenClock("2026-06-01T00:00:00Z")) as target:
            t0 = time.perf_counter()
            got = target.import_(file)
            t_imp = time.perf_counter() - t0
        print(f"import: {got.revisions} revisions in {t_imp:.1f} s = {got.revisions / t_imp:,.0f} rev/s; "
              f"peak RSS {_rss_mb():.0f} MB")
        print(f"export + import: {t_exp + t_imp:.1f} s")


if __name__ == "__main__":
    main()
