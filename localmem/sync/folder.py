"""A folder every device can see (a USB stick, a synced drive): import the others' files, write ours.

Each device writes ``<device>.<n>.lmsync.gz``, numbered from 1; its files form a chain
from its first export, so importing one device's files in order never misses a parent.
A watermark per peer (``sync_peers``) says which of its files were imported here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..core import sql as core_sql
from ..core.ledger import Ledger
from ..errors import InvalidInputError
from . import sql
from .apply import import_
from .export import export
from .files import ImportSummary, SyncSummary, read_header

__all__ = ["sync_dir"]

_FILE_NAME = re.compile(r"^(?P<device>[0-9A-Za-z_-]+)\.(?P<n>\d{6})\.lmsync\.gz$")


def _files(directory: Path) -> list[tuple[str, int, Path]]:
    """(device, file number, path) of each export file in the folder, in order."""
    found = ((_FILE_NAME.match(p.name), p) for p in directory.iterdir())
    return sorted((m["device"], int(m["n"]), p) for m, p in found if m)


def sync_dir(ledger: Ledger, directory: str | os.PathLike[str]) -> SyncSummary:
    """Exchange with every device that shares ``directory`` (see :meth:`Store.sync_dir`)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInputError(f"sync folder {str(folder)!r} is not a directory")
    conn = ledger.connection
    files = _files(folder)
    imported: list[ImportSummary] = []
    for device, n, path in files:
        if device == ledger.device_id:
            continue
        mark = int(conn.execute(sql.PEER_MARK, (device,)).get)
        if n <= mark:
            continue
        imported.append(import_(ledger, path))
        with ledger.write() as now:
            conn.execute(sql.INSERT_PEER, (device, n, now))
    own = [(n, p) for device, n, p in files if device == ledger.device_id]
    since, tombs_then, number = 0, -1, 0
    if own:
        number, last = own[-1]
        header = read_header(last)
        since, tombs_then = header["watermark"]["to"], header["counts"]["tombstone"]
    top = int(conn.execute(core_sql.NEWEST_SEQ).get)
    tombs = int(conn.execute(sql.TOMBSTONE_COUNT).get)
    exported = None
    if top != since or tombs != tombs_then:
        exported = export(ledger, folder / f"{ledger.device_id}.{number + 1:06d}.lmsync.gz", since=since)
    return SyncSummary(str(folder), exported, tuple(imported))
