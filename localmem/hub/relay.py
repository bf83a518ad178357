"""The relay: a device-readable export of what the hub holds, so devices sync through the hub.

``localmem hub export --since W [--user U] --out FILE`` writes a sync file (format 1, the
device's, :mod:`localmem.sync.files`) whose origin is the hub: its watermark is the hub's
own arrival order (``revisions.seq``), so ``--since`` the previous export's watermark sends
only what reached the hub since. What travels is what a device's export carries: the
memories of the revisions sent (and of every tombstone), the revisions with their content
(none for an erased memory: its words are gone from the hub's tables too), the provenance
of the memories first written in that range, and every tombstone (they are few; an
incremental export never loses an erase). Each revision keeps its origin device, recorded
time, clock and hashes, so the receiving device verifies its chain as if it came from the
origin; ``import_`` accepts the file like any peer's.

The export is one snapshot: it first takes a SHARE lock on ``hub_files``, which waits for
the ingests in flight to commit (each takes its row lock there before it numbers a
revision), so no revision numbered below the watermark commits after the export read it.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
from typing import Any

import psycopg

from ..core.db import SCHEMA_VERSION
from ..core.inputs import writable_path
from ..errors import InvalidInputError, shown
from ..sync.files import (
    CONTENT_FIELDS,
    DERIVATION_FIELDS,
    FORMAT,
    FORMAT_VERSION,
    MEMORY_FIELDS,
    REVISION_FIELDS,
    TOMBSTONE_FIELDS,
    ExportSummary,
    LineWriter,
)
from ..time.clock import Clock, to_micros
from . import db

__all__ = ["export"]

_USER = " AND {a}.user_id = %(user)s"
_TOMB = ", ".join(TOMBSTONE_FIELDS)


def _queries(user_id: str | None) -> dict[str, str]:
    """Per section, the rows in an order whose parents come first (the device's export_queries)."""
    u = "" if user_id is None else _USER
    rev = ", ".join(f"r.{c}" for c in REVISION_FIELDS)
    content = ", ".join(f"c.{c}" for c in CONTENT_FIELDS)
    return {
        "memory": (f"SELECT {', '.join('m.' + c for c in MEMORY_FIELDS)} FROM memories AS m"
                   " WHERE (EXISTS (SELECT 1 FROM revisions AS r WHERE r.user_id = m.user_id"
                   " AND r.memory_id = m.memory_id AND r.seq > %(since)s AND r.seq <= %(top)s)"
                   " OR EXISTS (SELECT 1 FROM erasures AS e WHERE e.user_id = m.user_id"
                   " AND e.memory_id = m.memory_id))" + u.format(a="m")
                   + " ORDER BY m.created_at, m.memory_id"),
        "revision": (f"SELECT {rev}, c.rev_id IS NOT NULL, {content} FROM revisions AS r"
                     " LEFT JOIN content AS c ON c.user_id = r.user_id AND c.rev_id = r.rev_id"
                     " WHERE r.seq > %(since)s AND r.seq <= %(top)s" + u.format(a="r") + " ORDER BY r.seq"),
        "derivation": ("SELECT d.memory_id, d.position, d.source_rev FROM derivations AS d"
                       " JOIN revisions AS r ON r.user_id = d.user_id AND r.memory_id = d.memory_id"
                       " AND r.version = 1 WHERE r.seq > %(since)s AND r.seq <= %(top)s"
                       + u.format(a="r") + " ORDER BY r.seq, d.position"),
        "tombstone": (f"SELECT {_TOMB} FROM (SELECT {_TOMB} FROM erasures UNION ALL"
                      f" SELECT {_TOMB} FROM extra_tombstones) AS t WHERE true" + u.format(a="t")
                      + " ORDER BY t.tomb_id"),
    }


def _row(kind: str, row: tuple[Any, ...]) -> dict[str, Any]:
    """One row as it travels (the device's export form: hashes as hex, content inline)."""
    if kind != "revision":
        names = {"memory": MEMORY_FIELDS, "derivation": DERIVATION_FIELDS,
                 "tombstone": TOMBSTONE_FIELDS}[kind]
        return {"t": kind, **dict(zip(names, row, strict=True))}
    n = len(REVISION_FIELDS)
    out: dict[str, Any] = {"t": "revision", **dict(zip(REVISION_FIELDS, row[:n], strict=True))}
    for f in ("content_hash", "rev_hash"):
        if out[f] is not None:
            out[f] = bytes(out[f]).hex()
    out["content"] = dict(zip(CONTENT_FIELDS, row[n + 1:], strict=True)) if row[n] else None
    if out["content"] is not None and out["rev_hash"] is not None:
        out["content_hash"] = None  # the importer computes it from the content, as from a device's file
    return out


def export(conn: psycopg.Connection[tuple[Any, ...]], path: str | os.PathLike[str], *, clock: Clock,
           since: int = 0, user_id: str | None = None) -> ExportSummary:
    """Write what the hub holds after hub revision ``since`` (one user's, or everyone's) to a sync file.

    Raises:
        InvalidInputError: a bad ``since`` or ``user_id``, or an unwritable path.
        HubError: the hub cannot be read.
    """
    if isinstance(since, bool) or not isinstance(since, int) or not 0 <= since < 2**63:
        raise InvalidInputError(
            f"since={shown(since)} is not a watermark: expected a hub revision number >= 0")
    if user_id is not None and (not isinstance(user_id, str) or not user_id.strip()):
        raise InvalidInputError(f"user_id={user_id!r} is not a user id: expected a non-empty string")
    target = writable_path(path, "export path")
    tmp = target.with_name(target.name + ".partial")
    hub = db.hub_id(conn)
    queries = _queries(user_id)
    with db.errors("cannot export from the hub"), conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        conn.execute("LOCK TABLE hub_files IN SHARE MODE")
        found = conn.execute("SELECT coalesce(max(seq), 0) FROM revisions").fetchone()
        top = int(found[0]) if found is not None else 0
        params = {"since": since, "top": max(top, since), "user": user_id}
        counts = {}
        for kind, q in queries.items():
            got = conn.execute(f"SELECT count(*) FROM ({q}) AS x".encode(), params).fetchone()
            counts[kind] = int(got[0]) if got is not None else 0
        header = {"format": FORMAT, "format_version": FORMAT_VERSION, "schema_version": SCHEMA_VERSION,
                  "origin": hub, "created_at": to_micros(clock()),
                  "watermark": {"from": since, "to": max(top, since)}, "user_id": user_id, "counts": counts}
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            with os.fdopen(fd, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                    w = LineWriter(gz)
                    w.line(header)
                    for kind, q in queries.items():
                        with conn.cursor(name=f"relay_{kind}") as cur:
                            cur.itersize = 5000
                            for row in cur.execute(q.encode(), params):
                                w.line(_row(kind, row))
                    w.flush()
                    checksum = w.hash.hexdigest()
                    gz.write(json.dumps({"end": {"sha256": checksum, "rows": sum(counts.values())}}).encode()
                             + b"\n")
                raw.flush()
                os.fsync(raw.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise
    os.replace(tmp, target)
    return ExportSummary(
        path=str(target), origin=hub, since=since, watermark=max(top, since), user_id=user_id,
        memories=counts["memory"], revisions=counts["revision"], tombstones=counts["tombstone"],
        derivations=counts["derivation"], bytes=target.stat().st_size, sha256=checksum)
