"""The ``localmem`` command: parse, call one library function, print.

Data goes to stdout (``--json`` for machines), errors to stderr as one line
with a non-zero exit code, so pipes stay clean. The database is ``--db PATH``,
else ``$LOCALMEM_DB``, else the default file in the user data dir.

This module only builds the parser from the command groups and runs one
command; each group lives in its own module (:mod:`.memories`, :mod:`.sync`,
:mod:`.replay`, :mod:`.database`, :mod:`.mcp`) on the helpers of :mod:`.common`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..errors import LocalmemError
from ..store import open as open_store
from . import database, mcp, memories, replay, sync
from .common import EXIT_ERROR, clock_arg, db_path

__all__ = ["main", "build_parser"]


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

    # The order of the help's command list: taking memories in, moving them between
    # stores, changing and reading them, replay and audit, then the file itself.
    memories.add_new_commands(command)
    sync.add_commands(command)
    memories.add_commands(command, reads)
    replay.add_commands(command, common)
    database.add_commands(command)
    mcp.add_commands(command)  # localmem mcp (the SDK is imported only when it runs)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.db = getattr(args, "db", None)
    args.json = getattr(args, "json", False)
    try:
        without_store = getattr(args, "without_store", None)
        if without_store is not None:  # resolve, tui, demo: no store to open first
            return int(without_store(args))
        store = open_store(db_path(args), clock=clock_arg(getattr(args, "now", None)))
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
