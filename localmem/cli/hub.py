"""The hub commands: ``localmem hub init|ingest|read|get|search|snapshot|history|knew|export``.

Each takes ``--dsn DSN`` (else ``$LOCALMEM_HUB_DSN``), a PostgreSQL connection string whose
search_path names the hub's schema, and prints what the device's command of the same
name prints (:mod:`.common`, :mod:`.memories`, :mod:`.replay`). ``--now`` stops the hub's
clock (arrivals and the reads' "now"), as it stops a device's. :mod:`localmem.hub` (and
psycopg, the ``hub`` extra) is imported only when a hub command runs.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ..errors import HubError, InvalidInputError, SyncFileError
from ..replay import knew
from ..time.clock import Clock, from_micros, system_clock
from .common import Command, clock_arg, print_json, print_revision, print_revisions
from .memories import print_history, print_snapshot
from .replay import print_diff, print_knew
from .sync import export_json, import_json

__all__ = ["add_commands"]


def _dsn(args: argparse.Namespace) -> str:
    dsn = getattr(args, "dsn", None) or os.environ.get("LOCALMEM_HUB_DSN")
    if not dsn:
        raise InvalidInputError("no hub given: pass --dsn DSN (a PostgreSQL connection string) "
                                "or set LOCALMEM_HUB_DSN")
    return str(dsn)


def _clock(args: argparse.Namespace) -> Clock:
    stopped = clock_arg(getattr(args, "now", None))
    if stopped is None:
        return system_clock
    from ..hub.ingest import FixedClock  # picklable: `hub ingest --jobs N` hands it to processes

    return FixedClock(stopped())


def _run(args: argparse.Namespace) -> int:
    try:
        from ..hub import db
    except ImportError as exc:
        raise HubError("the hub needs psycopg 3: pip install 'localmem[hub]'") from exc
    dsn = _dsn(args)
    if args.hub_func is _ingest:  # its own connections, one per job
        return int(_ingest(dsn, args, _clock(args)))
    conn = db.connect(dsn)
    try:
        if args.hub_func is not _init:
            db.hub_id(conn)  # a schema without a hub says so, before any read
        return int(args.hub_func(conn, args, _clock(args)) or 0)
    finally:
        conn.close()


def _init(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import db

    hub = db.init(conn)
    print_json({"hub_id": hub}) if args.json else print("created the hub")


def _ingest(dsn: str, args: argparse.Namespace, clock: Clock) -> int:
    from ..hub import ingest

    results = ingest.ingest_paths(dsn, args.paths, clock=clock, jobs=args.jobs)
    refused = [r for r in results if isinstance(r, SyncFileError)]
    if args.json:
        print_json([{"refused": type(r).__name__, "error": str(r)} if isinstance(r, SyncFileError)
                    else {**import_json(r.summary), "file_id": r.file_id} for r in results])
    else:
        for r in results:
            print(f"refused: {r}" if isinstance(r, SyncFileError) else _ingested(r))
    return 1 if refused else 0


def _ingested(r: Any) -> str:
    """One line per ingested file: its name, what it added (or that nothing was new), its arrival."""
    s = r.summary
    name = Path(s.path).name
    if not s.changed:
        return f"{name}: nothing new ({s.skipped} rows already on the hub)"
    return (f"{name}: {s.memories} memories, {s.revisions} revisions, {s.tombstones} tombstones, "
            f"{s.derivations} derivations added, {s.skipped} rows already here; arrived "
            f"{from_micros(r.arrived_at).isoformat()}")


def _read(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    revs = reads.read(conn, args.user, clock=clock, as_of=args.as_of, known_at=args.known_at,
                      valid_at=args.valid_at, current_only=not args.all,
                      include_expired=args.all, include_retracted=args.all, kind=args.kind, key=args.key)
    print_revisions(revs, args.json)


def _get(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    rev = reads.get(conn, args.user, args.id, clock=clock, as_of=args.as_of, known_at=args.known_at,
                    valid_at=args.valid_at)
    if rev is None:
        print("null" if args.json else "(not known then)")
    else:
        print_revision(rev, args)


def _search(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    print_revisions(reads.search(conn, args.user, args.query, clock=clock, as_of=args.as_of,
                                 known_at=args.known_at, valid_at=args.valid_at, limit=args.limit),
                    args.json)


def _snapshot(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    print_snapshot(reads.snapshot(conn, args.user, clock=clock, known_at=args.known_at), args.json)


def _history(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    print_history(reads.history(conn, args.id, clock=clock, known_at=args.known_at), args.json)


def _knew(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import reads

    snap = reads.snapshot(conn, args.user, clock=clock, known_at=args.at)
    if args.diff is not None:  # the device's rule (replay.knew.diff) over two of the hub's snapshots
        last = reads.snapshot(conn, args.user, clock=clock, known_at=args.diff)
        print_diff(knew.diff(snap, last, lambda memory_id: reads.erasure(conn, memory_id)), args.json)
        return
    if args.json:
        print_json({"user_id": snap.user_id, "known_at": snap.known_at.isoformat(),
                    "memories": [r.to_dict() for r in snap.memories]})
    else:
        print_knew(snap.memories, snap.user_id, snap.known_at.isoformat())


def _export(conn: Any, args: argparse.Namespace, clock: Clock) -> None:
    from ..hub import relay

    out = relay.export(conn, args.out, clock=clock, since=args.since, user_id=args.user)
    if args.json:
        print_json(export_json(out))
    else:
        print(f"wrote {out.path}: {out.memories} memories, {out.revisions} revisions, {out.tombstones} "
              f"tombstones (watermark {out.watermark}: pass --since {out.watermark} next time)")


USER = "whose memories (a user id)"
KNOWN = "what the hub held at this time (rows arrived by then; default: now)"


def add_commands(command: Command) -> None:
    """Add ``localmem hub`` and its subcommands through the parser's ``command`` helper."""
    hub = command("hub", "the hub: many devices' export files in PostgreSQL, read as of any time",
                  json=False, clock=False)
    hub.set_defaults(without_store=_run)
    opts = argparse.ArgumentParser(add_help=False)
    opts.add_argument("--dsn", metavar="DSN", help="the hub's PostgreSQL connection string "
                      "(default: $LOCALMEM_HUB_DSN; its search_path names the hub's schema)")
    opts.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    opts.add_argument("--now", default=argparse.SUPPRESS, metavar="T",
                      help="use this instant as the hub's clock (arrivals, and 'now' for reads)")
    times = argparse.ArgumentParser(add_help=False)
    times.add_argument("--as-of", metavar="T", help="fix 'now' for the read: known_at = valid_at = AS_OF")
    times.add_argument("--known-at", metavar="T", help="what the hub knew at this time (arrived by then)")
    times.add_argument("--valid-at", metavar="T", help="what was true at this time")
    sub = hub.add_subparsers(dest="hub_command", required=True, metavar="HUB_COMMAND")

    def cmd(name: str, help_: str, func: Any, *parents: argparse.ArgumentParser) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_, description=help_, parents=[opts, *parents])
        p.set_defaults(hub_func=func)
        return p

    cmd("init", "create the hub's tables in the DSN's schema", _init)
    p = cmd("ingest", "apply device export files (or folders of them), each checked as a device checks it",
            _ingest)
    p.add_argument("paths", nargs="+", metavar="FILE|DIR", help="export files, or folders of them")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="ingest with N connections at once (each device's files stay in order)")
    p = cmd("read", "a user's memories as the hub knew them", _read, times)
    p.add_argument("--user", required=True, help=USER)
    p.add_argument("--kind", help="only memories of this kind")
    p.add_argument("--key", help="only memories with this key")
    p.add_argument("--all", action="store_true", help="include ended, expired and retracted memories")
    p = cmd("get", "one memory as the hub knew it", _get, times)
    p.add_argument("id", metavar="MEMORY_ID", help="the memory's id")
    p.add_argument("--user", required=True, help=USER)
    p = cmd("search", "a user's memories matching words (PostgreSQL full-text search)", _search, times)
    p.add_argument("query", help="words to find (any of them; PostgreSQL full-text search)")
    p.add_argument("--user", required=True, help=USER)
    p.add_argument("--limit", type=int, default=10, help="the most memories to show (default 10)")
    p = cmd("snapshot", "everything the hub held about a user at a time", _snapshot)
    p.add_argument("--user", required=True, help=USER)
    p.add_argument("--known-at", metavar="T", help=KNOWN)
    p = cmd("history", "every change to one memory the hub holds", _history)
    p.add_argument("id", metavar="MEMORY_ID", help="the memory's id")
    p.add_argument("--known-at", metavar="T", help=KNOWN)
    p = cmd("knew", "what the hub knew about a user at a time, or what it learned between two", _knew)
    p.add_argument("--user", required=True, help=USER)
    p.add_argument("--at", required=True, metavar="T", help="the time (a date is the start of that day)")
    p.add_argument("--diff", metavar="DATE2", help="list what was learned, corrected, retracted... by then")
    p = cmd("export", "a device-readable export of what the hub holds (the relay)", _export)
    p.add_argument("--since", type=int, default=0, metavar="W", help="the previous export's watermark")
    p.add_argument("--user", help="only this user's rows")
    p.add_argument("--out", required=True, metavar="FILE", help="the sync file to write")
