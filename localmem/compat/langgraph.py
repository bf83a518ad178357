"""A LangGraph ``BaseStore`` on localmem: LangGraph agents and LangMem's tools keep their store calls.

``graph.compile(store=LocalmemStore(localmem.open(path)))`` and every ``store.put``,
``get``, ``search``, ``delete`` and ``list_namespaces`` an agent makes lands in a
localmem file, where the CLI, the TUI and as-of reads see it. The mapping:

* A namespace is a user and a kind: the label at ``user_at`` (default the last one, as
  in LangMem's ``("memories", "{user_id}")``) is the localmem user, the other labels
  joined by ``/`` are the memory's kind (``"langgraph"`` when there are none). The item's
  namespace and key are kept in the memory's source and its localmem key, so two
  namespaces never share a memory.
* ``put`` adds a memory for a new key and *corrects* the memory of an existing one (same
  memory, new value; the old value stays in its history). The value is the memory's JSON
  value; its text (what search reads) is the value's strings, or the fields ``index`` names.
  Time phrases in it are not read: an item is valid from when it was put. A put of the value
  an item already has writes nothing.
* ``delete`` (and a put of ``None``) *retracts* it: gone from reads, kept in history. A put
  after a delete starts a new memory.
* ``search`` without a query lists the namespace prefix's items, most recently updated
  first; with one it is localmem's ranking within each user the prefix can reach, then
  the prefix and the filter. ``filter`` is LangGraph's (exact values, nested dicts and
  lists, ``$eq $ne $gt $gte $lt $lte``, dotted paths).
* ``LocalmemStore(store, known_at=T)`` is a read-only view of what the store knew at T:
  an agent replayed against it sees exactly the memories it saw then.
* No TTL (``supports_ttl`` is False; localmem's own expiry is ``Store.expire``).

Which users a search or listing reads: a prefix that reaches the user label reads that
user's items only. With a negative ``user_at`` (the default) the label's place depends on
the namespace's length, so every user is read, unless ``depth`` says how many labels every
namespace has (``depth=2`` for LangMem's): give it on stores with many users. A query
ranks at most 1000 candidates per user before the prefix and filter are applied.

An interface layer: it uses only localmem's public API (``pip install 'localmem[langgraph]'``).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from langgraph.store.base.embed import get_text_at_path

from localmem import InvalidInputError, InvalidOperationError, Revision, Store, TimeInput

__all__ = ["LocalmemStore", "SOURCE"]

#: The key of a memory's source under which an item's namespace, key and index live.
SOURCE = "langgraph"
#: How many hits a query asks localmem for, per page of results wanted, before filtering.
_OVERFETCH = 4
_OPS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """What search reads of a value: the named fields, else every string in it."""
    if fields:
        parts = [t for f in fields for t in get_text_at_path(value, f)]
    else:
        parts = []

        def walk(v: Any) -> None:
            if isinstance(v, str):
                parts.append(v)
            elif isinstance(v, Mapping):
                for x in v.values():
                    walk(x)
            elif isinstance(v, (list, tuple)):
                for x in v:
                    walk(x)

        walk(value)
    text = "\n".join(p for p in parts if p.strip())
    return text or json.dumps(value, sort_keys=True, ensure_ascii=False)


def _at(value: Any, path: str) -> tuple[bool, Any]:
    """(found, the value at a filter key): the key itself, else a dotted path into nested dicts."""
    if isinstance(value, Mapping) and path in value:
        return True, value[path]
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _equal(have: Any, want: Any) -> bool:
    """JSON equality: a dict matches on the keys it names (recursively), a list element by element,
    and true is not 1."""
    if isinstance(want, Mapping):
        return isinstance(have, Mapping) and _matches(have, want)
    if isinstance(want, (list, tuple)):
        return isinstance(have, (list, tuple)) and len(have) == len(want) and all(
            _equal(h, w) for h, w in zip(have, want, strict=True))
    if isinstance(want, bool) or isinstance(have, bool):
        return type(have) is type(want) and have == want
    return bool(have == want)


def _is_ops(condition: Mapping[str, Any]) -> bool:
    return any(isinstance(k, str) and k.startswith("$") for k in condition)


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x)


def _ops(have: Any, condition: Mapping[str, Any]) -> bool:
    for op, want in condition.items():
        if op not in _OPS:
            raise InvalidInputError(
                f"filter operator {op!r} is not supported: expected one of {', '.join(_OPS)}")
        if op == "$eq":
            ok = _equal(have, want)
        elif op == "$ne":
            ok = not _equal(have, want)
        else:
            a, b = _number(have), _number(want)
            if a is None or b is None or math.isnan(a) or math.isnan(b):
                ok = False
            else:
                ok = {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
        if not ok:
            return False
    return True


def _matches(value: Mapping[str, Any], filter_: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: each key's value equal (or, with $ operators, compared) to the item's."""
    for key, want in (filter_ or {}).items():
        found, have = _at(value, key)
        if isinstance(want, Mapping) and _is_ops(want):
            if not found or not _ops(have, want):
                return False
        elif not found or not _equal(have, want):
            return False
    return True


def _match(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise InvalidInputError(f"match_type={condition.match_type!r} is not 'prefix' or 'suffix'")
    return all(p == "*" or n == p for n, p in pairs)


class LocalmemStore(BaseStore):
    """A LangGraph ``BaseStore`` whose items are localmem memories (see the module docstring).

    Args:
        store: the localmem store (the caller opens and closes it).
        user_at: which namespace label is the localmem user (default -1, the last); a
            namespace too short for it uses its last label.
        fields: the value fields search reads by default (LangGraph paths such as
            ``"content"`` or ``"items[*].text"``); None: every string in the value.
        known_at: a read-only view of what the store knew at this time.
        depth: every namespace has this many labels (a put of another length is refused),
            so a prefix that reaches the user label reads only that user's items.
    """

    supports_ttl = False

    def __init__(
        self,
        store: Store,
        *,
        user_at: int = -1,
        fields: Sequence[str] | None = None,
        known_at: TimeInput | None = None,
        depth: int | None = None,
    ) -> None:
        if isinstance(user_at, bool) or not isinstance(user_at, int):
            raise InvalidInputError(f"user_at={user_at!r} is not a label position: expected an integer")
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 1
                                  or not -depth <= user_at < depth):
            raise InvalidInputError(f"depth={depth!r} is not acceptable: expected a number of labels that "
                                    f"has a label at user_at={user_at}")
        if fields is not None and (isinstance(fields, str) or not all(isinstance(f, str) for f in fields)):
            raise InvalidInputError(f"fields={fields!r} is not a list of field paths")
        self.store = store
        self.user_at = user_at
        self.fields = None if fields is None else list(fields)
        self.known_at = known_at
        self.depth = depth
        # A Store is one connection: LangGraph runs tools on worker threads, so take turns.
        self._lock = threading.RLock()

    # -- the mapping ---------------------------------------------------------------

    def _user(self, namespace: tuple[str, ...]) -> str:
        n = len(namespace)
        return namespace[self.user_at] if -n <= self.user_at < n else namespace[-1]

    def _kind(self, namespace: tuple[str, ...]) -> str:
        n = len(namespace)
        at = self.user_at % n if -n <= self.user_at < n else n - 1
        rest = [label for i, label in enumerate(namespace) if i != at]
        return "/".join(rest) or "langgraph"

    @staticmethod
    def _key(namespace: tuple[str, ...], key: str) -> str:
        # JSON keeps any label and key apart: "/" or "." could appear in either.
        return json.dumps([*namespace, key], ensure_ascii=False)

    @staticmethod
    def _about(rev: Revision) -> dict[str, Any] | None:
        source = rev.source
        about = source.get(SOURCE) if isinstance(source, Mapping) else None
        return about if isinstance(about, dict) else None

    def _users(self, prefix: tuple[str, ...]) -> list[str]:
        """The localmem users whose items a namespace prefix can reach."""
        at = self.user_at if self.depth is None else self.user_at % self.depth
        if self.depth is not None and len(prefix) > self.depth:
            return []
        if 0 <= at < len(prefix) and prefix[at] != "*":
            return [prefix[at]]
        return self.store.users()

    def _current(self, namespace: tuple[str, ...], key: str) -> Revision | None:
        revs = self.store.read(self._user(namespace), key=self._key(namespace, key), include_expired=True,
                               as_of=self.known_at)
        return revs[0] if revs else None

    def _item(self, rev: Revision, about: Mapping[str, Any], score: float | None = None) -> SearchItem:
        created: datetime = rev.recorded_at
        if rev.version > 1:
            created = self.store.history(rev.memory_id, known_at=self.known_at)[0].recorded_at
        value = rev.value if isinstance(rev.value, dict) else {}
        return SearchItem(tuple(about["namespace"]), about["key"], value, created, rev.recorded_at, score)

    def _items(self, prefix: tuple[str, ...]) -> list[tuple[Revision, dict[str, Any]]]:
        out = []
        for user in self._users(prefix):
            for rev in self.store.read(user, include_expired=True, as_of=self.known_at):
                about = self._about(rev)
                if about is not None and tuple(about["namespace"][:len(prefix)]) == prefix:
                    out.append((rev, about))
        return out

    # -- the operations ---------------------------------------------------------------

    def _get(self, op: GetOp) -> Item | None:
        rev = self._current(tuple(op.namespace), op.key)
        about = None if rev is None else self._about(rev)
        if rev is None or about is None:
            return None
        found = self._item(rev, about)
        return Item(value=found.value, key=found.key, namespace=found.namespace,
                    created_at=found.created_at, updated_at=found.updated_at)

    def _put(self, op: PutOp) -> None:
        if self.known_at is not None:
            raise InvalidOperationError(
                f"this LocalmemStore is a view as of {self.known_at!r}: it takes no writes")
        if op.ttl is not None:
            raise NotImplementedError("TTL is not supported by LocalmemStore: localmem expires memories "
                                      "with Store.expire; pass ttl=None")
        namespace = tuple(op.namespace)
        if not namespace:
            raise InvalidInputError("the namespace is empty: give at least one label")
        if self.depth is not None and len(namespace) != self.depth:
            raise InvalidInputError(f"namespace {namespace!r} has {len(namespace)} labels: this store's "
                                    f"namespaces have {self.depth} (depth={self.depth})")
        rev = self._current(namespace, op.key)
        if op.value is None:
            if rev is not None:
                self.store.retract(rev.memory_id)
            return
        if not isinstance(op.value, Mapping):
            raise InvalidInputError(f"value={op.value!r:.60} is not a mapping")
        value = dict(op.value)
        fields = self.fields if op.index is None else (op.index or None)
        text = _text(value, fields)
        about = {"namespace": list(namespace), "key": op.key, "index": op.index is not False}
        if rev is None:
            self.store.add(text, user_id=self._user(namespace), kind=self._kind(namespace),
                           key=self._key(namespace, op.key), value=value, source={SOURCE: about},
                           resolve=False)
            return
        changes: dict[str, Any] = {}
        if rev.value != value:
            changes["value"] = value
        if rev.text != text:
            changes["text"] = text
        if self._about(rev) != about:
            changes["source"] = {SOURCE: about}
        if changes.keys() - {"source"}:
            self.store.correct(rev.memory_id, **changes)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = tuple(op.namespace_prefix)
        if op.limit < 0 or op.offset < 0:
            raise InvalidInputError(
                f"limit={op.limit!r}, offset={op.offset!r}: expected non-negative integers")
        wanted = op.offset + op.limit
        query = op.query
        found: list[tuple[Revision, dict[str, Any], float | None]] = []
        if query is not None and any(ch.isalnum() for ch in query):
            hits = []
            for user in self._users(prefix):
                hits += self.store.search(query, user_id=user, as_of=self.known_at, include_expired=True,
                                          limit=min(1000, max(100, _OVERFETCH * wanted)),
                                          log=self.known_at is None)
            hits.sort(key=lambda h: -h.score)
            for hit in hits:
                about = self._about(hit.revision)
                if about is None or not about.get("index", True):
                    continue
                if tuple(about["namespace"][:len(prefix)]) == prefix:
                    found.append((hit.revision, about, hit.score))
        else:  # no query (or one with no word to search for): the prefix's items, newest first
            items = sorted(self._items(prefix), key=lambda p: (p[0].recorded_at, p[1]["key"]), reverse=True)
            found = [(rev, about, None) for rev, about in items]
        kept = [(r, a, s) for r, a, s in found if _matches(r.value if isinstance(r.value, dict) else {},
                                                           op.filter)]
        return [self._item(r, a, s) for r, a, s in kept[op.offset:wanted]]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = tuple(op.match_conditions or ())
        prefix: tuple[str, ...] = ()
        for c in conditions:
            if c.match_type == "prefix":
                prefix = tuple(c.path[:next((i for i, p in enumerate(c.path) if p == "*"), len(c.path))])
                break
        seen: set[tuple[str, ...]] = set()
        for _, about in self._items(prefix):
            namespace = tuple(about["namespace"])
            if all(_match(c, namespace) for c in conditions):
                seen.add(namespace if op.max_depth is None else namespace[:op.max_depth])
        return sorted(seen)[op.offset:op.offset + op.limit]

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order, in one localmem transaction; each result in its place.

        Raises:
            InvalidNamespaceError: a label is empty, not a string, or holds a period.
            InvalidInputError, InvalidOperationError: a value or filter localmem refuses
                (the whole batch is then rolled back).
        """
        ops = list(ops)
        for op in ops:
            validate_op_namespace(op)
        results: list[Result] = []
        with self._lock:
            writes = any(isinstance(op, PutOp) for op in ops)
            with self.store.batch() if writes else contextlib.nullcontext(self.store):
                for op in ops:
                    if isinstance(op, GetOp):
                        results.append(self._get(op))
                    elif isinstance(op, PutOp):
                        self._put(op)
                        results.append(None)
                    elif isinstance(op, SearchOp):
                        results.append(self._search(op))
                    elif isinstance(op, ListNamespacesOp):
                        results.append(self._list_namespaces(op))
                    else:
                        raise InvalidInputError(f"{op!r:.80} is not a LangGraph store operation")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch`, for async graphs (localmem's calls take milliseconds; they run inline)."""
        return self.batch(ops)
