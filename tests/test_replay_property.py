"""Property: a pinned run never reads the future, and derived memories never arrive before their sources."""

from __future__ import annotations

from datetime import timedelta

from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock
from localmem.time.clock import from_micros, to_micros

START = "2026-03-02T08:00:00Z"

op = st.tuples(st.sampled_from(["add", "correct", "derive", "retract", "supersede", "search"]),
               st.integers(0, 30), st.integers(0, 120))
history = st.lists(op, min_size=1, max_size=18)


def _latest(store: localmem.Store, memory_id: str) -> localmem.Revision:
    """The memory's newest revision now (every memory here was written before it is read)."""
    rev = store.get(memory_id)
    assert rev is not None
    return rev


@settings(max_examples=examples(40))
@given(history, st.lists(st.integers(0, 2400), min_size=1, max_size=3))
def test_pinned_runs_read_nothing_recorded_after_their_cutoff(
    ops: list[tuple[str, int, int]], cutoffs: list[int]
) -> None:
    """For random histories and cutoffs, every revision a run reads was recorded by its cutoff, and each
    derived memory it returns had itself and all its sources recorded by then."""
    clock = FrozenClock(START)
    store = localmem.open(":memory:", clock=clock)
    try:
        revs: list[localmem.Revision] = []
        for i, (name, pick, minutes) in enumerate(ops):
            clock.advance(minutes=minutes)
            live = [r for r in revs if not r.retracted and r.superseded_by is None]
            if name == "add" or not live:
                revs.append(store.add(f"note {i} about running", user_id="u", resolve=False))
            elif name == "correct":
                target = live[pick % len(live)]
                revs.append(store.correct(target.memory_id, text=f"corrected note {i} running"))
            elif name == "derive":
                by_memory = {r.memory_id: r for r in revs}.values()
                chosen = [r for j, r in enumerate(by_memory) if (j + pick) % 2 == 0][:3] or [revs[-1]]
                current = [_latest(store, r.memory_id) for r in chosen]
                revs.append(store.derive(f"summary {i} running", from_=current))
            elif name == "retract":
                revs.append(store.retract(live[pick % len(live)].memory_id))
            elif name == "supersede":
                target = live[pick % len(live)]
                revs.append(store.supersede(target.memory_id, f"newer note {i} running",
                                            valid_from=target.valid_from + timedelta(seconds=1)))
            else:
                store.search("running", user_id="u")
            revs = [_latest(store, r.memory_id) for r in revs]
        conn = store.connection
        for n, minutes in enumerate(cutoffs):
            cutoff = min(from_micros(to_micros(clock()) - minutes * 60_000_000), clock())
            run = store.run(f"run{n}", user_id="u", known_at=max(cutoff, from_micros(0)))
            seen = run.read(current_only=False, include_expired=True, include_retracted=True)
            seen += [h.revision for h in run.search("running", current_only=False, limit=50)]
            seen += list(run.snapshot().revisions)
            for rev in seen:
                assert rev.recorded_at <= run.known_at, (rev, run.known_at)
                sources = conn.execute(
                    "SELECT r.recorded_at FROM derivations AS d"
                    " JOIN revisions AS r ON r.rev_id = d.source_rev WHERE d.memory_id = ?",
                    (rev.memory_id,)).fetchall()
                created = conn.execute("SELECT created_at FROM memories WHERE memory_id = ?",
                                       (rev.memory_id,)).get
                assert created <= to_micros(run.known_at)
                for (recorded,) in sources:
                    assert isinstance(recorded, int) and recorded <= to_micros(run.known_at)
    finally:
        store.close()
