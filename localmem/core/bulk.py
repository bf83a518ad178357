"""Many new memories in one write: :func:`add_many`, the batched form of ``add``.

Each item is what ``add`` takes (its keyword arguments as a mapping); the rules are
``add``'s, item by item, in order. What differs is the cost:

* every item is checked, encoded and its time phrases read before the transaction
  begins (a bad item refuses the whole call, naming it, before any write);
* the items are written in one transaction, recorded at one instant (each a memory of
  its own, with a time-ordered id of that instant);
* items that need no lookup (no ``key``, no ``supersedes``) are appended in bulk: their
  rows staged by ``executemany`` and copied into each table by one statement
  (:data:`~localmem.core.sql.STAGED`), their seqs and hashes worked out here — the same
  values :meth:`Ledger.append <localmem.core.ledger.Ledger.append>` would give, the local
  chain running in item order;
* the result is light: an :class:`~localmem.core.revision.Added` per item, holding
  the ids, that builds the full :class:`~localmem.core.revision.Revision` only when
  asked.

Items with a ``key`` or ``supersedes`` read the store (the key's current value, the
memory replaced) and take ``add``'s own path, in their place in the order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, LocalmemError
from ..time.clock import Micros
from ..time.interval import check_precision
from . import chain, sql
from .ids import new_ids
from .ledger import Ledger, ValidSpan
from .revision import Added
from .writes import Said, check_add, read_said, write_one

__all__ = ["add_many", "ITEM_FIELDS"]

#: What an item of :func:`add_many` may hold: ``add``'s keyword arguments.
ITEM_FIELDS = frozenset(
    {
        "text",
        "user_id",
        "observed_at",
        "tz",
        "valid_from",
        "valid_to",
        "precision",
        "expires",
        "key",
        "supersedes",
        "kind",
        "value",
        "attributes",
        "source",
        "reason",
    }
)
# A new memory's revision row up to hlc is its hashed fields: one tuple serves both.
assert sql.STORED_REVISION_COLUMNS[: len(chain.HASHED_FIELDS)] == chain.HASHED_FIELDS


def _checked(items: object, resolve: object) -> list[Mapping[str, Any]]:
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise InvalidInputError(f"items={items!r:.60} is not a list of mappings (add's keyword arguments)")
    if not isinstance(resolve, bool):
        raise InvalidInputError(f"resolve={resolve!r} is not a bool")
    out = list(items)
    for i, item in enumerate(out):
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"items[{i}]={item!r:.60} is not a mapping of add's keyword arguments")
        unknown = set(item) - ITEM_FIELDS
        if unknown:
            raise InvalidInputError(f"items[{i}] has {sorted(unknown)!r}, which add() does not take")
        if "text" not in item or "user_id" not in item:
            raise InvalidInputError(f"items[{i}] needs text and user_id")
    return out


def add_many(ledger: Ledger, items: Iterable[Mapping[str, Any]], *, resolve: bool = True) -> list[Added]:
    """See :meth:`localmem.store.Store.add_many`."""
    checked = _checked(items, resolve)
    read: list[tuple[Mapping[str, Any], Said]] = []
    zones: dict[str, ZoneInfo] = {}  # one zone lookup per user, not per item
    reading = ledger.clock_reading() if checked else None
    seen: set[tuple[str, str]] = set()  # (user_id, kind) pairs already checked
    for i, item in enumerate(checked):
        try:
            check_add(item, seen)
            said = read_said(ledger, item, resolve=resolve, zones=zones, reading=reading)
        except LocalmemError as exc:
            raise type(exc)(f"items[{i}]: {exc}") from None
        read.append((item, said))
    out: list[Added] = []
    with ledger.transaction():
        group: list[tuple[Mapping[str, Any], Said]] = []
        for item, said in read:
            if item.get("key") is None and item.get("supersedes") is None:
                group.append((item, said))
                continue
            out.extend(_append(ledger, group, reading))
            group = []
            rev = write_one(ledger, item, said)
            out.append(Added(rev.memory_id, rev.rev_id, rev))
        out.extend(_append(ledger, group, reading))
    return out


def _append(
    ledger: Ledger, group: list[tuple[Mapping[str, Any], Said]], reading: Micros | None
) -> list[Added]:
    """Append a run of items that need no lookup, in bulk, at one recorded time."""
    if not group:
        return []
    now = ledger.recorded_now(reading)
    seq = ledger.newest_seq()
    origin, hlc = ledger.device_id, now << 10
    memories, revisions, contents, out = [], [], [], []
    ids = iter(new_ids(now, 2 * len(group)))
    for item, said in group:
        seq += 1
        span = _span(ledger, item, said, now)
        exp = None if item.get("expires") is None else ledger.expiry(item["expires"], said.z)
        memory_id, rev_id = next(ids), next(ids)
        user_id, kind, reason = item["user_id"], item.get("kind", "fact"), item.get("reason")
        observed = now if said.observed is None else said.observed
        value, attributes, source = said.encoded
        fields = (
            rev_id,
            memory_id,
            user_id,
            1,
            "assert",
            span[0],
            span[1],
            span[2],
            span[3],
            observed,
            now,
            said.z.key,
            exp,
            0,
            0,
            None,
            None,
            None,
            origin,
            hlc,
        )
        content = chain.content_hash(said.text, value, attributes, source, reason)
        rev_hash = chain.rev_hash(fields, kind, None, content, None)
        link = ledger.link(rev_hash, now)
        ledger.set_head(link)
        memories.append((memory_id, user_id, kind, None, now))
        revisions.append((seq, *fields, now, content, rev_hash, link))
        row = (seq, memory_id, said.text, value, attributes, source, reason)
        contents.append(row)
        out.append(Added(memory_id, rev_id, (kind, fields, row)))
    ledger.append_new(memories, revisions, contents)
    return out


def _span(ledger: Ledger, item: Mapping[str, Any], said: Said, now: Micros) -> ValidSpan:
    """``add``'s valid time: explicit arguments through the ledger's rule, else what the text said,
    else the observed instant (assumed)."""
    if said.said is not None:
        otherwise: ValidSpan = (said.said[0], said.said[1], check_precision(said.said[2]), "resolved")
    else:
        otherwise = (now if said.observed is None else said.observed, None, "instant", "assumed")
    vf, vt, precision = item.get("valid_from"), item.get("valid_to"), item.get("precision")
    if vf is None and vt is None and precision is None:
        return otherwise
    return ledger.valid_time(
        said.z,
        valid_from=vf,
        valid_to=vt,
        precision=None if precision is None else check_precision(precision),
        otherwise=otherwise,
    )
