"""Several processes on one file: lock waits end in BusyError, opening and reading never wait.

SQLite's WAL lets any number of readers go on beside one writer. A second
writer waits up to its busy timeout, then gets localmem's BusyError (never
apsw's); opening a current file takes no lock at all, so a read-only command
works while another process imports or writes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import localmem
from localmem.core import db as _db
from localmem.testing import FrozenClock

_HOLD = textwrap.dedent("""
    import sys, apsw
    conn = apsw.Connection(sys.argv[1])
    conn.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    sys.stdin.read()  # hold the write lock until the test closes our stdin
    conn.execute("ROLLBACK")
""")


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """Another process holds ``path``'s write lock (BEGIN IMMEDIATE) for the block's duration."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.communicate(timeout=30)  # closes its stdin: it rolls back and exits
    assert holder.returncode == 0


@pytest.fixture
def seeded_file(db_path: Path, clock: FrozenClock) -> Path:
    """A current localmem file holding one memory of user "u"."""
    with localmem.open(db_path, clock=clock) as store:
        store.add("Sam runs on Tuesdays", user_id="u")
    return db_path


def test_open_and_reads_need_no_lock_while_another_process_writes(
    seeded_file: Path, clock: FrozenClock
) -> None:
    """With the write lock held elsewhere, a zero-timeout open and every read succeed."""
    with write_lock_held(seeded_file):
        # busy_timeout=0: any lock the open or a read needed would raise BusyError at once.
        store = localmem.Store(_db.connect(seeded_file, busy_timeout=0), clock=clock)
        try:
            [rev] = store.read("u")
            assert store.get(rev.memory_id) == rev
            assert [h.revision for h in store.search("Tuesdays", user_id="u", log=False)] == [rev]
            assert len(store.history(rev.memory_id)) == 1
            assert store.info().memories == 1
        finally:
            store.connection.close()


def test_a_write_while_another_process_holds_the_lock_is_a_busy_error(
    seeded_file: Path, clock: FrozenClock
) -> None:
    """A write waits its busy timeout, then raises BusyError (a StorageError); nothing changed."""
    store = localmem.Store(_db.connect(seeded_file, busy_timeout=0.2), clock=clock)
    try:
        before = store.digest()
        [rev] = store.read("u")
        writes: list[Callable[[], object]] = [
            lambda: store.add("Sam swims on Fridays", user_id="u"),
            lambda: store.correct(rev.memory_id, text="Sam runs on Wednesdays"),
            lambda: store.retract(rev.memory_id),
            lambda: store.erase(rev.memory_id),
        ]
        with write_lock_held(seeded_file):
            for write in writes:
                with pytest.raises(localmem.BusyError, match="busy") as info:
                    write()
                assert isinstance(info.value, localmem.StorageError)
                assert isinstance(info.value, TimeoutError)
        assert store.digest() == before
        store.add("Sam swims on Fridays", user_id="u")  # the lock is free again
        assert len(store.read("u")) == 2
    finally:
        store.close()


def test_doctor_reports_busy_not_a_broken_index(seeded_file: Path, clock: FrozenClock) -> None:
    """While another process holds the lock, doctor says the FTS check was not made; nothing else fails."""
    store = localmem.Store(_db.connect(seeded_file, busy_timeout=0.2), clock=clock)
    try:
        with write_lock_held(seeded_file):
            report = store.doctor()
        assert report.busy and not report.ok
        failed = [c for c in report.checks if not c.ok]
        assert [c.name for c in failed] == ["full-text index matches content"]
        assert failed[0].detail.startswith("not checked: the database is busy")
        again = store.doctor()
        assert again.ok and not again.busy
    finally:
        store.close()


def test_optimize_skips_rather_than_waits_while_the_lock_is_held(seeded_file: Path) -> None:
    """optimize() returns without raising while another process writes, and keeps the busy timeout."""
    conn = _db.connect(seeded_file, busy_timeout=600)  # waiting would hang the test, not pass it
    try:
        with write_lock_held(seeded_file):
            _db.optimize(conn)
        assert conn.pragma("busy_timeout") == 600_000
    finally:
        conn.close()


_WRITER = textwrap.dedent("""
    import json, sys
    import localmem
    path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    retries = 0
    store = localmem.open(path)
    for i in range(count):
        while True:
            try:
                store.add(f"{name} note {i}", user_id="u", attributes={"writer": name, "i": i})
                break
            except localmem.BusyError:
                retries += 1
    store.close()
    print(json.dumps({"retries": retries}))
""")

_READER = textwrap.dedent("""
    import json, os, sys, time
    import localmem
    path, stop = sys.argv[1], sys.argv[2]
    reads = busy = 0
    store = localmem.open(path)
    seen = 0
    while not os.path.exists(stop):
        try:
            now = len(store.read("u"))
            store.search("note", user_id="u", log=False, limit=5)
        except localmem.BusyError:
            busy += 1
            continue
        assert now >= seen, (now, seen)  # what a reader has seen never goes away
        seen, reads = now, reads + 1
        time.sleep(0.005)  # leave the CPU to the writers: 2 cores run all six processes
    store.close()
    print(json.dumps({"reads": reads, "busy": busy}))
""")


def test_four_writers_and_two_readers_end_with_exact_counts(tmp_path: Path) -> None:
    """4 processes x 200 adds beside 2 reading processes: 800 memories, only BusyError ever raised."""
    path, stop = tmp_path / "shared.db", tmp_path / "stop"
    localmem.open(path).close()
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), f"w{n}", "200"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for n in range(4)]
    readers = [subprocess.Popen([sys.executable, "-c", _READER, str(path), str(stop)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
               for _ in range(2)]
    try:
        wrote = [w.communicate(timeout=120) for w in writers]
    finally:
        stop.touch()
    read = [r.communicate(timeout=60) for r in readers]
    for proc, (_, err) in zip(writers + readers, wrote + read, strict=True):
        assert proc.returncode == 0, err  # any other exception (a raw apsw error) fails the process
        assert "apsw" not in err, err
    retries = sum(json.loads(out)["retries"] for out, _ in wrote)
    reads = [json.loads(out) for out, _ in read]
    print(f"writer retries after BusyError: {retries}; reader passes: {[r['reads'] for r in reads]}")
    with localmem.open(path) as store:  # the writers' clock: the system's
        memories = store.read("u")
        assert len(memories) == 800
        assert len({m.text for m in memories}) == 800
        assert store.doctor().ok
