"""The commands on the database file itself: ``info``, ``doctor``, ``tui`` and ``demo``.

``tui`` and ``demo`` start the Textual app, imported only when they run: the
library never imports textual, so a store without the TUI's toolkit still works.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ..core.db import default_path
from ..errors import InvalidInputError
from ..store import Store
from ..time.clock import Clock, system_clock
from . import demo
from .common import EXIT_ERROR, Command, clock_arg, db_path

__all__ = ["add_commands", "at_terminal", "demo_path", "open_tui"]


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


def demo_path(db: str | None) -> Path:
    """Where ``localmem demo`` writes: beside the user's database, never in it."""
    if db and db != ":memory:":
        p = Path(db)
        return p.with_name(p.stem + "-demo.db")
    return default_path().with_name("demo.db")


def open_tui(path: Path, *, user: str | None, write: bool, clock: Clock | None) -> int:
    """Run the Textual TUI on ``path`` (imported here: the library never imports textual)."""
    try:
        from tui import LocalmemApp
    except ImportError as exc:  # an install without the TUI's toolkit
        raise InvalidInputError(f"the TUI needs textual: pip install textual ({exc})") from exc
    app = LocalmemApp(path=path, user=user, write=write, clock=clock or system_clock)
    app.run()
    return 0


def at_terminal() -> bool:
    """Whether a person is at a terminal (stdin and stdout both are one)."""
    return sys.stdout.isatty() and sys.stdin.isatty()


def cmd_tui(args: argparse.Namespace) -> int:
    if not at_terminal():
        # Without a terminal Textual would draw into a pipe forever: refuse, as demo falls back.
        raise InvalidInputError(
            "localmem tui needs a terminal (stdin and stdout): run it in one, or use read, "
            "history or snapshot in scripts"
        )
    path = db_path(args)
    return open_tui(Path(path) if path else default_path(), user=args.user, write=args.write,
                    clock=clock_arg(getattr(args, "now", None)))


def run_demo(args: argparse.Namespace) -> int:
    given = db_path(args)
    path = demo_path(given)
    if given is None:  # beside the default file, in the user data dir: made on first use
        path.parent.mkdir(parents=True, exist_ok=True)
    store = demo.build(path)
    if not args.json and sys.stdout.isatty() and sys.stdin.isatty():
        # A person at a terminal: show the stories in the TUI (the summary is for pipes and tests).
        store.close()
        return open_tui(path, user=demo.SAM, write=False, clock=None)
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


def add_commands(command: Command) -> None:
    """Add ``info``, ``doctor``, ``tui`` and ``demo``."""
    p = command("info", "what this database holds")
    p.set_defaults(func=cmd_info)

    p = command("doctor", "check the database's integrity and invariants")
    p.set_defaults(func=cmd_doctor)

    p = command("tui", "browse the memories in the terminal UI (read-only unless --write)", json=False)
    p.add_argument("--user", help="whose memories to show first (default: the first user)")
    p.add_argument("--write", action="store_true",
                   help="allow correct, retract and expire from the history screen (each confirmed)")
    p.set_defaults(func=None, without_store=cmd_tui)

    p = command("demo", "rebuild the demo database (fee and Sam stories) and open it in the TUI "
                        "(at a terminal; else print what the stories show)", clock=False)
    p.set_defaults(func=None, without_store=run_demo)
