"""Pilot tests: every screen shows what the store knew at the header's clocks; read-only writes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path

import apsw
from textual.widgets import Static
from tui_helpers import answer, demo_store, goto_row, make_app, pilot_test, rows, settle

from localmem.cli import demo
from localmem.testing import FrozenClock
from tui import LocalmemApp
from tui.screens.compare import CompareScreen
from tui.screens.dialogs import AskDialog, ConfirmDialog
from tui.screens.history import HistoryScreen
from tui.screens.memories import MemoriesScreen
from tui.screens.message import MessageScreen

SMALL, LARGE = (80, 24), (120, 40)


def _screen_text(app: LocalmemApp) -> str:
    return "\n".join(str(s.render()) for s in app.screen.query(Static).results(Static))


@pilot_test
async def test_the_fees_history_title_is_the_value_known_at_0905() -> None:
    """Known at 09:05 the fee's History title reads 4 (the value then), not the newest 6."""
    app = make_app(demo_store(), "2026-03-02T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await answer(pilot, "2026-03-02 09:05")
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen) and app.screen.data is not None
        title = str(app.screen.query_one("#memory-title", Static).render())
        assert title.startswith("fee for fill 42 = 4")
        assert "= 6" not in _screen_text(app) and "= 7" not in _screen_text(app)
        assert [c.version for c in app.screen.data.changes] == [1]


@pilot_test
async def test_a_memory_not_yet_recorded_says_so() -> None:
    """known_at before a memory existed, on its History, says it was not yet recorded (no empty page)."""
    app = make_app(demo_store(), "2026-03-02T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("k")
        await answer(pilot, "2026-03-02 08:30")
        text = _screen_text(app)
        assert "was not yet recorded at known_at" in text and "fee for fill 42" not in text
        assert "0 revisions" not in text


@pilot_test
async def test_compare_labels_a_supersession_and_keeps_cutoff_b_per_user() -> None:
    """Vegetarian → fish is one "superseded" row; cutoff B set for sam is not carried to acct-7."""
    app = make_app(demo_store(), "2025-08-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("b")
        await answer(pilot, "2025-10-01")
        diet = [r for r in rows(app) if r[0] == "diet"]
        assert [r[1:4] for r in diet] == [["Sam is vegetarian", "Sam eats fish", "superseded"]]
        assert all("not known" not in c and "gone" not in c for r in rows(app) for c in r)
        assert rows(app)[0][3] != ""  # differences first
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("up", "enter")  # acct-7, listed first
        await settle(pilot)
        assert app.view.user == demo.FEE_USER
        assert "(now)" in str(app.screen.query_one("#cutoffs", Static).render())
        await pilot.press("escape")  # opened with 3: back to the memories
        assert isinstance(app.screen, MemoriesScreen)


@pilot_test
async def test_enter_on_compare_opens_history_at_the_later_cutoff() -> None:
    """A = 09:05, B = 10:01: Enter on the fee opens its History pinned at 10:01, with the correction to 7."""
    app = make_app(demo_store(), "2026-03-02T09:05:00Z", demo.FEE_USER)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("b")
        await answer(pilot, "2026-03-02 10:01")
        await goto_row(pilot, "fee")
        await pilot.press("enter")
        await settle(pilot)
        history = app.screen
        assert isinstance(history, HistoryScreen) and history.data is not None
        assert [c.new_value for c in history.data.changes] == [4, 7]
        header = str(history.query_one("#clockbar", Static).render())
        assert "known at 2026-03-02 10:01" in header and "pinned" in header
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert app.view.known_at is None  # the app's clocks were not changed


def _file_state(path: Path) -> tuple[str, int, int]:
    conn = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    try:
        has = conn.execute("SELECT count(*) FROM sqlite_schema WHERE name = 'sqlite_stat1'").get
        stat = conn.execute("SELECT count(*) FROM sqlite_stat1").get if has else -1
        revs = conn.execute("SELECT count(*) FROM revisions").get
    finally:
        conn.close()
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat, revs


@pilot_test
async def test_an_empty_file_is_refused_and_left_empty(tmp_path: Path) -> None:
    """`: > zero.db; localmem tui --db zero.db`: a message, and the file stays 0 bytes."""
    path = tmp_path / "zero.db"
    path.write_bytes(b"")
    app = LocalmemApp(path=path, clock=FrozenClock("2026-03-02T12:00:00Z"))
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MessageScreen)
        assert "empty file, not a localmem database" in _screen_text(app)
        await pilot.press("q")
    assert path.stat().st_size == 0


@pilot_test
async def test_browsing_a_file_read_only_changes_nothing_in_it(tmp_path: Path) -> None:
    """Every screen visited without --write leaves the file's bytes and sqlite_stat1 as they were."""
    path = tmp_path / "demo.db"
    demo.build(path).close()
    before = _file_state(path)
    app = LocalmemApp(path=path, clock=FrozenClock("2025-12-01T12:00:00Z"), user=demo.SAM)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await pilot.press(*"fish", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("escape", "2")
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("q")
    assert _file_state(path) == before


@pilot_test
async def test_expire_takes_a_phrase_and_refuses_nonsense_before_confirming() -> None:
    """`e next friday` previews "visible through <that friday>"; `e soonish` is refused in the dialog."""
    store = demo_store()
    app = make_app(store, "2026-04-01T12:00:00Z", demo.SAM, write=True)  # a Wednesday
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Sam is allergic")
        await pilot.press("enter")
        await settle(pilot)
        before = store.info().revisions
        await pilot.press("e")
        await answer(pilot, "soonish", "")
        assert isinstance(app.screen, AskDialog)
        assert "is not an expiry" in str(app.screen.query_one(".dialog-error", Static).render())
        await answer(pilot, "next friday", "trial")
        assert isinstance(app.screen, ConfirmDialog)
        assert str(app.screen.query_one(".dialog-title", Static).render()) == "Append an expiry?"
        preview = str(app.screen.query_one("#preview", Static).render())
        assert "visible through 2026-04-" in preview
        day = preview.split("visible through ")[1][:10]
        await pilot.press("y")
        await settle(pilot)
        assert store.info().revisions == before + 1
        history = app.screen
        assert isinstance(history, HistoryScreen)
        assert f"expiry visible through {day}" in _screen_text(app)


@pilot_test
async def test_history_shows_an_expiry_set_at_add() -> None:
    """The Berlin half plan, added with expires=2025-11-15, reads "visible through 2025-11-15" on its card."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Training for the Berlin half")
        await pilot.press("enter")
        await settle(pilot)
        assert "expiry visible through 2025-11-15" in _screen_text(app)


@pilot_test
async def test_write_keys_in_read_only_history_say_how_to_enable_them() -> None:
    """Read-only, `c`, `d` and `e` each say "start the TUI with --write"; nothing is appended."""
    store = demo_store()
    before = store.info().revisions
    app = make_app(store, "2026-03-02T12:00:00Z", demo.FEE_USER)
    said: list[str] = []
    app.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        for key in "cde":
            said.clear()
            await pilot.press(key)
            await pilot.pause()
            assert said and "start the TUI with --write" in said[0], key
        assert isinstance(app.screen, HistoryScreen)
    assert store.info().revisions == before
