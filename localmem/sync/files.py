"""The sync file format: what an export file holds, and how one is written and read back.

The file (format 1) is gzip'd UTF-8 JSON lines: a header (format and schema
versions, the origin device, created_at, the watermark range, row counts), the
rows (memories, revisions with their content, derivations, tombstones; parents
before what refers to them; times as integer microseconds UTC), and a trailer with
the SHA-256 of every line before it. See the README's "Sync" section.

Reading a file never writes: :func:`verify` checks the header, the versions, the
row count and the checksum by reading it whole (an import makes the same checks in
its one pass, :func:`check_header` first and :func:`check_end` last), and every way a
file can be unreadable becomes a :class:`~localmem.errors.SyncFileError`.

A file is evidence from a peer, so reading one is bounded: only a regular file is
opened (a FIFO, a device or a directory is refused before it is read, so none can
hang an import), of at most :data:`MAX_FILE_BYTES` on disk and
:data:`MAX_EXPANDED_BYTES` decompressed, each line at most :data:`MAX_LINE_BYTES`
(decompressed 1 MiB at a time, so a gzip that expands to one huge line is refused
once that much of it is held), JSON nested no deeper than Python's parser allows, every
integer within SQLite's 64 bits.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import queue
import stat
import threading
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from ..core.db import SCHEMA_VERSION
from ..core.inputs import check_path
from ..core.sql import CONTENT_COLUMNS, MEMORY_COLUMNS, STORED_REVISION_COLUMNS, TOMBSTONE_COLUMNS
from ..errors import InvalidInputError, SyncFileError, SyncVersionError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "REVISION_FIELDS",
    "CONTENT_FIELDS",
    "MEMORY_FIELDS",
    "TOMBSTONE_FIELDS",
    "DERIVATION_FIELDS",
    "KINDS",
    "MAX_LINE_BYTES",
    "MAX_FILE_BYTES",
    "MAX_EXPANDED_BYTES",
    "ExportSummary",
    "ImportSummary",
    "SkippedFile",
    "SyncSummary",
    "open_regular",
    "check_int",
    "Hasher",
    "LineWriter",
    "Sink",
    "is_sync_file",
    "lines",
    "line_pieces",
    "parse_line",
    "parse_row",
    "parse_rows",
    "plain",
    "check_header",
    "verify",
    "check_end",
    "read_header",
]

#: The header's ``format`` value: what says a file is a localmem sync export.
FORMAT = "localmem-sync"
#: The version of the file layout this code writes and reads.
FORMAT_VERSION = 1

#: Revision columns as they travel, in file order (seq, arrived_at and chain are local, and stay).
REVISION_FIELDS = tuple(c for c in STORED_REVISION_COLUMNS if c not in ("arrived_at", "chain"))
CONTENT_FIELDS = CONTENT_COLUMNS
MEMORY_FIELDS = MEMORY_COLUMNS
TOMBSTONE_FIELDS = TOMBSTONE_COLUMNS
DERIVATION_FIELDS = ("memory_id", "position", "source_rev")
#: The row types a file holds, in file order.
KINDS = ("memory", "revision", "derivation", "tombstone")

_GZIP_MAGIC = b"\x1f\x8b"

#: The longest line (one row, decompressed) a file may hold: 16 MiB.
MAX_LINE_BYTES = 16 << 20
#: The largest sync file read, as stored (gzip'd): 2 GiB.
MAX_FILE_BYTES = 2 << 30
#: The most a sync file may expand to: 8 GiB of lines.
MAX_EXPANDED_BYTES = 8 << 30

_INT64 = range(-(2**63), 2**63)
#: How much decompressed data a reader takes at a time (split into lines in C, not read line by line).
_PIECE_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class ExportSummary:
    """What ``Store.export`` wrote.

    ``watermark`` is the newest local revision number the file covers: pass it as
    ``since`` to the next export to that peer to send only what is new.
    """

    path: str
    origin: str
    since: int
    watermark: int
    user_id: str | None
    memories: int
    revisions: int
    tombstones: int
    derivations: int
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class ImportSummary:
    """What ``Store.import_`` did with a file.

    ``changed`` is False when every row was already here (a repeated import):
    nothing was written, not even the import log. ``skipped`` counts rows already here.
    """

    path: str
    origin: str
    sha256: str
    watermark: tuple[int, int]
    memories: int
    revisions: int
    tombstones: int
    derivations: int
    skipped: int
    without_content: int
    import_id: str | None

    @property
    def changed(self) -> bool:
        """Whether the import added anything."""
        return self.import_id is not None

    def describe(self) -> str:
        """One line for people: what was added, or that nothing was."""
        if not self.changed:
            return (f"nothing new: all {self.skipped} rows from device {self.origin} were already here "
                    "(the file was imported before, or its rows came by another way)")
        return (f"imported from device {self.origin}: {self.memories} memories, {self.revisions} "
                f"revisions, {self.tombstones} tombstones, {self.derivations} derivations; "
                f"{self.skipped} rows already here")


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file ``Store.sync_dir`` did not take, and why (it was refused, or is not a regular file)."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class SyncSummary:
    """What ``Store.sync_dir`` did: the file it wrote (if any), each import, each file it
    skipped (with the reason) and this device's own files it removed as superseded."""

    directory: str
    exported: ExportSummary | None
    imported: tuple[ImportSummary, ...] = field(default_factory=tuple)
    skipped: tuple[SkippedFile, ...] = field(default_factory=tuple)
    pruned: tuple[str, ...] = field(default_factory=tuple)


class Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class Hasher(Protocol):
    """What :attr:`LineWriter.hash` is (a hashlib SHA-256 object)."""

    def update(self, data: bytes, /) -> None: ...
    def hexdigest(self) -> str: ...
    def digest(self) -> bytes: ...


class LineWriter:
    """Writes JSON lines into a gzip stream, hashing every line it writes.

    Lines are buffered (hashed and written 256 KiB at a time); :attr:`hash` always covers
    every line given so far, and :meth:`flush` writes them all out.
    """

    def __init__(self, out: Sink, *, hashing: bool = True) -> None:
        self._out = out
        self._hashing = hashing  # False: the sink hashes what it is given (its own thread, say)
        self._hash = hashlib.sha256()
        self._buf: list[bytes] = []  # lines not yet hashed
        self._ready: list[bytes] = []  # hashed, not yet written
        self._size = 0

    @property
    def hash(self) -> Hasher:
        """The SHA-256 of every line given so far."""
        self._encode()
        return self._hash

    def line(self, obj: dict[str, Any]) -> None:
        """Write one JSON object as a line."""
        self.text(json.dumps(obj, separators=(",", ":"), ensure_ascii=False))

    def text(self, line: str) -> None:
        """Write one line that is already a JSON object's text (no newline in it)."""
        self.data(line.encode())

    def data(self, line: bytes) -> None:
        """Write one line that is already a JSON object's text in UTF-8 (no newline in it)."""
        self._buf.append(line)
        self._size += len(line)
        if self._size > 1 << 18:
            self.flush()

    def _encode(self) -> None:
        if self._buf:
            self._buf.append(b"")
            data = b"\n".join(self._buf)
            self._buf.clear()
            if self._hashing:
                self._hash.update(data)
            self._ready.append(data)

    def flush(self) -> None:
        """Write every line given so far (one hash update and one write for many lines)."""
        self._encode()
        if self._ready:
            self._out.write(b"".join(self._ready))
            self._ready.clear()
        self._size = 0


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading, refusing anything else before a byte is read.

    Opened non-blocking and checked with fstat on the open descriptor (no race with a
    rename): a FIFO then never waits for a writer, and a device or a directory is refused.

    Raises:
        SyncFileError: it cannot be opened, is not a regular file, or is over MAX_FILE_BYTES.
    """
    name = str(path)
    try:
        checked = check_path(path, "sync file")
    except InvalidInputError as exc:
        raise SyncFileError(str(exc)) from None
    try:
        fd = os.open(checked, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise SyncFileError(f"cannot read sync file {name!r}: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "not a regular file")
            raise SyncFileError(f"{name!r} is {kind}: expected a sync export file")
        if st.st_size > MAX_FILE_BYTES:
            raise SyncFileError(f"{name!r} is {st.st_size} bytes: a sync file holds at most "
                                f"{MAX_FILE_BYTES} bytes")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def is_sync_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a sync export (gzip); chat-message imports are plain text.

    Anything that is not a regular file counts as one, so that importing it is refused
    as a sync file (clearly) rather than read (a FIFO would wait forever).
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the name (refused when it is opened)
        return False
    if not stat.S_ISREG(st.st_mode):
        return True
    try:
        with open_regular(path) as f:
            return f.read(2) == _GZIP_MAGIC
    except SyncFileError:
        return False


def check_int(value: object, what: str) -> int:
    """``value`` if it is an integer SQLite can hold (not a bool), else SyncFileError."""
    if type(value) is not int or value not in _INT64:
        raise SyncFileError(f"{what} is {value!r:.60}: expected an integer within 64 bits")
    return value


@contextlib.contextmanager
def line_pieces(path: Path) -> Iterator[Iterator[tuple[int, list[bytes], bool]]]:
    """The file's decompressed lines, a piece at a time; every way a file can be unreadable
    becomes SyncFileError.

    The file is decompressed in pieces of 1 MiB, split into lines; a line may be at most
    MAX_LINE_BYTES and the whole at most MAX_EXPANDED_BYTES, so no file makes the reader
    hold more than one bounded line and one piece. Each item is (the number of its first
    line, its lines without their newlines, whether they ended with one: all do but a
    last line without a newline, which comes alone). A piece is checked whole before it
    is given: a line too long, or the file too large, is refused before any line of it.
    """
    raw = open_regular(path)
    try:
        if raw.read(2) != _GZIP_MAGIC:
            raw.seek(0)
            empty = raw.read(1) == b""
            raise SyncFileError(
                f"{str(path)!r} is {'empty' if empty else 'not a gzip file'}: expected a localmem sync "
                "export (gzip'd JSON lines)")
        raw.seek(0)
        gz = gzip.GzipFile(fileobj=raw, mode="rb")

        def too_long(n: int) -> SyncFileError:
            return SyncFileError(f"line {n} of {str(path)!r} is longer than {MAX_LINE_BYTES} bytes (the most "
                                 "one row may take); nothing was applied")

        def too_large() -> SyncFileError:
            return SyncFileError(f"{str(path)!r} expands to more than {MAX_EXPANDED_BYTES} bytes (the most a "
                                 "sync file may hold); nothing was applied")

        def read() -> Generator[tuple[int, list[bytes], bool], None, None]:
            total = 0  # the bytes of every line given so far, newlines included
            read_bytes = 0  # the bytes decompressed so far
            limit = MAX_LINE_BYTES
            n = 0  # the lines given so far
            carry = b""  # the start of a line whose end is in a later piece
            ahead = _ReadAhead(gz.read)
            try:
                while True:
                    piece = ahead.next()
                    if not piece:  # the end: a last line without a newline, if any
                        if carry:
                            if len(carry) > MAX_LINE_BYTES:
                                raise too_long(n + 1)
                            if read_bytes > MAX_EXPANDED_BYTES:
                                raise too_large()
                            yield n + 1, [carry], False
                        return
                    found = piece.split(b"\n")
                    if carry:
                        found[0] = carry + found[0]
                    carry = found.pop()
                    read_bytes += len(piece)
                    if found:
                        if max(map(len, found)) >= limit:  # with its newline, longer than the most
                            raise too_long(n + 1 + next(i for i, f in enumerate(found) if len(f) >= limit))
                        total = read_bytes - len(carry)
                        if total > MAX_EXPANDED_BYTES:
                            raise too_large()
                        yield n + 1, found, True
                        n += len(found)
                    if len(carry) > MAX_LINE_BYTES:
                        raise too_long(n + 1)
            except (EOFError, OSError, zlib.error) as exc:
                raise SyncFileError(
                    f"{str(path)!r} is damaged or truncated ({type(exc).__name__}: {exc}); "
                    "nothing was applied"
                ) from exc
            finally:
                ahead.close()

        pieces = read()
        try:
            yield pieces
        finally:
            pieces.close()  # the read-ahead thread stops before the file closes
    finally:
        raw.close()


class _ReadAhead:
    """``read(_PIECE_BYTES)`` run on a thread of its own, a piece or two ahead of its reader.

    zlib and the CRC release the GIL: decompressing the next piece runs beside the checks of
    this one. What the read raises (a damaged or truncated file) is raised by :meth:`next`, in
    the reader's thread; :meth:`close` stops the thread (it is waited for) wherever it is.
    """

    def __init__(self, read: Callable[[int], bytes]) -> None:
        self._read = read
        self._queue: queue.Queue[bytes | BaseException] = queue.Queue(maxsize=2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="localmem-sync-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                piece: bytes | BaseException = self._read(_PIECE_BYTES)
            except BaseException as exc:  # raised by next(), in the reading thread
                piece = exc
            while not self._stop.is_set():
                try:
                    self._queue.put(piece, timeout=0.05)
                    break
                except queue.Full:
                    continue
            if not isinstance(piece, bytes) or not piece:
                return

    def next(self) -> bytes:
        """The next piece (b"" at the end of the stream)."""
        item = self._queue.get()
        if isinstance(item, BaseException):
            raise item
        return item

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@contextlib.contextmanager
def lines(path: Path) -> Iterator[Iterator[bytes]]:
    """The file's decompressed lines, each with its newline (see :func:`line_pieces`)."""
    with line_pieces(path) as pieces:
        def read() -> Iterator[bytes]:
            for _n, found, ended in pieces:
                if ended:
                    for part in found:
                        yield part + b"\n"
                else:
                    yield from found

        yield read()


def parse_line(line: bytes, n: int, path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SyncFileError(f"line {n} of {str(path)!r} is not JSON ({exc}); nothing was applied") from exc
    except RecursionError as exc:
        raise SyncFileError(f"line {n} of {str(path)!r} nests JSON too deeply: a row is a flat object; "
                            "nothing was applied") from exc
    if not isinstance(obj, dict):
        raise SyncFileError(f"line {n} of {str(path)!r} is {obj!r:.60}: expected a JSON object")
    return obj


# The types a row's values (and its content's) take as an export writes them. orjson gives what
# json.loads gives for these; where they differ, it gives a float (an integer beyond 64 bits), a
# deeper value (json.loads refuses past Python's recursion limit, orjson at 1,024) or an error
# (a lone surrogate, a byte-order mark, NaN): a row holding anything else is parsed again.
_SCALARS = frozenset({str, int, bool, type(None)})
_SHALLOW = _SCALARS | {dict}


def plain(obj: object) -> bool:
    """Whether orjson's value of a line is json.loads' value of it, as far as a row's types tell:
    a JSON object of strings, integers, booleans and nulls, and objects of those."""
    if type(obj) is not dict:
        return False
    types = set(map(type, obj.values()))
    return types <= _SCALARS or (types <= _SHALLOW and all(
        _SCALARS.issuperset(map(type, v.values())) for v in obj.values() if type(v) is dict))


def parse_row(line: bytes, n: int, path: Path) -> dict[str, Any]:
    """:func:`parse_line`, faster (orjson, ~3.5x) for a row as an export writes it (:func:`plain`).
    Any other line is parsed by :func:`parse_line` itself, so the result, or the error, is the one
    it gives."""
    return parse_rows([line], n, path)[0][0][1]


def parse_rows(found: list[bytes], first: int, path: Path) -> tuple[list[tuple[int, dict[str, Any]]], bool]:
    """Lines ``first``, ``first + 1``... each parsed by :func:`parse_row`, as (line number, row),
    and whether orjson's row was every line's (each line :func:`plain`)."""
    rows: list[tuple[int, dict[str, Any]]] = []
    every = True
    loads = orjson.loads
    for n, line in enumerate(found, first):
        try:
            obj = loads(line)
        except orjson.JSONDecodeError:
            obj = None
        if obj is None or not plain(obj):
            every = False
            obj = parse_line(line, n, path)
        rows.append((n, obj))
    return rows, every


#: The stores' schema versions whose exports this localmem imports: the ones whose synced tables
#: match this schema's. Schema 9 added only local copies (a revision's memory kind and key, filled
#: on import), so a schema-8 device's files carry exactly what a schema-9 import needs, and devices
#: of a fleet mid-upgrade keep syncing. Schema 10 changed no synced table (CHECKs written
#: another way, an index dropped).
IMPORTED_SCHEMAS = frozenset({8, 9, SCHEMA_VERSION})


def check_header(header: dict[str, Any], path: Path) -> None:
    if header.get("format") != FORMAT:
        raise SyncFileError(f"{str(path)!r} is not a localmem sync export (its first line has format "
                            f"{header.get('format')!r}, expected {FORMAT!r})")
    fv = header.get("format_version")
    if fv != FORMAT_VERSION:
        raise SyncVersionError(
            f"{str(path)!r} has sync format version {fv!r}; this localmem reads version {FORMAT_VERSION}"
            + (": upgrade localmem to import it" if isinstance(fv, int) and fv > FORMAT_VERSION else ""))
    sv = header.get("schema_version")
    if sv not in IMPORTED_SCHEMAS:
        raise SyncVersionError(
            f"{str(path)!r} was exported from a schema version {sv!r} store; this localmem imports files "
            f"of schema versions {sorted(IMPORTED_SCHEMAS)}: export it again with this localmem")
    origin, mark, counts = header.get("origin"), header.get("watermark"), header.get("counts")
    if not isinstance(origin, str) or not origin or not isinstance(mark, dict) \
            or not isinstance(counts, dict) or set(counts) != set(KINDS):
        raise SyncFileError(f"{str(path)!r} has a malformed header {header!r:.200}")
    for name, value in (("created_at", header.get("created_at")), ("watermark from", mark.get("from")),
                        ("watermark to", mark.get("to")), *((f"count of {k}", v) for k, v in counts.items())):
        check_int(value, f"the header's {name} in {str(path)!r}")
    if not 0 <= mark["from"] <= mark["to"] or any(v < 0 for v in counts.values()):
        raise SyncFileError(f"{str(path)!r} has a malformed header: watermark {mark!r}, counts {counts!r}")
    user = header.get("user_id")
    if user is not None and not isinstance(user, str):
        raise SyncFileError(f"{str(path)!r} has a malformed header: user_id {user!r:.60}")


def verify(path: Path) -> tuple[dict[str, Any], str, int]:
    """Read the whole file once: header, versions, row kinds, count and checksum. Nothing is written."""
    with lines(path) as found:
        h = hashlib.sha256()
        header: dict[str, Any] | None = None
        trailer: dict[str, Any] | None = None
        rows = 0
        for n, line in enumerate(found, 1):
            if trailer is not None:
                raise SyncFileError(
                    f"{str(path)!r} has data after its trailer (line {n}); nothing was applied")
            if header is None:
                header = parse_line(line, n, path)
                check_header(header, path)
                h.update(line)
                continue
            if line.startswith(b'{"end"'):
                trailer = parse_line(line, n, path)
                continue
            h.update(line)
            rows += 1
        if header is None:
            raise SyncFileError(f"{str(path)!r} holds no lines: expected a localmem sync export")
    got = h.hexdigest()
    check_end(path, header, trailer, got, rows)
    return header, got, rows


def check_end(path: Path, header: dict[str, Any], trailer: dict[str, Any] | None, got: str,
              rows: int) -> None:
    """The trailer's checks, once every line before it is read: it is there, its checksum is
    ``got`` (the SHA-256 of the lines before it), and it and the header count ``rows`` rows."""
    if trailer is None or not isinstance(trailer.get("end"), dict):
        raise SyncFileError(f"{str(path)!r} has no trailer: the file is truncated; nothing was applied")
    end = trailer["end"]
    if end.get("sha256") != got:
        raise SyncFileError(
            f"{str(path)!r} fails its checksum (trailer says {end.get('sha256')!r}, content hashes to "
            f"{got!r}): the file was altered or damaged; nothing was applied")
    if end.get("rows") != rows:
        raise SyncFileError(f"{str(path)!r} says it holds {end.get('rows')!r} rows but holds {rows}")
    counts = header.get("counts")
    if not isinstance(counts, dict) or sum(v for v in counts.values() if isinstance(v, int)) != rows:
        raise SyncFileError(f"{str(path)!r}: the header's row counts {counts!r} do not add up to {rows}")


def read_header(path: Path) -> dict[str, Any]:
    """The header of a file, checked (the rest is not read)."""
    with lines(path) as found:
        for line in found:
            header = parse_line(line, 1, path)
            check_header(header, path)
            return header
    raise SyncFileError(f"{str(path)!r} holds no lines: expected a localmem sync export")
