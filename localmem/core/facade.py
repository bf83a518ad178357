"""The writing half of :class:`~localmem.store.Store`: add, add_many, add_messages, correct,
supersede, retract, expire, erase, embed_missing.

Each method hands over to the module that owns the rule (:mod:`~localmem.core.writes`,
:mod:`~localmem.core.bulk`), which appends through the write core (:mod:`~localmem.core.ledger`);
the docstrings here say what each call means to its caller.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError
from ..time.clock import TimeInput
from . import bulk, writes
from .ledger import Ledger
from .phrases import Readers
from .revision import Added, Erasure, Revision
from .writes import UNSET, Unset

__all__ = ["Writes"]


def _pick(name: str, old: Any, new: Any) -> Any:
    """An argument given the deprecated way or the new one, refused if given both ways."""
    if old is not None and new is not None:
        raise InvalidInputError(f"{name} given twice (by position and by keyword): give it once, by keyword")
    return new if old is None else old



class Writes:
    """The writes: the methods :class:`~localmem.store.Store` gets from this mixin.

    Like every part of the store, it works through the store's write core (``_ledger``).
    """

    _ledger: Ledger
    _readers: Readers

    def add(
        self,
        text: str,
        *,
        user_id: str,
        observed_at: TimeInput | None = None,
        tz: str | ZoneInfo | None = None,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        precision: str | None = None,
        expires: TimeInput | None = None,
        key: str | None = None,
        supersedes: str | None = None,
        kind: str = "fact",
        value: Any = None,
        attributes: Mapping[str, Any] | None = None,
        source: Any = None,
        reason: str | None = None,
        resolve: bool = True,
    ) -> Revision:
        """Assert a new memory.

        Args:
            text: what the memory says.
            user_id: whom it is about.
            observed_at: when the fact reached the app (default: now).
            tz: the user's IANA zone (default: the zone last given for this
                user, else UTC). Calendar dates are read in it.
            valid_from: when it became true. Without it, a time phrase in the
                text ("yesterday", "last weekend", "since January") is
                resolved against observed_at in ``tz`` and gives the valid
                time and its precision (``valid_source="resolved"``); the
                stored text names absolute dates and the original message is
                kept in ``source["message"]``. With no phrase the valid time
                is *assumed* to start at observed_at, with precision instant.
            valid_to: when it stopped being true (exclusive); None = still true.
            precision: how precise the valid time is; defaults from the form of
                valid_from (a date is a day, "2023-05" a month, ...).
            expires: hide it from default reads after this: a date means
                "through that local day", an instant means from that instant.
            key: a slot like ``home_city``; a new value supersedes the current one.
            supersedes: the id of a memory this one replaces (explicit chain).
            kind: a free label (fact, preference, event, ...).
            value: a JSON value (numbers, for the fee).
            attributes: a dict of JSON values, for filters.
            source: provenance (session, message id, import batch): JSON.
            reason: why this was recorded.
            resolve: read time phrases in ``text`` (default); False stores the
                text as given and assumes the valid time.

        Returns:
            The new memory's first revision.

        Raises:
            InvalidInputError: bad text, ids, JSON or precision.
            NaiveDatetimeError, InvalidTimeError, InvalidIntervalError,
            UnknownZoneError: bad times or zone.
            NotFoundError, InvalidOperationError: a bad ``supersedes`` target.
        """
        return writes.add(
            self._ledger, text, user_id=user_id, observed_at=observed_at, tz=tz, valid_from=valid_from,
            valid_to=valid_to, precision=precision, expires=expires, key=key, supersedes=supersedes,
            kind=kind, value=value, attributes=attributes, source=source, reason=reason, resolve=resolve)

    def add_many(self, items: Iterable[Mapping[str, Any]], *, resolve: bool = True,
                 workers: int | None = 0) -> list[Added]:
        """Assert many memories in one transaction: each item is ``add``'s keyword arguments
        (``{"text": ..., "user_id": ..., "source": ...}``), written as ``add`` would, in order.

        Faster than ``add`` in a ``batch()`` (items without ``key`` or ``supersedes`` are
        appended in bulk), it returns a light :class:`~localmem.Added` per item: the new
        ``memory_id`` and ``rev_id``, and ``.revision`` (what ``add`` returns) built when read.
        Every item is checked and its time phrases read before anything is written, and all
        are recorded at one instant (two values of one key then need explicit valid times):
        the call lands whole or not at all. ``workers``: reader processes sharing a big batch's
        phrase reading (:mod:`localmem.core.phrases`); 0, the default, none — a library starts no
        process unasked, and on the 2-core machine measured they did not pay; None: as many as the
        load average leaves CPUs idle; same results either way.

        Raises:
            InvalidInputError (and add's other errors): the first bad item, named ``items[i]``.
        """
        return bulk.add_many(self._ledger, items, resolve=resolve, workers=workers, readers=self._readers)

    def add_messages(
        self,
        messages: Sequence[Mapping[str, Any]],
        _user_id: str | None = None,
        _tz: str | ZoneInfo | None = None,
        /,
        *,
        user_id: str | None = None,
        tz: str | ZoneInfo | None = None,
        roles: Sequence[str] = ("user",),
        kind: str = "message",
        source: Mapping[str, Any] | None = None,
        backfill: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> list[Revision]:
        """Import a conversation, mem0-style: one memory per message from ``roles``.

        Each message is ``{"role", "content", "sent_at"}``; its time phrases are
        resolved against its own ``sent_at`` in ``tz``, never against today.
        Messages from other roles (the assistant's replies) are skipped. Every
        message is checked before anything is written, and all are written in
        one transaction: the import lands whole or not at all.

        Each memory is recorded now (the store's clock): a replay as of last
        March does not see a chat imported today. ``backfill=True`` is for an app
        migrating its *own* log, which knew each message when it was sent: each
        memory is then recorded at its ``sent_at``. Recorded time still never goes
        backwards, so a backfill needs the messages in send order, none before the
        newest time already in the store (an empty store takes any log) and none
        after the store's now.

        Args:
            messages: the conversation, oldest first.
            user_id: whose messages they are (keyword-only; passing it, or ``tz``,
                by position still works but is deprecated).
            tz: the user's IANA zone (default: the zone last given, else UTC).
            roles: the roles to import.
            kind: the kind of every memory written.
            source: provenance merged into every memory's source.
            backfill: record each message at its ``sent_at`` (see above).
            progress: called with (done, total) as the import goes on.

        Returns:
            The first revision of each memory written, in message order.

        Raises:
            InvalidInputError: a message is not a mapping, lacks a field, or
                has an empty content; ``source`` is not a mapping; with
                ``backfill``, a message sent before the store's newest time,
                before the message imported just before it, or after now.
            NaiveDatetimeError, InvalidTimeError, UnknownZoneError: a bad
                ``sent_at`` or zone.
        """
        if _user_id is not None or _tz is not None:
            warnings.warn("add_messages(messages, user_id, tz) is deprecated: pass user_id= and tz= "
                          "by keyword", DeprecationWarning, stacklevel=2)
        who = _pick("user_id", _user_id, user_id)
        if who is None:
            raise InvalidInputError("add_messages() needs user_id=: whose messages they are")
        return writes.add_messages(self._ledger, messages, who, _pick("tz", _tz, tz), roles=roles,
                                   kind=kind, source=source, backfill=backfill, progress=progress)

    def correct(
        self,
        memory_id: str,
        *,
        text: str | Unset = UNSET,
        value: Any = UNSET,
        valid_from: TimeInput | Unset = UNSET,
        valid_to: TimeInput | None | Unset = UNSET,
        precision: str | Unset = UNSET,
        attributes: Mapping[str, Any] | None | Unset = UNSET,
        observed_at: TimeInput | None = None,
        source: Any = UNSET,
        reason: str | None = None,
    ) -> Revision:
        """Record that the earlier account was wrong: same memory, new content.

        Only the arguments given change; ``value=None`` clears the value,
        ``valid_to=None`` reopens the interval.

        Raises:
            NotFoundError: no such memory.
            ErasedError: the memory was erased.
            InvalidOperationError: it is retracted, or nothing would change.
        """
        return writes.correct(
            self._ledger, memory_id, text=text, value=value, valid_from=valid_from, valid_to=valid_to,
            precision=precision, attributes=attributes, observed_at=observed_at, source=source,
            reason=reason)

    def supersede(
        self,
        memory_id: str,
        text: str,
        *,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        precision: str | None = None,
        observed_at: TimeInput | None = None,
        expires: TimeInput | None = None,
        value: Any = None,
        attributes: Mapping[str, Any] | None = None,
        source: Any = None,
        reason: str | None = None,
        resolve: bool = True,
    ) -> Revision:
        """Record that the world changed: a new memory replaces ``memory_id`` from valid_from.

        The old memory stays true for its interval, which now closes at the new
        valid_from; the two are linked (``superseded_by`` / ``supersedes``).
        The new memory keeps the old one's user, kind, key and zone.

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is retracted or already superseded.
            InvalidIntervalError: the new fact does not start after the old one.

        Without ``valid_from``, a time phrase in ``text`` says when the new
        fact began ("moved to Berlin on Sept 1"), as in :meth:`add`; the new
        fact stays open-ended. ``resolve=False`` turns that off.
        """
        return writes.supersede(
            self._ledger, memory_id, text, valid_from=valid_from, valid_to=valid_to, precision=precision,
            observed_at=observed_at, expires=expires, value=value, attributes=attributes, source=source,
            reason=reason, resolve=resolve)

    def retract(
        self, memory_id: str, reason: str | None = None, *, observed_at: TimeInput | None = None
    ) -> Revision:
        """Record that the user revoked a memory ("forget that").

        It disappears from current reads; history and as-of reads from before
        the retraction still show it.

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is already retracted.
        """
        return writes.retract(self._ledger, memory_id, reason, observed_at=observed_at)

    def expire(
        self,
        memory_id: str,
        expires: TimeInput | None = None,
        *,
        reason: str | None = None,
        on: TimeInput | None = None,
    ) -> Revision:
        """Set or move a memory's expiry.

        Args:
            memory_id: the memory.
            expires: a date (the memory stays visible through that local day in
                the memory's zone) or an instant (hidden from that instant on);
                the same as ``add(expires=...)``.
            reason: why.
            on: the old name of ``expires`` (deprecated).

        Raises:
            NotFoundError, ErasedError: no such memory, or erased.
            InvalidOperationError: it is retracted, or already expires then.
            InvalidInputError: no expiry given.
        """
        if on is not None:
            warnings.warn("expire(memory_id, on=...) is deprecated: pass expires=", DeprecationWarning,
                          stacklevel=2)
        when = _pick("expires", on, expires)
        if when is None:
            raise InvalidInputError("expire() needs expires=: a date or an instant")
        return writes.expire(self._ledger, memory_id, when, reason=reason)

    def erase(self, memory_id: str, reason: str | None = None, *, by: str | None = None) -> Erasure:
        """Destroy the content of every revision of a memory (privacy erasure).

        The words are removed from the content table and the full-text index
        (which is merged anew before the transaction commits, so no stale
        segment keeps them), freed pages are zeroed, and the WAL is
        checkpointed and truncated once the transaction commits. If that
        checkpoint cannot finish (another reader, a storage fault), the erase is
        still committed; ``Erasure.checkpointed`` is False and the checkpoint is
        retried after every later write and on close; a crash before it finishes
        leaves a marker file, and the next open checkpoints first. A tombstone (who, when,
        why) remains, as do the revision rows without their content. Every memory
        derived from this one (a summary quotes its sources) is erased with it, each
        with its own tombstone (``Erasure.derived``). Keep
        ``reason`` free of the erased content: it is kept. Merging the index
        costs time in proportion to its size (see the README's benchmarks).

        Raises:
            NotFoundError: no such memory.
            ErasedError: it is already erased.
        """
        return writes.erase(self._ledger, memory_id, reason, by=by)

    def embed_missing(self, user_id: str | None = None) -> int:
        """Store a vector for every revision that has content but none of this embedder's model.

        For content written before the store had an embedder, or by another
        model. The vectors are stamped with the store's recorded time now, so a
        search as of an earlier time does not see them (it replays as it ran).
        Runs through the revisions in order, embedding :data:`BATCH_SIZE`
        texts per call, and commits each batch on its own: an interrupted run
        keeps what it stored, and running it again carries on. Idempotent: a
        second run stores nothing and returns 0.

        Args:
            user_id: only this user's revisions (default: everyone's).

        Returns:
            How many vectors were stored (revisions that keep their memory's text
            reuse its vector without a model call, and are counted too).

        Raises:
            InvalidOperationError: the store has no embedder.
            EmbeddingError: the embedder failed (batches stored before stay).
        """
        return writes.embed_missing(self._ledger, user_id)
