"""``localmem mcp``: serve the store to MCP clients (stdio, or streamable HTTP on localhost).

Kept apart from the other commands so that it adds one hook to the parser; the
MCP SDK is imported only when the command runs (``pip install 'localmem[mcp]'``).
An interface: it uses the library's public names.
"""

from __future__ import annotations

import argparse
from typing import Any

from .. import Clock, InvalidInputError, InvalidOperationError, Store, system_clock
from ..testing import FrozenClock

__all__ = ["add_command", "cmd_mcp"]


def add_command(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add the ``mcp`` command to the subcommands ``sub`` (an argparse subparsers action)."""
    help_ = "serve the store to MCP clients (agents, desktop apps) over stdio, or HTTP on localhost"
    p = sub.add_parser("mcp", help=help_, description=help_, parents=[common])
    p.add_argument("--read-only", action="store_true",
                   help="offer only the read tools (search, read, get, history, snapshot, knew); "
                        "search logs no usage")
    p.add_argument("--http", type=int, metavar="PORT",
                   help="serve streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of stdio")
    p.set_defaults(func=cmd_mcp)


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
    now = getattr(args, "now", None)
    clock: Clock = system_clock if now is None else FrozenClock(now)
    serve(store, read_only=args.read_only, http=port, clock=clock)
    return 0
