"""Runs: an agent session or an evaluation replay, pinned to a knowledge cutoff.

The rules:

- **Pinned.** Every read of a run (``get``, ``read``, ``search``, ``snapshot``,
  ``history``, ``stale``) is made as known at the run's cutoff: facts, derived
  memories, corrections and usage recorded after it are invisible to the run
  until it advances. The valid time of a read defaults to the cutoff too ("now"
  as the run sees it); pass ``valid_at`` to ask about another time.
- **The default cutoff** is the store's recorded time when the run starts.
  A cutoff is never in the future (after the store's recorded now): facts
  recorded later would then slip into the run as they arrive.
- **Steps and advances are recorded.** ``step(name)`` marks a step;
  ``advance(step=..., to=None)`` moves the cutoff forwards (to now by default)
  at a named step. Both append an event; nothing about a run is overwritten,
  and a trigger refuses a cutoff that moves backwards or moves without an advance.
- **Resumable.** A run is its row and its events. ``store.run(run_id)`` in any
  process resumes it at its newest event's cutoff. A run view holds the cutoff
  it last saw: if another view (process) advanced or stepped the run since,
  this view's ``step``/``advance`` raise :class:`~localmem.errors.RunConflictError`
  rather than record an event from a stale position; resume to continue. Its
  reads stay pinned at the cutoff it holds, and a receipt it records names that
  cutoff, which is what the decision actually saw.
- **Search usage** is logged under the run's id, at the store's recorded time
  (after the cutoff, so the run's own later searches at that cutoff rank as
  the first did).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from ..core import reads
from ..core.inputs import check_text
from ..core.ledger import Ledger
from ..core.revision import Change, Revision, Snapshot
from ..errors import InvalidInputError, InvalidOperationError, NotFoundError, RunConflictError
from ..search.api import search
from ..search.ranking import Hit
from ..time.clock import UTC_ZONE, TimeInput, from_micros, instant_micros, to_micros
from . import sql as rq
from .derive import Provenance, stale
from .receipts import Decision, decision_ids, load_decision, record_decision

__all__ = ["RunEvent", "View", "Run", "open_run"]


@dataclass(frozen=True, slots=True)
class RunEvent:
    """One entry in a run's record: its start, a step, or an advance of its cutoff.

    ``known_at`` is the cutoff in force after the event; ``position`` counts from 1.
    """

    position: int
    kind: str
    step: str | None
    known_at: datetime
    recorded_at: datetime

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {"position": self.position, "kind": self.kind, "step": self.step,
                "known_at": self.known_at.isoformat(), "recorded_at": self.recorded_at.isoformat()}


def _event(row: Sequence[Any]) -> RunEvent:
    _seq, position, kind, step, known, recorded = row
    return RunEvent(position, kind, step, from_micros(known), from_micros(recorded))


def _last_row(conn: apsw.Connection, run_id: str) -> tuple[Any, ...]:
    row = conn.execute(rq.LAST_EVENT, (run_id,)).fetchone()
    if row is None:
        raise NotFoundError(f"run {run_id!r} has no events: the file is damaged")
    return tuple(row)


class View:
    """Reads of one store pinned at a knowledge cutoff (and by default the same valid time).

    ``compare`` hands one to a question function for each perspective; a
    :class:`Run` is a view whose cutoff moves only by a recorded advance.
    """

    def __init__(self, ledger: Ledger, user_id: str | None, known: int, valid: int | None = None) -> None:
        self._ledger = ledger
        self._user_id = user_id
        self._known = known
        self._valid = valid
        self._run_id: str | None = None

    @property
    def known_at(self) -> datetime:
        """The knowledge cutoff every read of this view is made at."""
        return from_micros(self._known)

    @property
    def valid_at(self) -> datetime:
        """The default valid time of this view's reads."""
        return from_micros(self._known if self._valid is None else self._valid)

    @property
    def user_id(self) -> str:
        """The user this view reads."""
        if self._user_id is None:
            raise InvalidInputError("this view has no user: give user_id= to read a user's memories")
        return self._user_id

    def _valid_for(self, valid_at: TimeInput | None) -> int:
        if valid_at is None:
            return self._known if self._valid is None else self._valid
        z = self._ledger.zone_for(None, self._user_id) if self._user_id else UTC_ZONE
        return instant_micros(valid_at, name="valid_at", tz=z)

    def get(self, memory_id: str, *, valid_at: TimeInput | None = None) -> Revision | None:
        """One memory as known at the cutoff (None if not yet known then); see ``Store.get``."""
        rev = reads.get(self._ledger, memory_id, known_at=self.known_at,
                        valid_at=from_micros(self._valid_for(valid_at)))
        if rev is not None and self._user_id is not None and rev.user_id != self._user_id:
            raise InvalidOperationError(
                f"memory {memory_id!r} belongs to user {rev.user_id!r}, not {self._user_id!r}: "
                "a run reads only its own user's memories")
        return rev

    def read(
        self,
        *,
        valid_at: TimeInput | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        include_retracted: bool = False,
        kind: str | None = None,
        key: str | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> list[Revision]:
        """The user's memories as known at the cutoff; see ``Store.read``."""
        return reads.read(
            self._ledger, self.user_id, known_at=self.known_at,
            valid_at=from_micros(self._valid_for(valid_at)), current_only=current_only,
            include_expired=include_expired,
            include_retracted=include_retracted, kind=kind, key=key, filters=filters)

    def search(
        self,
        query: str,
        *,
        valid_at: TimeInput | None = None,
        filters: Mapping[str, Any] | None = None,
        current_only: bool = True,
        include_expired: bool = False,
        limit: int = 10,
        log: bool | None = None,
    ) -> list[Hit]:
        """Search as known at the cutoff; see ``Store.search``.

        A run logs its hits under its id (``log`` defaults to True for a run,
        False for a comparison's view, whose reads are an audit, not usage).
        """
        return search(
            self._ledger, query, user_id=self.user_id, known_at=self.known_at,
            valid_at=from_micros(self._valid_for(valid_at)), filters=filters,
            current_only=current_only, include_expired=include_expired, limit=limit,
            log=(self._run_id is not None) if log is None else log, run_id=self._run_id)

    def snapshot(self) -> Snapshot:
        """Everything the store held about the user at the cutoff; see ``Store.snapshot``."""
        return reads.snapshot(self._ledger, self.user_id, known_at=self.known_at)

    def history(self, memory_id: str) -> list[Change]:
        """The changes to one memory recorded by the cutoff; see ``Store.history``."""
        return reads.history(self._ledger, memory_id, known_at=self.known_at)

    def stale(self) -> list[Provenance]:
        """The user's derived memories that are stale as known at the cutoff."""
        return stale(self._ledger, self.user_id, known_at=self.known_at)


class Run(View):
    """A persisted run: reads pinned at its cutoff, steps and advances recorded.

    Get one with :meth:`localmem.store.Store.run`; the rules are in :mod:`localmem.replay.runs`.
    """

    def __init__(self, ledger: Ledger, run_id: str, user_id: str, started_at: int,
                 event_seq: int, event: RunEvent) -> None:
        super().__init__(ledger, user_id, to_micros(event.known_at))
        self._run_id = run_id
        self._started = started_at
        self._event_seq = event_seq
        self._last = event

    def __repr__(self) -> str:
        return (f"Run({self.run_id!r}, user_id={self.user_id!r}, "
                f"known_at={self.known_at.isoformat()!r})")

    @property
    def run_id(self) -> str:
        """The run's id."""
        assert self._run_id is not None
        return self._run_id

    @property
    def started_at(self) -> datetime:
        """When the run was started (the store's recorded time)."""
        return from_micros(self._started)

    @property
    def last_event(self) -> RunEvent:
        """The newest event this view knows of."""
        return self._last

    def events(self) -> list[RunEvent]:
        """The run's whole record, oldest first: start, steps, advances (as stored now)."""
        return [_event(r) for r in self._ledger.connection.execute(rq.RUN_EVENTS, (self.run_id,))]

    def _append(self, kind: str, step: str, known: int | None) -> RunEvent:
        ledger = self._ledger
        with ledger.write() as clock_now:
            conn = ledger.connection
            last = _last_row(conn, self.run_id)
            # Recorded time never goes backwards, for a run's record too.
            now = max(clock_now, last[5], last[4])
            if last[0] != self._event_seq:
                theirs = _event(last)
                raise RunConflictError(
                    f"run {self.run_id!r} moved on elsewhere: its event {theirs.position} "
                    f"({theirs.kind} {theirs.step or ''}) set the cutoff to {theirs.known_at.isoformat()!r}; "
                    f"this view is at event {self._last.position}: resume with store.run({self.run_id!r})")
            cutoff = self._known if known is None else known
            if known is not None and known > now:
                raise InvalidOperationError(
                    f"to={from_micros(known).isoformat()!r} is after the store's recorded now "
                    f"{from_micros(now).isoformat()!r}: a cutoff in the future would let facts "
                    "recorded later leak into the run")
            if kind == "advance" and known is None:
                cutoff = now
            if cutoff < self._known:
                raise InvalidOperationError(
                    f"to={from_micros(cutoff).isoformat()!r} is before the run's cutoff "
                    f"{self.known_at.isoformat()!r}: a run's cutoff only moves forwards")
            conn.execute(rq.INSERT_RUN_EVENT, (self.run_id, self._last.position + 1, kind, step, cutoff, now))
            seq = conn.last_insert_rowid()
        event = RunEvent(self._last.position + 1, kind, step, from_micros(cutoff), from_micros(now))
        self._event_seq, self._last, self._known = seq, event, cutoff
        return event

    def step(self, name: str) -> RunEvent:
        """Mark a step of the run (its cutoff stays); returns the recorded event.

        Raises:
            RunConflictError: another view moved the run on since this one last saw it.
        """
        check_text(name, "step")
        return self._append("step", name, None)

    def advance(self, *, step: str, to: TimeInput | None = None) -> RunEvent:
        """Move the run's cutoff forwards at a named step (to the store's recorded now by default).

        Raises:
            InvalidOperationError: ``to`` is before the current cutoff, or in the future.
            RunConflictError: another view moved the run on since this one last saw it.
        """
        check_text(step, "step")
        known = None if to is None else instant_micros(
            to, name="to", tz=self._ledger.zone_for(None, self.user_id))
        return self._append("advance", step, known)

    def record_decision(
        self,
        step: str,
        *,
        retrieved: Sequence[str | Revision | Hit] = (),
        prompt: bytes | str,
        output: bytes | str | None = None,
        meta: Mapping[str, Any] | None = None,
        valid_at: TimeInput | None = None,
    ) -> Decision:
        """Record a decision receipt at this view's cutoff; see :mod:`localmem.receipts`.

        Args:
            step: the step the decision was made at.
            retrieved: the revisions it used: ids, Revisions or search Hits.
            prompt: the exact model input (``str`` is stored as UTF-8).
            output: the model's output, if it is to be kept.
            meta: free JSON (model name, temperature, ...).
            valid_at: the valid time it reasoned about (default: the cutoff).

        Raises:
            NotFoundError: a retrieved id names no revision.
            InvalidOperationError: a retrieved revision is another user's, or was
                recorded after the run's cutoff.
        """
        return record_decision(
            self._ledger, run_id=self.run_id, user_id=self.user_id, event_seq=self._event_seq,
            known=self._known, valid=self._valid_for(valid_at), step=step, retrieved=retrieved,
            prompt=prompt, output=output, meta=meta)

    def decisions(self) -> list[Decision]:
        """The run's receipts, oldest first."""
        conn = self._ledger.connection
        return [load_decision(conn, d) for d in decision_ids(conn, self.run_id, None)]


def open_run(ledger: Ledger, run_id: str, user_id: str | None, known_at: TimeInput | None) -> Run:
    """See :meth:`localmem.store.Store.run`."""
    check_text(run_id, "run_id")
    if user_id is not None:
        check_text(user_id, "user_id")
    conn = ledger.connection
    row = conn.execute(rq.RUN, (run_id,)).fetchone()
    if row is not None:
        _, owner, started = row
        if user_id is not None and user_id != owner:
            raise InvalidOperationError(f"run {run_id!r} belongs to user {owner!r}, not {user_id!r}")
        last = _last_row(conn, run_id)
        event = _event(last)
        if known_at is not None:
            asked = instant_micros(known_at, name="known_at", tz=ledger.zone_for(None, owner))
            if asked != to_micros(event.known_at):
                raise InvalidOperationError(
                    f"run {run_id!r} is at cutoff {event.known_at.isoformat()!r}, not "
                    f"{from_micros(asked).isoformat()!r}: resume it without known_at, or advance it")
        return Run(ledger, run_id, owner, started, last[0], event)
    if user_id is None:
        raise NotFoundError(f"no run with id {run_id!r}: give user_id= to start one")
    z = ledger.zone_for(None, user_id)
    wanted = None if known_at is None else instant_micros(known_at, name="known_at", tz=z)
    with ledger.write() as now:
        if conn.execute(rq.RUN, (run_id,)).fetchone() is not None:
            raise InvalidOperationError(f"run {run_id!r} was started elsewhere just now: resume it")
        cutoff = now if wanted is None else wanted
        if cutoff > now:
            raise InvalidOperationError(
                f"known_at={from_micros(cutoff).isoformat()!r} is after the store's recorded now "
                f"{from_micros(now).isoformat()!r}: a cutoff in the future would let facts recorded "
                "later leak into the run")
        conn.execute(rq.INSERT_RUN, (run_id, user_id, now, ledger.device_id))
        conn.execute(rq.INSERT_RUN_EVENT, (run_id, 1, "start", None, cutoff, now))
        seq = conn.last_insert_rowid()
    start = RunEvent(1, "start", None, from_micros(cutoff), from_micros(now))
    return Run(ledger, run_id, user_id, now, seq, start)
