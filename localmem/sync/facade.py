"""The sync half of :class:`~localmem.store.Store`: exports, imports, a shared folder, digests.

Each method hands over to the module that owns the rule: :mod:`~localmem.sync.export`,
:mod:`~localmem.sync.apply`, :mod:`~localmem.sync.folder`. Their docstrings state the rules.
"""

from __future__ import annotations

import os
from typing import TextIO

from ..core.inputs import check_text
from ..core.ledger import Ledger
from ..errors import LocalmemError, StorageError
from . import apply as sync_apply
from . import export as sync_export
from . import folder as sync_folder
from .files import ExportSummary, ImportSummary, SyncSummary

__all__ = ["Sync"]


class Sync:
    """Offline sync: the methods :class:`~localmem.store.Store` gets from this mixin.

    Like every part of the store, it works through the store's write core (``_ledger``).
    """

    _ledger: Ledger

    def export(self, path: str | os.PathLike[str], *, since: int | None = None,
               user_id: str | None = None) -> ExportSummary:
        """Write this store's rows to a sync file another device can import.

        The file is gzip'd JSON lines: a header (format and schema versions, this
        device's id, created_at, the watermark range, row counts), the rows (memories,
        revisions with their content, derivations, every tombstone), and a trailer with
        the SHA-256 of all lines before it. It is written beside ``path`` and renamed
        into place when whole. Rows are streamed, never held in memory together.

        Args:
            path: the file to write (replaced if it exists).
            since: a watermark from an earlier export (``ExportSummary.watermark``):
                only revisions recorded here after it travel (tombstones always do).
            user_id: only this user's rows.

        Raises:
            InvalidInputError: a bad ``since`` or ``user_id``; ``path`` is a
                directory or its folder does not exist.
            StorageError: the system refused to write the file (permissions, a full disk).
        """
        try:
            return sync_export.export(self._ledger, path, since=since, user_id=user_id)
        except LocalmemError:
            raise
        except OSError as exc:
            raise StorageError(f"cannot write the export {os.fspath(path)!r}: {exc.strerror or exc}") from exc

    def import_(self, path: str | os.PathLike[str]) -> ImportSummary:
        """Apply a sync file from another device: verified first, then all or nothing.

        The header, versions and checksum are checked by reading the whole file before
        anything is written; the rows are then applied in one transaction. Rows already
        here are skipped, so importing a file twice changes nothing the second time
        (``ImportSummary.changed`` is False). Each revision keeps its origin's recorded_at,
        device and clock; it becomes visible to reads known at K only if it had arrived
        here by K. A revision of a memory erased here is stored without its content.

        The file is evidence, not a command: each row is checked against doctor's
        invariants and its hashes before it is written, and no time recorded more than
        a day (``localmem.sync.apply.MAX_SKEW``) after this store's clock is let in. Any
        refused row refuses the whole file (see the README's "Sync" section).

        Raises:
            SyncFileError: the file is empty, not gzip, not a regular file, too large,
                truncated, altered (checksum) or malformed; SyncVersionError: another
                format or schema version; SyncParentError: a row refers to something
                neither here nor earlier in it; SyncRuleError: a row would break an
                invariant (naming the line and the rule); SyncClockError: a row's time
                is too far ahead of this store's clock.
        """
        return sync_apply.import_(self._ledger, path)

    def sync_dir(self, directory: str | os.PathLike[str]) -> SyncSummary:
        """Sync through a folder every device can see (a USB stick, a synced drive).

        Imports, in order, every other device's export files there that this store has
        not imported yet (by number and bytes, kept in ``sync_peers``), then writes this
        device's own incremental export (``<device>.<n>.lmsync.gz``) if anything is new.
        A file that is refused, or is not a regular file, is skipped and reported
        (``SyncSummary.skipped``) and the sync goes on. After an erasure the export is a
        full one and this device's older files are removed (``SyncSummary.pruned``).
        See :mod:`localmem.sync.folder` for what is trusted.
        """
        return sync_folder.sync_dir(self._ledger, directory)

    def digest(self) -> str:
        """A SHA-256 of every row that syncs, in canonical order: equal on converged replicas."""
        return sync_export.digest(self._ledger)

    def write_plain(self, user_id: str, fmt: str, out: TextIO) -> int:
        """Write one user's memories, each as known now, as CSV or a JSON array; returns how many.

        Every memory appears once (retracted, expired and erased ones too, flagged; an
        erased one without its text), with valid time, observed_at, recorded_at (the
        origin device's) and arrived_at (this device's) as ISO 8601 UTC.

        Raises:
            InvalidInputError: ``fmt`` is neither ``"csv"`` nor ``"json"``.
        """
        check_text(user_id, "user_id")
        return sync_export.write_plain(self._ledger, user_id, fmt, out)
