"""Writing: a sync export of this store's rows, a digest of them, and a plain CSV/JSON export.

An export streams its rows from one read transaction (the counts, the rows and the
watermark are one snapshot), writes the file beside its name and renames it into place
when whole; the file is created private (0600), like the database. A watermark is
the exporter's newest local revision number (``seq``);
``since=W`` sends revisions after W, and every tombstone (they are few: an incremental
export never loses an erase to a skipped file).
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import hashlib
import json
import os
import queue
import threading
from typing import TextIO

from ..core import sql as core_sql
from ..core.db import SCHEMA_VERSION
from ..core.inputs import writable_path
from ..core.ledger import Ledger
from ..errors import InvalidInputError, shown
from ..time.clock import from_micros, to_micros
from . import sql
from .files import (
    FORMAT,
    FORMAT_VERSION,
    ExportSummary,
    LineWriter,
    Sink,
)

__all__ = ["export", "digest", "write_plain", "PLAIN_COLUMNS"]


class _Background:
    """A sink that hashes, then writes (here: gzip-compresses and writes) on a thread of its own,
    in order.

    Compression is ~40% of an export's CPU, the SHA-256 of the lines ~10%, and zlib, crc32,
    hashlib (on blocks this size) and the file's write release the GIL: on a thread of their
    own they run beside the SQL that makes the next lines. The queue is bounded (a few
    256 KiB blocks), so memory stays bounded; the first error is raised by the next write or
    by :meth:`close`.
    """

    def __init__(self, out: Sink) -> None:
        self._out = out
        self._hash = hashlib.sha256()  # of every block written through write(), not write_last()
        self._queue: queue.Queue[tuple[bytes, bool] | None] = queue.Queue(maxsize=4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="localmem-export-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            data, hashed = item
            if self._error is None:
                try:
                    if hashed:
                        self._hash.update(data)
                    self._out.write(data)
                except BaseException as exc:  # raised in the exporting thread, by write or close
                    self._error = exc
            self._queue.task_done()
        self._queue.task_done()

    def write(self, data: bytes) -> int:
        if self._error is not None:
            raise self._error
        self._queue.put((data, True))
        return len(data)

    def sha256(self) -> str:
        """The SHA-256 of every block written so far (once the thread has taken them all)."""
        self._queue.join()
        if self._error is not None:
            raise self._error
        return self._hash.hexdigest()

    def write_last(self, data: bytes) -> None:
        """Write a block the hash does not cover (the trailer)."""
        self._queue.put((data, False))

    def close(self) -> None:
        """Wait for every write given so far; raise the first that failed."""
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            raise self._error


def export(ledger: Ledger, path: str | os.PathLike[str], *, since: int | None = None,
           user_id: str | None = None) -> ExportSummary:
    """Write the store's rows after local revision ``since`` to a sync file (see :meth:`Store.export`)."""
    if since is not None and (not isinstance(since, int) or isinstance(since, bool)
                              or not 0 <= since < 2**63):
        raise InvalidInputError(f"since={shown(since)} is not a watermark: expected a revision number >= 0")
    if user_id is not None and (not isinstance(user_id, str) or not user_id.strip()):
        raise InvalidInputError(f"user_id={user_id!r} is not a user id: expected a non-empty string")
    start = since or 0
    target = writable_path(path, "export path")
    conn = ledger.connection
    tmp = target.with_name(target.name + ".partial")
    # One read transaction: the counts, the rows and the watermark are one snapshot.
    conn.execute("BEGIN")
    try:
        top = int(conn.execute(core_sql.NEWEST_SEQ).get)
        queries = sql.export_queries(start, user_id)
        counts = {kind: int(conn.execute(f"SELECT count(*) FROM ({q})", sql.bind(params, top)).get)
                  for kind, (q, params) in queries.items()}
        header = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "schema_version": SCHEMA_VERSION,
            "origin": ledger.device_id, "created_at": to_micros(ledger.now()),
            "watermark": {"from": start, "to": top}, "user_id": user_id, "counts": counts,
        }
        # Private, as the database is: the file holds every word the export covers.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as gz:
                sink = _Background(gz)
                try:
                    w = LineWriter(sink, hashing=False)  # the sink hashes, on its thread
                    w.line(header)
                    for q, params in queries.values():
                        for (line,) in conn.execute(q, sql.bind(params, top)):
                            w.data(line)
                    w.flush()
                    checksum = sink.sha256()
                    trailer = {"end": {"sha256": checksum, "rows": sum(counts.values())}}
                    sink.write_last(json.dumps(trailer).encode() + b"\n")
                finally:
                    sink.close()  # every write done (or its error raised) before the gzip stream ends
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
        path=str(target), origin=ledger.device_id, since=start, watermark=top, user_id=user_id,
        memories=counts["memory"], revisions=counts["revision"], tombstones=counts["tombstone"],
        derivations=counts["derivation"], bytes=target.stat().st_size, sha256=checksum,
    )


def _hex(value: object) -> str:
    if isinstance(value, bytes):
        return value.hex()
    raise TypeError(f"cannot write {type(value).__name__}")


def digest(ledger: Ledger) -> str:
    """A SHA-256 over every row that travels, in a canonical order: equal on converged replicas.

    Local columns (revision numbers, arrival times) and local tables (usage, runs,
    receipts, embeddings, the import log) are left out.
    """
    conn = ledger.connection
    h = hashlib.sha256()
    conn.execute("BEGIN")
    try:
        for q in sql.DIGEST_PARTS:
            h.update(q.encode())
            for row in conn.execute(q):
                h.update(json.dumps(row, separators=(",", ":"), default=_hex).encode() + b"\n")
    finally:
        conn.execute("COMMIT")
    return h.hexdigest()


#: The columns of a plain export: each memory as known now, with both clocks (ISO 8601 UTC).
PLAIN_COLUMNS = (
    "memory_id", "user_id", "kind", "key", "version", "op", "text", "value",
    "valid_from", "valid_to", "precision", "valid_source", "observed_at", "recorded_at",
    "arrived_at", "tz", "expires_at", "retracted", "erased", "origin",
)

_TIMES = {"valid_from", "valid_to", "observed_at", "recorded_at", "arrived_at", "expires_at"}


def write_plain(ledger: Ledger, user_id: str, fmt: str, out: TextIO) -> int:
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
    for row in ledger.connection.execute(sql.PLAIN, (user_id,)):
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
