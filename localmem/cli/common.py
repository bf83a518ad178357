"""What every command group shares: where the database is, typed arguments, and the printers.

The command modules (:mod:`.memories`, :mod:`.sync`, :mod:`.replay`,
:mod:`.database`) import from here and from the library, never from each
other; :mod:`.app` builds the parser from them. How values read for people is
decided once, in :mod:`localmem.present`, which the TUI shares.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..core.revision import Revision
from ..errors import InvalidInputError
from ..present import VALUE_HINT, interval, local_iso, marks, memory_text, parse_json
from ..time.clock import Clock, parse_time, zone

__all__ = [
    "EXIT_ERROR",
    "Command",
    "db_path",
    "json_arg",
    "filter_arg",
    "attrs_arg",
    "clock_arg",
    "axes",
    "print_json",
    "revision_lines",
    "print_revisions",
]

EXIT_ERROR = 1

#: The parser's ``command(name, help, *parents)``: adds one subcommand with the common options.
Command = Callable[..., argparse.ArgumentParser]


def db_path(args: argparse.Namespace) -> str | None:
    """The database: ``--db``, else ``$LOCALMEM_DB``, else None (the default file)."""
    return args.db or os.environ.get("LOCALMEM_DB") or None


def json_arg(text: str | None, name: str, hint: str = VALUE_HINT) -> Any:
    """An option holding JSON (None when absent); see :func:`localmem.present.parse_json`."""
    return None if text is None else parse_json(text, name, hint)


def filter_arg(text: str | None) -> Any:
    """The ``--filter`` tree (None when absent)."""
    return json_arg(text, "--filter", 'a tree such as {"kind": "goal"}')


def attrs_arg(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """``--attr NAME=VALUE`` pairs: a JSON value, else the text as a string."""
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


def clock_arg(now: str | None) -> Clock | None:
    """``--now``: a clock stopped at that instant (None: the system clock)."""
    if now is None:
        return None
    fixed = parse_time(now, name="--now", tz=zone("UTC")).at
    return lambda: fixed


def axes(args: argparse.Namespace) -> dict[str, Any]:
    """The read's clocks from ``--as-of``, ``--known-at`` and ``--valid-at``."""
    return {"as_of": args.as_of, "known_at": args.known_at, "valid_at": args.valid_at}


def print_json(data: Any) -> None:
    """Data as indented JSON on stdout (non-ASCII text kept as it is)."""
    print(json.dumps(data, ensure_ascii=False, indent=2))


def revision_lines(rev: Revision) -> Iterable[str]:
    """One revision as the command line shows it: the text, its clocks, its flags."""
    yield f"{rev.memory_id}  {memory_text(rev)}"
    key = f"key {rev.key} · " if rev.key else ""
    yield (f"    {key}{rev.kind} · valid {interval(rev.valid)} ({rev.precision}, {rev.valid_source})"
           f" · v{rev.version} {rev.op}")
    yield (f"    observed {local_iso(rev.observed_at, rev.tz)} · recorded "
           f"{rev.recorded_at.isoformat(timespec='seconds')} · zone {rev.tz}")
    if rev.expires_at is not None:
        yield f"    expires {local_iso(rev.expires_at, rev.tz)}"
    flags = marks(rev)
    if flags:
        yield f"    [{flags}]"


def print_revisions(revs: Sequence[Revision], as_json: bool) -> None:
    """Revisions as text (``(no memories)`` for none) or as a JSON list."""
    if as_json:
        print_json([r.to_dict() for r in revs])
        return
    if not revs:
        print("(no memories)")
    for rev in revs:
        for line in revision_lines(rev):
            print(line)
