"""Decision receipts: what a run knew, what it used, and the exact bytes it sent a model.

The rules:

- **A receipt** names its run, step and user, the run's knowledge cutoff
  (``known_at``) and the valid time it reasoned about (``valid_at``), when it was
  recorded, the revision ids it retrieved and used (in order), the exact prompt
  bytes, the output bytes if given, and free JSON ``meta``. Receipts are
  append-only, like every table.
- **Exact bytes, content-addressed.** Prompts and outputs are stored in the
  ``artifacts`` table keyed by their SHA-256: identical prompts are stored once,
  and reading a receipt checks the bytes still hash to their key. A ``str`` is
  stored as its UTF-8 encoding, unnormalised; pass ``bytes`` for anything else.
- **Only what the run could see.** Every cited revision must belong to the
  run's user and have been recorded by the run's cutoff; a receipt citing a
  fact from after its cutoff would record a leak, so it is refused.
- **What was available** (``available_at``) is read from the cutoff, not from
  what was retrieved: each of the user's memories as known at the receipt's
  known_at, among the revisions that had arrived in this file when the
  receipt was recorded (a watermark on local arrival order, so a revision that
  arrives later with an earlier recorded_at, as sync may bring, never joins).
- **Corrections and supersessions** add revisions; the receipt's links still
  name the revisions it used, which read back exactly as they were.
- **Erasure.** An erase destroys the erased memory's words in every revision,
  including the ones a receipt cites. The receipt keeps its links as ids (the
  record that a decision used *something*, and which revision); reading them
  back gives revisions flagged ``erased`` with no text, value, attributes or
  source, so the receipt's links never leak erased content. The prompt bytes
  are the app's own artifact, the record of what the model was actually sent:
  they are not rewritten (an audit of the decision needs them; a prompt
  quoting the erased memory is found with ``store.decisions(citing=memory_id)``).
  An app that must also purge such prompts has to do it outside this store
  for now: artifacts are immutable, and purging them is not offered yet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from ..core.ids import new_id
from ..core.inputs import check_text, encode_json
from ..core.ledger import Ledger
from ..core.reads import fetch_revisions
from ..core.revision import Revision, loads_json, revision_from_row
from ..core.staleness import mark_stale
from ..errors import CorruptDatabaseError, InvalidInputError, InvalidOperationError, NotFoundError
from ..search.ranking import Hit
from ..time.clock import from_micros
from . import sql as rq
from .derive import rev_ids

__all__ = ["Decision", "record_decision", "load_decision", "available_at", "cited", "decision_ids",
           "as_bytes", "sha256_hex"]


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision receipt, read back byte for byte.

    Attributes:
        decision_id: the receipt's id.
        run_id, user_id, step: where the decision was made.
        known_at: the run's knowledge cutoff when it was made.
        valid_at: the valid time the decision reasoned about.
        recorded_at: when the receipt was committed.
        retrieved: the revision ids it retrieved and used, in order.
        prompt: the exact model-input bytes; ``prompt_sha256`` their key.
        output: the output bytes, if recorded; ``output_sha256`` their key.
        meta: free JSON given with the receipt.
    """

    decision_id: str
    run_id: str
    user_id: str
    step: str
    known_at: datetime
    valid_at: datetime
    recorded_at: datetime
    retrieved: tuple[str, ...]
    prompt: bytes
    prompt_sha256: str
    output: bytes | None
    output_sha256: str | None
    meta: Any

    def to_dict(self, *, with_bytes: bool = False) -> dict[str, Any]:
        """A JSON-ready dict; the bytes are included (as UTF-8 text, replacing bad bytes) only if asked."""
        out: dict[str, Any] = {
            "decision_id": self.decision_id, "run_id": self.run_id, "user_id": self.user_id,
            "step": self.step, "known_at": self.known_at.isoformat(), "valid_at": self.valid_at.isoformat(),
            "recorded_at": self.recorded_at.isoformat(), "retrieved": list(self.retrieved),
            "prompt_sha256": self.prompt_sha256, "prompt_size": len(self.prompt),
            "output_sha256": self.output_sha256, "meta": self.meta,
        }
        if with_bytes:
            out["prompt"] = self.prompt.decode("utf-8", "replace")
            out["output"] = None if self.output is None else self.output.decode("utf-8", "replace")
        return out


def as_bytes(value: object, name: str) -> bytes:
    """Exact bytes: ``bytes`` as given, ``str`` as UTF-8."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise InvalidInputError(f"{name}={value!r:.80} is not bytes or text: expected the exact model input")


def sha256_hex(data: bytes) -> str:
    """The artifact key of ``data``."""
    return hashlib.sha256(data).hexdigest()


def _store_artifact(conn: apsw.Connection, data: bytes, now: int) -> str:
    key = sha256_hex(data)
    if conn.execute(rq.HAS_ARTIFACT, (key,)).fetchone() is None:
        conn.execute(rq.INSERT_ARTIFACT, (key, len(data), data, now))
    return key


def _artifact(conn: apsw.Connection, key: str) -> bytes:
    data = conn.execute(rq.ARTIFACT, (key,)).get
    if not isinstance(data, bytes) or sha256_hex(data) != key:
        raise CorruptDatabaseError(f"artifact {key!r} is missing or its bytes no longer hash to its key")
    return data


def record_decision(
    ledger: Ledger,
    *,
    run_id: str,
    user_id: str,
    event_seq: int,
    known: int,
    valid: int,
    step: str,
    retrieved: Sequence[str | Revision | Hit],
    prompt: bytes | str,
    output: bytes | str | None,
    meta: Mapping[str, Any] | None,
) -> Decision:
    """Store one receipt (the run's checks are done by :meth:`localmem.runs.Run.record_decision`)."""
    check_text(step, "step")
    ids = rev_ids(retrieved, "retrieved")
    prompt_bytes = as_bytes(prompt, "prompt")
    output_bytes = None if output is None else as_bytes(output, "output")
    if meta is not None and not isinstance(meta, Mapping):
        raise InvalidInputError(f"meta={meta!r:.80} is not a dict: expected a JSON object or None")
    meta_json = encode_json(None if meta is None else dict(meta), "meta")
    with ledger.write() as clock_now:
        now = max(clock_now, known)  # recorded time never goes backwards past the run's cutoff
        conn = ledger.connection
        for rev in fetch_revisions(conn, ids):
            if rev.user_id != user_id:
                raise InvalidOperationError(
                    f"revision {rev.rev_id!r} belongs to user {rev.user_id!r}, not the run's user "
                    f"{user_id!r}: a decision cites only its run's user's memories")
            if rev.recorded_at > from_micros(known):
                raise InvalidOperationError(
                    f"revision {rev.rev_id!r} was recorded at {rev.recorded_at.isoformat()!r}, after the "
                    f"run's cutoff {from_micros(known).isoformat()!r}: the run could not have seen it")
        prompt_key = _store_artifact(conn, prompt_bytes, now)
        output_key = None if output_bytes is None else _store_artifact(conn, output_bytes, now)
        decision_id = new_id(now)
        conn.execute(rq.INSERT_DECISION, (
            decision_id, run_id, user_id, step, event_seq, known, valid, now,
            conn.execute(rq.WATERMARK).get, prompt_key, output_key, meta_json, ledger.device_id))
        conn.executemany(rq.INSERT_DECISION_SOURCE, [(decision_id, i, rid) for i, rid in enumerate(ids, 1)])
    return Decision(decision_id, run_id, user_id, step, from_micros(known), from_micros(valid),
                    from_micros(now), tuple(ids), prompt_bytes, prompt_key, output_bytes, output_key,
                    loads_json(meta_json))


def _row(conn: apsw.Connection, decision_id: object) -> tuple[Any, ...]:
    if not isinstance(decision_id, str) or not decision_id.strip():
        raise NotFoundError(f"decision id {decision_id!r} is not an id: expected a decision id")
    row = conn.execute(rq.DECISION, (decision_id.strip().upper(),)).fetchone()
    if row is None:
        raise NotFoundError(f"no decision with id {decision_id!r}")
    return tuple(row)


def load_decision(conn: apsw.Connection, decision_id: str) -> Decision:
    """See :meth:`localmem.store.Store.decision`."""
    (did, run_id, user_id, step, known, valid, recorded, _wm, prompt, output, meta) = _row(conn, decision_id)
    retrieved = tuple(r[0] for r in conn.execute(rq.DECISION_SOURCES, (did,)))
    return Decision(did, run_id, user_id, step, from_micros(known), from_micros(valid),
                    from_micros(recorded), retrieved, _artifact(conn, prompt), prompt,
                    None if output is None else _artifact(conn, output), output, loads_json(meta))


def available_at(conn: apsw.Connection, decision_id: str) -> list[Revision]:
    """See :meth:`localmem.store.Store.available_at`."""
    (_did, _run, user_id, _step, known, valid, _rec, watermark, *_rest) = _row(conn, decision_id)
    q = rq.available_at(user_id, known, watermark)
    return mark_stale(conn, [revision_from_row(r, valid) for r in conn.execute(q.sql, q.params)], known)


def cited(conn: apsw.Connection, decision_id: str) -> list[Revision]:
    """See :meth:`localmem.store.Store.cited`."""
    (did, _run, _user, _step, known, valid, *_rest) = _row(conn, decision_id)
    ids = [r[0] for r in conn.execute(rq.DECISION_SOURCES, (did,))]
    return mark_stale(conn, fetch_revisions(conn, ids, valid), known)


def decision_ids(conn: apsw.Connection, run_id: str | None, citing: str | None) -> list[str]:
    """Receipt ids, oldest first, of a run and/or citing a memory."""
    q = rq.decisions(run_id, citing)
    return [r[0] for r in conn.execute(q.sql, q.params)]
