"""The replay-and-audit half of :class:`~localmem.store.Store`: runs, receipts, derived memories,
perspectives and knowledge diffs (DESIGN.md §4).

Each method checks its input and hands over to the module that owns the
concept: :mod:`~localmem.replay.runs`, :mod:`~localmem.replay.receipts`, :mod:`~localmem.replay.derive`,
:mod:`~localmem.replay.compare`, :mod:`~localmem.replay.knew`. Their docstrings state the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core.db import map_errors
from ..core.inputs import check_text, optional_text
from ..core.ledger import Ledger
from ..core.revision import Revision
from ..search.ranking import Hit
from ..time.clock import TimeInput
from . import compare as compare_
from . import derive as derive_
from . import knew, receipts, runs
from . import sql as rq
from .compare import Comparison
from .derive import Provenance
from .knew import KnowledgeDiff
from .receipts import Decision
from .runs import Run, View

__all__ = ["Replay"]


class Replay:
    """Replay and audit: the methods :class:`~localmem.store.Store` gets from this mixin.

    Like every part of the store, it works through the store's write core (``_ledger``).
    """

    _ledger: Ledger

    def run(self, run_id: str, *, user_id: str | None = None, known_at: TimeInput | None = None) -> Run:
        """Start a run pinned at a knowledge cutoff, or resume a persisted one.

        A new run needs ``user_id``; its cutoff is ``known_at``, by default the
        store's recorded time now (never later than that). An existing run is
        resumed at its newest cutoff, in this process or any other; giving a
        different ``user_id`` or ``known_at`` for it is refused (advance it instead).

        Raises:
            NotFoundError: no such run, and no ``user_id`` to start one.
            InvalidOperationError: a cutoff in the future; a resumed run's user
                or cutoff differs from the one given.
        """
        with map_errors():
            return runs.open_run(self._ledger, run_id, user_id, known_at)

    def decision(self, decision_id: str) -> Decision:
        """A decision receipt, its prompt and output bytes exactly as recorded.

        Raises:
            NotFoundError: no such receipt.
            CorruptDatabaseError: the stored bytes no longer hash to their key.
        """
        with map_errors():
            return receipts.load_decision(self._ledger.connection, decision_id)

    def decisions(self, *, run_id: str | None = None, citing: str | None = None) -> list[Decision]:
        """Receipts, oldest first: of one run, and/or citing any revision of memory ``citing``."""
        optional_text(run_id, "run_id")
        optional_text(citing, "citing")
        conn = self._ledger.connection
        with map_errors():
            return [receipts.load_decision(conn, d) for d in receipts.decision_ids(conn, run_id, citing)]

    def available_at(self, decision_id: str) -> list[Revision]:
        """Which facts were available to a decision: each of its user's memories as known at its cutoff.

        Independent of what the decision retrieved. Retracted and expired memories
        are included, flagged; erased ones without content; derived ones flagged
        stale as of the cutoff. See :mod:`localmem.receipts`.
        """
        with map_errors():
            return receipts.available_at(self._ledger.connection, decision_id)

    def cited(self, decision_id: str) -> list[Revision]:
        """The exact revisions a decision retrieved, in its order; erased ones flagged, without content."""
        with map_errors():
            return receipts.cited(self._ledger.connection, decision_id)

    def derive(
        self,
        text: str,
        *,
        from_: Sequence[str | Revision | Hit],
        user_id: str | None = None,
        kind: str = "summary",
        value: Any = None,
        attributes: Mapping[str, Any] | None = None,
        valid_from: TimeInput | None = None,
        valid_to: TimeInput | None = None,
        precision: str | None = None,
        source: Any = None,
        reason: str | None = None,
        supersedes: str | None = None,
    ) -> Revision:
        """Record a memory computed from others (a summary), linked to the revisions it used.

        Args:
            text: what the derived memory says.
            from_: the source revisions: ids, Revisions or search Hits (each once).
            user_id: whose memory it is (default: the sources' user; all must match).
            kind: a free label (default ``summary``).
            value, attributes, source, reason: as for ``add``.
            valid_from, valid_to, precision: its valid time (default: the hull
                of its sources' valid times, precision the coarsest of theirs).
            supersedes: a memory (an earlier summary) this one replaces.

        Returns:
            The derived memory's first revision (op ``derive``).

        Raises:
            InvalidInputError: no sources, a source listed twice, bad text or JSON.
            NotFoundError: a source id names no revision.
            ErasedError: a source's memory was erased.
            InvalidOperationError: a source belongs to another user.
        """
        with map_errors():
            return derive_.derive(
                self._ledger, text, from_=from_, user_id=user_id, kind=kind, value=value,
                attributes=attributes, valid_from=valid_from, valid_to=valid_to, precision=precision,
                source=source, reason=reason, supersedes=supersedes)

    def provenance(self, memory_id: str, *, known_at: TimeInput | None = None) -> Provenance:
        """A derived memory as known at known_at, its sources, and why it is stale (if it is).

        Raises:
            NotFoundError: no such memory.
            InvalidOperationError: it is not derived, or was not yet known at known_at.
        """
        with map_errors():
            return derive_.provenance(self._ledger, memory_id, known_at)

    def stale(self, user_id: str, *, known_at: TimeInput | None = None) -> list[Provenance]:
        """The user's derived memories that are stale as known at known_at (default now).

        "The chart that must restate its point": each with the sources that
        changed, why (corrected, superseded, retracted, erased) and the newer
        revision. Retracted, erased and superseded (already restated) derived
        memories are left out.
        """
        with map_errors():
            return derive_.stale(self._ledger, user_id, known_at)

    def compare(
        self,
        question: str | Callable[[View], Any],
        *,
        known_at: Sequence[TimeInput],
        valid_at: TimeInput | None = None,
        user_id: str | None = None,
        name: str | None = None,
    ) -> Comparison:
        """Answer one question under several knowledge cutoffs; see :mod:`localmem.compare`.

        Args:
            question: a memory id, a search query, or a function of a pinned
                :class:`~localmem.replay.runs.View` (e.g. ``lambda v: cash(v.read())``).
            known_at: the cutoffs, one perspective each, in the order given.
            valid_at: the valid time for every perspective (default: each cutoff).
            user_id: whose memories (needed for a query or a function).
            name: a label for a function question (default its ``__name__``).

        Raises:
            InvalidInputError: no cutoffs; no user for a query or function.
        """
        with map_errors():
            return compare_.compare(self._ledger, question, known_at=known_at, valid_at=valid_at,
                                    user_id=user_id, name=name)

    def knowledge_diff(self, user_id: str, *, since: TimeInput, until: TimeInput) -> KnowledgeDiff:
        """What was learned, corrected, superseded, retracted or erased after ``since`` and by ``until``.

        Raises:
            InvalidInputError: ``until`` is not after ``since``.
        """
        with map_errors():
            return knew.knowledge_diff(self._ledger, user_id, since, until)

    def run_ids(self, user_id: str | None = None) -> list[str]:
        """Every run's id (of one user if given), oldest first."""
        optional_text(user_id, "user_id")
        conn = self._ledger.connection
        if user_id is None:
            rows = conn.execute(rq.RUN_IDS)
        else:
            check_text(user_id, "user_id")
            rows = conn.execute(rq.RUN_IDS_OF, (user_id,))
        return [r[0] for r in rows]



