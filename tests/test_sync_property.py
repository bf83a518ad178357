"""Three replicas, random writes and random exchanges of export files: they converge.

Each replica has its own clock (skewed, and sometimes set backwards). Writes are
adds, corrections, supersessions, retractions, expiries and erasures; files are
full or incremental exports, imported in random order, repeated, and some not at
all until the end (an import that lacks a parent is refused and changes nothing).
At the end every replica imports everyone's full export: the digests are equal,
no erased memory has content anywhere, and every read that does not depend on
arrival time (known at the end of time, at any valid time) agrees.
"""

from __future__ import annotations

import itertools
import random
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock

FAR = "2100-01-01T00:00:00Z"
VALID_TIMES = ["2025-01-01T00:00:00Z", "2026-03-02T12:00:00Z", "2026-06-01T00:00:00Z", "2099-01-01T00:00:00Z"]

op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("correct"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("supersede"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("retract"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("expire"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("erase"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("export"), st.integers(0, 2), st.booleans()),
    st.tuples(st.just("import"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("tick"), st.integers(0, 2), st.integers(-90, 240)),
)


def _memories(store: localmem.Store) -> list[str]:
    return [r[0] for r in store.connection.execute("SELECT memory_id FROM memories ORDER BY memory_id")]


def _current(store: localmem.Store) -> dict[str, object]:
    """Every memory as known at the end of time, at several valid times: a pure function of the rows."""
    out: dict[str, object] = {}
    for mid in _memories(store):
        out[mid] = [store.get(mid, known_at=FAR, valid_at=v) for v in VALID_TIMES]
    for v in VALID_TIMES:
        out[f"read@{v}"] = sorted(r.rev_id for r in store.read(user_id="sam", known_at=FAR, valid_at=v))
    return out


@settings(deadline=None)
@given(ops=st.lists(op, min_size=5, max_size=30), order=st.randoms(use_true_random=False))
def test_three_replicas_converge_whatever_the_exchange(
    ops: list[tuple[str, int, int]], order: random.Random
) -> None:
    """Random writes and file exchanges among three replicas end in identical rows and reads."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        clocks = [FrozenClock(t) for t in
                  ("2026-03-02T09:00:00Z", "2026-03-02T08:30:00Z", "2026-03-02T10:15:00Z")]
        stores = [localmem.open(":memory:", clock=c) for c in clocks]
        files: list[Path] = []
        marks = [0, 0, 0]
        erased: set[str] = set()
        counter = itertools.count()
        try:
            for kind, who, arg in ops:
                s, c = stores[who], clocks[who]
                c.advance(seconds=7)
                mids = _memories(s)
                target = mids[arg % len(mids)] if mids and isinstance(arg, int) else None
                try:
                    if kind == "add":
                        s.add(f"note {next(counter)} about running", user_id="sam",
                              key="city" if arg else None, valid_from="2026-01-01")
                    elif kind == "correct" and target:
                        s.correct(target, text=f"corrected {next(counter)}")
                    elif kind == "supersede" and target:
                        s.supersede(target, f"replaced {next(counter)}", valid_from="2026-04-01")
                    elif kind == "retract" and target:
                        s.retract(target)
                    elif kind == "expire" and target:
                        s.expire(target, "2026-05-01")
                    elif kind == "erase" and target:
                        s.erase(target)
                        erased.add(target)
                    elif kind == "export":
                        since = marks[who] if arg else 0
                        out = s.export(folder / f"f{len(files)}.gz", since=since)
                        marks[who] = out.watermark
                        files.append(Path(out.path))
                    elif kind == "import" and files:
                        before = s.digest()
                        try:
                            s.import_(files[arg % len(files)])
                        except localmem.SyncParentError:
                            assert s.digest() == before  # refused whole
                    elif kind == "tick":
                        c.advance(seconds=arg)  # may go backwards
                except (localmem.InvalidOperationError, localmem.InvalidIntervalError):
                    pass  # a write the memory's state refuses (retracted, erased, superseded...)
            # The rest of the exchange, in a random order, each file twice.
            finals = [s.export(folder / f"final{i}.gz") for i, s in enumerate(stores)]
            pairs = [(i, f) for i in range(3) for f in finals] * 2
            order.shuffle(pairs)
            for i, f in pairs:
                stores[i].import_(f.path)
            digests = {s.digest() for s in stores}
            assert len(digests) == 1
            views = [_current(s) for s in stores]
            assert views[0] == views[1] == views[2]
            for s in stores:
                assert s.doctor().ok
                all_erased = {r[0] for r in s.connection.execute("SELECT memory_id FROM erasures")}
                assert erased <= all_erased
                assert s.connection.execute(
                    "SELECT count(*) FROM content AS c JOIN erasures AS e USING (memory_id)").get == 0
                assert s.search("corrected OR replaced OR note", user_id="sam", current_only=False,
                                as_of=FAR) is not None
        finally:
            for s in stores:
                s.close()
