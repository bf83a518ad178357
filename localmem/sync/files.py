"""Offline sync: export files that carry a store's rows to another device, and their import.

Revisions are immutable and globally identified (ULIDs), so replicas converge by
union: an import adds the rows it does not have and skips the ones it has. What
travels: memories, revisions with their content, tombstones (erasures) and the
provenance of derived memories. What stays on its device: the usage log (a
device's own retrievals, which its replays must rank by exactly), runs, run
events, decision receipts and artifacts (a device's own audit trail; a receipt's
watermark is a local revision number that means nothing elsewhere), embeddings
(derived from the text: the receiving store embeds with its own model, see
``Store.embed_missing``) and the import log itself.

The file (format 1) is gzip'd JSON lines: a header, the rows, a trailer holding
the SHA-256 of every line before it. See the README's "Sync" section.

Order and visibility:

* A memory's current revision is the one with the greatest hybrid logical clock
  (``hlc``; ties: greater origin device id, then greater rev_id). Two devices that
  corrected one memory while apart both keep both corrections (a fork: two
  revisions with the same ``prev_rev``, both in ``history``); the rule picks one.
* An imported revision keeps its origin's recorded_at, device and clock. Its
  ``arrived_at`` is the later of that recorded_at and its arrival here (and never
  earlier than the row before it, so revision numbers stay in visibility order):
  a read known at K on this device sees it only if it had arrived by K.
* Tombstones always travel whole (they are few): an incremental export carries
  every tombstone, so a skipped file never loses an erase. A revision that arrives
  for an erased memory is stored without its content.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

import apsw

from ..core.db import SCHEMA_VERSION
from ..core.ids import new_id
from ..errors import InvalidInputError, SyncFileError, SyncParentError, SyncVersionError
from ..time.clock import from_micros, to_micros

if TYPE_CHECKING:
    from ..store import Store

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportSummary",
    "ImportSummary",
    "SyncSummary",
    "export",
    "import_",
    "digest",
    "sync_dir",
    "is_sync_file",
    "write_plain",
    "PLAIN_COLUMNS",
]

#: The header's ``format`` value: what says a file is a localmem sync export.
FORMAT = "localmem-sync"
#: The version of the file layout this code writes and reads.
FORMAT_VERSION = 1

#: Revision columns as they travel, in file order (seq and arrived_at are local, and stay).
_REV_FIELDS = (
    "rev_id", "memory_id", "user_id", "version", "op", "valid_from", "valid_to", "precision",
    "valid_source", "observed_at", "recorded_at", "tz", "expires_at", "retracted", "corrected",
    "prev_rev", "supersedes", "superseded_by", "origin", "hlc",
)
_CONTENT_FIELDS = ("text", "value", "attributes", "source", "reason")
_MEMORY_FIELDS = ("memory_id", "user_id", "kind", "key", "created_at")
_TOMB_FIELDS = ("tomb_id", "memory_id", "user_id", "erased_at", "erased_by", "reason", "origin")
_DERIVATION_FIELDS = ("memory_id", "position", "source_rev")
_KINDS = ("memory", "revision", "derivation", "tombstone")

_GZIP_MAGIC = b"\x1f\x8b"


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
class SyncSummary:
    """What ``Store.sync_dir`` did: the file it wrote (if any) and each import."""

    directory: str
    exported: ExportSummary | None
    imported: tuple[ImportSummary, ...] = field(default_factory=tuple)


# -- export ------------------------------------------------------------------------------------


class _Sink(Protocol):
    def write(self, data: bytes, /) -> int: ...


class _Writer:
    """Writes JSON lines into a gzip stream, hashing every line it writes."""

    def __init__(self, out: _Sink) -> None:
        self._out = out
        self.hash = hashlib.sha256()
        self._buf: list[bytes] = []
        self._size = 0

    def line(self, obj: dict[str, Any]) -> None:
        data = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        self.hash.update(data)
        self._buf.append(data)
        self._size += len(data)
        if self._size > 1 << 16:
            self.flush()

    def flush(self) -> None:
        self._out.write(b"".join(self._buf))
        self._buf.clear()
        self._size = 0


def _export_queries(since: int, user_id: str | None) -> dict[str, tuple[str, tuple[Any, ...]]]:
    """Per section, the SQL that streams its rows (in an order whose parents come first)."""
    user = "" if user_id is None else " AND {a}.user_id = ?"
    u: tuple[Any, ...] = () if user_id is None else (user_id,)
    tombed = "SELECT memory_id FROM erasures"
    if since == 0:
        mem_where = "WHERE 1" + user.format(a="m")
        mem_params = u
    else:
        mem_where = ("WHERE (m.memory_id IN (SELECT memory_id FROM revisions WHERE seq > ? AND seq <= ?)"
                     f" OR m.memory_id IN ({tombed}))" + user.format(a="m"))
        mem_params = (since, "TO", *u)
    rev_cols = ", ".join(f"r.{c}" for c in _REV_FIELDS)
    content_cols = ", ".join(f"c.{c}" for c in _CONTENT_FIELDS)
    return {
        "memory": (f"SELECT {', '.join('m.' + c for c in _MEMORY_FIELDS)} FROM memories AS m {mem_where}"
                   " ORDER BY m.rowid", mem_params),
        "revision": (f"SELECT {rev_cols}, c.rev_seq IS NOT NULL, {content_cols} FROM revisions AS r"
                     " LEFT JOIN content AS c ON c.rev_seq = r.seq WHERE r.seq > ? AND r.seq <= ?"
                     + user.format(a="r") + " ORDER BY r.seq", (since, "TO", *u)),
        "derivation": ("SELECT d.memory_id, d.position, d.source_rev FROM derivations AS d"
                       " JOIN revisions AS r ON r.memory_id = d.memory_id AND r.version = 1"
                       " WHERE r.seq > ? AND r.seq <= ?" + user.format(a="r")
                       + " ORDER BY r.seq, d.position", (since, "TO", *u)),
        "tombstone": (f"SELECT {', '.join(_TOMB_FIELDS)} FROM (SELECT {', '.join(_TOMB_FIELDS)} FROM erasures"
                      f" UNION ALL SELECT {', '.join(_TOMB_FIELDS)} FROM extra_tombstones) AS t"
                      " WHERE 1" + user.format(a="t") + " ORDER BY t.tomb_id", u),
    }


def _bind(params: tuple[Any, ...], top: int) -> tuple[Any, ...]:
    return tuple(top if p == "TO" else p for p in params)


def export(store: Store, path: str | os.PathLike[str], *, since: int | None = None,
           user_id: str | None = None) -> ExportSummary:
    """Write the store's rows after local revision ``since`` to a sync file (see :meth:`Store.export`)."""
    if since is not None and (not isinstance(since, int) or isinstance(since, bool) or since < 0):
        raise InvalidInputError(f"since={since!r} is not a watermark: expected a revision number >= 0")
    if user_id is not None and (not isinstance(user_id, str) or not user_id.strip()):
        raise InvalidInputError(f"user_id={user_id!r} is not a user id: expected a non-empty string")
    start = since or 0
    target = Path(path)
    conn = store.connection
    tmp = target.with_name(target.name + ".partial")
    # One read transaction: the counts, the rows and the watermark are one snapshot.
    conn.execute("BEGIN")
    try:
        top = int(conn.execute("SELECT coalesce(max(seq), 0) FROM revisions").get)
        queries = _export_queries(start, user_id)
        counts = {kind: int(conn.execute(f"SELECT count(*) FROM ({sql})", _bind(params, top)).get)
                  for kind, (sql, params) in queries.items()}
        header = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "schema_version": SCHEMA_VERSION,
            "origin": store.device_id, "created_at": to_micros(store._now()),
            "watermark": {"from": start, "to": top}, "user_id": user_id, "counts": counts,
        }
        with open(tmp, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                w = _Writer(gz)
                w.line(header)
                for kind, (sql, params) in queries.items():
                    for row in conn.execute(sql, _bind(params, top)):
                        w.line(_row(kind, row))
                w.flush()
                checksum = w.hash.hexdigest()
                trailer = {"end": {"sha256": checksum, "rows": sum(counts.values())}}
                gz.write(json.dumps(trailer).encode() + b"\n")
            raw.flush()
            os.fsync(raw.fileno())  # the file is whole on disk before it takes its name
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    finally:
        conn.execute("COMMIT")
    os.replace(tmp, target)
    return ExportSummary(
        path=str(target), origin=store.device_id, since=start, watermark=top, user_id=user_id,
        memories=counts["memory"], revisions=counts["revision"], tombstones=counts["tombstone"],
        derivations=counts["derivation"], bytes=target.stat().st_size, sha256=checksum,
    )


def _row(kind: str, row: tuple[Any, ...]) -> dict[str, Any]:
    if kind == "revision":
        out: dict[str, Any] = {"t": "revision", **dict(zip(_REV_FIELDS, row, strict=False))}
        n = len(_REV_FIELDS)
        out["content"] = dict(zip(_CONTENT_FIELDS, row[n + 1:], strict=True)) if row[n] else None
        return out
    names = {"memory": _MEMORY_FIELDS, "derivation": _DERIVATION_FIELDS, "tombstone": _TOMB_FIELDS}[kind]
    return {"t": kind, **dict(zip(names, row, strict=True))}


# -- reading a file ------------------------------------------------------------------------------


def is_sync_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a sync export (gzip); chat-message imports are plain text."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == _GZIP_MAGIC
    except OSError:
        return False


@contextlib.contextmanager
def _lines(path: Path) -> Iterator[Iterator[bytes]]:
    """The file's decompressed lines; every way a file can be unreadable becomes SyncFileError."""
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise SyncFileError(f"cannot read sync file {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        if raw.read(2) != _GZIP_MAGIC:
            raw.seek(0)
            empty = raw.read(1) == b""
            raise SyncFileError(
                f"{str(path)!r} is {'empty' if empty else 'not a gzip file'}: expected a localmem sync "
                "export (gzip'd JSON lines)")
        raw.seek(0)
        gz = gzip.GzipFile(fileobj=raw, mode="rb")

        def read() -> Iterator[bytes]:
            try:
                yield from gz
            except (EOFError, OSError, zlib.error) as exc:
                raise SyncFileError(
                    f"{str(path)!r} is damaged or truncated ({type(exc).__name__}: {exc}); "
                    "nothing was applied"
                ) from exc

        yield read()
    finally:
        raw.close()


def _parse(line: bytes, n: int, path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise SyncFileError(f"line {n} of {str(path)!r} is not JSON ({exc}); nothing was applied") from exc
    if not isinstance(obj, dict):
        raise SyncFileError(f"line {n} of {str(path)!r} is {obj!r:.60}: expected a JSON object")
    return obj


def _check_header(header: dict[str, Any], path: Path) -> None:
    if header.get("format") != FORMAT:
        raise SyncFileError(f"{str(path)!r} is not a localmem sync export (its first line has format "
                            f"{header.get('format')!r}, expected {FORMAT!r})")
    fv = header.get("format_version")
    if fv != FORMAT_VERSION:
        raise SyncVersionError(
            f"{str(path)!r} has sync format version {fv!r}; this localmem reads version {FORMAT_VERSION}"
            + (": upgrade localmem to import it" if isinstance(fv, int) and fv > FORMAT_VERSION else ""))
    sv = header.get("schema_version")
    if sv != SCHEMA_VERSION:
        raise SyncVersionError(
            f"{str(path)!r} was exported from a schema version {sv!r} store; this localmem imports files "
            f"of schema version {SCHEMA_VERSION}: open and export it with the same localmem version")
    origin, mark = header.get("origin"), header.get("watermark")
    if not isinstance(origin, str) or not origin or not isinstance(mark, dict) \
            or not all(isinstance(mark.get(k), int) for k in ("from", "to")):
        raise SyncFileError(f"{str(path)!r} has a malformed header {header!r:.200}")


def _verify(path: Path) -> tuple[dict[str, Any], str, int]:
    """Read the whole file once: header, versions, row kinds, count and checksum. Nothing is written."""
    with _lines(path) as lines:
        h = hashlib.sha256()
        header: dict[str, Any] | None = None
        trailer: dict[str, Any] | None = None
        rows = 0
        for n, line in enumerate(lines, 1):
            if trailer is not None:
                raise SyncFileError(
                    f"{str(path)!r} has data after its trailer (line {n}); nothing was applied")
            if header is None:
                header = _parse(line, n, path)
                _check_header(header, path)
                h.update(line)
                continue
            if line.startswith(b'{"end"'):
                trailer = _parse(line, n, path)
                continue
            h.update(line)
            rows += 1
        if header is None:
            raise SyncFileError(f"{str(path)!r} holds no lines: expected a localmem sync export")
    if trailer is None or not isinstance(trailer.get("end"), dict):
        raise SyncFileError(f"{str(path)!r} has no trailer: the file is truncated; nothing was applied")
    end = trailer["end"]
    got = h.hexdigest()
    if end.get("sha256") != got:
        raise SyncFileError(
            f"{str(path)!r} fails its checksum (trailer says {end.get('sha256')!r}, content hashes to "
            f"{got!r}): the file was altered or damaged; nothing was applied")
    if end.get("rows") != rows:
        raise SyncFileError(f"{str(path)!r} says it holds {end.get('rows')!r} rows but holds {rows}")
    counts = header.get("counts")
    if not isinstance(counts, dict) or sum(v for v in counts.values() if isinstance(v, int)) != rows:
        raise SyncFileError(f"{str(path)!r}: the header's row counts {counts!r} do not add up to {rows}")
    return header, got, rows


# -- import -------------------------------------------------------------------------------------


_INSERT_REVISION = (
    f"INSERT INTO revisions ({', '.join(_REV_FIELDS)}, arrived_at)"
    f" VALUES ({', '.join('?' * (len(_REV_FIELDS) + 1))})"
)
_INSERT_CONTENT = (
    "INSERT INTO content (rev_seq, memory_id, text, value, attributes, source, reason)"
    " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE NOT EXISTS (SELECT 1 FROM erasures WHERE memory_id = ?2)"
)


class _Apply:
    """Applies verified rows inside the import's transaction, counting what it did."""

    def __init__(self, store: Store, path: Path, arrival: int) -> None:
        self.store, self.conn, self.path = store, store.connection, path
        self.arrival = self.last = arrival
        self.added = dict.fromkeys(_KINDS, 0)
        self.skipped = 0
        self.without_content = 0
        self.first_seq: int | None = None
        self.last_seq: int | None = None

    def _fail(self, n: int, what: str, exc: Exception) -> SyncFileError:
        msg = str(exc)
        if "FOREIGN KEY" in msg:
            return SyncParentError(
                f"line {n} of {str(self.path)!r}: {what} refers to a memory or revision that is neither "
                "earlier in the file nor in this store (import the files it follows first); "
                "nothing was applied")
        return SyncFileError(f"line {n} of {str(self.path)!r}: {what} is not a valid row ({msg}); "
                             "nothing was applied")

    def row(self, n: int, obj: dict[str, Any]) -> None:
        kind = obj.get("t")
        try:
            if kind == "revision":
                self._revision(obj)
            elif kind == "memory":
                self._memory(obj)
            elif kind == "derivation":
                self._derivation(obj)
            elif kind == "tombstone":
                self._tombstone(obj)
            else:
                raise SyncFileError(
                    f"line {n} of {str(self.path)!r} has row type {kind!r}: expected one of {_KINDS}")
        except KeyError as exc:
            raise SyncFileError(f"line {n} of {str(self.path)!r}: a {kind} row lacks field {exc}") from exc
        except (apsw.ConstraintError, apsw.MismatchError, TypeError, ValueError) as exc:
            if isinstance(exc, SyncFileError):
                raise
            raise self._fail(n, f"{kind} {obj.get('rev_id') or obj.get('memory_id') or obj.get('tomb_id')!r}",
                             exc) from exc

    def _memory(self, o: dict[str, Any]) -> None:
        have = self.conn.execute("SELECT user_id, kind, key, created_at FROM memories WHERE memory_id = ?",
                                 (o["memory_id"],)).fetchone()
        vals = tuple(o[f] for f in _MEMORY_FIELDS)
        if have is None:
            self.conn.execute(
                "INSERT INTO memories (memory_id, user_id, kind, key, created_at) VALUES (?,?,?,?,?)", vals)
            self.added["memory"] += 1
        elif tuple(have) != vals[1:]:
            raise SyncFileError(f"memory {o['memory_id']!r} in {str(self.path)!r} differs from the one here "
                                f"({tuple(have)!r} vs {vals[1:]!r}): the file is not from a replica of "
                                "this store")
        else:
            self.skipped += 1

    def _revision(self, o: dict[str, Any]) -> None:
        c = self.conn
        if c.execute("SELECT 1 FROM revisions WHERE rev_id = ?", (o["rev_id"],)).get is not None:
            self.skipped += 1
            return
        rec = o["recorded_at"]
        if not isinstance(rec, int):
            raise SyncFileError(f"revision {o['rev_id']!r}: recorded_at {rec!r} is not microseconds")
        self.last = max(self.last, rec)
        c.execute(_INSERT_REVISION, (*(o[f] for f in _REV_FIELDS), self.last))
        seq = c.last_insert_rowid()
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.added["revision"] += 1
        content = o["content"]
        if content is None:
            self.without_content += 1
            return
        c.execute(_INSERT_CONTENT, (seq, o["memory_id"], *(content[f] for f in _CONTENT_FIELDS)))
        if c.changes() == 0:
            self.without_content += 1  # the memory was erased here: its words are not let back in

    def _derivation(self, o: dict[str, Any]) -> None:
        have = self.conn.execute("SELECT source_rev FROM derivations WHERE memory_id = ? AND position = ?",
                                 (o["memory_id"], o["position"])).get
        if have is not None:
            self.skipped += 1
            return
        self.conn.execute("INSERT INTO derivations (memory_id, position, source_rev) VALUES (?,?,?)",
                          tuple(o[f] for f in _DERIVATION_FIELDS))
        self.added["derivation"] += 1

    def _tombstone(self, o: dict[str, Any]) -> None:
        c = self.conn
        vals = tuple(o[f] for f in _TOMB_FIELDS)
        if c.execute("SELECT 1 FROM erasures WHERE tomb_id = ?1 UNION ALL"
                     " SELECT 1 FROM extra_tombstones WHERE tomb_id = ?1", (o["tomb_id"],)).get is not None:
            self.skipped += 1
            return
        cols = ", ".join(_TOMB_FIELDS)
        if c.execute("SELECT 1 FROM erasures WHERE memory_id = ?", (o["memory_id"],)).get is not None:
            c.execute(f"INSERT INTO extra_tombstones ({cols}) VALUES (?,?,?,?,?,?,?)", vals)
        else:
            c.execute(f"INSERT INTO erasures ({cols}) VALUES (?,?,?,?,?,?,?)", vals)
            self.store._erased_in_txn = True  # merge the index and checkpoint, as erase() does
        self.added["tombstone"] += 1


def import_(store: Store, path: str | os.PathLike[str]) -> ImportSummary:
    """Verify a sync file, then apply it in one transaction (see :meth:`Store.import_`)."""
    source = Path(path)
    header, checksum, _rows = _verify(source)
    mark = header["watermark"]
    with store._transaction():
        arrival = store._recorded_now()
        apply = _Apply(store, source, arrival)
        h = hashlib.sha256()
        with _lines(source) as lines:
            for n, line in enumerate(lines, 1):
                if n == 1:
                    h.update(line)
                    continue
                if line.startswith(b'{"end"'):
                    break
                h.update(line)
                apply.row(n, _parse(line, n, source))
        if h.hexdigest() != checksum:
            raise SyncFileError(f"{str(source)!r} changed while it was being imported; nothing was applied")
        import_id: str | None = None
        if any(apply.added.values()):
            import_id = new_id(arrival)
            store.connection.execute(
                "INSERT INTO imports (import_id, file_sha256, origin, created_at, mark_from, mark_to,"
                " arrived_at, first_seq, last_seq, memories, revisions, tombstones, derivations)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (import_id, checksum, header["origin"], int(header.get("created_at") or 0), mark["from"],
                 mark["to"], arrival, apply.first_seq, apply.last_seq, apply.added["memory"],
                 apply.added["revision"], apply.added["tombstone"], apply.added["derivation"]))
    return ImportSummary(
        path=str(source), origin=header["origin"], sha256=checksum, watermark=(mark["from"], mark["to"]),
        memories=apply.added["memory"], revisions=apply.added["revision"],
        tombstones=apply.added["tombstone"], derivations=apply.added["derivation"],
        skipped=apply.skipped, without_content=apply.without_content, import_id=import_id,
    )


# -- comparing replicas ---------------------------------------------------------------------------


def digest(store: Store) -> str:
    """A SHA-256 over every row that travels, in a canonical order: equal on converged replicas.

    Local columns (revision numbers, arrival times) and local tables (usage, runs,
    receipts, embeddings, the import log) are left out.
    """
    conn = store.connection
    h = hashlib.sha256()
    rev_cols = ", ".join(f"r.{c}" for c in _REV_FIELDS)
    content_cols = ", ".join(f"c.{c}" for c in _CONTENT_FIELDS)
    tomb = ", ".join(_TOMB_FIELDS)
    parts = (
        f"SELECT {', '.join(_MEMORY_FIELDS)} FROM memories ORDER BY memory_id",
        f"SELECT {rev_cols}, {content_cols} FROM revisions AS r LEFT JOIN content AS c ON c.rev_seq = r.seq"
        " ORDER BY r.rev_id",
        "SELECT memory_id, position, source_rev FROM derivations ORDER BY memory_id, position",
        f"SELECT {tomb} FROM erasures UNION ALL SELECT {tomb} FROM extra_tombstones ORDER BY 1",
    )
    conn.execute("BEGIN")
    try:
        for sql in parts:
            h.update(sql.encode())
            for row in conn.execute(sql):
                h.update(json.dumps(row, separators=(",", ":")).encode() + b"\n")
    finally:
        conn.execute("COMMIT")
    return h.hexdigest()


# -- a shared folder ------------------------------------------------------------------------------

_FILE_NAME = re.compile(r"^(?P<device>[0-9A-Za-z_-]+)\.(?P<n>\d{6})\.lmsync\.gz$")


def _files(directory: Path) -> list[tuple[str, int, Path]]:
    """(device, file number, path) of each export file in the folder, in order."""
    found = ((_FILE_NAME.match(p.name), p) for p in directory.iterdir())
    return sorted((m["device"], int(m["n"]), p) for m, p in found if m)


def _header(path: Path) -> dict[str, Any]:
    with _lines(path) as lines:
        for line in lines:
            header = _parse(line, 1, path)
            _check_header(header, path)
            return header
    raise SyncFileError(f"{str(path)!r} holds no lines: expected a localmem sync export")


def sync_dir(store: Store, directory: str | os.PathLike[str]) -> SyncSummary:
    """Exchange with every device that shares ``directory`` (see :meth:`Store.sync_dir`)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInputError(f"sync folder {str(folder)!r} is not a directory")
    conn = store.connection
    files = _files(folder)
    imported: list[ImportSummary] = []
    for device, n, path in files:
        if device == store.device_id:
            continue
        mark = int(conn.execute(
            "SELECT coalesce(max(mark), 0) FROM sync_peers WHERE peer = ?", (device,)).get)
        if n <= mark:
            continue
        imported.append(import_(store, path))
        with store._transaction():
            conn.execute("INSERT INTO sync_peers (peer, mark, recorded_at) VALUES (?, ?, ?)",
                         (device, n, store._recorded_now()))
    own = [(n, p) for device, n, p in files if device == store.device_id]
    since, tombs_then, number = 0, -1, 0
    if own:
        number, last = own[-1]
        header = _header(last)
        since, tombs_then = header["watermark"]["to"], header["counts"]["tombstone"]
    top = int(conn.execute("SELECT coalesce(max(seq), 0) FROM revisions").get)
    tombs = int(conn.execute(
        "SELECT (SELECT count(*) FROM erasures) + (SELECT count(*) FROM extra_tombstones)").get)
    exported = None
    if top != since or tombs != tombs_then:
        exported = export(store, folder / f"{store.device_id}.{number + 1:06d}.lmsync.gz", since=since)
    return SyncSummary(str(folder), exported, tuple(imported))


# -- a plain export for people and other tools ---------------------------------------------------

#: The columns of a plain export: each memory as known now, with both clocks (ISO 8601 UTC).
PLAIN_COLUMNS = (
    "memory_id", "user_id", "kind", "key", "version", "op", "text", "value",
    "valid_from", "valid_to", "precision", "valid_source", "observed_at", "recorded_at",
    "arrived_at", "tz", "expires_at", "retracted", "erased", "origin",
)

_PLAIN = """SELECT m.memory_id, m.user_id, m.kind, m.key, r.version, r.op, c.text, c.value,
    r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.recorded_at,
    r.arrived_at, r.tz, r.expires_at, r.retracted, e.memory_id IS NOT NULL, r.origin
FROM memories AS m
JOIN revisions AS r ON r.seq = (
    SELECT r2.seq FROM revisions AS r2 WHERE r2.memory_id = m.memory_id
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC LIMIT 1)
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = m.memory_id
WHERE m.user_id = ?
ORDER BY r.valid_from, m.memory_id"""

_TIMES = {"valid_from", "valid_to", "observed_at", "recorded_at", "arrived_at", "expires_at"}


def write_plain(store: Store, user_id: str, fmt: str, out: TextIO) -> int:
    """Write one user's memories, each as known now, as CSV or a JSON array; returns how many.

    Every memory appears once (retracted, expired and erased ones too, flagged; an
    erased one without its text), with valid time, observed_at, recorded_at (the
    origin device's) and arrived_at (this device's) as ISO 8601 UTC.
    """
    if fmt not in ("csv", "json"):
        raise InvalidInputError(f"format {fmt!r} is not a plain export format: expected 'csv' or 'json'")
    n = 0
    writer = csv.writer(out) if fmt == "csv" else None
    if writer is not None:
        writer.writerow(PLAIN_COLUMNS)
    else:
        out.write("[")
    for row in store.connection.execute(_PLAIN, (user_id,)):
        rec = {k: (from_micros(v).isoformat() if k in _TIMES and v is not None else v)
               for k, v in zip(PLAIN_COLUMNS, row, strict=True)}
        rec["retracted"], rec["erased"] = bool(rec["retracted"]), bool(rec["erased"])
        if writer is not None:
            writer.writerow(rec.values())
        else:
            rec["value"] = None if rec["value"] is None else json.loads(rec["value"])
            out.write(("," if n else "") + "\n  " + json.dumps(rec, ensure_ascii=False))
        n += 1
    if writer is None:
        out.write("\n]\n" if n else "]\n")
    return n
