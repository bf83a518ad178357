"""Reading a big batch's time phrases in more than one process: :class:`Readers`.

Phrase reading is pure CPU on immutable input (:func:`~localmem.core.messages.said_in`: the text,
the instant it was said, the zone, whether it is a state), so a large ``add_many`` may hand part
of it to reader processes while this one reads the rest. The rules:

* only above :data:`POOLED_FROM` items to read, and (``workers=None``) only as many readers as
  the machine has idle CPUs beyond this process's (by the 1-minute load average), on a platform
  whose pipes can be polled (not Windows), never inside a reader; otherwise, and with
  ``workers=0``, everything is read here;
* the results are the ones reading here gives, in item order: the same function runs on the same
  arguments (the instant is passed, never read from a clock; the zone goes by its key);
* this process reads from the front, the readers take chunks of :data:`CHUNK` from the back,
  and they meet where the readers' share ends: a reader still starting (importing localmem
  takes most of a second) or starved of CPU on a loaded machine just gets fewer chunks;
* a reader that fails (it died, or its reading raised something other than localmem's own
  errors) is stopped and its chunk read here, so the caller sees what reading here raises.

Why plain subprocesses and not ``concurrent.futures`` with 'spawn' or 'forkserver': both start
each worker by importing the caller's ``__main__`` again, so a script without an
``if __name__ == "__main__":`` guard would run its own writes once more in every worker, and a
script read from stdin breaks the pool (measured: ``BrokenProcessPool`` at the first task). A
reader here runs ``python -c`` of :func:`serve` and nothing of the caller's.
"""

from __future__ import annotations

import os
import pickle
import selectors
import subprocess
import sys
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import IO
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, LocalmemError
from .messages import Phrased, said_in

__all__ = ["Task", "Read", "Readers", "POOLED_FROM", "CHUNK", "read_chunk", "serve", "check_workers"]

#: One message to read: (text, said at in UTC microseconds, zone, a state?).
Task = tuple[str, int, ZoneInfo, bool]
#: What reading one gave: what it said (see :func:`~localmem.core.messages.said_in`), or the
#: localmem error it raised.
Read = Phrased | LocalmemError

#: Fewer items than this are read here: ~30 ms of reading or less, where a reader's pickling,
#: polling and the wait where the two sides meet would be a large share (a guess from the
#: measured parts, not a measured break-even: on this project's loaded 2-core VM readers did not
#: pay at any size; see the README, "Writes and point gets").
POOLED_FROM = 256
#: Items a reader is handed at once: big enough that a round trip (~50 µs) is small next to
#: reading them (~90 µs each on the benchmark's mix), small enough that the two sides meet evenly
#: (the wait where they met was 0.01–0.09 s per 30k items).
CHUNK = 32
#: How many items this process reads between looks at its readers' pipes.
_POLL_EVERY = 4
_MOST_AUTO = 3
_READY = b"ready"


def check_workers(workers: object) -> int | None:
    """``workers`` if it is None (automatic) or a count of reader processes (0: none)."""
    if workers is not None and (type(workers) is not int or workers < 0):
        raise InvalidInputError(
            f"workers={workers!r} is not a number of reader processes: expected None (automatic), "
            "0 (read in this process) or a positive int")
    return workers


def read_chunk(tasks: Sequence[Task]) -> list[Read]:
    """Read each task's phrases; a localmem error is kept as that item's result."""
    out: list[Read] = []
    for text, at, z, state in tasks:
        try:
            out.append(said_in(text, at, z, state))
        except LocalmemError as exc:
            out.append(exc)
    return out


def _send(pipe: IO[bytes], data: bytes) -> None:
    pipe.write(len(data).to_bytes(4, "big") + data)
    pipe.flush()


def _receive(pipe: IO[bytes]) -> bytes | None:
    """One frame, or None at end of file."""
    head = pipe.read(4)
    if len(head) < 4:
        return None
    size = int.from_bytes(head, "big")
    data = pipe.read(size)
    return data if len(data) == size else None


def serve() -> None:
    """A reader's loop: frames of pickled task lists in on stdin, their reads out on stdout (an
    empty frame: reading raised something else; the parent reads that chunk itself)."""
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    _send(out, _READY)
    while (frame := _receive(inp)) is not None:
        try:
            data = pickle.dumps(read_chunk(pickle.loads(frame)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001  # the parent reads the chunk again and raises it there
            data = b""
        _send(out, data)


class _Reader:
    """One reader process: started at once, handed work only once it said it is ready."""

    def __init__(self) -> None:
        package_root = str(Path(__file__).resolve().parents[2])
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": package_root if not path else package_root + os.pathsep + path,
               "LOCALMEM_READER": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from localmem.core.phrases import serve; serve()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.ready = False
        self.busy: tuple[int, int] | None = None  # the todo positions [lo, hi) it is reading

    @property
    def out(self) -> IO[bytes]:
        assert self.proc.stdout is not None
        return self.proc.stdout

    def hand(self, tasks: list[Task], lo: int, hi: int) -> None:
        assert self.proc.stdin is not None
        _send(self.proc.stdin, pickle.dumps(tasks, protocol=pickle.HIGHEST_PROTOCOL))
        self.busy = (lo, hi)

    def stop(self) -> None:
        if not self.ready:  # still importing: nothing to finish
            self.proc.kill()
        _stop(self.proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            try:
                pipe.close()
            except OSError:
                pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _stop_all(readers: list[_Reader]) -> None:
    for r in readers:
        r.stop()
    readers.clear()


def _auto() -> int:
    """Readers when ``workers`` is None: the CPUs the 1-minute load average leaves idle, less the one
    this process reads on, at most three; none on Windows (its pipes cannot be polled) or inside a
    reader. On a busy machine a reader only takes CPU from this process (measured: slower)."""
    if sys.platform == "win32" or not sys.executable or os.environ.get("LOCALMEM_READER"):
        return 0
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average to read: assume the machine is busy
        return 0
    return max(0, min(int((os.cpu_count() or 1) - busy) - 1, _MOST_AUTO))


class Readers:
    """A store's reader processes, started at its first big batch and stopped by :meth:`close`
    (or when the store is collected). One that fails is not replaced: from then on this store
    reads everything itself."""

    def __init__(self) -> None:
        self._readers: list[_Reader] = []
        self._failed = False
        self.shared = 0  #: how many items the reader processes have read so far
        self._finalizer = weakref.finalize(self, _stop_all, self._readers)

    def close(self) -> None:
        """Stop the readers (the next big batch starts new ones)."""
        _stop_all(self._readers)

    def read(self, tasks: Sequence[Task], workers: int | None) -> list[Read]:
        """Each task's read, in order: here alone, or with up to ``workers`` readers (None: automatic)."""
        count = (0 if self._failed else _auto()) if workers is None else workers
        if count == 0 or len(tasks) < POOLED_FROM:
            return read_chunk(tasks)
        while len(self._readers) < count:
            self._readers.append(_Reader())
        for extra in self._readers[count:]:
            extra.stop()
        del self._readers[count:]
        return self._shared(tasks)

    def _shared(self, tasks: Sequence[Task]) -> list[Read]:
        out: list[Read | None] = [None] * len(tasks)
        done = [False] * len(tasks)
        front, back = 0, len(tasks)  # this process reads [front, back); readers took [back, end)
        sel = selectors.DefaultSelector()
        for r in self._readers:
            sel.register(r.out, selectors.EVENT_READ, r)
        try:
            while True:
                for r in list(self._readers):  # every idle ready reader gets a chunk from the back
                    if r.ready and r.busy is None and back - front > 2 * CHUNK:
                        lo = back - CHUNK
                        if not self._hand(r, tasks, lo, back):
                            sel.unregister(r.out)
                            continue
                        back = lo
                if front < back:
                    stop = min(back, front + _POLL_EVERY)
                    out[front:stop] = read_chunk(tasks[front:stop])
                    done[front:stop] = [True] * (stop - front)
                    front = stop
                    timeout: float | None = 0
                elif any(r.busy for r in self._readers):
                    timeout = None  # only the readers' chunks are left: wait for them
                else:
                    break
                for key, _ in sel.select(timeout):
                    reader: _Reader = key.data
                    if not self._take(reader, out, done):
                        sel.unregister(reader.out)
                        self._drop(reader)
        finally:
            sel.close()
            for r in [r for r in self._readers if r.busy is not None]:  # cut short: its reads are stale
                r.stop()
                self._readers.remove(r)
        for i, ok in enumerate(done):  # a chunk of a reader that failed: read it here
            if not ok:
                out[i] = read_chunk(tasks[i : i + 1])[0]
        return out  # every item was read (Read holds None)

    def _hand(self, reader: _Reader, tasks: Sequence[Task], lo: int, hi: int) -> bool:
        try:
            reader.hand(list(tasks[lo:hi]), lo, hi)
        except (OSError, pickle.PicklingError, TypeError, ValueError):  # a zone not known by key
            self._drop(reader)
            return False
        return True

    def _take(self, reader: _Reader, out: list[Read | None], done: list[bool]) -> bool:
        """Take what a readable reader sent (its readiness, or a chunk's reads): False if it failed."""
        try:
            frame = _receive(reader.out)
        except OSError:
            frame = None
        if frame is None:
            return False
        if not reader.ready:
            reader.ready = frame == _READY
            return reader.ready
        if reader.busy is None or not frame:
            return False
        lo, hi = reader.busy
        reader.busy = None
        try:
            reads = pickle.loads(frame)
        except Exception:  # noqa: BLE001  # an error that does not unpickle: read the chunk here
            return False
        if not isinstance(reads, list) or len(reads) != hi - lo:
            return False
        out[lo:hi] = reads
        done[lo:hi] = [True] * (hi - lo)
        self.shared += hi - lo
        return True

    def _drop(self, reader: _Reader) -> None:
        self._failed = True
        reader.busy = None
        reader.stop()
        if reader in self._readers:
            self._readers.remove(reader)
