"""The commands on memories: ``add``, ``resolve``, ``correct``, ``supersede``, ``retract``, ``expire``,
``erase``, ``get``, ``read``, ``search``, ``history`` and ``snapshot``.

Each parses its options, calls one :class:`~localmem.Store` method and prints
the result through :mod:`.common` (text for people, ``--json`` for machines).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any

from ..core.revision import Change, Snapshot
from ..errors import InvalidInputError
from ..present import interval
from ..store import UNSET, Store
from ..time.clock import parse_time, zone
from ..time.interval import PRECISIONS
from ..time.resolver import find_times, rewrite
from .common import (
    Command,
    attrs_arg,
    axes,
    filter_arg,
    json_arg,
    print_revision,
    print_revisions,
    revision_lines,
)

__all__ = ["add_new_commands", "add_commands", "print_history", "print_snapshot"]


# -- printing ------------------------------------------------------------------


def _change(label: str, old: Any, new: Any, first: bool) -> str | None:
    if first:
        return None if new is None else f"    {label}: {new}"
    if old == new:
        return None
    return f"    {label}: {old} → {new}"


def print_history(changes: Sequence[Change], as_json: bool) -> None:
    if as_json:
        print(json.dumps([c.to_dict() for c in changes], ensure_ascii=False, indent=2))
        return
    for i, c in enumerate(changes):
        head = f"v{c.version}" if c.version is not None else "--"
        observed = f" · observed {c.observed_at.isoformat(timespec='seconds')}" \
            if c.observed_at else ""
        print(f"{head} {c.op:<10} recorded {c.recorded_at.isoformat(timespec='seconds')}{observed}"
              + (f" · rev {c.rev_id}" if c.rev_id else ""))
        if c.op == "erase":
            print("    content destroyed (tombstone kept)")
        else:
            first = i == 0
            lines = (
                _change("text ", repr(c.old_text), repr(c.new_text), first),
                None if first and c.new_value is None else
                _change("value", json.dumps(c.old_value), json.dumps(c.new_value), first),
                _change("valid", interval(c.old_valid), interval(c.new_valid), first),
            )
            for line in lines:
                if line:
                    print(line)
            if c.op == "expire" and c.expires_at:
                print(f"    expires {c.expires_at.isoformat(timespec='seconds')}")
            if c.retracted and (first or not changes[i - 1].retracted):
                print("    retracted")
        for label, v in (("reason", c.reason), ("source", c.source), ("link", c.link)):
            if v is not None:
                print(f"    {label}: {v if isinstance(v, str) else json.dumps(v)}")


def print_snapshot(snap: Snapshot, as_json: bool) -> None:
    if as_json:
        print(json.dumps({
            "user_id": snap.user_id,
            "known_at": snap.known_at.isoformat(),
            "memories": [r.to_dict() for r in snap.memories],
            "revisions": [r.to_dict() for r in snap.revisions],
        }, ensure_ascii=False, indent=2))
        return
    print(f"what the store held about {snap.user_id} at {snap.known_at.isoformat()}: "
          f"{len(snap.memories)} memories, {len(snap.revisions)} revisions")
    print_revisions(snap.memories, False)


# -- commands ------------------------------------------------------------------


def cmd_add(store: Store, args: argparse.Namespace) -> None:
    rev = store.add(
        args.text, user_id=args.user, observed_at=args.observed_at, tz=args.tz,
        valid_from=args.valid_from, valid_to=args.valid_to, precision=args.precision,
        expires=args.expires, key=args.key, supersedes=args.supersedes, kind=args.kind,
        value=json_arg(args.value, "--value"), attributes=attrs_arg(args.attr),
        source=args.source, reason=args.reason, resolve=not args.no_resolve,
    )
    print_revision(rev, args)


def cmd_resolve(args: argparse.Namespace) -> int:
    sent = parse_time(args.sent_at, name="--sent-at", tz=zone(args.tz)).at
    mentions = find_times(args.text, sent_at=sent, tz=args.tz, date_order=args.date_order)
    if args.json:
        print(json.dumps({
            "text": args.text, "sent_at": sent.isoformat(), "tz": args.tz,
            "rewritten": rewrite(args.text, mentions),
            "mentions": [{
                "phrase": m.phrase, "span": list(m.span), "kind": m.kind, "precision": m.precision,
                "vague": m.vague, "rendered": m.render(),
                "start": m.start and m.start.isoformat(), "end": m.end and m.end.isoformat(),
            } for m in mentions],
        }))
        return 0
    if not mentions:
        print("no time phrase found")
        return 0
    for m in mentions:
        start = "(open)" if m.start is None else m.start.isoformat(timespec="minutes")
        end = "(open)" if m.end is None else m.end.isoformat(timespec="minutes")
        flags = " vague" if m.vague else ""
        print(f"{m.phrase!r} [{m.span[0]}:{m.span[1]}] {m.kind} {m.precision}{flags}: [{start}, {end})")
        print(f"    {m.render()}")
    print(f"rewritten: {rewrite(args.text, mentions)}")
    return 0


def cmd_correct(store: Store, args: argparse.Namespace) -> None:
    memory_id = store.resolve_id(args.id)
    valid_to: Any = UNSET
    if args.open_ended:
        valid_to = None
    elif args.valid_to is not None:
        valid_to = args.valid_to
    rev = store.correct(
        memory_id,
        text=args.text if args.text is not None else UNSET,
        value=json_arg(args.value, "--value") if args.value is not None else UNSET,
        valid_from=args.valid_from if args.valid_from is not None else UNSET,
        valid_to=valid_to,
        precision=args.precision if args.precision is not None else UNSET,
        observed_at=args.observed_at, reason=args.reason,
    )
    print_revision(rev, args)


def cmd_supersede(store: Store, args: argparse.Namespace) -> None:
    rev = store.supersede(
        store.resolve_id(args.id), args.text, valid_from=args.valid_from,
        valid_to=args.valid_to, precision=args.precision, observed_at=args.observed_at,
        value=json_arg(args.value, "--value"), reason=args.reason, resolve=not args.no_resolve,
    )
    print_revision(rev, args)


def cmd_retract(store: Store, args: argparse.Namespace) -> None:
    print_revision(store.retract(store.resolve_id(args.id), args.reason), args)


def cmd_expire(store: Store, args: argparse.Namespace) -> None:
    rev = store.expire(store.resolve_id(args.id), args.on, reason=args.reason)
    print_revision(rev, args)


def cmd_erase(store: Store, args: argparse.Namespace) -> None:
    if not args.yes:
        raise InvalidInputError(
            "erase destroys the content of every revision of the memory for good: "
            "pass --yes to confirm"
        )
    e = store.erase(store.resolve_id(args.id), args.reason, by=args.by)
    if args.json:
        print(json.dumps({"memory_id": e.memory_id, "erased_at": e.erased_at.isoformat(),
                          "erased_by": e.erased_by, "reason": e.reason, "tomb_id": e.tomb_id,
                          "derived": list(e.derived)}))
    else:
        print(f"erased {e.memory_id} at {e.erased_at.isoformat()} (tombstone {e.tomb_id})")
        for derived in e.derived:
            print(f"erased {derived} too: it was derived from it")


def cmd_get(store: Store, args: argparse.Namespace) -> None:
    memory_id = store.resolve_id(args.id)
    rev = store.get(memory_id, **axes(args))
    if rev is None:
        if args.json:
            print("null")
        else:
            print(f"(memory {memory_id} was not yet known then)")
        return
    print_revision(rev, args)


def cmd_read(store: Store, args: argparse.Namespace) -> None:
    revs = store.read(
        args.user, **axes(args), current_only=not args.history,
        include_expired=args.include_expired, include_retracted=args.include_retracted,
        kind=args.kind, key=args.key, filters=filter_arg(args.filter), limit=args.limit,
    )
    print_revisions(revs, args.json)


def cmd_search(store: Store, args: argparse.Namespace) -> None:
    hits = store.search(
        args.query, user_id=args.user, **axes(args), filters=filter_arg(args.filter),
        current_only=not args.history, include_expired=args.include_expired, limit=args.limit,
        log=not args.no_log, run_id=args.run_id,
    )
    if args.json:
        print(json.dumps([h.to_dict() for h in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        print("(no memories)")
        return
    for h in hits:
        if args.explain:
            time_part = "-" if h.time_score is None else f"{h.time_score:.2f}"
            meaning = "" if h.semantic is None else f" (similarity {h.semantic:.2f})"
            print(
                f"{h.score:.3f} = text {h.text_score:.2f}{meaning} + time {time_part}"
                f" + 0.5 x usage {h.usage_score:.2f}"
            )
        for line in revision_lines(h.revision):
            print(line)


def cmd_history(store: Store, args: argparse.Namespace) -> None:
    print_history(store.history(store.resolve_id(args.id), known_at=args.known_at), args.json)


def cmd_snapshot(store: Store, args: argparse.Namespace) -> None:
    print_snapshot(store.snapshot(args.user, known_at=args.known_at), args.json)


# -- the parser ----------------------------------------------------------------

_ID = "a memory id, or any unique prefix of one"
_REASON = "why this was recorded (kept in the history)"
_PRECISION = "how precise the valid time is (default: from the form of --valid-from)"
_PRECISIONS = f"one of {', '.join(PRECISIONS)}"
_IDS = "print only the memory id (for scripts: ID=$(localmem ... --ids))"


def add_new_commands(command: Command) -> None:
    """Add ``add`` and ``resolve`` (what ``add`` would read from a text's time phrases)."""
    p = command("add", "assert a new memory")
    p.set_defaults(mode="create")
    p.add_argument("text", help="what the memory says; its time phrases give the valid time")
    p.add_argument("--user", required=True, help="whom the memory is about (a user id)")
    p.add_argument("--observed-at", metavar="T", help="when the fact reached the app (default: now)")
    p.add_argument("--tz", help="the user's IANA zone (default: the last one given, else UTC)")
    p.add_argument("--valid-from", metavar="T",
                   help="when it became true (default: a time phrase in the text, else --observed-at)")
    p.add_argument("--valid-to", metavar="T", help="exclusive end of valid time (default: still true)")
    p.add_argument("--precision", choices=PRECISIONS, metavar="P", help=f"{_PRECISION}: {_PRECISIONS}")
    p.add_argument("--expires", metavar="T", help="a date (visible through that day) or an instant")
    p.add_argument("--key", help="a slot such as home_city: a new value supersedes the old")
    p.add_argument("--supersedes", metavar="ID", help="id of a memory this one replaces")
    p.add_argument("--kind", default="fact", help="a free label: fact (default), goal, event, preference...")
    p.add_argument("--value", metavar="JSON", help="a JSON value, e.g. 7")
    p.add_argument("--attr", action="append", metavar="NAME=VALUE",
                   help="an attribute for filters (VALUE is JSON, else text); repeatable")
    p.add_argument("--source", help="provenance: where this came from (a session, a message id)")
    p.add_argument("--reason", help=_REASON)
    p.add_argument("--no-resolve", action="store_true",
                   help="keep the text as given: do not read time phrases from it")
    p.add_argument("--ids", action="store_true", help=_IDS)
    p.set_defaults(func=cmd_add)

    p = command("resolve", "show the time phrases in a message and what they resolve to", clock=False)
    p.add_argument("text", help="the message")
    p.add_argument("--sent-at", required=True, metavar="T", help="when the message was sent (an instant)")
    p.add_argument("--tz", default="UTC", help="the sender's IANA zone (default UTC)")
    p.add_argument("--date-order", choices=("MDY", "DMY"), default="MDY", help="how to read 03/04")
    p.set_defaults(func=None, without_store=cmd_resolve)


def add_commands(command: Command, reads: argparse.ArgumentParser) -> None:
    """Add the commands that change or read existing memories (``reads``: the read clocks' options)."""
    p = command("correct", "the earlier account was wrong: record the right one")
    p.set_defaults(mode="write")
    p.add_argument("id", help=_ID)
    p.add_argument("--text", help="the right text")
    p.add_argument("--value", metavar="JSON", help="the right value (JSON; null clears it)")
    p.add_argument("--valid-from", metavar="T", help="the right start of valid time")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--valid-to", metavar="T", help="the right (exclusive) end of valid time")
    g.add_argument("--open-ended", action="store_true", help="the fact is still true")
    p.add_argument("--precision", choices=PRECISIONS, metavar="P",
                   help=f"the right precision of the valid time: {_PRECISIONS}")
    p.add_argument("--observed-at", metavar="T", help="when the correction reached the app (default: now)")
    p.add_argument("--reason", help=_REASON)
    p.add_argument("--ids", action="store_true", help=_IDS)
    p.set_defaults(func=cmd_correct)

    p = command("supersede", "the world changed: a new memory replaces an old one")
    p.set_defaults(mode="write")
    p.add_argument("id", help=f"the memory replaced: {_ID}")
    p.add_argument("text", help="what the new memory says")
    p.add_argument("--valid-from", metavar="T",
                   help="when the new fact began (default: a time phrase in the text, else now)")
    p.add_argument("--valid-to", metavar="T", help="exclusive end of the new fact (default: still true)")
    p.add_argument("--precision", choices=PRECISIONS, metavar="P", help=f"{_PRECISION}: {_PRECISIONS}")
    p.add_argument("--observed-at", metavar="T", help="when the change reached the app (default: now)")
    p.add_argument("--value", metavar="JSON", help="the new memory's JSON value")
    p.add_argument("--reason", help=_REASON)
    p.add_argument("--no-resolve", action="store_true",
                   help="keep the text as given: do not read time phrases from it")
    p.add_argument("--ids", action="store_true", help=_IDS)
    p.set_defaults(func=cmd_supersede)

    p = command("retract", "the user revoked a memory: hide it from now on")
    p.set_defaults(mode="write")
    p.add_argument("id", help=_ID)
    p.add_argument("--reason", help=_REASON)
    p.add_argument("--ids", action="store_true", help=_IDS)
    p.set_defaults(func=cmd_retract)

    p = command("expire", "set or move a memory's expiry")
    p.set_defaults(mode="write")
    p.add_argument("id", help=_ID)
    p.add_argument("on", metavar="EXPIRES", help="a date (visible through that day) or an instant")
    p.add_argument("--reason", help=_REASON)
    p.add_argument("--ids", action="store_true", help=_IDS)
    p.set_defaults(func=cmd_expire)

    p = command("erase", "destroy a memory's content for privacy (a tombstone remains)")
    p.set_defaults(mode="write")
    p.add_argument("id", help=_ID)
    p.add_argument("--reason", help="why (kept with the tombstone: keep the erased content out of it)")
    p.add_argument("--by", help="who asked for the erasure")
    p.add_argument("--yes", action="store_true", help="confirm: the content cannot come back")
    p.set_defaults(func=cmd_erase)

    p = command("get", "one memory as known at a time (--json: an object, or null if not yet known)", reads)
    p.add_argument("id", help=_ID)
    p.set_defaults(func=cmd_get)

    p = command("read", "a user's memories as known at a time", reads)
    p.add_argument("--user", required=True, help="whose memories (a user id)")
    p.add_argument("--history", action="store_true",
                   help="every valid interval, not just what is true at valid_at")
    p.add_argument("--include-expired", action="store_true", help="keep expired memories (flagged)")
    p.add_argument("--include-retracted", action="store_true", help="keep retracted memories (flagged)")
    p.add_argument("--kind", help="only memories of this kind")
    p.add_argument("--key", help="only memories of this key")
    p.add_argument("--filter", metavar="JSON",
                   help='a filter tree, e.g. \'{"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}}\'')
    p.add_argument("--limit", type=int, metavar="N", help="at most N memories (default: all)")
    p.set_defaults(func=cmd_read)

    p = command("search", "the memories that best answer a question, as known at a time", reads)
    p.add_argument("query", help="the question, in words (its time phrases rerank the hits)")
    p.add_argument("--user", required=True, help="whose memories (a user id)")
    p.add_argument("--filter", metavar="JSON", help="a filter tree (as for read)")
    p.add_argument("--limit", type=int, default=10, metavar="N", help="at most N hits (default 10)")
    p.add_argument("--history", action="store_true",
                   help="search every valid interval, not just current ones")
    p.add_argument("--include-expired", action="store_true", help="keep expired memories (flagged)")
    p.add_argument("--explain", action="store_true", help="show each hit's score and its parts")
    p.add_argument("--no-log", action="store_true", help="do not append the hits to the usage log")
    p.add_argument("--run-id", help="the run (eval, session) the hits are logged under")
    p.set_defaults(func=cmd_search)

    p = command("history", "every change to one memory")
    p.add_argument("id", help=_ID)
    p.add_argument("--known-at", metavar="T", help="only changes recorded by then")
    p.set_defaults(func=cmd_history)

    p = command("snapshot", "everything the store held about a user at a time, unfiltered")
    p.add_argument("--user", required=True, help="whose memories (a user id)")
    p.add_argument("--known-at", "--at", dest="known_at", metavar="T", help="the time (default: now)")
    p.set_defaults(func=cmd_snapshot)
