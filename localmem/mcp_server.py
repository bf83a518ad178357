"""An MCP server: localmem's reads and writes as tools any MCP client can call.

Agents reach memory through MCP today (every peer ships a server), so this is
the door that needs no code in the agent at all: point a desktop client or an
agent framework at ``localmem mcp`` and it can add, search, read, correct and
ask what the app knew at any time. Built on the official ``mcp`` SDK
(``pip install 'localmem[mcp]'``); ``import localmem`` never imports it.

An interface layer: it uses only localmem's public API. The rules:

* Every tool returns a JSON object; revisions are :meth:`localmem.Revision.to_dict`
  dicts (times as ISO 8601 UTC strings).
* A :class:`localmem.LocalmemError` comes back as an MCP tool error carrying
  the library's message (which names the bad value and what was expected);
  anything else comes back as the SDK's generic failure, never a traceback.
* ``read_only=True`` leaves the write tools out of the listing altogether, and
  ``search`` then logs no usage (logging is a write).
* Tools run on the SDK's worker threads; one lock serialises them, because a
  :class:`localmem.Store` is one connection and not shared between threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

import localmem
from localmem import UNSET, Clock, InvalidInputError, LocalmemError, Store

__all__ = ["build_server", "serve", "WRITE_TOOLS", "READ_TOOLS"]

#: The tools that change the store: left out entirely in read-only mode.
WRITE_TOOLS = ("add", "correct", "supersede", "expire", "retract")
#: The tools that only read (``search`` logs usage unless the server is read-only).
READ_TOOLS = ("search", "read", "get", "history", "snapshot", "knew")

_TIME = ("an ISO 8601 instant with an offset (2025-06-16T09:00:00Z), a date (2025-06-16, 2025-06, 2025: "
         "read in the user's zone) or epoch seconds")

When = Annotated[str | float | None, Field(description=_TIME)]
UserId = Annotated[str, Field(description="whom the memories are about")]
MemoryId = Annotated[str, Field(description="a memory id (as returned by add, search or read)")]
Filters = Annotated[
    dict[str, Any] | None,
    Field(description='a filter tree, e.g. {"AND": [{"valid_time": {"gte": "2025-06-01"}}, '
                      '{"kind": "event"}]}: fields valid_time, observed_at, recorded_at, kind, key, '
                      "precision, attributes.<name>; operators eq ne gt gte lt lte in nin contains; "
                      "AND/OR take lists, NOT one filter"),
]
Tool = Callable[..., dict[str, Any]]
Reason = Annotated[str | None, Field(description="why this was recorded (kept in the history)")]
IncludeExpired = Annotated[bool, Field(description="keep memories whose expiry has passed (flagged)")]
Attributes = Annotated[dict[str, Any] | None, Field(description="JSON values to filter on later")]


class Message(BaseModel):
    """One message of a conversation to remember."""

    role: Annotated[str, Field(description="who said it: user, assistant, ...")]
    content: Annotated[str, Field(description="what was said")]
    sent_at: When = None


_READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, open_world_hint=False)
# Writes only append: nothing a tool does destroys an earlier revision.
_WRITE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False,
                         open_world_hint=False)


def _memories(revs: list[localmem.Revision]) -> dict[str, Any]:
    return {"memories": [r.to_dict() for r in revs]}


def build_server(store: Store, *, read_only: bool = False, clock: Clock = localmem.system_clock) -> MCPServer:
    """An MCP server whose tools read and write ``store``.

    Args:
        store: the store the tools use (the caller opens and closes it).
        read_only: leave out the write tools, and log no usage on search.
        clock: "now" for ``knew`` when no ``until`` is given.

    Returns:
        The server; run it with :func:`serve` or its own ``run``.
    """
    server = MCPServer(
        "localmem",
        version=localmem.__version__,
        # A refused call is the caller's business (it gets the message); INFO would log every one.
        log_level="WARNING",
        instructions=(
            "A bitemporal memory store: every memory has a valid time (when it was true) and a recorded "
            "time (when the app learned it); nothing is overwritten. Read with search/read/get; pass "
            "as_of (or known_at and valid_at) to ask about the past. knew says what the app knew at a "
            "time and what changed since."
            + ("" if read_only else " Write with add; fix a wrong account with correct; record a change "
               "in the world with supersede; forget with retract.")
        ),
    )
    lock = threading.Lock()

    @contextmanager
    def using() -> Iterator[Store]:
        with lock:
            try:
                yield store
            except LocalmemError as exc:
                raise ToolError(str(exc)) from exc

    def tool(kind: ToolAnnotations) -> Callable[[Tool], Tool]:
        return server.tool(annotations=kind, structured_output=True)

    @tool(_READ)
    def search(
        user_id: UserId,
        query: Annotated[str, Field(description="what to look for; time words (last week) rerank")],
        as_of: When = None,
        known_at: When = None,
        valid_at: When = None,
        filters: Filters = None,
        limit: Annotated[int, Field(description="at most this many hits (1 to 1000)")] = 10,
        include_expired: IncludeExpired = False,
        current_only: Annotated[bool, Field(description="False: search every valid interval too")] = True,
    ) -> dict[str, Any]:
        """Find a user's memories that best answer a query, as known at a time (default: now).

        Each hit carries its memory and the parts of its score (text relevance, temporal fit, usage).
        """
        with using() as s:
            hits = s.search(query, user_id=user_id, as_of=as_of, known_at=known_at, valid_at=valid_at,
                            filters=filters, limit=limit, include_expired=include_expired,
                            current_only=current_only, log=not read_only)
        return {"hits": [{"memory": h.revision.to_dict(), "score": h.score, "text": h.text, "time": h.time,
                          "usage": h.usage} for h in hits]}

    @tool(_READ)
    def read(
        user_id: UserId,
        as_of: When = None,
        known_at: When = None,
        valid_at: When = None,
        current_only: Annotated[bool, Field(description="False: every valid interval (the history)")] = True,
        include_expired: IncludeExpired = False,
        include_retracted: Annotated[bool, Field(description="keep memories the user retracted")] = False,
        kind: Annotated[str | None, Field(description="only this kind (fact, event, message, ...)")] = None,
        key: Annotated[str | None, Field(description="only this key (home_city, ...)")] = None,
        filters: Filters = None,
    ) -> dict[str, Any]:
        """List a user's memories as known at a time (default: now), ordered by when they became true."""
        with using() as s:
            revs = s.read(user_id, as_of=as_of, known_at=known_at, valid_at=valid_at,
                          current_only=current_only, include_expired=include_expired,
                          include_retracted=include_retracted, kind=kind, key=key, filters=filters)
        return _memories(revs)

    @tool(_READ)
    def get(memory_id: MemoryId, as_of: When = None, known_at: When = None,
            valid_at: When = None) -> dict[str, Any]:
        """One memory as known at a time (default: now), flagged (retracted, expired) but never hidden.

        ``memory`` is null when the memory was not yet known then.
        """
        with using() as s:
            rev = s.get(s.resolve_id(memory_id), as_of=as_of, known_at=known_at, valid_at=valid_at)
        return {"memory": None if rev is None else rev.to_dict()}

    @tool(_READ)
    def history(memory_id: MemoryId, known_at: When = None) -> dict[str, Any]:
        """Every change to one memory, oldest first: op, old and new text, valid times, when, why."""
        with using() as s:
            changes = s.history(s.resolve_id(memory_id), known_at=known_at)
        return {"changes": [c.to_dict() for c in changes]}

    @tool(_READ)
    def snapshot(
        user_id: UserId,
        known_at: When = None,
        include_revisions: Annotated[bool, Field(description="also list every revision held then")] = False,
    ) -> dict[str, Any]:
        """Everything the store held about a user at a time, unfiltered (the answer to "you forgot")."""
        with using() as s:
            snap = s.snapshot(user_id, known_at=known_at)
        out: dict[str, Any] = {"user_id": snap.user_id, "known_at": snap.known_at.isoformat(),
                               "memories": [m.to_dict() for m in snap.memories],
                               "revision_count": len(snap.revisions)}
        if include_revisions:
            out["revisions"] = [r.to_dict() for r in snap.revisions]
        return out

    @tool(_READ)
    def knew(
        user_id: UserId,
        at: Annotated[str | float, Field(description="the time to ask about: " + _TIME)],
        until: When = None,
    ) -> dict[str, Any]:
        """What the app knew about a user at a time, and what it learned, corrected or forgot since.

        ``knew_then`` is the current knowledge as of ``at``; ``changes`` lists every change recorded after
        ``at`` and by ``until`` (default: now): learned, corrected, superseded, retracted, expiry, erased.
        """
        with using() as s:
            then = s.read(user_id, as_of=at)
            diff = s.knowledge_diff(user_id, since=at, until=clock() if until is None else until)
        return {"user_id": user_id, "at": diff.since.isoformat(), "until": diff.until.isoformat(),
                "knew_then": [r.to_dict() for r in then],
                "changes": [e.to_dict() for e in diff.entries]}

    if read_only:
        return server

    @tool(_WRITE)
    def add(
        user_id: UserId,
        text: Annotated[str | None, Field(description="one memory to assert (give text or messages)")] = None,
        messages: Annotated[list[Message] | None, Field(
            description="a conversation: one memory per message from `roles`, each read at its own sent_at"
        )] = None,
        sent_at: Annotated[str | float | None, Field(
            description="when it was said (default: now; for messages, the default of each message): "
            + _TIME)] = None,
        zone: Annotated[str | None, Field(
            description="the user's IANA zone (Europe/Berlin): 'yesterday' and dates are read in it")] = None,
        roles: Annotated[list[str] | None, Field(description="the roles to remember (default: user)")] = None,
        kind: Annotated[str | None, Field(description="a label: fact (default), event, ...")] = None,
        key: Annotated[str | None, Field(description="a slot (home_city): a new value supersedes")] = None,
        valid_from: When = None,
        valid_to: When = None,
        expires: Annotated[str | float | None, Field(
            description="hide it after this: a date means through that local day")] = None,
        attributes: Attributes = None,
        reason: Reason = None,
    ) -> dict[str, Any]:
        """Remember what was said: a text, or the user's messages of a conversation.

        Time phrases ("yesterday", "last weekend") are resolved against when it was said, in the user's zone.
        """
        with using() as s:
            if (text is None) == (messages is None):
                raise InvalidInputError("add takes either text or messages, not both and not neither")
            if text is not None:
                try:
                    return _memories([s.add(
                        text, user_id=user_id, observed_at=sent_at, tz=zone, kind=kind or "fact", key=key,
                        valid_from=valid_from, valid_to=valid_to, expires=expires, attributes=attributes,
                        reason=reason)])
                except LocalmemError as exc:
                    if str(exc).startswith("observed_at="):  # the library's name for this tool's sent_at
                        raise type(exc)("sent_at=" + str(exc).removeprefix("observed_at=")) from exc
                    raise
            assert messages is not None
            for name, given in (("key", key), ("valid_from", valid_from), ("valid_to", valid_to),
                                ("expires", expires), ("attributes", attributes), ("reason", reason)):
                if given is not None:
                    raise InvalidInputError(f"{name}={given!r} applies to one text, not to messages")
            said = [{"role": m.role, "content": m.content,
                     "sent_at": m.sent_at if m.sent_at is not None else sent_at} for m in messages]
            said = [{k: v for k, v in m.items() if v is not None} for m in said]
            return _memories(s.add_messages(said, user_id, zone, roles=tuple(roles or ("user",)),
                                            kind=kind or "message"))

    @tool(_WRITE)
    def correct(
        memory_id: MemoryId,
        text: Annotated[str | None, Field(description="the right text")] = None,
        valid_from: When = None,
        valid_to: When = None,
        precision: Annotated[str | None, Field(description="instant, day, week, weekend, month, ...")] = None,
        attributes: Attributes = None,
        observed_at: When = None,
        reason: Reason = None,
    ) -> dict[str, Any]:
        """Say the earlier account was wrong: same memory, same fact, new content (the old stays in history).

        Only the arguments given change.
        """
        given: dict[str, Any] = {"text": text, "valid_from": valid_from, "valid_to": valid_to,
                                 "precision": precision, "attributes": attributes}
        with using() as s:
            rev = s.correct(s.resolve_id(memory_id), observed_at=observed_at, reason=reason,
                            **{k: (UNSET if v is None else v) for k, v in given.items()})
        return {"memory": rev.to_dict()}

    @tool(_WRITE)
    def supersede(
        memory_id: MemoryId,
        text: Annotated[str, Field(description="the new fact")],
        valid_from: When = None,
        valid_to: When = None,
        observed_at: When = None,
        expires: When = None,
        attributes: Attributes = None,
        reason: Reason = None,
    ) -> dict[str, Any]:
        """Say the world changed: a new memory replaces this one from valid_from (the old one ends there)."""
        with using() as s:
            rev = s.supersede(s.resolve_id(memory_id), text, valid_from=valid_from, valid_to=valid_to,
                              observed_at=observed_at, expires=expires, attributes=attributes, reason=reason)
        return {"memory": rev.to_dict()}

    @tool(_WRITE)
    def expire(
        memory_id: MemoryId,
        on: Annotated[str | float, Field(description="a date (visible through that day) or an instant")],
        reason: Reason = None,
    ) -> dict[str, Any]:
        """Set or move a memory's expiry: hidden from default reads after it, never deleted."""
        with using() as s:
            rev = s.expire(s.resolve_id(memory_id), on, reason=reason)
        return {"memory": rev.to_dict()}

    @tool(_WRITE)
    def retract(memory_id: MemoryId, reason: Reason = None, observed_at: When = None) -> dict[str, Any]:
        """Forget a memory the user revoked: hidden from current reads, kept in history and past reads."""
        with using() as s:
            rev = s.retract(s.resolve_id(memory_id), reason, observed_at=observed_at)
        return {"memory": rev.to_dict()}

    return server


def serve(
    store: Store,
    *,
    read_only: bool = False,
    http: int | None = None,
    host: str = "127.0.0.1",
    clock: Clock = localmem.system_clock,
) -> None:
    """Serve ``store`` over stdio, or over streamable HTTP on ``host:http`` (localhost by default).

    Blocks until the client goes away (stdio) or the process is stopped (HTTP).
    """
    server = build_server(store, read_only=read_only, clock=clock)
    if http is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=http)
