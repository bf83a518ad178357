"""Many new memories in one write: :func:`add_many`, the batched form of ``add``.

Each item is what ``add`` takes (its keyword arguments as a mapping); the rules are
``add``'s, item by item, in order. What differs is the cost:

* every item is checked, encoded and its time phrases read before the transaction
  begins (a bad item refuses the whole call, naming it, before any write); the phrases of
  all items are read at once, a big batch's shared with reader processes
  (:mod:`~localmem.core.phrases`);
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
from ..time.clock import Micros, zone
from ..time.interval import check_precision
from . import chain, sql
from .ids import new_ids
from .inputs import encode_attributes, encode_json, observed_micros
from .ledger import Ledger, ValidSpan
from .messages import with_message_json
from .phrases import Read, Readers, Task, check_workers, read_chunk
from .revision import Added
from .writes import Encoded, Said, check_add, write_one

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


def add_many(ledger: Ledger, items: Iterable[Mapping[str, Any]], *, resolve: bool = True,
             workers: int | None = 0, readers: Readers | None = None) -> list[Added]:
    """See :meth:`localmem.store.Store.add_many` (``readers``: the store's reader processes, which
    :mod:`~localmem.core.phrases` may share a big batch's phrase reading with; None: read here)."""
    checked = _checked(items, resolve)
    check_workers(workers)
    read = _read(ledger, checked, resolve, workers, readers)
    out: list[Added] = []
    reading = read[0][1].reading if read else None
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


#: An item checked and encoded, before its phrases are read: (value, attributes, source) as JSON,
#: its zone, when it was observed (None: at the write), whether its phrases are read.
_Prepared = tuple[Encoded, ZoneInfo, Micros | None, bool]


def _read(ledger: Ledger, checked: list[Mapping[str, Any]], resolve: bool, workers: int | None,
          readers: Readers | None) -> list[tuple[Mapping[str, Any], Said]]:
    """Every item read as ``add`` reads its arguments, before the write: checked and encoded here in
    order (a zone given for a user holds for the user's later items, as it does for later adds),
    then the phrases of all of them read at once (:class:`~localmem.core.phrases.Readers`); the
    first bad item, in item order, is refused naming it."""
    zones: dict[str, ZoneInfo] = {}  # one zone lookup per user, not per item
    reading = ledger.clock_reading() if checked else None
    seen: set[tuple[str, str]] = set()  # (user_id, kind) pairs already checked
    prepared: list[_Prepared] = []
    tasks: list[Task] = []
    for i, item in enumerate(checked):
        try:
            check_add(item, seen)
            ready = _prepare(ledger, item, resolve, zones, reading)
        except LocalmemError as exc:
            _refuse_read_before(i, tasks, prepared)  # an earlier item's phrases go first
            raise type(exc)(f"items[{i}]: {exc}") from None
        prepared.append(ready)
        if ready[3]:
            observed = ready[2] if ready[2] is not None else reading
            assert observed is not None  # the clock is read when there are items
            tasks.append((item["text"], observed, ready[1], item.get("key") is not None
                          or item.get("supersedes") is not None))
    reads = iter(_read_once(tasks, workers, readers))
    out = []
    for i, (item, (encoded, z, observed, phrased)) in enumerate(zip(checked, prepared, strict=True)):
        text, said = item["text"], None
        if phrased:
            got = next(reads)
            if isinstance(got, LocalmemError):
                raise type(got)(f"items[{i}]: {got}") from None
            if got is not None:
                text, said = got
                # The message is kept in the source: its JSON is the item's, the message put first.
                encoded = (encoded[0], encoded[1], with_message_json(item["text"], item.get("source"),
                                                                     encoded[2]))
        out.append((item, Said(text, encoded, z, observed, reading, said)))
    return out


def _read_once(tasks: list[Task], workers: int | None, readers: Readers | None) -> list[Read]:
    """Each task's read, in order, every distinct task read once: reading is a pure function of
    the task (text, instant, zone, state), and a batch's items share one instant, so a text said
    again in the batch ("ok", "thanks!") by a user in the same zone reads as it did."""
    first: dict[Task, int] = {}
    where = [first.setdefault(t, len(first)) for t in tasks]
    unique = list(first) if len(first) < len(tasks) else tasks
    got = read_chunk(unique) if readers is None else readers.read(unique, workers)
    return got if unique is tasks else [got[j] for j in where]


def _prepare(ledger: Ledger, item: Mapping[str, Any], resolve: bool, zones: dict[str, ZoneInfo],
             reading: Micros | None) -> _Prepared:
    """One item's JSON, zone and observed time, checked in ``add``'s order."""
    user_id, tz = item["user_id"], item.get("tz")
    value, attributes = encode_json(item.get("value"), "value"), encode_attributes(item.get("attributes"))
    z: ZoneInfo
    if tz is not None:
        z = zones[user_id] = zone(tz)
    elif user_id in zones:
        z = zones[user_id]
    else:
        z = zones[user_id] = ledger.zone_for(None, user_id)
    observed_at = item.get("observed_at")
    observed = None if observed_at is None else observed_micros(observed_at, 0, z)
    source = encode_json(item.get("source"), "source")  # bad JSON is refused whatever the text says
    return (value, attributes, source), z, observed, resolve and item.get("valid_from") is None


def _refuse_read_before(i: int, tasks: list[Task], prepared: list[_Prepared]) -> None:
    """Raise the error reading an item before ``items[i]`` gives, if one does (``add`` item by item
    would have refused that one first)."""
    reads = iter(read_chunk(tasks))
    for j, ready in enumerate(prepared[:i]):
        if ready[3] and isinstance(got := next(reads), LocalmemError):
            raise type(got)(f"items[{j}]: {got}") from None


def _append(
    ledger: Ledger, group: list[tuple[Mapping[str, Any], Said]], reading: Micros | None
) -> list[Added]:
    """Append a run of items that need no lookup, in bulk, at one recorded time.

    The local chain runs in item order from the head read here; the ledger is told the new head
    only once the rows are in (an item refused while its row is built, e.g. a bad ``expires``,
    leaves the head, like the file, as it was: a batch() around the call may go on writing)."""
    if not group:
        return []
    now = ledger.recorded_now(reading)
    seq = ledger.newest_seq()
    origin, hlc = ledger.device_id, now << 10
    memories, revisions, contents, out = [], [], [], []
    ids = iter(new_ids(now, 2 * len(group)))
    head = ledger.chain_head()
    content_hash, rev_hash_of, link_of = chain.content_hash, chain.rev_hash, chain.link
    for item, said in group:
        seq += 1
        span = _span(ledger, item, said, now) if not _EXPLICIT.isdisjoint(item) else _said_span(said, now)
        exp = None if item.get("expires") is None else ledger.expiry(item["expires"], said.z)
        memory_id, rev_id = next(ids), next(ids)
        user_id, kind, reason = item["user_id"], item.get("kind", "fact"), item.get("reason")
        observed = now if said.observed is None else said.observed
        value, attributes, source = said.encoded
        fields = (rev_id, memory_id, user_id, 1, "assert", *span, observed, now, said.z.key, exp, 0, 0,
                  None, None, None, origin, hlc)
        content = content_hash(said.text, value, attributes, source, reason)
        rev_hash = rev_hash_of(fields, kind, None, content, None)
        head = link_of(head, rev_hash, now)
        memories.append((memory_id, user_id, kind, None, now))
        revisions.append((seq, *fields, now, content, rev_hash, head))
        row = (seq, memory_id, said.text, value, attributes, source, reason)
        contents.append(row)
        out.append(Added(memory_id, rev_id, (kind, fields, row)))
    ledger.append_new(memories, revisions, contents)
    assert head is not None  # the group holds an item
    ledger.set_head(head)
    return out


#: The item fields that make its valid time go through the ledger's rule (not the text's alone).
_EXPLICIT = frozenset({"valid_from", "valid_to", "precision"})


def _said_span(said: Said, now: Micros) -> ValidSpan:
    """The valid time of an item with no explicit times: what the text said, else the observed
    instant (assumed)."""
    if said.said is not None:
        return said.said[0], said.said[1], check_precision(said.said[2]), "resolved"
    return now if said.observed is None else said.observed, None, "instant", "assumed"


def _span(ledger: Ledger, item: Mapping[str, Any], said: Said, now: Micros) -> ValidSpan:
    """``add``'s valid time: explicit arguments through the ledger's rule, else what the text said,
    else the observed instant (assumed)."""
    otherwise = _said_span(said, now)
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
