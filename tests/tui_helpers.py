"""Helpers for the TUI's Pilot and snapshot tests: the demo stories on a frozen clock."""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable, Coroutine
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypedDict, Unpack

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input
from textual.worker import WorkerState

import localmem
from localmem.cli import demo
from localmem.core import ids
from localmem.testing import FrozenClock
from tui import LocalmemApp

SIZE = (130, 36)
#: The standard terminal: the snapshots are taken at it, so they show the clocks fit.
SMALL = (80, 24)


def pilot_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async Pilot test on a fresh event loop (no async pytest plugin needed)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run


def demo_store(monkeypatch: pytest.MonkeyPatch | None = None) -> localmem.Store:
    """The demo stories in memory; with ``monkeypatch``, ids are the same on every run (snapshots)."""
    if monkeypatch is not None:
        rng = random.Random(6)
        monkeypatch.setattr(ids, "os", SimpleNamespace(urandom=rng.randbytes))
    return demo.build(":memory:")


class AppOptions(TypedDict, total=False):
    """The app's other keyword arguments, passed through as given."""

    path: str | Path | None
    write: bool
    known_at: datetime | None
    valid_at: datetime | None


def make_app(store: localmem.Store, at: str, user: str, **kwargs: Unpack[AppOptions]) -> LocalmemApp:
    """The app on ``store`` with its clock frozen at ``at``."""
    return LocalmemApp(store, clock=FrozenClock(at), user=user, **kwargs)


async def settle(pilot: Pilot[None]) -> None:
    """Let every worker finish and every message it posted be handled."""
    for _ in range(20):
        await pilot.pause()
        if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
            await pilot.pause()  # the last worker's message, and what handling it started
            if not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in pilot.app.workers):
                return
        await pilot.app.workers.wait_for_complete()


def rows(app: LocalmemApp) -> list[list[str]]:
    """The cells of the active screen's table, as text."""
    table = app.screen.query_one(DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def answer(pilot: Pilot[None], *values: str) -> None:
    """Fill the open dialog's inputs in order and submit it."""
    inputs = list(pilot.app.screen.query(Input).results(Input))
    for box, value in zip(inputs, values, strict=False):
        box.value = value
    inputs[-1].focus()
    await pilot.press("enter")
    await settle(pilot)


async def goto_row(pilot: Pilot[None], text: str) -> None:
    """Move the table's cursor to the first row whose memory starts with ``text``."""
    app = pilot.app
    assert isinstance(app, LocalmemApp)
    table = app.screen.query_one(DataTable)
    for i, row in enumerate(rows(app)):
        if row[0].startswith(text):
            table.move_cursor(row=i)
            await pilot.pause()
            return
    raise AssertionError(f"no row starts with {text!r}: {rows(app)}")
