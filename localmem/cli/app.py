"""The ``localmem`` command: parse, call one library function, print.

Data goes to stdout (``--json`` for machines), errors to stderr as one line
with a non-zero exit code, so pipes stay clean. The database is ``--db PATH``,
else ``$LOCALMEM_DB``, else the default file in the user data dir.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ..core.db import default_path
from ..core.revision import Change, Revision, Snapshot
from ..errors import InvalidInputError, LocalmemError
from ..store import UNSET, Store
from ..store import open as open_store
from ..sync.files import is_sync_file
from ..time.clock import Clock, parse_time, system_clock, zone
from ..time.resolver import find_times, rewrite
from . import demo

__all__ = ["main", "build_parser"]

EXIT_ERROR = 1
EXIT_USAGE = 2


def _db_path(args: argparse.Namespace) -> str | None:
    return args.db or os.environ.get("LOCALMEM_DB") or None


def _json_arg(
    text: str | None, name: str, hint: str = "numbers as they are (7), strings quoted ('\"seven\"')"
) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{name} {text!r:.80} is not JSON: {hint} ({exc.msg} at column {exc.colno})"
        ) from exc


def _attrs(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    if not pairs:
        return None
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise InvalidInputError(f"--attr {pair!r} is not NAME=VALUE")
        try:
            out[name] = json.loads(raw)
        except json.JSONDecodeError:
            out[name] = raw
    return out


# -- printing ------------------------------------------------------------------


def _local(at: datetime | None, tz: str) -> str:
    if at is None:
        return "-"
    return at.astimezone(ZoneInfo(tz)).isoformat(timespec="seconds")


def _flags(rev: Revision) -> str:
    names = ("expired", "retracted", "erased", "corrected", "stale")
    flags = [n for n in names if getattr(rev, n)]
    if rev.superseded_by:
        flags.append(f"superseded by {rev.superseded_by}")
    if rev.supersedes:
        flags.append(f"supersedes {rev.supersedes}")
    return ", ".join(flags)


def _revision_lines(rev: Revision) -> Iterable[str]:
    text = rev.text if rev.text is not None else "[erased]"
    value = "" if rev.value is None else f"  = {json.dumps(rev.value, ensure_ascii=False)}"
    yield f"{rev.memory_id}  {text}{value}"
    key = f"key {rev.key} · " if rev.key else ""
    yield (f"    {key}{rev.kind} · valid {rev.valid} ({rev.precision}, {rev.valid_source})"
           f" · v{rev.version} {rev.op}")
    yield (f"    observed {_local(rev.observed_at, rev.tz)} · recorded "
           f"{rev.recorded_at.isoformat(timespec='seconds')} · zone {rev.tz}")
    if rev.expires_at is not None:
        yield f"    expires {_local(rev.expires_at, rev.tz)}"
    flags = _flags(rev)
    if flags:
        yield f"    [{flags}]"


def _print_revisions(revs: Sequence[Revision], as_json: bool) -> None:
    if as_json:
        print(json.dumps([r.to_dict() for r in revs], ensure_ascii=False, indent=2))
        return
    if not revs:
        print("(no memories)")
    for rev in revs:
        for line in _revision_lines(rev):
            print(line)


def _interval(v: Any) -> str:
    return "-" if v is None else str(v)


def _change(label: str, old: Any, new: Any, first: bool) -> str | None:
    if first:
        return None if new is None else f"    {label}: {new}"
    if old == new:
        return None
    return f"    {label}: {old} → {new}"


def _print_history(changes: Sequence[Change], as_json: bool) -> None:
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
                _change("valid", _interval(c.old_valid), _interval(c.new_valid), first),
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


def _print_snapshot(snap: Snapshot, as_json: bool) -> None:
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
    _print_revisions(snap.memories, False)


# -- commands ------------------------------------------------------------------


def _axes(args: argparse.Namespace) -> dict[str, Any]:
    return {"as_of": args.as_of, "known_at": args.known_at, "valid_at": args.valid_at}


def cmd_add(store: Store, args: argparse.Namespace) -> None:
    rev = store.add(
        args.text, user_id=args.user, observed_at=args.observed_at, tz=args.tz,
        valid_from=args.valid_from, valid_to=args.valid_to, precision=args.precision,
        expires=args.expires, key=args.key, supersedes=args.supersedes, kind=args.kind,
        value=_json_arg(args.value, "--value"), attributes=_attrs(args.attr),
        source=args.source, reason=args.reason, resolve=not args.no_resolve,
    )
    _print_revisions([rev], args.json)


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


def cmd_import(store: Store, args: argparse.Namespace) -> None:
    if args.file != "-" and is_sync_file(args.file):
        # A sync export (gzip): chat imports are plain JSON text, so the first bytes tell them apart.
        if args.user or args.tz or args.role:
            raise InvalidInputError(f"{args.file!r} is a sync export: --user, --tz and --role do not apply")
        summary = store.import_(args.file)
        if args.json:
            print(json.dumps({**dataclasses.asdict(summary), "changed": summary.changed}))
        else:
            print(summary.describe())
        return
    if not args.user:
        raise InvalidInputError("importing a conversation needs --user (whose messages they are)")
    try:
        if args.file == "-":
            messages = json.load(sys.stdin)
        else:
            with open(args.file, encoding="utf-8") as f:
                messages = json.load(f)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {args.file!r}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{args.file!r} is not JSON: {exc}") from exc
    revs = store.add_messages(messages, args.user, args.tz, roles=tuple(args.role or ["user"]))
    if args.json:
        _print_revisions(revs, True)
        return
    print(f"imported {len(revs)} memories for {args.user}")
    for rev in revs:
        print(f"  {rev.memory_id}  {rev.valid_source:8}  {rev.text}")


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
        value=_json_arg(args.value, "--value") if args.value is not None else UNSET,
        valid_from=args.valid_from if args.valid_from is not None else UNSET,
        valid_to=valid_to,
        precision=args.precision if args.precision is not None else UNSET,
        observed_at=args.observed_at, reason=args.reason,
    )
    _print_revisions([rev], args.json)


def cmd_supersede(store: Store, args: argparse.Namespace) -> None:
    rev = store.supersede(
        store.resolve_id(args.id), args.text, valid_from=args.valid_from,
        valid_to=args.valid_to, precision=args.precision, observed_at=args.observed_at,
        value=_json_arg(args.value, "--value"), reason=args.reason, resolve=not args.no_resolve,
    )
    _print_revisions([rev], args.json)


def cmd_retract(store: Store, args: argparse.Namespace) -> None:
    _print_revisions([store.retract(store.resolve_id(args.id), args.reason)], args.json)


def cmd_expire(store: Store, args: argparse.Namespace) -> None:
    rev = store.expire(store.resolve_id(args.id), args.on, reason=args.reason)
    _print_revisions([rev], args.json)


def cmd_erase(store: Store, args: argparse.Namespace) -> None:
    if not args.yes:
        raise InvalidInputError(
            "erase destroys the content of every revision of the memory for good: "
            "pass --yes to confirm"
        )
    e = store.erase(store.resolve_id(args.id), args.reason, by=args.by)
    if args.json:
        print(json.dumps({"memory_id": e.memory_id, "erased_at": e.erased_at.isoformat(),
                          "erased_by": e.erased_by, "reason": e.reason, "tomb_id": e.tomb_id}))
    else:
        print(f"erased {e.memory_id} at {e.erased_at.isoformat()} (tombstone {e.tomb_id})")


def cmd_get(store: Store, args: argparse.Namespace) -> None:
    memory_id = store.resolve_id(args.id)
    rev = store.get(memory_id, **_axes(args))
    if rev is None:
        if args.json:
            print("null")
        else:
            print(f"(memory {memory_id} was not yet known then)")
        return
    _print_revisions([rev], args.json)


def cmd_read(store: Store, args: argparse.Namespace) -> None:
    revs = store.read(
        args.user, **_axes(args), current_only=not args.history,
        include_expired=args.include_expired, include_retracted=args.include_retracted,
        kind=args.kind, key=args.key, filters=_filter_arg(args.filter),
    )
    _print_revisions(revs, args.json)


def _filter_arg(text: str | None) -> Any:
    return _json_arg(text, "--filter", 'a tree such as {"kind": "goal"}')


def cmd_search(store: Store, args: argparse.Namespace) -> None:
    hits = store.search(
        args.query, user_id=args.user, **_axes(args), filters=_filter_arg(args.filter),
        current_only=not args.history, include_expired=args.include_expired, limit=args.limit,
        log=not args.no_log, run_id=args.run_id,
    )
    if args.json:
        print(json.dumps([{
            "score": h.score, "text_score": h.text, "time_score": h.time, "usage_score": h.usage,
            "bm25": h.bm25, "semantic": h.semantic,
            "revision": h.revision.to_dict(),
        } for h in hits], ensure_ascii=False, indent=2))
        return
    if not hits:
        print("(no memories)")
        return
    for h in hits:
        if args.explain:
            time_part = "-" if h.time is None else f"{h.time:.2f}"
            meaning = "" if h.semantic is None else f" (similarity {h.semantic:.2f})"
            print(
                f"{h.score:.3f} = text {h.text:.2f}{meaning} + time {time_part} + 0.5 x usage {h.usage:.2f}"
            )
        for line in _revision_lines(h.revision):
            print(line)


def cmd_export(store: Store, args: argparse.Namespace) -> None:
    if args.format == "sync":
        if args.file == "-":
            raise InvalidInputError("a sync export is written to a file: give a path, not -")
        out = store.export(args.file, since=args.since, user_id=args.user)
        if args.json:
            print(json.dumps(dataclasses.asdict(out)))
            return
        print(f"exported {out.memories} memories, {out.revisions} revisions, {out.tombstones} tombstones, "
              f"{out.derivations} derivations to {out.path} ({out.bytes} bytes)")
        print(f"watermark {out.watermark}: next time, --since {out.watermark}")
        return
    if not args.user:
        raise InvalidInputError(f"--format {args.format} exports one user's memories: give --user")
    if args.since is not None:
        raise InvalidInputError("--since applies to sync exports only")
    if args.file == "-":
        store.write_plain(args.user, args.format, sys.stdout)
        return
    with open(args.file, "w", encoding="utf-8", newline="") as f:
        n = store.write_plain(args.user, args.format, f)
    print(f"exported {n} memories of {args.user} to {args.file}", file=sys.stderr)


def cmd_sync(store: Store, args: argparse.Namespace) -> None:
    result = store.sync_dir(args.dir)
    if args.json:
        print(json.dumps(dataclasses.asdict(result)))
        return
    for imp in result.imported:
        print(f"{Path(imp.path).name}: {imp.describe()}")
    if result.exported is None:
        print("nothing new to export")
    else:
        out = result.exported
        print(f"wrote {Path(out.path).name}: {out.revisions} revisions, {out.tombstones} tombstones")


def cmd_history(store: Store, args: argparse.Namespace) -> None:
    _print_history(store.history(store.resolve_id(args.id), known_at=args.known_at), args.json)


def cmd_snapshot(store: Store, args: argparse.Namespace) -> None:
    _print_snapshot(store.snapshot(args.user, known_at=args.known_at), args.json)


def cmd_info(store: Store, args: argparse.Namespace) -> None:
    info = store.info()
    if args.json:
        print(json.dumps(dataclasses.asdict(info)))
        return
    for f in info.__dataclass_fields__:
        print(f"{f}: {getattr(info, f)}")


def cmd_doctor(store: Store, args: argparse.Namespace) -> int:
    report = store.doctor()
    if args.json:
        print(json.dumps({"ok": report.ok, "checks": [
            {"name": c.name, "ok": c.ok, "detail": c.detail} for c in report.checks]}))
    else:
        for c in report.checks:
            print(f"{'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}")
        print("healthy" if report.ok else "PROBLEMS FOUND")
    return 0 if report.ok else EXIT_ERROR


def _clock(now: str | None) -> Clock | None:
    if now is None:
        return None
    fixed = parse_time(now, name="--now", tz=zone("UTC")).at
    return lambda: fixed


def demo_path(db: str | None) -> Path:
    """Where ``localmem demo`` writes: beside the user's database, never in it."""
    if db and db != ":memory:":
        p = Path(db)
        return p.with_name(p.stem + "-demo.db")
    return default_path().with_name("demo.db")


def _open_tui(path: Path, *, user: str | None, write: bool, clock: Clock | None) -> int:
    """Run the Textual TUI on ``path`` (imported here: the library never imports textual)."""
    try:
        from tui import LocalmemApp
    except ImportError as exc:  # an install without the TUI's toolkit
        raise InvalidInputError(f"the TUI needs textual: pip install textual ({exc})") from exc
    app = LocalmemApp(path=path, user=user, write=write, clock=clock or system_clock)
    app.run()
    return 0


def cmd_tui(args: argparse.Namespace) -> int:
    path = _db_path(args)
    return _open_tui(Path(path) if path else default_path(), user=args.user, write=args.write,
                     clock=_clock(getattr(args, "now", None)))


def run_demo(args: argparse.Namespace) -> int:
    path = demo_path(_db_path(args))
    store = demo.build(path)
    if not args.json and sys.stdout.isatty() and sys.stdin.isatty():
        # A person at a terminal: show the stories in the TUI (the summary is for pipes and tests).
        store.close()
        return _open_tui(path, user=demo.SAM, write=False, clock=None)
    try:
        if args.json:
            print(json.dumps({"db": str(path), "summary": list(demo.summary(store))}))
            return 0
        print(f"localmem demo: the stories were written to {path} (rebuilt on every run)")
        print()
        for line in demo.summary(store):
            print(line)
        print()
        print(f"Explore it: localmem --db {path} read --user sam --history")
        print(f"            localmem --db {path} history <memory id>")
    finally:
        store.close()
    return 0


# -- the parser ----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and for the docs)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=argparse.SUPPRESS,
                        help="database file (default: $LOCALMEM_DB, else the user data dir)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print JSON instead of text")
    common.add_argument("--now", default=argparse.SUPPRESS,
                        help="use this instant as the store's clock (scripted imports, tests); "
                             "recorded time still never goes backwards")
    reads = argparse.ArgumentParser(add_help=False)
    reads.add_argument("--as-of", help="fix 'now' for the read: known_at = valid_at = AS_OF")
    reads.add_argument("--known-at", help="what the store knew at this time")
    reads.add_argument("--valid-at", help="what was true at this time")

    parser = argparse.ArgumentParser(
        prog="localmem", parents=[common],
        description="A local-first bitemporal memory store: two clocks, nothing overwritten.",
        epilog="Times: ISO 8601 with an offset (2025-06-16T12:00:00Z), a date "
               "(2025-06-16, 2025-06, 2025: read in the user's zone), or epoch seconds.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_: str, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_, description=help_, parents=[common, *parents])

    p = command("add", "assert a new memory")
    p.add_argument("text")
    p.add_argument("--user", required=True)
    p.add_argument("--observed-at", help="when the fact reached the app (default: now)")
    p.add_argument("--tz", help="the user's IANA zone (default: the last one given, else UTC)")
    p.add_argument("--valid-from")
    p.add_argument("--valid-to", help="exclusive end of valid time")
    p.add_argument("--precision")
    p.add_argument("--expires", help="a date (visible through that day) or an instant")
    p.add_argument("--key", help="a slot such as home_city: a new value supersedes the old")
    p.add_argument("--supersedes", help="id of a memory this one replaces")
    p.add_argument("--kind", default="fact")
    p.add_argument("--value", help="a JSON value, e.g. 7")
    p.add_argument("--attr", action="append", metavar="NAME=VALUE")
    p.add_argument("--source")
    p.add_argument("--reason")
    p.add_argument("--no-resolve", action="store_true",
                   help="keep the text as given: do not read time phrases from it")
    p.set_defaults(func=cmd_add)

    p = command("resolve", "show the time phrases in a message and what they resolve to")
    p.add_argument("text")
    p.add_argument("--sent-at", required=True, help="when the message was sent (an instant)")
    p.add_argument("--tz", default="UTC", help="the sender's IANA zone (default UTC)")
    p.add_argument("--date-order", choices=("MDY", "DMY"), default="MDY", help="how to read 03/04")
    p.set_defaults(func=None)

    p = command("import", "import a sync export from another device (gzip), or a conversation: "
                          "a JSON list of {role, content, sent_at}")
    p.add_argument("file", help="a sync export, or the JSON file of a conversation (- for stdin)")
    p.add_argument("--user", help="whose conversation it is (conversations only)")
    p.add_argument("--tz", help="the user's IANA zone")
    p.add_argument("--role", action="append", help="roles to import (default: user; repeatable)")
    p.set_defaults(func=cmd_import)

    p = command("export", "write a sync export for another device, or one user's memories as CSV/JSON")
    p.add_argument("file", help="the file to write (- for stdout, csv/json only)")
    p.add_argument("--format", choices=("sync", "csv", "json"), default="sync",
                   help="sync (default): gzip'd JSON lines another store imports; csv/json: "
                        "one user's memories as known now, with both clocks")
    p.add_argument("--since", type=int, help="a watermark from an earlier sync export: only what is newer")
    p.add_argument("--user", help="only this user's memories (required for csv/json)")
    p.set_defaults(func=cmd_export)

    p = command("sync", "sync through a folder shared by devices: import the others' files, write ours")
    p.add_argument("dir")
    p.set_defaults(func=cmd_sync)

    p = command("correct", "the earlier account was wrong: record the right one")
    p.add_argument("id")
    p.add_argument("--text")
    p.add_argument("--value")
    p.add_argument("--valid-from")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--valid-to")
    g.add_argument("--open-ended", action="store_true", help="the fact is still true")
    p.add_argument("--precision")
    p.add_argument("--observed-at")
    p.add_argument("--reason")
    p.set_defaults(func=cmd_correct)

    p = command("supersede", "the world changed: a new memory replaces an old one")
    p.add_argument("id")
    p.add_argument("text")
    p.add_argument("--valid-from")
    p.add_argument("--valid-to")
    p.add_argument("--precision")
    p.add_argument("--observed-at")
    p.add_argument("--value")
    p.add_argument("--reason")
    p.add_argument("--no-resolve", action="store_true",
                   help="keep the text as given: do not read time phrases from it")
    p.set_defaults(func=cmd_supersede)

    p = command("retract", "the user revoked a memory: hide it from now on")
    p.add_argument("id")
    p.add_argument("--reason")
    p.set_defaults(func=cmd_retract)

    p = command("expire", "set or move a memory's expiry")
    p.add_argument("id")
    p.add_argument("on", help="a date (visible through that day) or an instant")
    p.add_argument("--reason")
    p.set_defaults(func=cmd_expire)

    p = command("erase", "destroy a memory's content for privacy (a tombstone remains)")
    p.add_argument("id")
    p.add_argument("--reason")
    p.add_argument("--by", help="who asked for the erasure")
    p.add_argument("--yes", action="store_true", help="confirm: the content cannot come back")
    p.set_defaults(func=cmd_erase)

    p = command("get", "one memory as known at a time", reads)
    p.add_argument("id")
    p.set_defaults(func=cmd_get)

    p = command("read", "a user's memories as known at a time", reads)
    p.add_argument("--user", required=True)
    p.add_argument("--history", action="store_true",
                   help="every valid interval, not just what is true at valid_at")
    p.add_argument("--include-expired", action="store_true")
    p.add_argument("--include-retracted", action="store_true")
    p.add_argument("--kind")
    p.add_argument("--key")
    p.add_argument("--filter", metavar="JSON",
                   help='a filter tree, e.g. \'{"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}}\'')
    p.set_defaults(func=cmd_read)

    p = command("search", "the memories that best answer a question, as known at a time", reads)
    p.add_argument("query")
    p.add_argument("--user", required=True)
    p.add_argument("--filter", metavar="JSON", help="a filter tree (as for read)")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--history", action="store_true",
                   help="search every valid interval, not just current ones")
    p.add_argument("--include-expired", action="store_true")
    p.add_argument("--explain", action="store_true", help="show each hit's score and its parts")
    p.add_argument("--no-log", action="store_true", help="do not append the hits to the usage log")
    p.add_argument("--run-id", help="the run (eval, session) the hits are logged under")
    p.set_defaults(func=cmd_search)

    p = command("history", "every change to one memory")
    p.add_argument("id")
    p.add_argument("--known-at", help="only changes recorded by then")
    p.set_defaults(func=cmd_history)

    p = command("snapshot", "everything the store held about a user at a time, unfiltered")
    p.add_argument("--user", required=True)
    p.add_argument("--known-at", "--at", dest="known_at")
    p.set_defaults(func=cmd_snapshot)

    from .replay import add_commands  # it imports this module's printers

    add_commands(command, common)

    p = command("info", "what this database holds")
    p.set_defaults(func=cmd_info)

    p = command("doctor", "check the database's integrity and invariants")
    p.set_defaults(func=cmd_doctor)

    p = command("tui", "browse the memories in the terminal UI (read-only unless --write)")
    p.add_argument("--user", help="whose memories to show first (default: the first user)")
    p.add_argument("--write", action="store_true",
                   help="allow correct, retract and expire from the history screen (each confirmed)")
    p.set_defaults(func=None)

    p = command("demo", "rebuild the demo database (fee and Sam stories) and open it in the TUI "
                        "(at a terminal; else print what the stories show)")
    p.set_defaults(func=None)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.db = getattr(args, "db", None)
    args.json = getattr(args, "json", False)
    try:
        if args.command == "demo":
            return run_demo(args)
        if args.command == "resolve":
            return cmd_resolve(args)
        if args.command == "tui":
            return cmd_tui(args)
        store = open_store(_db_path(args), clock=_clock(getattr(args, "now", None)))
        try:
            result = args.func(store, args)
        finally:
            store.close()
        return int(result or 0)
    except LocalmemError as exc:
        print(f"localmem: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (| head): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
