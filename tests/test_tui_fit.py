"""Pilot tests: the TUI fits a standard terminal and says things right (clocks, footer, columns, counts)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from textual.widgets import DataTable, Static
from tui_helpers import answer, demo_store, goto_row, make_app, pilot_test, rows, settle

import localmem
from localmem.cli import demo
from localmem.testing import FrozenClock
from tui import LocalmemApp
from tui.format import count, expiry_text
from tui.screens.expired import ExpiredScreen
from tui.screens.history import HistoryScreen
from tui.screens.memories import PAGE
from tui.screens.timeline import TimelineScreen

SMALL, LARGE = (80, 24), (120, 40)


def _header(app: object) -> list[str]:
    bar = app.screen.query_one("#clockbar", Static)  # type: ignore[attr-defined]
    return str(bar.render()).split("\n")


def _status(app: object) -> str:
    return str(app.screen.query_one("#status", Static).render())  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [SMALL, LARGE])
@pilot_test
async def test_every_screen_keeps_both_clocks_on_the_header_s_first_line(size: tuple[int, int]) -> None:
    """At 80×24 and 120×40, on every screen, the header's first line holds both clocks, unwrapped."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("k")
        await answer(pilot, "2025-09-30 10:00")
        seen: list[object] = []
        for keys in ("1", "2", "3", "1", "enter", "t"):
            await pilot.press(keys)
            await settle(pilot)
            if seen == ["MemoriesScreen", "ExpiredScreen", "CompareScreen"]:
                await goto_row(pilot, "Sam lives in Berlin")
                seen.append("back")
                continue
            lines = _header(app)
            assert len(lines) == 2 and all(len(line) <= size[0] for line in lines)
            assert "known at 2025-09-30 10:00" in lines[0] and "valid at = known at" in lines[0]
            seen.append(type(app.screen).__name__)
        assert seen == ["MemoriesScreen", "ExpiredScreen", "CompareScreen", "back", "HistoryScreen",
                        "TimelineScreen"]


@pilot_test
async def test_the_footer_keeps_user_and_quit_at_120_columns() -> None:
    """At 120 columns the footer's `u User` and `q Quit` are inside the screen on every data screen."""
    app = make_app(demo_store(), "2026-03-02T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        for keys in (["1"], ["2"], ["3"], ["1", "enter"]):
            await pilot.press(*keys)
            await settle(pilot)
            keys_shown = {k.key: k for k in app.screen.query("FooterKey")}  # type: ignore[attr-defined]
            for key in ("u", "q"):
                assert key in keys_shown, (keys, sorted(keys_shown))
                assert keys_shown[key].region.right <= LARGE[0], (keys, key)


@pilot_test
async def test_columns_fit_their_content_after_a_user_switch_and_a_search() -> None:
    """Switching from acct-7 to sam, then searching, refits the columns: Sam's longest memory shows whole."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        memory = next(iter(table.columns.values()))
        long = "Sam injured the left knee (patellar tendinitis)"
        assert memory.width == len(long)
        await pilot.press("slash", *"fish", "enter")
        await settle(pilot)
        assert next(iter(table.columns.values())).width == len("Sam eats fish")


@pilot_test
async def test_a_cell_too_wide_for_its_column_ends_in_an_ellipsis() -> None:
    """At 80 columns the knee memory is cut with "…", and the Flags column still shows."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        table = app.screen.query_one(DataTable)
        rendered = "\n".join(line.text for line in table.render_lines(table.region.reset_offset))
        assert "Sam injured the left knee (patellar te…" in rendered
        assert "Flags" in rendered and "corrected" in rendered


def test_counts_have_plurals_and_thousands_separators() -> None:
    """count() says "1 expired memory", "2 expired memories", "1 hit", "14,964 hits"."""
    assert [count(1, "expired memory"), count(2, "expired memory"), count(1, "hit"), count(14964, "hit")] == [
        "1 expired memory", "2 expired memories", "1 hit", "14,964 hits"]


def test_an_expiry_reads_the_way_the_dialog_asks_for_it() -> None:
    """An expiry at local midnight is "visible through" the day before; any other instant is "hidden from"."""
    berlin = "Europe/Berlin"
    assert expiry_text(datetime(2026, 12, 31, 23, 0, tzinfo=UTC), berlin) == "visible through 2026-12-31"
    assert expiry_text(datetime(2026, 12, 31, 17, 0, tzinfo=UTC), berlin) == "hidden from 2026-12-31 18:00"


@pilot_test
async def test_the_expired_screen_counts_in_the_singular() -> None:
    """One expired plan reads "1 expired memory"."""
    app = make_app(demo_store(), "2025-12-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ExpiredScreen)
        assert _status(app).startswith("1 expired memory (")


def _many(n: int) -> localmem.Store:
    clock = FrozenClock("2026-01-01T00:00:00Z")
    s = localmem.open(":memory:", clock=clock)
    with s.batch():
        for i in range(n):
            clock.advance(seconds=1)
            s.add(f"coffee number {i}", user_id="u", valid_from="2025-01-01", resolve=False)
    return s


@pilot_test
async def test_page_and_search_limits_are_not_shown_as_totals() -> None:
    """250 memories: the list says "100 memories loaded … more below"; a search says "the best 100 hits"."""
    app = make_app(_many(250), "2026-02-01T00:00:00Z", "u")
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        assert _status(app).startswith(f"{PAGE} memories loaded") and "more below" in _status(app)
        await pilot.press("slash", *"coffee", "enter")
        await settle(pilot)
        assert _status(app).startswith("the best 100 hits for 'coffee'")


@pilot_test
async def test_a_user_with_no_memories_is_told_so() -> None:
    """`--user nobody` says nobody has no memories in this store, and how to pick another user."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", "nobody")
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        assert rows(app) == []
        assert _status(app).startswith("user 'nobody' has no memories in this store: u picks one of 2 users")


@pilot_test
async def test_the_header_s_now_is_fresh_after_another_screen() -> None:
    """Back from History after the clock moved, the Memories header shows the new "now"."""
    clock = FrozenClock("2025-10-01T12:00:00Z")
    app = LocalmemApp(demo_store(), clock=clock, user=demo.SAM)
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        assert "now 2025-10-01 14:00" in _header(app)[0]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        clock.advance(seconds=3600)
        await pilot.press("escape")
        await settle(pilot)
        assert "now 2025-10-01 15:00" in _header(app)[0]


@pilot_test
async def test_the_timeline_has_a_date_axis() -> None:
    """home_city's timeline ends with an axis of ticks and dates from 2023 to 2025."""
    app = make_app(demo_store(), "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Sam lives in Berlin")
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        axis = str(app.screen.query(".axis").first(Static).render())
        ticks, dates = axis.split("\n")
        assert ticks.strip().startswith("├") and ticks.rstrip().endswith("┤")
        assert dates.split()[0] == "2023-05" and dates.split()[-1].startswith("2025-")


@pilot_test
async def test_whole_user_compare_reads_on_a_worker_and_adds_rows_in_steps(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare (`3`) on 250 memories pairs them off the UI thread, adding rows in steps as the cursor goes."""
    import threading

    from tui.screens import compare

    threads: list[str] = []
    real = compare.compare_user  # type: ignore[attr-defined]  # the name the screen calls, spied on below

    def spy(*args: object, **kwargs: object) -> object:
        threads.append(threading.current_thread().name)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(compare, "compare_user", spy)
    app = make_app(_many(250), "2026-02-01T00:00:00Z", "u")
    async with app.run_test(size=LARGE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert threads and threading.main_thread().name not in threads
        assert len(rows(app)) % compare.STEP == 0 and len(rows(app)) < 250  # two screens ahead, not all
        assert _status(app).startswith("250 memories, 0 differ")
        for _ in range(5):
            await pilot.press("end")
            await settle(pilot)
        assert len(rows(app)) == 250
