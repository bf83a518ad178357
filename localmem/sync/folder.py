"""A folder every device can see (a USB stick, a synced drive): import the others' files, write ours.

Each device writes ``<device>.<n>.lmsync.gz``, numbered from 1 (at least six digits);
its files form a chain from its first export, so importing one device's files in
order never misses a parent. The folder is shared, so nothing in it is trusted for
its name:

* Only names that match exactly (``fullmatch``: a trailing newline does not) and only
  regular files count; a symlink, a FIFO or a directory under such a name is skipped
  and reported, never opened.
* A file that is refused (unreadable, damaged, forged, breaking an invariant, a clock
  too far ahead) is skipped and reported in :attr:`SyncSummary.skipped`, and the sync
  goes on: the other files are imported and this device's export is still written.
  A skipped file is tried again at the next sync.
* A file named as device C's must say C is its origin.
* A peer's file counts as imported when its number *and* its bytes' SHA-256 match one
  imported before (``sync_peers``), never for its number alone: a forged
  ``<peer>.999999`` imported once does not hide the peer's genuine files later.
* This device continues its own chain from the newest of its own files whose content
  checks out: it verifies, comes from this device, covers no revision beyond this
  store's newest, and holds exactly this store's revisions in its watermark range. A
  forged file under this device's name is skipped and reported, never trusted.
* After an erasure this device applied (its own, or a peer's tombstone) its next file
  is a full export, and its older files, which still hold the erased words, are removed
  (:attr:`SyncSummary.pruned`): the full file supersedes them for every peer. The
  peers' files are theirs to prune, which each does once it has applied the erasure.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from ..core import sql as core_sql
from ..core.ledger import Ledger
from ..errors import InvalidInputError, SyncFileError
from . import sql
from .apply import import_
from .export import export
from .files import ImportSummary, SkippedFile, SyncSummary, lines, open_regular, parse_line, verify

__all__ = ["sync_dir"]

_FILE_NAME = re.compile(r"(?P<device>[0-9A-Za-z_-]+)\.(?P<n>[0-9]{6,})\.lmsync\.gz")


def _files(directory: Path, skipped: list[SkippedFile]) -> list[tuple[str, int, Path]]:
    """(device, file number, path) of each export file in the folder, in order; names that match
    but are not regular files go to ``skipped``."""
    found: list[tuple[str, int, Path]] = []
    with os.scandir(directory) as entries:
        for entry in entries:
            m = _FILE_NAME.fullmatch(entry.name)
            if m is None:
                continue
            path = Path(entry.path)
            if entry.is_symlink():
                skipped.append(SkippedFile(str(path), "a symbolic link: only regular files are read"))
            elif not entry.is_file(follow_symlinks=False):
                skipped.append(SkippedFile(str(path), "not a regular file"))
            else:
                found.append((m["device"], int(m["n"]), path))
    return sorted(found)


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open_regular(path) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _own_header(ledger: Ledger, path: Path, top: int) -> dict[str, Any]:
    """The header of one of this device's files, if its content checks out (else SyncFileError)."""
    header, _checksum, _rows = verify(path)
    mark = header["watermark"]
    if header["origin"] != ledger.device_id:
        raise SyncFileError(f"named as this device's export but it comes from device {header['origin']!r}")
    if header.get("user_id") is not None:
        raise SyncFileError("named as this device's folder export but it holds one user's rows only")
    if mark["to"] > top:
        raise SyncFileError(f"its watermark {mark['to']} is beyond this store's newest revision {top}")
    # Exports write revisions in local order: the file's must be exactly this store's, in turn.
    cursor = ledger.connection.cursor()
    try:
        ours = (r[0] for r in cursor.execute(sql.REV_IDS_IN_RANGE, (mark["from"], mark["to"])))
        with lines(path) as found:
            for n, line in enumerate(found, 1):
                if n == 1 or line.startswith(b'{"end"'):
                    continue
                row = parse_line(line, n, path)
                if row.get("t") == "revision" and row.get("rev_id") != next(ours, None):
                    raise SyncFileError(f"line {n} holds revision {row.get('rev_id')!r:.40}, which is not "
                                        "the one this store exported there")
        if next(ours, None) is not None:
            raise SyncFileError("it lacks revisions this store has in its watermark range")
    finally:
        cursor.close()
    return header


def sync_dir(ledger: Ledger, directory: str | os.PathLike[str]) -> SyncSummary:
    """Exchange with every device that shares ``directory`` (see :meth:`Store.sync_dir`)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise InvalidInputError(f"sync folder {str(folder)!r} is not a directory")
    conn = ledger.connection
    skipped: list[SkippedFile] = []
    try:
        files = _files(folder, skipped)
    except OSError as exc:
        raise InvalidInputError(f"sync folder {str(folder)!r} cannot be read: {exc.strerror or exc}") from exc
    imported: list[ImportSummary] = []
    for device, n, path in files:
        if device == ledger.device_id:
            continue
        try:
            digest = _file_sha256(path)
            if conn.execute(sql.PEER_FILE_SEEN, (device, n, digest)).get is not None:
                continue
            summary = import_(ledger, path, origin=device)
        except SyncFileError as exc:
            skipped.append(SkippedFile(str(path), str(exc)))
            continue
        imported.append(summary)
        with ledger.write() as now:
            conn.execute(sql.INSERT_PEER, (device, n, now, digest))
    own = [(n, p) for device, n, p in files if device == ledger.device_id]
    top = int(conn.execute(core_sql.NEWEST_SEQ).get)
    number = own[-1][0] if own else 0
    since, tombs_then = 0, -1
    for _n, path in reversed(own):
        try:
            header = _own_header(ledger, path, top)
        except SyncFileError as exc:
            skipped.append(SkippedFile(str(path), f"not trusted as this device's export: {exc}"))
            continue
        since, tombs_then = header["watermark"]["to"], header["counts"]["tombstone"]
        break
    tombs = int(conn.execute(sql.TOMBSTONE_COUNT).get)
    exported = None
    pruned: list[str] = []
    if top != since or tombs != tombs_then:
        # A new erasure here: write everything afresh, so the older files (which may hold the
        # erased words) can go.
        full = tombs_then >= 0 and tombs > tombs_then
        target = folder / f"{ledger.device_id}.{number + 1:06d}.lmsync.gz"
        exported = export(ledger, target, since=0 if full else since)
        if full:
            for _n, path in own:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    pruned.append(str(path))
    return SyncSummary(str(folder), exported, tuple(imported), tuple(skipped), tuple(pruned))
