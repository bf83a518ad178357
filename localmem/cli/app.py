"""The ``localmem`` command: parse, call one library function, print.

Data goes to stdout (``--json`` for machines), errors to stderr as one line
with a non-zero exit code (under ``--json``, one JSON object), so pipes stay
clean. The database is ``--db PATH``, else ``$LOCALMEM_DB``, else the default
file in the user data dir.

What a command may do to the file is declared with it (``mode``): a ``read``
never creates a database (a mistyped ``--db`` is an error, not a new empty
file); a ``create`` command (``add``, ``import``, ``sync``, ``run start``) makes
the file if its folder exists, and the default file's folder is made on first
write; a ``write`` needs a database that exists already.

This module only builds the parser from the command groups and runs one
command; each group lives in its own module (:mod:`.memories`, :mod:`.sync`,
:mod:`.replay`, :mod:`.database`, :mod:`.mcp`) on the helpers of :mod:`.common`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import LocalmemError
from ..store import Store
from ..store import open as open_store
from . import database, hub, mcp, memories, replay, sync
from .common import EXIT_ERROR, check_db_path, clock_arg, db_path, report_error, warn

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and for the docs)."""
    db = argparse.ArgumentParser(add_help=False)
    db.add_argument("--db", default=argparse.SUPPRESS, metavar="PATH",
                    help="database file (default: $LOCALMEM_DB, else localmem.db in the user data dir)")
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                         help="print JSON instead of text (errors too, on stderr)")
    now = argparse.ArgumentParser(add_help=False)
    now.add_argument("--now", default=argparse.SUPPRESS, metavar="T",
                     help="use this instant as the store's clock (scripted imports, tests); "
                          "recorded time still never goes backwards (a warning says so)")
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("--quiet", "-q", action="store_true", default=argparse.SUPPRESS,
                       help="no progress bars or notes on stderr (errors still)")
    common = argparse.ArgumentParser(add_help=False, parents=[db, as_json, now, quiet])
    reads = argparse.ArgumentParser(add_help=False)
    reads.add_argument("--as-of", metavar="T", help="fix 'now' for the read: known_at = valid_at = AS_OF")
    reads.add_argument("--known-at", metavar="T", help="what the store knew at this time")
    reads.add_argument("--valid-at", metavar="T", help="what was true at this time")

    parser = argparse.ArgumentParser(
        prog="localmem", parents=[common],
        description="A local-first bitemporal memory store: two clocks, nothing overwritten.",
        epilog="Times: ISO 8601 with an offset (2025-06-16T12:00:00Z), a date "
               "(2025-06-16, 2025-06, 2025: read in the user's zone), or epoch seconds.",
    )
    parser.add_argument("--version", action="version", version=f"localmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_: str, *parents: argparse.ArgumentParser,
                json: bool = True, clock: bool = True) -> argparse.ArgumentParser:
        # --json and --now only where they mean something (not tui's JSON, not demo's clock).
        options = [db, quiet, *([as_json] if json else []), *([now] if clock else [])]
        return sub.add_parser(name, help=help_, description=help_, parents=[*options, *parents])

    # The order of the help's command list: taking memories in, moving them between
    # stores, changing and reading them, replay and audit, then the file itself.
    memories.add_new_commands(command)
    sync.add_commands(command)
    memories.add_commands(command, reads)
    replay.add_commands(command, common)
    database.add_commands(command)
    mcp.add_commands(command)  # localmem mcp (the SDK is imported only when it runs)
    hub.add_commands(command)  # localmem hub ... (psycopg is imported only when one runs)
    return parser


def _warn_if_clock_behind(store: Store, args: argparse.Namespace) -> None:
    """``--now`` before the store's newest recorded time: the write is recorded later than asked."""
    now = getattr(args, "now", None)
    if now is None or getattr(args, "mode", "read") == "read":
        return
    last = store.last_recorded_at()
    asked = clock_arg(now)
    if last is not None and asked is not None and asked() < last:
        warn(args, f"--now {asked().isoformat()} is before the store's newest recorded time "
                   f"{last.isoformat()}: this write is recorded at {last.isoformat()} "
                   "(recorded time never goes backwards; see the README's --now)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.db = getattr(args, "db", None)
    args.json = getattr(args, "json", False)
    args.quiet = getattr(args, "quiet", False)
    try:
        without_store = getattr(args, "without_store", None)
        if without_store is not None:  # resolve, tui, demo: no store to open first
            return int(without_store(args))
        prepare = getattr(args, "prepare", None)
        if prepare is not None:  # read the command's own input first: a bad file opens nothing
            prepare(args)
        path = db_path(args)
        mode = getattr(args, "mode", "read")
        check_db_path(path, args.command, create=mode == "create")
        store = open_store(path, clock=clock_arg(getattr(args, "now", None)), create=mode == "create")
        try:
            _warn_if_clock_behind(store, args)
            result = args.func(store, args)
        finally:
            store.close()
        return int(result or 0)
    except LocalmemError as exc:
        report_error(exc, args.json)
        return EXIT_ERROR
    except BrokenPipeError:
        # The reader went away (| head): not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
