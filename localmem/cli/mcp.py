"""``localmem mcp``: serve the store to MCP clients (stdio, or streamable HTTP on localhost).

A command group of its own, so that it adds one line to the parser; the MCP SDK is
imported only when the command runs (``pip install 'localmem[mcp]'``).
"""

from __future__ import annotations

import argparse

from .. import InvalidInputError, InvalidOperationError, Store, system_clock
from .common import Command, clock_arg

__all__ = ["add_commands", "cmd_mcp"]


def add_commands(command: Command) -> None:
    """Add ``mcp``."""
    p = command("mcp", "serve the store to MCP clients (agents, desktop apps) over stdio, "
                       "or HTTP on localhost")
    p.add_argument("--read-only", action="store_true",
                   help="offer only the read tools (search, read, get, history, snapshot, knew); "
                        "search logs no usage")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio")
    p.set_defaults(func=cmd_mcp, mode="create")  # an agent's first write makes the store


def cmd_mcp(store: Store, args: argparse.Namespace) -> int:
    """Serve ``store`` until the client (stdio) or the process (HTTP) stops."""
    port = args.http
    if port is not None and not 1 <= port <= 65535:
        raise InvalidInputError(f"--http {port!r} is not a port: expected 1 to 65535")
    try:
        from ..mcp_server import serve
    except ImportError as exc:
        raise InvalidOperationError(
            f"localmem mcp needs the MCP SDK ({(exc.name or 'mcp').split('.')[0]} is missing): "
            "pip install 'localmem[mcp]'") from exc
    # `knew` without `until` means now: the same clock as the store's (--now stops both).
    clock = clock_arg(getattr(args, "now", None)) or system_clock
    serve(store, read_only=args.read_only, http=port, clock=clock)
    return 0
