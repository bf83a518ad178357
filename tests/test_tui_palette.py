"""Pilot tests of what Textual users expect: the command palette, filter as you type, copy, export, sort."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from textual.widgets import Input
from tui_helpers import answer, demo_store, goto_row, make_app, pilot_test, rows, settle

from localmem.cli import demo
from tui.screens.dialogs import PickDialog
from tui.screens.memories import MemoriesScreen

SIZE = (120, 40)
FEE_AT = "2026-03-02T09:05:00Z"


@pilot_test
async def test_the_palette_offers_the_app_s_actions_and_runs_them() -> None:
    """ctrl+p lists jump to user, the clocks, the screens and export; "Jump to user sam" switches to sam."""
    app = make_app(demo_store(), FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        commands = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Jump to user sam", "Set known at…", "Set valid at…", "Clocks back to now",
                      "Open Memories", "Open Expired", "Open Compare", "Export this view as CSV…",
                      "Export this view as JSON…", "Copy…"):
            assert title in commands, title
        assert "Jump to user acct-7" not in commands  # the user shown already
        commands["Jump to user sam"].callback()
        await settle(pilot)
        assert app.view.user == demo.SAM
        assert any(r[0] == "Sam eats fish" for r in rows(app))


@pilot_test
async def test_the_filter_narrows_the_loaded_rows_as_you_type() -> None:
    """Typing "knee" in the filter box leaves the knee row; Escape brings every row back."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        every = len(rows(app))
        await pilot.press("f", *"knee")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == ["Sam injured the left knee (patellar tendinitis)"]
        assert app.screen.query_one("#filter", Input).value == "knee"
        app.screen.query_one("#rows").focus()
        await pilot.press("escape")
        await settle(pilot)
        assert len(rows(app)) == every


@pilot_test
async def test_y_copies_the_memory_id_or_its_text() -> None:
    """`y` on the fee offers its id, text and row; picking the id puts it on the clipboard."""
    app = make_app(demo_store(), FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        screen = app.screen
        assert isinstance(screen, MemoriesScreen)
        rev = screen.current()
        assert rev is not None
        await pilot.press("y")
        assert isinstance(app.screen, PickDialog)
        await pilot.press("enter")  # the first choice: the memory id
        assert app.clipboard == rev.memory_id
        await pilot.press("y", "down", "enter")
        assert app.clipboard == "fee for fill 42 = 4"


@pilot_test
async def test_export_writes_the_view_at_its_clocks(tmp_path: Path) -> None:
    """`E` at known 09:05 writes the fee as 4 (JSON and CSV), the whole listing, nothing recorded later."""
    app = make_app(demo_store(), FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for name in ("view.json", "view.csv"):
            await pilot.press("E")
            await answer(pilot, str(tmp_path / name))
            await settle(pilot)
    records = json.loads((tmp_path / "view.json").read_text())
    assert sorted((r["key"], r["value"]) for r in records) == [
        ("fee", 4), ("opening_balance", 500), ("purchase", 100)]
    assert all(r["recorded_at"] <= "2026-03-02T09:05:00+00:00" for r in records)
    with (tmp_path / "view.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    assert sorted((r["key"], r["value"]) for r in table) == [("fee", "4"), ("opening_balance", "500"),
                                                            ("purchase", "100")]


@pilot_test
async def test_an_export_path_without_csv_or_json_is_refused_in_the_dialog(tmp_path: Path) -> None:
    """An export to view.txt is refused before anything is written; the dialog stays open."""
    app = make_app(demo_store(), FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("E")
        await answer(pilot, str(tmp_path / "view.txt"))
        assert "must end in .csv or .json" in str(app.screen.query_one(".dialog-error").render())
    assert not (tmp_path / "view.txt").exists()


@pilot_test
async def test_o_sorts_the_table_by_a_column() -> None:
    """`o` sorts Sam's memories by their text, `o` again the other way round."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        texts = [r[0] for r in rows(app)]
        await pilot.press("o")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == sorted(texts, key=str.lower)
        await pilot.press("o")
        await pilot.pause()
        assert [r[0] for r in rows(app)] == sorted(texts, key=str.lower, reverse=True)
