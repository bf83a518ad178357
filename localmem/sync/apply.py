"""Applying a sync file: verified first, then all its rows in one transaction, or none.

Import reads the file once to check it (:func:`~localmem.sync.files.verify`) before it
touches the database, then applies it in one transaction, hashing it again so a file
changed in between is refused. Rows already here are skipped: a repeated import writes
nothing. An imported revision keeps its origin's recorded_at, device and clock; its
``arrived_at`` is the later of that recorded_at and its arrival here, and never earlier
than the row before it, so local revision numbers stay in visibility order. A revision
that arrives for an erased memory is stored without its content; a tombstone that
arrives destroys the memory's content as ``erase`` does.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import apsw

from ..core import sql as core_sql
from ..core.ids import new_id
from ..core.ledger import Ledger
from ..errors import SyncFileError, SyncParentError
from . import sql
from .files import (
    CONTENT_FIELDS,
    DERIVATION_FIELDS,
    KINDS,
    MEMORY_FIELDS,
    REVISION_FIELDS,
    TOMBSTONE_FIELDS,
    ImportSummary,
    lines,
    parse_line,
    verify,
)

__all__ = ["import_"]


class _Apply:
    """Applies verified rows inside the import's transaction, counting what it did."""

    def __init__(self, ledger: Ledger, path: Path, arrival: int) -> None:
        self.ledger, self.conn, self.path = ledger, ledger.connection, path
        self.arrival = self.last = arrival
        self.added = dict.fromkeys(KINDS, 0)
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
                    f"line {n} of {str(self.path)!r} has row type {kind!r}: expected one of {KINDS}")
        except KeyError as exc:
            raise SyncFileError(f"line {n} of {str(self.path)!r}: a {kind} row lacks field {exc}") from exc
        except (apsw.ConstraintError, apsw.MismatchError, TypeError, ValueError) as exc:
            if isinstance(exc, SyncFileError):
                raise
            raise self._fail(n, f"{kind} {obj.get('rev_id') or obj.get('memory_id') or obj.get('tomb_id')!r}",
                             exc) from exc

    def _memory(self, o: dict[str, Any]) -> None:
        have = self.conn.execute(sql.MEMORY_ROW, (o["memory_id"],)).fetchone()
        vals = tuple(o[f] for f in MEMORY_FIELDS)
        if have is None:
            self.conn.execute(core_sql.INSERT_MEMORY, vals)
            self.added["memory"] += 1
        elif tuple(have) != vals[1:]:
            raise SyncFileError(f"memory {o['memory_id']!r} in {str(self.path)!r} differs from the one here "
                                f"({tuple(have)!r} vs {vals[1:]!r}): the file is not from a replica of "
                                "this store")
        else:
            self.skipped += 1

    def _revision(self, o: dict[str, Any]) -> None:
        c = self.conn
        if c.execute(sql.HAS_REVISION, (o["rev_id"],)).get is not None:
            self.skipped += 1
            return
        rec = o["recorded_at"]
        if not isinstance(rec, int):
            raise SyncFileError(f"revision {o['rev_id']!r}: recorded_at {rec!r} is not microseconds")
        self.last = max(self.last, rec)
        c.execute(core_sql.INSERT_REVISION, (*(o[f] for f in REVISION_FIELDS), self.last))
        seq = c.last_insert_rowid()
        if self.first_seq is None:
            self.first_seq = seq
        self.last_seq = seq
        self.added["revision"] += 1
        content = o["content"]
        if content is None:
            self.without_content += 1
            return
        c.execute(sql.INSERT_CONTENT_UNLESS_ERASED,
                  (seq, o["memory_id"], *(content[f] for f in CONTENT_FIELDS)))
        if c.changes() == 0:
            self.without_content += 1  # the memory was erased here: its words are not let back in

    def _derivation(self, o: dict[str, Any]) -> None:
        have = self.conn.execute(sql.DERIVATION_SOURCE, (o["memory_id"], o["position"])).get
        if have is not None:
            self.skipped += 1
            return
        self.conn.execute(sql.INSERT_DERIVATION, tuple(o[f] for f in DERIVATION_FIELDS))
        self.added["derivation"] += 1

    def _tombstone(self, o: dict[str, Any]) -> None:
        c = self.conn
        vals = tuple(o[f] for f in TOMBSTONE_FIELDS)
        if c.execute(sql.HAS_TOMBSTONE, (o["tomb_id"],)).get is not None:
            self.skipped += 1
            return
        if c.execute(sql.IS_ERASED, (o["memory_id"],)).get is not None:
            c.execute(sql.INSERT_EXTRA_TOMBSTONE, vals)
        else:
            c.execute(core_sql.INSERT_ERASURE, vals)
            self.ledger.note_erasure()  # merge the index and checkpoint, as erase() does
        self.added["tombstone"] += 1


def import_(ledger: Ledger, path: str | os.PathLike[str]) -> ImportSummary:
    """Verify a sync file, then apply it in one transaction (see :meth:`Store.import_`)."""
    source = Path(path)
    header, checksum, _rows = verify(source)
    mark = header["watermark"]
    with ledger.transaction():
        arrival = ledger.recorded_now()
        apply = _Apply(ledger, source, arrival)
        h = hashlib.sha256()
        with lines(source) as found:
            for n, line in enumerate(found, 1):
                if n == 1:
                    h.update(line)
                    continue
                if line.startswith(b'{"end"'):
                    break
                h.update(line)
                apply.row(n, parse_line(line, n, source))
        if h.hexdigest() != checksum:
            raise SyncFileError(f"{str(source)!r} changed while it was being imported; nothing was applied")
        import_id: str | None = None
        if any(apply.added.values()):
            import_id = new_id(arrival)
            ledger.connection.execute(sql.INSERT_IMPORT, (
                import_id, checksum, header["origin"], int(header.get("created_at") or 0), mark["from"],
                 mark["to"], arrival, apply.first_seq, apply.last_seq, apply.added["memory"],
                 apply.added["revision"], apply.added["tombstone"], apply.added["derivation"]))
    return ImportSummary(
        path=str(source), origin=header["origin"], sha256=checksum, watermark=(mark["from"], mark["to"]),
        memories=apply.added["memory"], revisions=apply.added["revision"],
        tombstones=apply.added["tombstone"], derivations=apply.added["derivation"],
        skipped=apply.skipped, without_content=apply.without_content, import_id=import_id,
    )
