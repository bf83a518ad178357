"""Snapshot tests of each TUI screen at a fixed size, on the demo stories with fixed ids and clock.

Regenerate only after looking at the report: ``pytest tests/test_tui_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from tui_helpers import SMALL, answer, demo_store, goto_row, make_app, settle

from localmem.cli import demo
from localmem.testing import FrozenClock
from tui import LocalmemApp

SnapCompare = Callable[..., bool]


def _app(monkeypatch: pytest.MonkeyPatch, at: str, user: str) -> LocalmemApp:
    return make_app(demo_store(monkeypatch), at, user)


def test_memories_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sam's memories on 2025-10-01, expired ones shown."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("x")
        await settle(pilot)

    assert snap_compare(_app(monkeypatch, "2025-12-01T12:00:00Z", demo.SAM), terminal_size=SMALL,
                        run_before=run_before)


def test_expired_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """What has expired on 2025-12-01."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)

    assert snap_compare(_app(monkeypatch, "2025-12-01T12:00:00Z", demo.SAM), terminal_size=SMALL,
                        run_before=run_before)


def test_history_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fee's history: 4 → 7 → 6."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)

    assert snap_compare(_app(monkeypatch, "2026-03-02T12:00:00Z", demo.FEE_USER), terminal_size=SMALL,
                        run_before=run_before)


def test_compare_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """The account known at 09:05 beside known at 10:01."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("b")
        await answer(pilot, "2026-03-02 10:01")

    assert snap_compare(_app(monkeypatch, "2026-03-02T09:05:00Z", demo.FEE_USER), terminal_size=SMALL,
                        run_before=run_before)


def test_timeline_screen(snap_compare: SnapCompare, monkeypatch: pytest.MonkeyPatch) -> None:
    """home_city along valid time: Lisbon, then Berlin."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await goto_row(pilot, "Sam lives in Berlin")
        await pilot.press("t")
        await settle(pilot)

    assert snap_compare(_app(monkeypatch, "2025-10-01T12:00:00Z", demo.SAM), terminal_size=SMALL,
                        run_before=run_before)


def test_missing_database_message(snap_compare: SnapCompare, tmp_path: Path) -> None:
    """A path with no database: a message, not a traceback (the path is fixed for the snapshot)."""
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)

    app: Any = LocalmemApp(path="/nonexistent/localmem-snapshot.db", clock=FrozenClock("2026-01-01"))
    assert snap_compare(app, terminal_size=SMALL, run_before=run_before)
