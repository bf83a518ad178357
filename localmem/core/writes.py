"""The store's writes: assert, correct, supersede, retract, expire, erase, and bulk imports.

Each checks its input before any SQL runs, then appends through the
:class:`~localmem.core.ledger.Ledger` in one write transaction. The rules:

* ``add`` asserts a new memory. With a ``key``, it supersedes the key's current
  value when it starts later, and is kept as history when it ends before that
  value starts; any other overlap is refused.
* ``correct`` says the earlier account was wrong: same memory, new text/value
  (and, if given, a corrected valid time); only what is given changes.
* ``supersede`` says the world changed: the old memory's interval closes where
  the new one starts, and both are linked.
* ``retract`` hides a memory from current reads from now on (history and as-of
  reads before the retraction still show it). It does not reopen a memory it
  superseded: correct that one if it is true again.
* ``expire`` sets or moves the expiry; a date means "visible through that day"
  in the memory's zone.
* ``erase`` destroys the content of every revision of a memory and leaves a
  tombstone; erased memories take no further writes and never appear in reads.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, InvalidOperationError
from ..time.clock import Micros, TimeInput, from_micros, parse_time, to_micros, zone
from ..time.interval import check_interval, check_precision
from .embedding import BATCH_SIZE, missing, store_vectors
from .inputs import check_text, encode_attributes, encode_json, observed_micros, optional_text
from .ledger import Ledger, ValidSpan
from .messages import checked_messages, read_times, with_message_json
from .revision import Erasure, Revision

__all__ = ["UNSET", "Unset", "add", "add_messages", "correct", "supersede", "retract", "expire", "erase",
           "embed_missing", "Said", "Encoded", "check_add", "check_add_args", "write_one"]


class Unset(enum.Enum):
    """The type of :data:`UNSET`."""

    UNSET = "UNSET"


#: Marks an argument of ``correct`` that was not given (None is a value there).
UNSET = Unset.UNSET

Encoded = tuple[str | None, str | None, str | None]


def _encoded(value: Any, attributes: Any, source: Any) -> Encoded:
    return encode_json(value, "value"), encode_attributes(attributes), encode_json(source, "source")


def _check_resolve(resolve: object) -> None:
    if not isinstance(resolve, bool):
        raise InvalidInputError(f"resolve={resolve!r} is not a bool")


def add(
    ledger: Ledger,
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
    backfill: tuple[Micros, str] | None = None,
) -> Revision:
    """See :meth:`localmem.store.Store.add` (``backfill=(at, name)``: recorded at ``at``, checked by
    :meth:`~localmem.core.ledger.Ledger.recorded_backfill`)."""
    check_add_args(text, user_id, kind, key, reason, precision, tz)
    encoded = _encoded(value, attributes, source)  # bad JSON is refused before the write begins
    _check_resolve(resolve)
    said = _read(ledger, text, source, encoded, user_id=user_id, observed_at=observed_at, tz=tz,
                 reading=resolve and valid_from is None, state=key is not None or supersedes is not None,
                 backfill=backfill)
    return _write(ledger, said, user_id=user_id, valid_from=valid_from, valid_to=valid_to,
                  precision=precision, expires=expires, key=key, supersedes=supersedes, kind=kind,
                  reason=reason, backfill=backfill)


def check_add_args(text: str, user_id: str, kind: str, key: str | None, reason: str | None,
                   precision: str | None, tz: str | ZoneInfo | None, *, known: bool = False) -> None:
    """``add``'s checks of its plain arguments (before any SQL runs), in this order; ``known``: the
    user_id and kind passed already (in an earlier item of the call) and are not checked again."""
    check_text(text)
    if not known:
        check_text(user_id, "user_id")
        check_text(kind, "kind")
    if key is not None:
        check_text(key, "key")
    if reason is not None:
        check_text(reason, "reason")
    if precision is not None:
        check_precision(precision)
    if tz is not None:
        zone(tz)


def check_add(item: Mapping[str, Any], seen: set[tuple[str, str]]) -> None:
    """:func:`check_add_args` for an item of ``add_many`` (a mapping of ``add``'s keyword arguments);
    a (user_id, kind) pair of plain strings in ``seen`` passed already and is not checked again."""
    get = item.get
    user_id, kind = item["user_id"], get("kind", "fact")
    plain = type(user_id) is str and type(kind) is str
    known = plain and (user_id, kind) in seen
    check_add_args(item["text"], user_id, kind, get("key"), get("reason"), get("precision"), get("tz"),
                   known=known)
    if plain and not known:
        seen.add((user_id, kind))


def write_one(ledger: Ledger, item: Mapping[str, Any], said: Said) -> Revision:
    """Write one ``add_many`` item that ``add`` would write (as ``add_many`` read it)."""
    return _write(ledger, said, user_id=item["user_id"], valid_from=item.get("valid_from"),
                  valid_to=item.get("valid_to"), precision=item.get("precision"), expires=item.get("expires"),
                  key=item.get("key"), supersedes=item.get("supersedes"), kind=item.get("kind", "fact"),
                  reason=item.get("reason"), backfill=None)


@dataclass(frozen=True, slots=True)
class Said:
    """A message read before its write: the stored text and source, its zone, when it was observed
    (None: at the write's recorded time), the clock reading the phrases were read against, and the
    valid time they give (None: none)."""

    text: str
    encoded: Encoded
    z: ZoneInfo
    observed: Micros | None
    reading: Micros | None
    said: tuple[Micros, Micros | None, str] | None


def _read(ledger: Ledger, text: str, source: Any, encoded: Encoded, *, user_id: str,
          observed_at: TimeInput | None, tz: str | ZoneInfo | None, reading: bool, state: bool,
          backfill: tuple[Micros, str] | None) -> Said:
    """Read a message's time phrases before its write transaction begins: the work grows with the
    message's length, and a long one must not hold the write lock while it is read."""
    z = ledger.zone_for(tz, user_id)
    observed = None if observed_at is None else observed_micros(observed_at, 0, z)
    if not reading:  # nothing is read against a time: the write reads the clock itself
        return Said(text, encoded, z, observed, None, None)
    clock = None if observed is not None or backfill is not None else ledger.clock_reading()
    at = observed if observed is not None else clock
    assert at is not None  # a backfill always says when each message was sent
    stored, said_source, said = read_times(text, source, at, z, reading, state)
    if said_source is not source:  # the message was kept in it: the source's JSON, message first
        encoded = (encoded[0], encoded[1], with_message_json(text, source, encoded[2]))
    return Said(stored, encoded, z, observed, clock, said)


def _write(ledger: Ledger, said: Said, *, user_id: str, valid_from: TimeInput | None,
           valid_to: TimeInput | None, precision: str | None, expires: TimeInput | None, key: str | None,
           supersedes: str | None, kind: str, reason: str | None,
           backfill: tuple[Micros, str] | None) -> Revision:
    with ledger.write(backfill, said.reading) as now:
        return _assert(ledger, said.text, user_id=user_id, now=now, z=said.z,
                       observed=now if said.observed is None else said.observed, said=said.said,
                       valid_from=valid_from, valid_to=valid_to, precision=precision, expires=expires,
                       key=key, supersedes=supersedes, kind=kind, encoded=said.encoded, reason=reason)


def _assert(
    ledger: Ledger,
    text: str,
    *,
    user_id: str,
    now: Micros,
    z: ZoneInfo,
    observed: Micros,
    said: tuple[Micros, Micros | None, str] | None,
    valid_from: TimeInput | None,
    valid_to: TimeInput | None,
    precision: str | None,
    expires: TimeInput | None,
    key: str | None,
    supersedes: str | None,
    kind: str,
    encoded: Encoded,
    reason: str | None,
) -> Revision:
    """A new memory (and the closing of the one it supersedes), inside the open write."""
    otherwise: ValidSpan = ((said[0], said[1], check_precision(said[2]), "resolved") if said is not None
                            else (observed, None, "instant", "assumed"))
    span = ledger.valid_time(z, valid_from=valid_from, valid_to=valid_to,
                             precision=None if precision is None else check_precision(precision),
                             otherwise=otherwise)
    exp = ledger.expiry(expires, z)
    old: Revision | None = None
    if supersedes is not None:
        old = ledger.state(supersedes)
        ledger.check_supersedable(old, user_id, span[0])
        if key is None:
            key = old.key
    elif key is not None:
        old = ledger.key_head(user_id, key, span[0], span[1])
    memory_id = ledger.new_memory(user_id=user_id, kind=kind, key=key, at=now, tz=z.key)
    new = ledger.first_revision(
        memory_id, user_id=user_id, kind=kind, key=key, op="supersede" if old else "assert", span=span,
        observed_at=observed, recorded_at=now, tz=z.key, expires_at=exp,
        supersedes=old.memory_id if old else None, text=text, encoded=encoded, reason=reason)
    if old is not None:
        ledger.close_superseded(old, by=memory_id, starts=span[0], at=now, observed=observed, reason=reason)
    return new


def add_messages(
    ledger: Ledger,
    messages: Sequence[Mapping[str, Any]],
    user_id: str,
    tz: str | ZoneInfo | None,
    *,
    roles: Sequence[str] = ("user",),
    kind: str = "message",
    source: Mapping[str, Any] | None = None,
    backfill: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> list[Revision]:
    """See :meth:`localmem.store.Store.add_messages`: one memory per message, in one transaction."""
    kept = checked_messages(messages, roles)
    if source is not None and not isinstance(source, Mapping):
        raise InvalidInputError(f"source={source!r:.60} is not a mapping")
    if not isinstance(backfill, bool):
        raise InvalidInputError(f"backfill={backfill!r} is not a bool")
    z = zone(tz) if tz is not None else None
    # Read every send time first: a bad one refuses the import before any write.
    when = [parse_time(m["sent_at"], name=f"messages[{i}].sent_at", tz=z or zone("UTC")).at for i, m in kept]
    check_text(user_id, "user_id")
    check_text(kind, "kind")
    # Every message's phrases are read before the transaction: the import holds the write lock
    # only for its rows.
    read: list[tuple[Said, tuple[Micros, str] | None]] = []
    for (i, message), sent_at in zip(kept, when, strict=True):
        at = (to_micros(sent_at), f"messages[{i}].sent_at") if backfill else None
        provenance = {**(source or {}), "role": message["role"], "index": i}
        encoded = _encoded(None, None, provenance)
        read.append((_read(ledger, message["content"], provenance, encoded, user_id=user_id,
                           observed_at=sent_at, tz=z, reading=True, state=False, backfill=at), at))
    out: list[Revision] = []
    with ledger.transaction():
        for n, (said, at) in enumerate(read, 1):
            out.append(_write(ledger, said, user_id=user_id, valid_from=None, valid_to=None, precision=None,
                              expires=None, key=None, supersedes=None, kind=kind, reason=None, backfill=at))
            if progress is not None and (n % 200 == 0 or n == len(kept)):
                progress(n, len(kept))
    return out


def correct(
    ledger: Ledger,
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
    """See :meth:`localmem.store.Store.correct`."""
    if text is not UNSET:
        check_text(text)
    if precision is not UNSET:
        check_precision(precision)
    optional_text(reason, "reason")
    new_value = encode_json(value, "value") if value is not UNSET else UNSET
    new_attrs = encode_attributes(attributes) if attributes is not UNSET else UNSET
    new_source = encode_json(source, "source") if source is not UNSET else UNSET
    with ledger.write() as now:
        rev = ledger.state(memory_id)
        if rev.retracted:
            raise InvalidOperationError(
                f"memory {memory_id!r} is retracted: add a new memory instead of correcting it"
            )
        z = zone(rev.tz)
        changes: dict[str, Any] = {}
        if text is not UNSET and text != rev.text:
            changes["text"] = text
        if new_value is not UNSET and new_value != encode_json(rev.value, "value"):
            changes["value"] = new_value
        if new_attrs is not UNSET and new_attrs != encode_json(rev.attributes, "attributes"):
            changes["attributes"] = new_attrs
        vf, vt = to_micros(rev.valid_from), (None if rev.valid_to is None else to_micros(rev.valid_to))
        if valid_from is not UNSET:
            start = parse_time(valid_from, name="valid_from", tz=z)
            vf = to_micros(start.at)
            if precision is UNSET and start.precision != rev.precision and start.is_date:
                changes["precision"] = start.precision
        if valid_to is not UNSET:
            vt = None if valid_to is None else to_micros(parse_time(valid_to, name="valid_to", tz=z).at)
        check_interval(from_micros(vf), None if vt is None else from_micros(vt))
        if vf != to_micros(rev.valid_from):
            changes["valid_from"] = vf
            changes["valid_source"] = "explicit"
        if vt != (None if rev.valid_to is None else to_micros(rev.valid_to)):
            changes["valid_to"] = vt
        if precision is not UNSET and precision != rev.precision:
            changes["precision"] = precision
        if not changes:
            raise InvalidOperationError(
                f"correct({memory_id!r}) changes nothing: give a different text, value, "
                "attributes, valid time or precision"
            )
        if new_source is not UNSET:
            changes["source"] = new_source
        if observed_at is not None:
            changes["observed_at"] = to_micros(parse_time(observed_at, name="observed_at", tz=z).at)
        return ledger.follow(rev, now, "correct", corrected=True, reason=reason, **changes)


def supersede(
    ledger: Ledger,
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
    """See :meth:`localmem.store.Store.supersede`."""
    check_text(text)
    optional_text(reason, "reason")
    if precision is not None:
        check_precision(precision)
    encoded = _encoded(value, attributes, source)  # bad JSON is refused before the write begins
    _check_resolve(resolve)
    # The replaced memory's user and zone never change: read them, and the text's phrases,
    # before the write begins (the write reads the memory again under the lock).
    old = ledger.state(memory_id)
    said = _read(ledger, text, source, encoded, user_id=old.user_id, observed_at=observed_at, tz=old.tz,
                 reading=resolve and valid_from is None, state=True, backfill=None)
    return _write(ledger, said, user_id=old.user_id, valid_from=valid_from, valid_to=valid_to,
                  precision=precision, expires=expires, key=old.key, supersedes=memory_id, kind=old.kind,
                  reason=reason, backfill=None)


def retract(ledger: Ledger, memory_id: str, reason: str | None = None, *,
            observed_at: TimeInput | None = None) -> Revision:
    """See :meth:`localmem.store.Store.retract`."""
    optional_text(reason, "reason")
    with ledger.write() as now:
        state = ledger.state(memory_id)
        if state.retracted:
            raise InvalidOperationError(f"memory {memory_id!r} is already retracted")
        obs = now if observed_at is None else to_micros(
            parse_time(observed_at, name="observed_at", tz=zone(state.tz)).at)
        return ledger.follow(state, now, "retract", retracted=True, reason=reason, observed_at=obs)


def expire(ledger: Ledger, memory_id: str, on: TimeInput, *, reason: str | None = None) -> Revision:
    """See :meth:`localmem.store.Store.expire`."""
    optional_text(reason, "reason")
    with ledger.write() as now:
        state = ledger.state(memory_id)
        if state.retracted:
            raise InvalidOperationError(f"memory {memory_id!r} is retracted: nothing to expire")
        exp = ledger.expiry(on, zone(state.tz))
        if state.expires_at is not None and to_micros(state.expires_at) == exp:
            raise InvalidOperationError(
                f"memory {memory_id!r} already expires at {state.expires_at.isoformat()!r}"
            )
        return ledger.follow(state, now, "expire", expires_at=exp, reason=reason)


def erase(ledger: Ledger, memory_id: str, reason: str | None = None, *, by: str | None = None) -> Erasure:
    """See :meth:`localmem.store.Store.erase`."""
    optional_text(reason, "reason")
    optional_text(by, "by")
    with ledger.write() as now:
        rev = ledger.state(memory_id)
        tomb_id = ledger.record_erasure(rev, at=now, by=by, reason=reason)
        derived = ledger.erase_derived([rev.memory_id], at=now, by=by)
    done = not ledger.in_transaction and not ledger.checkpoint_pending
    return Erasure(memory_id, rev.user_id, from_micros(now), by, reason, tomb_id, done, tuple(derived))


def embed_missing(ledger: Ledger, user_id: str | None = None) -> int:
    """See :meth:`localmem.store.Store.embed_missing`."""
    embedder = ledger.embedder
    if embedder is None:
        raise InvalidOperationError(
            "embed_missing() needs an embedder: open the store with localmem.open(path, embedder=...)")
    if user_id is not None:
        check_text(user_id, "user_id")
    total, after = 0, 0
    while True:
        with ledger.transaction():
            batch = missing(ledger.connection, embedder.name, user_id=user_id, after=after, limit=BATCH_SIZE)
            if batch:
                total += store_vectors(ledger.connection, embedder, batch, embedded_at=ledger.recorded_now())
                after = batch[-1].rev_seq
        if len(batch) < BATCH_SIZE:
            return total
