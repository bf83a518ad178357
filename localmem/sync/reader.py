"""Reading a sync file for an import: its events, in this process or in a reader process beside it.

An import consumes a file as events, in file order: ``("head", line)`` (the header's line,
or None for a file with no lines), then ``("rows", [(n, row, pre), ...])`` per piece of
the file, then ``("end", trailer, sha256, rows)``. Whatever makes the file unreadable (a
damaged gzip, a line too long, a row that is not JSON, data after the trailer) is raised
where the reading meets it, between the events, exactly where an import reading the file
itself met it.

A large file is read by a second process (:func:`events` with ``worker=True``): it
inflates, splits, hashes and parses the file, and for each revision computes what needs
no database: its content hash, and the revision hash its fields, content hash, the kind
and key of its memory's row and the hash of the revision it follows would give, where
those rows came earlier in the file (``pre``). The importing process checks every row
as before and takes a precomputed hash only when its own inputs are the very inputs the
reader used (a hash is a function of them), so nothing is checked less. Events travel
by pickle through a pipe; a piece of plain lines (most) as its lines and what was computed
for them, parsed again on arrival (~2.2 µs a row, what unpickling its rows cost, and the
reader no longer pickles them). If the reader cannot start or dies, the import runs again
in its own process (:class:`ReaderFailed`).
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import hashlib
import itertools
import os
import pickle
import subprocess
import sys
from collections.abc import Generator, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from ..core import chain
from ..errors import SyncFileError
from .files import CONTENT_FIELDS, line_pieces, parse_line, parse_rows

__all__ = ["events", "ReaderFailed", "Pre", "main", "worth_a_reader", "READER_BYTES", "no_cycle_collection"]

#: The smallest file (bytes as stored) read by a reader process beside the import: ~16k
#: revisions, where starting it (~0.3 s) is long paid for.
READER_BYTES = 2 << 20

#: What the reader computed for a revision: its content hash, and (kind, key, prev hash, the
#: revision hash those give) when its memory's row and the revision it follows came earlier in
#: the file (else None).
Pre = tuple[bytes, tuple[str, str | None, bytes | None, bytes] | None]

_CONTENT_VALUES = itemgetter(*CONTENT_FIELDS)
_HASHED = itemgetter(*chain.HASHED_FIELDS)
_REMEMBERED = 1 << 16  # memories and revisions the reader remembers (cleared when full)
#: How much the pipe from the reader holds (Linux's default, 64 KiB, is a sixteenth of a piece).
_PIPE_BYTES = 1 << 20


def worth_a_reader(source: Path) -> bool:
    """Whether a reader process beside the import pays: a file of :data:`READER_BYTES` or more,
    on a machine where this process may run on a second core."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    return cores >= 2 and source.stat().st_size >= READER_BYTES


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cycle collector paused while a file is read (then restored as it was).

    An import makes a dict per row and keeps a few thousand rows and two bounded caches alive,
    so the collector would run every few dozen rows and, now and then, walk every object in the
    process: ~8% of a 100k import, measured, for no garbage (its rows make no reference cycles;
    they are freed by their counts as ever). Cycles another thread makes meanwhile wait for the
    collector's first run after the import.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class ReaderFailed(Exception):  # noqa: N818 (a signal: the import runs again in its own process)
    """The reader process could not start, died, or raised something other than a file's error."""


def _local(source: Path, precompute: bool) -> Generator[tuple[Any, ...], None, None]:
    """The events of ``source``, read in this process (see the module's docstring)."""
    h = hashlib.sha256()
    memories: _Memories = _Memories()
    revisions: dict[str, bytes] = {}
    with line_pieces(source) as read:
        pieces = iter(read)
        first, found, ended = next((p for p in pieces if p[1]), (1, [], True))
        if not found:
            yield ("head", None)
            return
        yield ("head", found[0])
        h.update(found[0] + b"\n" if ended else found[0])
        trailer: dict[str, Any] | None = None
        rows = 0
        rest = (first + 1, found[1:], ended)  # the header's piece, after the header
        for first, found, ended in _chain(rest, pieces):
            if not found:
                continue
            if trailer is not None:
                raise SyncFileError(
                    f"{str(source)!r} has data after its trailer (line {first}); nothing was applied")
            end = next((i for i, line in enumerate(found) if line.startswith(b'{"end"')), None)
            if end is not None:
                trailer = parse_line(found[end], first + end, source)
                if end + 1 < len(found):
                    raise SyncFileError(f"{str(source)!r} has data after its trailer (line "
                                        f"{first + end + 1}); nothing was applied")
                found = found[:end]
                if not found:
                    continue
            joined = b"\n".join(found)
            h.update(joined + b"\n" if ended else joined)
            rows += len(found)
            parsed, every_plain = parse_rows(found, first, source)
            if precompute:
                pres = [_pre(o, memories, revisions) for _n, o in parsed]
                if every_plain:
                    yield ("lines", first, joined, pres)  # parsed again where it arrives (see _received)
                else:
                    yield ("rows", [(n, o, pre) for (n, o), pre in zip(parsed, pres, strict=True)])
            else:
                yield ("rows", [(n, o, None) for n, o in parsed])
        yield ("end", trailer, h.hexdigest(), rows)


def _chain(rest: tuple[int, list[bytes], bool],
           pieces: Iterator[tuple[int, list[bytes], bool]]) -> Iterator[tuple[int, list[bytes], bool]]:
    yield rest
    yield from pieces


class _Memories(dict[str, tuple[Any, Any]]):
    """The kind and key of the memory rows read lately (a bounded number), and a guess for the
    others: the pair most of the rows so far had. A wrong guess costs only speed: the import
    takes the reader's hash only if the kind and key it hashed are the memory's."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[tuple[Any, Any], int] = {}
        self.common: tuple[Any, Any] | None = None

    def saw(self, memory_id: str, pair: tuple[Any, Any]) -> None:
        if len(self) >= _REMEMBERED:
            self.clear()
        pair = self.setdefault_pair(pair)
        self[memory_id] = pair
        if pair in self.counts or len(self.counts) < 64:
            n = self.counts[pair] = self.counts.get(pair, 0) + 1
            if self.common is None or n > self.counts[self.common]:
                self.common = pair

    def setdefault_pair(self, pair: tuple[Any, Any]) -> tuple[Any, Any]:
        """One tuple object per pair already counted (the map holds many rows of few pairs)."""
        return pair if self.common != pair else self.common


def _pre(o: dict[str, Any], memories: _Memories, revisions: dict[str, bytes]) -> Pre | None:
    """What needs no database of a row's checks (see :data:`Pre`); None where there is nothing, or
    the row is not as an export writes it (the import's own checks then say what is wrong)."""
    try:
        kind = o.get("t")
        if kind == "memory":
            memories.saw(o["memory_id"], (o["kind"], o["key"]))
            return None
        if kind != "revision":
            return None
        rev, content = o["rev_hash"], o["content"]
        if type(rev) is not str or len(rev) != 64 or type(content) is not dict:
            return None
        own = bytes.fromhex(rev)
        if len(revisions) >= _REMEMBERED:
            revisions.clear()
        computed = chain.content_hash(*_CONTENT_VALUES(content))
        mem = memories.get(o["memory_id"], memories.common)
        prev = None if o["version"] == 1 else revisions.get(o["prev_rev"], False)
        revisions[o["rev_id"]] = own
        if mem is None or prev is False:
            return computed, None
        assert prev is None or isinstance(prev, bytes)
        kind_, key = mem
        return computed, (kind_, key, prev, chain.rev_hash(_HASHED(o), kind_, key, computed, prev))
    except Exception:  # noqa: BLE001 (a row not as expected: the import checks it itself)
        return None


@contextlib.contextmanager
def events(source: Path, *, worker: bool) -> Iterator[Iterator[tuple[Any, ...]]]:
    """The file's events, read here or (``worker``) by a reader process, stopped on leaving."""
    if not worker:
        gen = _local(source, precompute=False)
        try:
            yield gen
        finally:
            gen.close()
        return
    # The package's __init__ (the whole library, ~0.9 s CPU) is not run: the reader needs sync's
    # reading and the chain's hashes only (~0.15 s).
    package = os.fspath(Path(__file__).resolve().parents[1])
    code = (f"import sys, types; sys.path[:0] = {sys.path!r}; package = types.ModuleType('localmem'); "
            f"package.__path__ = [{package!r}]; sys.modules['localmem'] = package; "
            "from localmem.sync.reader import main; main()")
    try:
        proc = subprocess.Popen([sys.executable, "-c", code, os.fspath(source)], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, close_fds=True)
    except OSError as exc:
        raise ReaderFailed(str(exc)) from exc
    assert proc.stdout is not None
    with contextlib.suppress(OSError, AttributeError):  # Linux: a deeper pipe, fewer switches
        fcntl.fcntl(proc.stdout.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
    try:
        yield _received(proc.stdout)
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


def _received(pipe: Any) -> Iterator[tuple[Any, ...]]:
    """The reader's events as :func:`_local` gives them. A piece whose every line the reader found
    plain (:func:`~localmem.sync.files.plain`) comes as its lines, and is parsed here by orjson as
    one JSON array: the rows orjson gives the lines one by one (each line is one JSON object with
    no newline in it), for about what unpickling them would cost, and without the reader pickling
    them (~2.2 µs a row, measured)."""
    while True:
        try:
            event = pickle.load(pipe)
        except Exception as exc:
            raise ReaderFailed(f"the reader process stopped ({type(exc).__name__}: {exc})") from exc
        if event[0] == "error":
            if isinstance(event[1], SyncFileError):
                raise event[1]
            raise ReaderFailed(repr(event[1]))
        if event[0] == "lines":
            _, first, joined, pres = event
            objs = orjson.loads(b"[" + joined.replace(b"\n", b",") + b"]")
            if len(objs) != len(pres):
                raise ReaderFailed(f"a piece of {len(pres)} lines parsed to {len(objs)} rows")
            event = ("rows", list(zip(itertools.count(first), objs, pres)))
        yield event
        if event[0] == "end" or (event[0] == "head" and event[1] is None):
            return


def main() -> None:
    """The reader process: the events of the file named by its argument, pickled to stdout."""
    out = sys.stdout.buffer
    try:
        for event in _local(Path(sys.argv[1]), precompute=True):
            pickle.dump(event, out, protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as exc:  # noqa: BLE001 (sent, in its place in the stream)
        try:
            pickle.dump(("error", exc), out, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001 (an exception that does not pickle: say what it was)
            pickle.dump(("error", RuntimeError(repr(exc))), out, protocol=pickle.HIGHEST_PROTOCOL)
    with contextlib.suppress(BrokenPipeError):
        out.flush()
