"""The hub and a device give the same answers: random histories, files ingested in any order.

Three devices write random histories (adds, corrections, supersessions, retractions, expiries,
erasures) for two users and export full and incremental files. The files then reach, at the
same moments, a hub and a device (the *receiver*): in a random order, with repeats, each
attempt made on both. Each attempt must end alike on both: the same rows added, or the same
error (an incremental file before the file it follows is refused whole by both). Then, for
random (user, known_at, valid_at), the hub and the receiver return the same memories with
the same revisions and values: current reads, reads of everything, snapshots, histories and
single gets, erasures included; and a device importing the hub's own export (the relay)
ends with exactly the receiver's rows. Imports check rows in chunks of a random size down to
one row, so the hub seeds its staging store over many chunks of one file (each chunk's ids
read from the hub once, a memory's history with the first chunk that names it).
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pg
import psycopg
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.hub import db, ingest, reads, relay
from localmem.sync import apply
from localmem.testing import FrozenClock

USERS = ("sam", "ann")
VALID_TIMES = ("2025-01-01T00:00:00Z", "2026-03-02T12:00:00Z", "2026-04-15T00:00:00Z", "2026-06-01T00:00:00Z")
ARRIVALS = "2026-07-01T00:00:00Z"  # the files reach the hub and the receiver from here, an hour apart

op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 2), st.integers(0, 3)),
    st.tuples(st.just("correct"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("supersede"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("retract"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("expire"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("erase"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("derive"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("export"), st.integers(0, 2), st.integers(0, 1)),
    st.tuples(st.just("import"), st.integers(0, 2), st.integers(0, 50)),
    st.tuples(st.just("tick"), st.integers(0, 2), st.integers(1, 3600)),
)


def _key(rev: localmem.Revision) -> tuple[Any, ...]:
    """What a read answers about a revision (not its local seq, which is each store's own)."""
    return (rev.memory_id, rev.rev_id, rev.user_id, rev.kind, rev.key, rev.version, rev.op, rev.text,
            repr(rev.value), rev.valid_from, rev.valid_to, rev.expires_at, rev.retracted, rev.erased,
            rev.expired, rev.stale, rev.superseded_by, rev.supersedes, rev.origin)


def _write(stores: list[localmem.Store], clocks: list[FrozenClock], ops: list[tuple[str, int, int]],
           folder: Path) -> list[Path]:
    """Play the random history on three devices; returns the files they exported, in order."""
    files: list[Path] = []
    marks = [0, 0, 0]
    counter = itertools.count()
    for kind, who, arg in ops:
        s, c = stores[who], clocks[who]
        c.advance(seconds=7)
        mids = [r[0] for r in s.connection.execute("SELECT memory_id FROM memories ORDER BY memory_id")]
        target = mids[arg % len(mids)] if mids else None
        try:
            if kind == "add":
                s.add(f"note {next(counter)} about tempo runs", user_id=USERS[arg % 2],
                      key="city" if arg >= 2 else None, valid_from="2026-01-01", value=arg)
            elif kind == "correct" and target:
                s.correct(target, text=f"corrected run {next(counter)}", value=arg)
            elif kind == "supersede" and target:
                s.supersede(target, f"replaced run {next(counter)}", valid_from="2026-04-01")
            elif kind == "retract" and target:
                s.retract(target)
            elif kind == "expire" and target:
                s.expire(target, "2026-05-01")
            elif kind == "erase" and target:
                s.erase(target)
            elif kind == "derive" and target and (source := s.get(target)) is not None:
                s.derive(f"summary {next(counter)} of runs", from_=[source])
            elif kind == "export":
                out = s.export(folder / f"f{len(files)}.gz", since=marks[who] if arg else 0)
                marks[who] = out.watermark
                files.append(Path(out.path))
            elif kind == "import" and files:
                s.import_(files[arg % len(files)])
            elif kind == "tick":
                c.advance(seconds=arg)
        except (localmem.InvalidOperationError, localmem.InvalidIntervalError, localmem.SyncParentError):
            pass  # a write the memory's state refuses, or a file whose parents this device lacks
    files += [Path(s.export(folder / f"final{i}.gz").path) for i, s in enumerate(stores)]
    return files


def _outcome(run: Any) -> tuple[Any, ...]:
    try:
        s = run()
    except localmem.SyncFileError as exc:
        return (type(exc).__name__, str(exc))
    s = getattr(s, "summary", s)
    return (s.memories, s.revisions, s.tombstones, s.derivations, s.skipped, s.without_content)


@settings(deadline=None, max_examples=examples(8))
@given(ops=st.lists(op, min_size=4, max_size=30),
       plan=st.lists(st.integers(0, 1000), min_size=1, max_size=10),
       probes=st.lists(st.tuples(st.sampled_from(USERS), st.integers(0, 24), st.sampled_from(VALID_TIMES)),
                       min_size=2, max_size=6),
       chunk=st.sampled_from([1, 3, apply.CHUNK_ROWS]))
def test_the_hub_and_a_device_that_imported_the_same_files_answer_alike(
        pg_cluster: pg.Cluster, ops: list[tuple[str, int, int]], plan: list[int],
        probes: list[tuple[str, int, str]], chunk: int) -> None:
    rows, apply.CHUNK_ROWS = apply.CHUNK_ROWS, chunk
    with tempfile.TemporaryDirectory() as tmp:
        clocks = [FrozenClock(t) for t in
                  ("2026-03-02T09:00:00Z", "2026-03-02T08:30:00Z", "2026-03-02T10:15:00Z")]
        stores = [localmem.open(":memory:", clock=c) for c in clocks]
        arrivals = FrozenClock(ARRIVALS)
        receiver = localmem.open(":memory:", clock=arrivals)
        hub: psycopg.Connection[tuple[Any, ...]] = db.connect(pg.fresh_dsn(pg_cluster))
        try:
            files = _write(stores, clocks, ops, Path(tmp))
            db.init(hub)
            # A random order with repeats, then every file once more in export order.
            attempts = [files[i % len(files)] for i in plan] + files
            for path in attempts:
                arrivals.advance(hours=1)
                on_device = _outcome(lambda p=path: receiver.import_(p))
                on_hub = _outcome(lambda p=path: ingest.ingest(hub, p, clock=arrivals))
                assert on_hub == on_device, path.name
            for user, hours, valid in probes:
                known = FrozenClock(ARRIVALS).advance(hours=hours, minutes=30)
                for everything in (False, True):
                    got = reads.read(hub, user, clock=arrivals, known_at=known, valid_at=valid,
                                     current_only=not everything, include_expired=everything,
                                     include_retracted=everything)
                    want = receiver.read(user, known_at=known, valid_at=valid, current_only=not everything,
                                         include_expired=everything, include_retracted=everything)
                    assert sorted(map(_key, got)) == sorted(map(_key, want)), (user, known, valid, everything)
                hub_snap = reads.snapshot(hub, user, clock=arrivals, known_at=known)
                dev_snap = receiver.snapshot(user, known_at=known)
                assert [_key(r) for r in hub_snap.revisions] == [_key(r) for r in dev_snap.revisions]
                assert sorted(map(_key, hub_snap.memories)) == sorted(map(_key, dev_snap.memories))
                for rev in dev_snap.memories:
                    assert reads.history(hub, rev.memory_id, clock=arrivals, known_at=known) == \
                        receiver.history(rev.memory_id, known_at=known)
                    got_one = reads.get(hub, user, rev.memory_id, clock=arrivals, known_at=known,
                                        valid_at=valid)
                    want_one = receiver.get(rev.memory_id, known_at=known, valid_at=valid)
                    assert (None if got_one is None else _key(got_one)) == \
                        (None if want_one is None else _key(want_one))
            # The relay: a device that imports the hub's export holds the receiver's rows, exactly.
            relayed = localmem.open(":memory:", clock=arrivals)
            relayed.import_(relay.export(hub, Path(tmp) / "relay.gz", clock=arrivals).path)
            assert relayed.digest() == receiver.digest()
            relayed.close()
            # Erased words are gone from the hub's tables, as from the receiver's.
            erased = {r[0] for r in receiver.connection.execute("SELECT memory_id FROM erasures")}
            assert {r[0] for r in hub.execute("SELECT memory_id FROM erasures")} == erased
            assert hub.execute("SELECT count(*) FROM content WHERE memory_id = ANY(%s)",
                               (list(erased),)).fetchone() == (0,)
        finally:
            apply.CHUNK_ROWS = rows
            hub.close()
            receiver.close()
            for s in stores:
                s.close()
