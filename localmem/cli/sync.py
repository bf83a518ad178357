"""The commands between stores and files: ``import``, ``export`` and ``sync``.

``import`` takes a sync export from another device or a conversation (JSON
messages); ``export`` writes a sync export, or one user's memories as CSV or
JSON; ``sync`` does both through a folder the devices share. Each prints one
summary, never a line per row (``import --ids`` prints the new ids, one a line,
for scripts); at a terminal a progress bar runs on stderr meanwhile.

Every summary under ``--json`` names its watermark the same way, as the range
of local revision numbers the file covers: ``{"from": W0, "to": W1}`` (pass
``to`` as the next ``--since``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from ..core.inputs import check_path
from ..errors import InvalidInputError, StorageError
from ..store import Store
from ..sync.files import ExportSummary, ImportSummary, is_sync_file
from .common import Command, print_json, print_revisions, progress, writable_file

__all__ = ["add_commands", "export_json", "import_json", "read_conversation"]


def export_json(out: ExportSummary) -> dict[str, Any]:
    """An export's summary as JSON: the watermark as a ``{"from", "to"}`` range, as imports show it."""
    data = dataclasses.asdict(out)
    del data["since"]
    data["watermark"] = {"from": out.since, "to": out.watermark}
    return data


def import_json(summary: ImportSummary) -> dict[str, Any]:
    """An import's summary as JSON: the file's watermark range ``{"from", "to"}``, and ``changed``."""
    data = dataclasses.asdict(summary)
    data["watermark"] = {"from": summary.watermark[0], "to": summary.watermark[1]}
    data["changed"] = summary.changed
    return data


def read_conversation(args: argparse.Namespace) -> None:
    """Before the store opens: read a conversation's JSON into ``args.messages`` (None for a sync
    export), so a file that cannot be read leaves no new database behind."""
    args.messages = None
    if args.file != "-" and is_sync_file(args.file):
        return
    if not args.user:
        raise InvalidInputError("importing a conversation needs --user (whose messages they are)")
    try:
        if args.file == "-":
            args.messages = json.load(sys.stdin)
        else:
            with open(check_path(args.file, "import file"), encoding="utf-8") as f:
                args.messages = json.load(f)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {args.file!r}: {exc.strerror}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"{args.file!r} is not JSON: {exc}") from exc
    except RecursionError:
        raise InvalidInputError(f"{args.file!r} nests its JSON too deeply to read") from None


def cmd_import(store: Store, args: argparse.Namespace) -> None:
    if args.messages is None:
        # A sync export (gzip): chat imports are plain JSON text, so the first bytes tell them apart.
        if args.user or args.tz or args.role or args.backfill:
            raise InvalidInputError(
                f"{args.file!r} is a sync export: --user, --tz, --role and --backfill do not apply")
        with progress(args, f"importing {Path(args.file).name}"):
            summary = store.import_(args.file)
        if args.json:
            print(json.dumps(import_json(summary)))
        else:
            print(summary.describe())
        return
    with progress(args, "importing messages") as tick:
        revs = store.add_messages(args.messages, user_id=args.user, tz=args.tz,
                                  roles=tuple(args.role or ["user"]), backfill=args.backfill, progress=tick)
    if args.ids:
        for rev in revs:
            print(rev.memory_id)
        return
    if args.json:
        print_revisions(revs, True)
        return
    resolved = sum(1 for r in revs if r.valid_source == "resolved")
    how = "each recorded when it was sent" if args.backfill else "recorded now"
    print(f"imported {len(revs)} memories for {args.user} ({resolved} with a time phrase resolved; {how})")


def cmd_export(store: Store, args: argparse.Namespace) -> None:
    if args.format == "sync":
        if args.file == "-":
            raise InvalidInputError("a sync export is written to a file: give a path, not -")
        writable_file(args.file, "export path")
        with progress(args, f"exporting to {Path(args.file).name}"):
            out = store.export(args.file, since=args.since, user_id=args.user)
        if args.json:
            print(json.dumps(export_json(out)))
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
    target = writable_file(args.file, "export path")
    try:
        with open(target, "w", encoding="utf-8", newline="") as f:
            n = store.write_plain(args.user, args.format, f)
    except OSError as exc:
        if isinstance(exc, StorageError):
            raise
        raise StorageError(f"cannot write {args.file!r}: {exc.strerror or exc}") from exc
    if not args.quiet:
        print(f"exported {n} memories of {args.user} to {args.file}", file=sys.stderr)


def cmd_sync(store: Store, args: argparse.Namespace) -> None:
    with progress(args, f"syncing through {args.dir}"):
        result = store.sync_dir(args.dir)
    if args.json:
        print_json({
            "directory": result.directory,
            "exported": None if result.exported is None else export_json(result.exported),
            "imported": [import_json(i) for i in result.imported],
        })
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
    p.set_defaults(mode="create")
    p.add_argument("file", help="a sync export, or the JSON file of a conversation (- for stdin)")
    p.add_argument("--user", help="whose conversation it is (conversations only)")
    p.add_argument("--tz", help="the user's IANA zone (conversations only)")
    p.add_argument("--role", action="append", help="roles to import (default: user; repeatable)")
    p.add_argument("--backfill", action="store_true",
                   help="an app migrating its own log: record each message when it was sent "
                        "(in send order, after everything already in the store)")
    p.add_argument("--ids", action="store_true", help="print only the new memory ids, one a line")
    p.set_defaults(func=cmd_import, prepare=read_conversation)

    p = command("export", "write a sync export for another device, or one user's memories as CSV/JSON")
    p.add_argument("file", help="the file to write (- for stdout, csv/json only)")
    p.add_argument("--format", choices=("sync", "csv", "json"), default="sync",
                   help="sync (default): gzip'd JSON lines another store imports; csv/json: "
                        "one user's memories as known now, with both clocks")
    p.add_argument("--since", type=int, metavar="W",
                   help="a watermark from an earlier sync export: only what is newer")
    p.add_argument("--user", help="only this user's memories (required for csv/json)")
    p.set_defaults(func=cmd_export)

    p = command("sync", "sync through a folder shared by devices: import the others' files, write ours")
    p.set_defaults(mode="create")
    p.add_argument("dir", help="the shared folder")
    p.set_defaults(func=cmd_sync)
