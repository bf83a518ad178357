"""What every command group shares: where the database is, typed arguments, and the printers.

The command modules (:mod:`.memories`, :mod:`.sync`, :mod:`.replay`,
:mod:`.database`) import from here and from the library, never from each
other; :mod:`.app` builds the parser from them. How values read for people is
decided once, in :mod:`localmem.present`, which the TUI shares.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core.db import default_path
from ..core.inputs import check_path, writable_path
from ..core.revision import Revision
from ..errors import DatabaseNotFoundError, InvalidInputError, LocalmemError
from ..present import VALUE_HINT, interval, local_iso, marks, memory_text, parse_json
from ..time.clock import Clock, parse_time, zone

__all__ = [
    "EXIT_ERROR",
    "Command",
    "db_path",
    "check_db_path",
    "writable_file",
    "report_error",
    "warn",
    "progress",
    "print_revision",
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


def check_db_path(path: str | None, command: str, *, create: bool) -> None:
    """Refuse a database path before anything opens it, so a typo never leaves files behind.

    A read (``create`` False) needs the file to exist; a command that may create
    the file needs its folder to exist (like sqlite3 and sqlite-utils, localmem
    makes no folders for an explicit path: ``mkdir -p`` it first). The default
    file's folder, in the user data dir, is made on first write.

    Raises:
        DatabaseNotFoundError: the file (or, when creating, its folder) is missing.
        InvalidInputError: the path is a directory.
    """
    if path == ":memory:":
        return
    target = default_path() if path is None else check_path(path, "database")
    where = "the default database" if path is None else "--db/$LOCALMEM_DB"
    try:
        is_dir, exists = target.is_dir(), target.exists()
    except OSError as exc:  # a name too long, a loop of links
        raise InvalidInputError(f"database {str(target)!r}: {exc.strerror or exc}") from exc
    if is_dir:
        raise InvalidInputError(f"database {str(target)!r} is a directory: expected a file path")
    if exists:
        return
    if not create:
        raise DatabaseNotFoundError(
            f"no database at {str(target)!r} ({where}): `{command}` never creates one; "
            "check the path, or write something first (add, import)"
        )
    if path is not None and not target.parent.is_dir():
        raise DatabaseNotFoundError(
            f"folder {str(target.parent)!r} of database {str(target)!r} does not exist: "
            f"localmem makes no folders for {where} (mkdir -p it first)"
        )


def writable_file(path: str, name: str) -> Path:
    """A path a command may write a file at: its folder exists and it is not a directory.

    Raises:
        InvalidInputError: the folder is missing, or the path is a directory.
    """
    return writable_path(path, name)


def report_error(exc: LocalmemError, as_json: bool) -> None:
    """An error as one line on stderr; under ``--json`` one object ``{"error", "type"}``."""
    if as_json:
        print(json.dumps({"error": str(exc), "type": type(exc).__name__}, ensure_ascii=False),
              file=sys.stderr)
    else:
        print(f"localmem: error: {exc}", file=sys.stderr)


def warn(args: argparse.Namespace, message: str) -> None:
    """A warning on stderr (the command goes on); under ``--json`` one object ``{"warning"}``."""
    if getattr(args, "json", False):
        print(json.dumps({"warning": message}, ensure_ascii=False), file=sys.stderr)
    else:
        print(f"localmem: warning: {message}", file=sys.stderr)


#: A progress callback: (done, total); total None when unknown.
Progress = Callable[[int, int | None], None]


def _no_progress(done: int, total: int | None = None) -> None:
    """The progress callback when nobody watches: nothing."""


@contextlib.contextmanager
def progress(args: argparse.Namespace, label: str, total: int | None = None) -> Iterator[Progress]:
    """A progress bar on stderr while a long operation runs, only at a terminal.

    Quiet (a no-op callback) when stderr is not a terminal, under ``--quiet`` or
    ``--json``. rich is imported here, in the command line only: the library
    never imports it.
    """
    if getattr(args, "quiet", False) or getattr(args, "json", False) or not sys.stderr.isatty():
        yield _no_progress
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)

        def update(done: int, total: int | None = None) -> None:
            if total is None:
                bar.update(task, completed=done)
            else:
                bar.update(task, completed=done, total=total)

        yield update


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
        except RecursionError:
            raise InvalidInputError(f"--attr {name}: {raw!r:.80} nests too deeply to read") from None
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


def print_revision(rev: Revision, args: argparse.Namespace) -> None:
    """One revision (what a write returns, or ``get``): text, a JSON object, or its id (``--ids``)."""
    if getattr(args, "ids", False):
        print(rev.memory_id)
    elif args.json:
        print_json(rev.to_dict())
    else:
        print_revisions([rev], False)


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
