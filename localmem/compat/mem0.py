"""A mem0-compatible ``Memory``: mem0's method names, arguments and return shapes on localmem.

An agent written against ``from mem0 import Memory`` runs with the import changed to
``from localmem.compat.mem0 import Memory``. The calls keep their names and their
``{"results": [...]}`` dicts; what they mean is localmem's:

* ``add`` stores what was said, one memory per message of the user (an assistant's
  reply is not a fact about the user; ``roles=`` changes that). There is no LLM:
  ``infer`` defaults to False here and ``infer=True`` is refused. ``timestamp`` is when
  it was said (time phrases such as "yesterday" are read against it); without it,
  now.
* ``update`` is a correction (the earlier account was wrong; the old text stays in
  ``history``), ``delete`` a retraction (hidden from current reads, kept in history and
  in reads as of earlier times), ``delete_all`` retracts every memory of a scope and
  ``reset`` every memory of the store. Nothing is destroyed: use
  :meth:`localmem.Store.erase` for a privacy erasure.
* ``history`` lists localmem's changes as mem0-style event dicts (ADD, UPDATE, DELETE),
  each with the localmem operation under ``localmem_op``.
* ``search`` is localmem's ranking (full-text relevance scaled so the best hit has 1,
  plus temporal fit, plus usage); ``score`` and ``threshold`` are on that scale.
  ``search`` and ``get_all`` also take ``as_of`` and ``known_at``: what was known then.
* Scope: ``user_id`` is the store's user. ``agent_id`` and ``run_id`` are kept as
  attributes and narrow a read within the user; a memory with no user is filed under
  the user ``agent:<agent_id>`` (or ``run:<run_id>``). ``metadata`` is the memory's
  attributes, and filters on its keys are localmem filters on ``attributes.<key>``;
  localmem's own fields (``valid_time``, ``observed_at``, ``recorded_at``, ``kind``,
  ``key``, ``precision``, ``attributes.<name>``) may be filtered on too.

An interface layer: it uses only localmem's public API and imports nothing of mem0.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from typing import Any

import localmem
from localmem import (
    Change,
    Clock,
    Embedder,
    InvalidFilterError,
    InvalidInputError,
    InvalidOperationError,
    NotFoundError,
    Revision,
    Store,
    TimeInput,
)

__all__ = ["Memory", "SCOPE_KEYS"]

#: mem0's scoping ids, which its filters and ``delete_all`` take.
SCOPE_KEYS = ("user_id", "agent_id", "run_id")
#: Filter fields that are localmem's own (everything else is a metadata key).
_NATIVE = ("valid_time", "observed_at", "recorded_at", "kind", "key", "precision")
_OPERATORS = ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains")
_EVENTS = {"assert": "ADD", "supersede": "ADD", "derive": "ADD", "correct": "UPDATE", "expire": "UPDATE",
           "superseded": "UPDATE", "retract": "DELETE", "erase": "DELETE"}
_KIND = "message"


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


_UNSET: Any = _Unset()


def _hash(text: str | None) -> str | None:
    # mem0's hash of a memory's text (md5 hex), for callers that compare it.
    return None if text is None else hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()


def _scope(user_id: Any, agent_id: Any, run_id: Any) -> tuple[str, dict[str, str]]:
    """(the store's user, the id attributes) of a mem0 scope."""
    ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    for name, value in ids.items():
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise InvalidInputError(f"{name}={value!r} is not an id: expected a non-empty string")
    if user_id is not None:
        user = user_id.strip()
    elif agent_id is not None:
        user = "agent:" + agent_id.strip()
    elif run_id is not None:
        user = "run:" + run_id.strip()
    else:
        raise InvalidInputError("no scope given: pass one of user_id, agent_id or run_id "
                                "(in search and get_all, inside filters={'user_id': ...})")
    attrs = {k: v.strip() for k, v in (("agent_id", agent_id), ("run_id", run_id)) if v is not None}
    return user, attrs


def _leaf(name: str, condition: Any, where: str) -> dict[str, Any]:
    field = name if name in _NATIVE or name.startswith("attributes.") else f"attributes.{name}"
    if condition == "*":
        raise InvalidFilterError(f"{where}: the wildcard '*' is not supported: filter on a value or leave "
                                 f"{name!r} out")
    if isinstance(condition, Mapping):
        for op in condition:
            if op not in _OPERATORS:
                hint = " (use contains, which is case-sensitive)" if op == "icontains" else ""
                raise InvalidFilterError(f"{where}.{op}: unknown operator {op!r}{hint}: expected one of "
                                         f"{', '.join(_OPERATORS)}")
    return {field: condition}


def _filter_tree(node: Any, where: str) -> dict[str, Any]:
    """mem0's filter dict (scope keys removed) as a localmem filter tree."""
    if not isinstance(node, Mapping) or not node:
        raise InvalidFilterError(f"{where}={node!r:.60} is not a non-empty mapping")
    parts: list[dict[str, Any]] = []
    for name, condition in node.items():
        if name in ("AND", "OR"):
            if isinstance(condition, (str, bytes)) or not isinstance(condition, Sequence) or not condition:
                raise InvalidFilterError(f"{where}.{name} must be a non-empty list of filters")
            parts.append({name: [_filter_tree(c, f"{where}.{name}[{i}]") for i, c in enumerate(condition)]})
        elif name == "NOT":
            # mem0 takes a list here and matches what none of them match.
            items = list(condition) if isinstance(condition, Sequence) and not isinstance(condition, str) \
                else [condition]
            if not items:
                raise InvalidFilterError(f"{where}.NOT must name at least one filter")
            inner = [_filter_tree(c, f"{where}.NOT[{i}]") for i, c in enumerate(items)]
            parts.append({"NOT": inner[0] if len(inner) == 1 else {"OR": inner}})
        elif not isinstance(name, str) or not name:
            raise InvalidFilterError(f"{where}: {name!r} is not a field name")
        else:
            parts.append(_leaf(name, condition, f"{where}.{name}"))
    return parts[0] if len(parts) == 1 else {"AND": parts}


def _filters(filters: Mapping[str, Any] | None, ids: Mapping[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """(the store's user, a localmem filter tree or None) of mem0's filters and top-level ids."""
    given = dict(filters or {})
    for name, value in ids.items():
        if value is not None:
            if name in given and given[name] != value:
                raise InvalidInputError(f"{name}={value!r} disagrees with filters[{name!r}]={given[name]!r}")
            given[name] = value
    user, attrs = _scope(*(given.pop(k, None) for k in SCOPE_KEYS))
    # An agent-only or run-only scope is its own user: its id attribute says nothing more.
    narrowing = {k: v for k, v in attrs.items() if not user.startswith(k.split("_")[0] + ":")}
    tree = {f"attributes.{k}": v for k, v in narrowing.items()}
    rest = _filter_tree(given, "filters") if given else None
    parts = [*([tree] if tree else []), *([rest] if rest else [])]
    if not parts:
        return user, None
    return user, parts[0] if len(parts) == 1 else {"AND": parts}


class Memory:
    """mem0's ``Memory`` on a localmem store (see the module docstring for what differs).

    Args:
        path: the database file; default ``$LOCALMEM_DB``, else the user data dir (the
            same file the ``localmem`` command uses). ``":memory:"`` for a throwaway one.
        store: an open store to use instead (it is then the caller's to close).
        clock: the store's clock (tests); default the system clock.
        embedder: an embedder for semantic search (see :func:`localmem.open`).
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        store: Store | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        if store is not None and (path is not None or clock is not None or embedder is not None):
            raise InvalidInputError("give either store= or path/clock/embedder, not both")
        self._owned = store is None
        if store is None:
            store = localmem.open(path if path is not None else os.environ.get("LOCALMEM_DB") or None,
                                  clock=clock, embedder=embedder)
        self.store: Store = store

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """A Memory from a config dict: ``{"path": ...}`` (mem0's llm/embedder/vector_store sections
        configure models localmem does not use, and are refused so that nothing is silently ignored)."""
        if not isinstance(config_dict, Mapping):
            raise InvalidInputError(f"config_dict={config_dict!r:.60} is not a mapping")
        unknown = sorted(set(config_dict) - {"path"})
        if unknown:
            raise InvalidInputError(
                f"config keys {unknown!r} are not localmem's: localmem needs no LLM, embedder or vector "
                "store; the only key is 'path' (the database file)")
        return cls(config_dict.get("path"))

    # -- the mem0 shapes ------------------------------------------------------------

    def _created(self, rev: Revision) -> str:
        if rev.version == 1:
            return rev.observed_at.isoformat()
        first = self.store.history(rev.memory_id)[0]
        return (first.observed_at or first.recorded_at).isoformat()

    def _item(self, rev: Revision, score: float | None = None) -> dict[str, Any]:
        attrs = dict(rev.attributes or {})
        ids: dict[str, Any] = {k: attrs.pop(k) for k in ("agent_id", "run_id") if k in attrs}
        item: dict[str, Any] = {
            "id": rev.memory_id,
            "memory": rev.text,
            "hash": _hash(rev.text),
            "metadata": attrs or None,
            "created_at": self._created(rev),
            "updated_at": None if rev.version == 1 else rev.observed_at.isoformat(),
        }
        if score is not None:
            item["score"] = score
        if not rev.user_id.startswith(("agent:", "run:")):
            item["user_id"] = rev.user_id
        item.update(ids)
        if isinstance(rev.source, Mapping):
            item.update({k: rev.source[k] for k in ("role", "actor_id") if k in rev.source})
        if rev.expires_at is not None:
            item["expiration_date"] = rev.expires_at.isoformat()
        item["localmem"] = {"kind": rev.kind, "valid": str(rev.valid),
                            "valid_from": rev.valid_from.isoformat(),
                            "valid_to": None if rev.valid_to is None else rev.valid_to.isoformat(),
                            "recorded_at": rev.recorded_at.isoformat(), "version": rev.version}
        return item

    def _event(self, change: Change, created: str, first: Change) -> dict[str, Any]:
        source = change.source if isinstance(change.source, Mapping) else \
            first.source if isinstance(first.source, Mapping) else {}
        return {
            "id": change.rev_id or change.link,
            "memory_id": None,  # filled by history()
            "old_memory": change.old_text,
            "new_memory": None if change.op in ("retract", "erase") else change.new_text,
            "event": _EVENTS.get(change.op, "UPDATE"),
            "created_at": created,
            "updated_at": None if change is first else change.recorded_at.isoformat(),
            "is_deleted": change.op in ("retract", "erase"),
            "actor_id": source.get("actor_id"),
            "role": source.get("role"),
            "reason": change.reason,
            "localmem_op": change.op,
        }

    # -- mem0's methods ---------------------------------------------------------------

    def add(
        self,
        messages: str | Mapping[str, Any] | Sequence[Mapping[str, Any]],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timestamp: TimeInput | None = None,
        expiration_date: TimeInput | None = None,
        infer: bool = False,
        memory_type: str | None = None,
        prompt: str | None = None,
        roles: Sequence[str] = ("user",),
        tz: str | None = None,
    ) -> dict[str, Any]:
        """Store what was said: a text, a message, or each user message of a conversation.

        Args:
            messages: a text (the user's), a ``{"role", "content"}`` dict, or a list of them;
                a message may carry its own ``sent_at`` and an actor ``name``.
            user_id, agent_id, run_id: the scope (at least one).
            metadata: JSON values kept as the memory's attributes (filterable).
            timestamp: when it was said (default: now); time phrases are read against it.
            expiration_date: hide it after this date (through that day) or instant.
            infer: must be False: localmem stores what was said and runs no LLM.
            memory_type, prompt: mem0's LLM options; refused.
            roles: whose messages to store (default: the user's; system messages never).
            tz: the user's IANA zone, for dates and "yesterday" (default: the last one given).

        Returns:
            ``{"results": [{"id", "memory", "event": "ADD", "role", "actor_id"}, ...]}``.

        Raises:
            InvalidOperationError: ``infer=True``, a memory_type or a prompt.
            InvalidInputError: no scope, a malformed message, bad metadata.
        """
        if infer is not False:
            raise InvalidOperationError(
                f"infer={infer!r}: localmem stores what was said and runs no LLM to extract facts; "
                "pass infer=False (the default here)")
        for name, value in (("memory_type", memory_type), ("prompt", prompt)):
            if value is not None:
                raise InvalidOperationError(f"{name}={value!r} configures mem0's LLM extraction, which "
                                            "localmem does not do: leave it out")
        user, ids = _scope(user_id, agent_id, run_id)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError(f"metadata={metadata!r:.60} is not a mapping")
        attributes = {**{k: v for k, v in (metadata or {}).items() if k not in SCOPE_KEYS}, **ids} or None
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        elif isinstance(messages, Mapping):
            messages = [messages]
        elif isinstance(messages, (bytes, bytearray)) or not isinstance(messages, Sequence):
            raise InvalidInputError(f"messages={messages!r:.60} is not a text, a message or a list of them")
        if isinstance(roles, str) or not all(isinstance(r, str) for r in roles):
            raise InvalidInputError(f"roles={roles!r} is not a list of role names")
        kept: list[tuple[int, Mapping[str, Any]]] = []
        for i, message in enumerate(messages):
            if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
                raise InvalidInputError(f"messages[{i}]={message!r:.60} is not a mapping with role, content")
            if message["role"] != "system" and message["role"] in roles:
                kept.append((i, message))
        results = []
        with self.store.batch():
            for i, message in kept:
                source: dict[str, Any] = {"role": message["role"], "index": i}
                if message.get("name"):
                    source["actor_id"] = message["name"]
                rev = self.store.add(
                    message["content"], user_id=user, observed_at=message.get("sent_at", timestamp), tz=tz,
                    kind=_KIND, attributes=attributes, source=source, expires=expiration_date)
                results.append({"id": rev.memory_id, "memory": rev.text, "event": "ADD",
                                "actor_id": source.get("actor_id"), "role": message["role"]})
        return {"results": results}

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory as a mem0 dict, or None if there is no such memory or it was deleted."""
        try:
            rev = self.store.get(memory_id)
        except NotFoundError:
            return None
        if rev is None or rev.retracted or rev.erased:
            return None
        return self._item(rev)

    def get_all(
        self,
        *,
        filters: Mapping[str, Any] | None = None,
        top_k: int = 20,
        show_expired: bool = False,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """A scope's memories (``filters`` holds the scope, as in mem0 2.x; the ids may also be given
        by keyword, as in mem0 1.x), in the order they became true.

        Like search, it lists current knowledge: past events ("ran a 10K yesterday") and future
        ones stay listed, a fact superseded by a newer one does not. ``as_of``/``known_at``: what
        was known then (localmem's).
        """
        _check_top_k(top_k)
        user, tree = _filters(filters, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        revs = self.store.read(user, as_of=as_of, known_at=known_at, current_only=False,
                               include_expired=show_expired, filters=tree)
        current = [r for r in revs if r.superseded_by is None]
        return {"results": [self._item(r) for r in current[:top_k]]}

    def search(
        self,
        query: str,
        *,
        top_k: int = 20,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = 0.1,
        rerank: bool = False,
        explain: bool = False,
        reference_date: Any = None,
        show_expired: bool = False,
        as_of: TimeInput | None = None,
        known_at: TimeInput | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any]:
        """The scope's memories that best answer ``query``, best first, each with its ``score``.

        Args:
            threshold: drop hits scoring below it (localmem's score: the best text match
                has 1, plus up to 1 of temporal fit and 0.5 of usage); None keeps all.
            rerank: must be False: the ranking already weighs time and usage.
            explain: add ``score_details`` (text, time, usage, bm25) to each hit.
            reference_date: refused; pass ``as_of`` (what was known, and "now" for time words).
            as_of, known_at: search what was known then.
        """
        if rerank:
            raise InvalidOperationError("rerank=True asks for a reranker model; localmem's ranking already "
                                        "reranks by time and usage: leave rerank out")
        if reference_date is not None:
            raise InvalidOperationError(f"reference_date={reference_date!r}: pass as_of= instead (the time "
                                        "the search is as of; time words in the query are read against it)")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))):
            raise InvalidInputError(f"threshold={threshold!r} is not a number")
        _check_top_k(top_k)
        user, tree = _filters(filters, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        hits = self.store.search(query, user_id=user, as_of=as_of, known_at=known_at, filters=tree,
                                 limit=top_k, include_expired=show_expired)
        results = []
        for hit in hits:
            if threshold is not None and hit.score < threshold:
                continue
            item = self._item(hit.revision, score=hit.score)
            if explain:
                item["score_details"] = {"text": hit.text, "time": hit.time, "usage": hit.usage,
                                         "bm25": hit.bm25}
            results.append(item)
        return {"results": results}

    def update(
        self,
        memory_id: str,
        text: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        expiration_date: Any = _UNSET,
        data: str | None = None,
    ) -> dict[str, Any]:
        """Correct a memory: new text and/or metadata (merged into the old; the scope ids stay), or a new
        expiry. The earlier account stays in ``history``. The same text again changes nothing.

        Raises:
            NotFoundError: no such memory. InvalidOperationError: it was deleted, or
            ``expiration_date=None`` (an expiry can be moved, not removed).
        """
        text = data if text is None else text
        if text is None and metadata is None and expiration_date is _UNSET:
            raise InvalidInputError("update needs text, metadata or expiration_date")
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError(f"metadata={metadata!r:.60} is not a mapping")
        if expiration_date is None:
            raise InvalidOperationError("expiration_date=None: localmem moves an expiry but never removes "
                                        "one; give a later date")
        with self.store.batch():
            rev = self.store.get(memory_id)
            if rev is None:
                raise NotFoundError(f"no memory with id {memory_id!r}")
            changes: dict[str, Any] = {}
            if text is not None and text != rev.text:
                changes["text"] = text
            if metadata is not None:
                merged = {**(rev.attributes or {}),
                          **{k: v for k, v in metadata.items() if k not in SCOPE_KEYS}}
                if merged != (rev.attributes or {}):
                    changes["attributes"] = merged
            if changes:
                self.store.correct(memory_id, **changes)
            if expiration_date is not _UNSET:
                self.store.expire(memory_id, expiration_date)
            elif not changes:
                return {"message": "Memory unchanged: it already says that."}
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, Any]:
        """Retract a memory: hidden from current reads, kept in history and in reads as of earlier."""
        self.store.retract(memory_id)
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, Any]:
        """Retract every memory of a scope (all valid times, expired ones too), in one transaction."""
        user, tree = _filters(None, {"user_id": user_id, "agent_id": agent_id, "run_id": run_id})
        with self.store.batch():
            for rev in self.store.read(user, current_only=False, include_expired=True, filters=tree):
                self.store.retract(rev.memory_id)
        return {"message": "Memories deleted successfully!"}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every change to a memory, oldest first, as mem0 event dicts (ADD, UPDATE, DELETE)."""
        changes = self.store.history(memory_id)
        first = changes[0]
        created = (first.observed_at or first.recorded_at).isoformat()
        out = []
        for change in changes:
            event = self._event(change, created, first)
            event["memory_id"] = memory_id
            out.append(event)
        return out

    def reset(self) -> None:
        """Retract every memory of every user (nothing is destroyed: see ``Store.erase`` for that)."""
        with self.store.batch():
            for user in self.store.users():
                for rev in self.store.read(user, current_only=False, include_expired=True):
                    self.store.retract(rev.memory_id)

    def close(self) -> None:
        """Close the store, if this Memory opened it."""
        if self._owned:
            self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_top_k(top_k: Any) -> None:
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise InvalidInputError(f"top_k={top_k!r} is not acceptable: expected a positive integer")
