"""The commands between stores and files: ``import``, ``export`` and ``sync``.

``import`` takes a sync export from another device or a conversation (JSON
messages); ``export`` writes a sync export, or one user's memories as CSV or
JSON; ``sync`` does both through a folder the devices share.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ..errors import InvalidInputError
from ..store import Store
from ..sync.files import is_sync_file
from .common import Command, print_revisions

__all__ = ["add_commands"]


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
        print_revisions(revs, True)
        return
    print(f"imported {len(revs)} memories for {args.user}")
    for rev in revs:
        print(f"  {rev.memory_id}  {rev.valid_source:8}  {rev.text}")


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
    for skip in result.skipped:
        print(f"skipped {Path(skip.path).name!r}: {skip.reason}", file=sys.stderr)
    for gone in result.pruned:
        print(f"removed {Path(gone).name} (superseded by the new full export after an erasure)")
    if result.exported is None:
        print("nothing new to export")
    else:
        out = result.exported
        print(f"wrote {Path(out.path).name}: {out.revisions} revisions, {out.tombstones} tombstones")


def add_commands(command: Command) -> None:
    """Add ``import``, ``export`` and ``sync``."""
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
