"""Crash safety: a process killed mid-write leaves a sound file that lost only unfinished work.

A child Python process writes to a file store and says on stdout how far it
got; the test kills it with SIGKILL (no cleanup, no atexit, no close) and then
opens the file as the next run of the app would. A batch is atomic: all of it
or none of it. Single writes that returned are durable.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import localmem
from localmem.testing import FrozenClock

pytestmark = pytest.mark.slow

#: Writes one large batch; prints MARKER once ``marker_at`` adds are in it.
BATCH_CHILD = """
import sys
import localmem
from localmem.testing import FrozenClock

path, marker_at, total = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
store = localmem.open(path, clock=FrozenClock("2026-03-02T09:00:00Z"))
# A small page cache: the batch spills uncommitted pages into the WAL early,
# so the kill leaves frames there that recovery must ignore.
store.connection.pragma("cache_size", 50)
with store.batch():
    for i in range(total):
        store.add(f"batch note {i}", user_id="batch")
        if i + 1 == marker_at:
            print("MARKER", flush=True)
print("DONE", flush=True)
"""

#: Writes memories one at a time, printing each id once add() has returned.
SINGLES_CHILD = """
import sys
import localmem
from localmem.testing import FrozenClock

path, total = sys.argv[1], int(sys.argv[2])
store = localmem.open(path, clock=FrozenClock("2026-03-02T09:00:00Z"))
for i in range(total):
    rev = store.add(f"single note {i}", user_id="single")
    print(rev.memory_id, flush=True)
"""


def _spawn(script: str, *args: object) -> subprocess.Popen[bytes]:
    # Unbuffered bytes: every line the child flushed is readable, and select() on
    # the pipe never waits while a line sits in a Python-side buffer.
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
    )


def _readline(proc: subprocess.Popen[bytes], timeout: float = 60) -> str:
    """The child's next stdout line; fails the test if it dies or stalls first."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline() if ready else b""
    if not line.endswith(b"\n"):
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"the child wrote no line (exit {proc.returncode}): {err.decode()}")
    return line.decode().strip()


def _kill(proc: subprocess.Popen[bytes]) -> str:
    """SIGKILL the child and return what it had already written to stdout."""
    os.kill(proc.pid, signal.SIGKILL)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL, f"the child exited by itself ({proc.returncode})"
    return out.decode()


def _committed(path: Path, clock: FrozenClock) -> dict[str, str]:
    """Commit some memories before the child runs: memory id -> text."""
    with localmem.open(path, clock=clock) as store:
        return {store.add(f"committed note {i}", user_id="before").memory_id: f"committed note {i}"
                for i in range(50)}


def _count(store: localmem.Store, user_id: str) -> int:
    count: int = store.connection.execute(
        "SELECT count(*) FROM revisions WHERE user_id = ?", (user_id,)).get
    return count


@pytest.mark.parametrize("marker_at", [300, 1500])
def test_kill_during_a_batch_keeps_all_or_none(
    db_path: Path, clock: FrozenClock, marker_at: int
) -> None:
    """SIGKILL in the middle of a large batch leaves a sound file holding none or all of the batch."""
    total = 50_000
    before = _committed(db_path, clock)

    child = _spawn(BATCH_CHILD, db_path, marker_at, total)
    assert _readline(child) == "MARKER"
    wal = Path(f"{db_path}-wal")
    spilled = wal.exists() and wal.stat().st_size > 0
    out = _kill(child)
    assert "DONE" not in out
    assert spilled, "the batch never reached the WAL: the kill tested nothing"

    clock.set("2026-03-02T10:00:00Z")  # after everything the child recorded
    with localmem.open(db_path, clock=clock) as store:
        report = store.doctor()
        assert report.ok, [c for c in report.checks if not c.ok]
        assert _count(store, "batch") in (0, total)
        assert _count(store, "before") == len(before)
        for memory_id, text in before.items():
            rev = store.get(memory_id)
            assert rev is not None and rev.text == text
        # The file takes writes again where the dead process left it.
        rev = store.add("written after the crash", user_id="before")
        assert store.get(rev.memory_id) == rev


@pytest.mark.parametrize("kill_after", [20, 200])
def test_kill_between_single_writes_keeps_every_returned_write(
    db_path: Path, clock: FrozenClock, kill_after: int
) -> None:
    """SIGKILL during a run of single adds keeps every add that returned, and the file passes doctor."""
    before = _committed(db_path, clock)

    child = _spawn(SINGLES_CHILD, db_path, 100_000)
    returned = [_readline(child) for _ in range(kill_after)]
    # Whole lines printed before the kill landed: those adds returned too.
    returned += _kill(child).split("\n")[:-1]

    clock.set("2026-03-02T10:00:00Z")  # after everything the child recorded
    with localmem.open(db_path, clock=clock) as store:
        report = store.doctor()
        assert report.ok, [c for c in report.checks if not c.ok]
        for memory_id in returned:
            rev = store.get(memory_id)
            assert rev is not None and rev.text is not None and rev.text.startswith("single note")
        # At most the one add that had committed but not yet printed is extra.
        assert len(returned) <= _count(store, "single") <= len(returned) + 1
        assert all(store.get(m) is not None for m in before)
