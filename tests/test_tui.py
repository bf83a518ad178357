"""Pilot tests of the TUI on the demo stories with a frozen clock: every screen and binding."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Static
from tui_helpers import SIZE, answer, demo_store, goto_row, make_app, pilot_test, rows, settle

import localmem
import tui
from localmem.cli import demo
from localmem.testing import FrozenClock
from tui import LocalmemApp
from tui.format import word_diff
from tui.host import Host
from tui.screens.compare import CompareScreen
from tui.screens.dialogs import AskDialog, ConfirmDialog, PickDialog
from tui.screens.expired import ExpiredScreen
from tui.screens.help import HelpScreen
from tui.screens.history import HistoryScreen
from tui.screens.memories import PAGE, MemoriesScreen, parse_filter
from tui.screens.message import MessageScreen
from tui.screens.timeline import TimelineScreen
from tui.state import parse_clock

FEE_AT = "2026-03-02T09:05:00Z"


@pytest.fixture(scope="module")
def store() -> localmem.Store:
    """The demo stories, shared by the read-only tests of this module."""
    return demo_store()


def _texts(app: LocalmemApp) -> list[str]:
    return [r[0] for r in rows(app)]


def _screen_text(app: LocalmemApp) -> str:
    return "\n".join(str(s.render()) for s in app.screen.query(Static).results(Static))


@pilot_test
async def test_known_at_0905_to_1001_changes_the_fee_from_4_to_7(store: localmem.Store) -> None:
    """Setting known_at from 09:05 to 10:01 with `k` re-reads the fee row: 4 becomes 7."""
    app = make_app(store, FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MemoriesScreen)
        assert "fee for fill 42 = 4" in _texts(app)
        await pilot.press("k")
        assert isinstance(app.screen, AskDialog)
        await answer(pilot, "2026-03-02T10:01:00Z")
        assert "fee for fill 42 = 7" in _texts(app)
        assert "known at" in _screen_text(app) and "2026-03-02 10:01" in _screen_text(app)
        await pilot.press("n")  # both clocks back to now (09:05 on the frozen clock)
        await settle(pilot)
        assert "fee for fill 42 = 4" in _texts(app)


@pilot_test
async def test_a_clock_accepts_resolver_phrases_and_refuses_nonsense(store: localmem.Store) -> None:
    """`v` takes "2026-03-01" and phrases; an unreadable time is shown in the dialog, which stays open."""
    app = make_app(store, "2026-03-04T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await answer(pilot, "not a time at all")
        assert isinstance(app.screen, AskDialog)
        assert "is not a time" in str(app.screen.query_one(".dialog-error", Static).render())
        await answer(pilot, "last monday")
        assert isinstance(app.screen, MemoriesScreen)
        assert app.view.valid_at is not None and app.view.valid_at.isoformat().startswith("2026-02-23")
        await pilot.press("v")
        await answer(pilot, "2026-03-01")  # before the account existed: nothing valid then
        assert rows(app) == []
        assert "no memories" in _screen_text(app)


@pilot_test
async def test_toggling_expired_shows_the_berlin_half_plan(store: localmem.Store) -> None:
    """After Nov 15 the plan is hidden; `x` shows it, flagged expired."""
    app = make_app(store, "2025-12-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not any("Berlin half" in t for t in _texts(app))
        await pilot.press("x")
        await settle(pilot)
        plan = [r for r in rows(app) if "Berlin half" in r[0]]
        assert plan and "expired" in plan[0][1]
        assert app.view.show_expired


@pilot_test
async def test_the_expired_screen_lists_the_plan_with_its_expiry(store: localmem.Store) -> None:
    """`2` lists what has expired as of the clocks, with the expiry on the user's wall clock."""
    app = make_app(store, "2025-12-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        assert isinstance(app.screen, ExpiredScreen)
        assert [r[:2] for r in rows(app)] == [
            ["Training for the Berlin half marathon on Nov 15", "visible through 2025-11-15"]]
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen)
        await pilot.press("escape")
        await pilot.press("k")
        await answer(pilot, "2025-11-01")
        assert rows(app) == []


@pilot_test
async def test_the_history_of_the_fee_shows_4_7_6(store: localmem.Store) -> None:
    """Enter on the fee opens its history: three revisions, values 4 → 7 → 6, each with its reason."""
    app = make_app(store, "2026-03-02T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen) and screen.data is not None
        assert [c.new_value for c in screen.data.changes] == [4, 7, 6]
        cards = [str(s.render()) for s in screen.query(".change").results(Static)]
        assert len(cards) == 3
        assert "value  4" in cards[0] and "value  4 7" in cards[1] and "value  7 6" in cards[2]
        assert "fee service correction" in cards[1]
        links = screen.query_one("#links", OptionList)
        assert "v2 corrects v1" in str(links.get_option_at_index(0).prompt)
        await pilot.press("l", "enter")  # follow "v2 corrects v1": stays here, jumps to v1
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("escape")
        assert isinstance(app.screen, MemoriesScreen)


@pilot_test
async def test_following_the_lisbon_chain_reaches_berlin(store: localmem.Store) -> None:
    """Known at 2025-07-01 Lisbon has no successor yet; known at 2025-10-01 its link opens Berlin."""
    app = make_app(store, "2025-07-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Sam lives in Lisbon")
        await pilot.press("enter")
        await settle(pilot)
        lisbon = app.screen
        assert isinstance(lisbon, HistoryScreen) and lisbon.data is not None
        links = lisbon.query_one("#links", OptionList)
        assert [str(links.get_option_at_index(i).prompt) for i in range(links.option_count)] == [
            "(no links: not corrected, not part of a chain)"]
        assert "Sam lives in Berlin" not in _screen_text(app)
        await pilot.press("k")
        await answer(pilot, "2025-10-01")
        await pilot.press("l")
        assert links.has_focus
        assert "superseded by: Sam lives in Berlin" in str(links.get_option_at_index(0).prompt)
        await pilot.press("enter")
        await settle(pilot)
        berlin = app.screen
        assert isinstance(berlin, HistoryScreen) and berlin is not lisbon and berlin.data is not None
        assert berlin.data.head is not None and berlin.data.head.text == "Sam lives in Berlin"
        assert berlin.data.head.supersedes == lisbon.memory_id
        assert "0 revisions" not in _screen_text(app)
        assert "Sam lives in Lisbon › Sam lives in Berlin" in _screen_text(app)  # the breadcrumb
        await pilot.press("l")
        assert "supersedes: Sam lives in Lisbon" in str(
            berlin.query_one("#links", OptionList).get_option_at_index(0).prompt)


@pilot_test
async def test_the_compare_screen_shows_the_fee_under_two_cutoffs(store: localmem.Store) -> None:
    """`3` with known_at 09:05 and cutoff B 10:01: the fee reads 4 beside 7, marked changed."""
    app = make_app(store, FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("3")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        await pilot.press("b")
        await answer(pilot, "2026-03-02 10:01")
        fee = [r for r in rows(app) if r[0] == "fee"]
        assert fee == [["fee", "fee for fill 42 = 4", "fee for fill 42 = 7", "corrected", fee[0][4]]]
        others = [r[3] for r in rows(app) if r[0] != "fee"]
        assert others == ["", ""]


@pilot_test
async def test_compare_one_memory_from_the_memories_screen(store: localmem.Store) -> None:
    """`c` on a memory compares just that memory; Escape goes back."""
    app = make_app(store, FEE_AT, demo.FEE_USER)
    cutoff = parse_clock("2026-03-02T11:01:00Z", now=FrozenClock()(), tz="UTC")
    assert cutoff is not None
    app.compare_known = {demo.FEE_USER: cutoff}
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        assert [r[1:4] for r in rows(app)] == [["fee for fill 42 = 4", "fee for fill 42 = 6", "corrected"]]
        await pilot.press("escape")
        assert isinstance(app.screen, MemoriesScreen)


@pilot_test
async def test_the_timeline_draws_lisbon_then_berlin(store: localmem.Store) -> None:
    """`t` on home_city draws both values along valid time, Lisbon's bar ending where Berlin's starts."""
    app = make_app(store, "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Sam lives in Berlin")
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TimelineScreen)
        bars = [str(s.render()) for s in app.screen.query(".bar").results(Static)]
        assert len(bars) == 2
        lisbon = next(b for b in bars if b.startswith("Sam lives in Lisbon"))
        berlin = next(b for b in bars if b.startswith("Sam lives in Berlin"))
        assert "2023-05 until 2025-09-01" in lisbon and "since 2025-09-01" in berlin
        lisbon_bar, berlin_bar = lisbon.split("\n")[0], berlin.split("\n")[0]
        last = lisbon_bar.rindex("█")
        assert lisbon_bar.index("█") < last <= berlin_bar.index("█") <= last + 1
        await pilot.press("escape")
        await goto_row(pilot, "Sam is allergic")
        await pilot.press("t")  # no key: a warning, no timeline
        assert isinstance(app.screen, MemoriesScreen)


@pilot_test
async def test_current_only_versus_every_interval(store: localmem.Store) -> None:
    """`a` switches to every valid interval: Lisbon and the vegetarian diet come back on 2025-10-01."""
    app = make_app(store, "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Sam lives in Lisbon" not in _texts(app)
        await pilot.press("a")
        await settle(pilot)
        texts = _texts(app)
        assert "Sam lives in Lisbon" in texts and "Sam is vegetarian" in texts
        lisbon = next(r for r in rows(app) if r[0] == "Sam lives in Lisbon")
        assert "superseded" in lisbon[1]


@pilot_test
async def test_search_shows_hits_and_their_score_breakdown(store: localmem.Store) -> None:
    """`/` searches (without logging usage); `s` shows the highlighted hit's score parts; Escape clears."""
    app = make_app(store, "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        box = app.screen.query_one("#search", Input)
        assert box.has_focus
        box.value = "knee"
        await pilot.press("enter")
        await settle(pilot)
        assert _texts(app) == ["Sam injured the left knee (patellar tendinitis)"]
        await pilot.press("s")
        explain = str(app.screen.query_one("#explain", Static).render())
        assert explain.startswith("score ") and "text" in explain and "usage" in explain
        await pilot.press("escape")
        await settle(pilot)
        assert len(rows(app)) > 1


@pilot_test
async def test_filter_by_kind_and_key(store: localmem.Store) -> None:
    """`f` narrows the table to a kind or a key."""
    app = make_app(store, "2025-10-01T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f")
        app.screen.query_one("#filter", Input).value = "kind:health"
        await pilot.press("enter")
        await settle(pilot)
        assert sorted(_texts(app)) == ["Sam injured the left knee (patellar tendinitis)",
                                       "Sam is allergic to penicillin"]
        await pilot.press("f")
        app.screen.query_one("#filter", Input).value = "key:home_city"
        await pilot.press("enter")
        await settle(pilot)
        assert _texts(app) == ["Sam lives in Berlin"]


@pilot_test
async def test_the_users_zone_is_the_one_writes_use() -> None:
    """After a move, a correction to an old memory does not pull the clocks back to the old zone."""
    with localmem.open(":memory:", clock=FrozenClock("2026-03-02T08:00:00Z")) as store:
        old = store.add("Sam likes pastéis", user_id="sam", tz="Europe/Lisbon")
        store.add("Sam likes currywurst", user_id="sam", tz="Europe/Berlin")
        store.correct(old.memory_id, text="Sam likes pastéis de nata")  # newest revision, Lisbon's zone
        assert store.user_zone("sam") == "Europe/Berlin" == store.add("x", user_id="sam").tz
        app = make_app(store, "2026-03-02T12:00:00Z", "sam")
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.view.tz == "Europe/Berlin"


@pilot_test
async def test_switching_user(store: localmem.Store) -> None:
    """`u` lists the users; picking one re-reads everything in that user's zone."""
    app = make_app(store, "2026-03-02T12:00:00Z", demo.SAM)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.tz == "Europe/Berlin"
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, PickDialog)
        await pilot.press("home", "enter")
        await settle(pilot)
        assert app.view.user == demo.FEE_USER and app.view.tz == "UTC"
        assert "fee for fill 42 = 6" in _texts(app)


@pilot_test
async def test_help_lists_every_key(store: localmem.Store) -> None:
    """`?` shows the bindings of the app and of each screen; Escape closes it."""
    app = make_app(store, FEE_AT, demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = _screen_text(app)
        for words in ("Set known_at", "Set valid_at", "Show or hide expired", "Search the memories",
                      "Append a correction", "Set the second knowledge cutoff", "Focus the links"):
            assert words in text, words
        await pilot.press("escape")
        assert isinstance(app.screen, MemoriesScreen)


@pilot_test
async def test_read_only_by_default() -> None:
    """Without write, `c` in a history only says how to enable writes; nothing is appended."""
    store = demo_store()
    before = store.info().revisions
    app = make_app(store, "2026-03-02T12:00:00Z", demo.FEE_USER)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("c", "d", "e")
        assert isinstance(app.screen, HistoryScreen)
    assert store.info().revisions == before


@pilot_test
async def test_write_correct_shows_the_revision_then_appends_it() -> None:
    """With write, `c` asks, shows the revision about to be appended, and appends it on `y`."""
    store = demo_store()
    app = make_app(store, "2026-03-02T12:00:00Z", demo.FEE_USER, write=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        history = app.screen
        assert isinstance(history, HistoryScreen) and history.data is not None
        fee_id = history.memory_id
        await pilot.press("c")
        assert isinstance(app.screen, AskDialog)
        await answer(pilot, "fee for fill 42", "8", "audit")
        assert isinstance(app.screen, ConfirmDialog)
        preview = str(app.screen.query_one("#preview", Static).render())
        assert "append revision v4 (op correct)" in preview and "value   6 → 8" in preview
        assert store.get(fee_id).value == 6  # type: ignore[union-attr]  # nothing written yet
        await pilot.press("n")  # cancel: still nothing
        assert store.get(fee_id).value == 6  # type: ignore[union-attr]
        await pilot.press("c")
        await answer(pilot, "fee for fill 42", "8", "audit")
        await pilot.press("y")
        await settle(pilot)
        assert app.screen is history  # type: ignore[comparison-overlap]  # mypy keeps the dialog's narrowing
        assert [c.new_value for c in history.data.changes] == [4, 7, 6, 8]
        assert [c.new_value for c in store.history(fee_id)] == [4, 7, 6, 8]
        await pilot.press("escape")
        await settle(pilot)
        assert "fee for fill 42 = 8" in _texts(app)


@pilot_test
async def test_write_correct_refuses_a_value_that_is_not_json() -> None:
    """A Value of `seven` is refused in the dialog with the command line's error; nothing is appended."""
    store = demo_store()
    app = make_app(store, "2026-03-02T12:00:00Z", demo.FEE_USER, write=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "fee for fill 42")
        await pilot.press("enter")
        await settle(pilot)
        before = store.info().revisions
        await pilot.press("c")
        await answer(pilot, "fee for fill 42", "seven", "audit")
        assert isinstance(app.screen, AskDialog)  # still open, to be fixed
        error = str(app.screen.query_one(".dialog-error", Static).render())
        assert error.startswith("Value 'seven' is not JSON: numbers as they are (7), strings quoted")
        await answer(pilot, "fee for fill 42", '"seven"', "audit")
        assert isinstance(app.screen, ConfirmDialog)
        assert 'value   6 → "seven"' in str(app.screen.query_one("#preview", Static).render())
        await pilot.press("n")
    assert store.info().revisions == before


@pilot_test
async def test_write_retract_and_expire() -> None:
    """With write, `d` retracts and `e` sets an expiry, each confirmed; `r` then shows the retracted one."""
    store = demo_store()
    app = make_app(store, "2026-04-01T12:00:00Z", demo.SAM, write=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await goto_row(pilot, "Sam is allergic")
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("e")
        await answer(pilot, "2026-12-31", "seasonal")
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("d")
        await answer(pilot, "forget that")
        assert "retracted" in str(app.screen.query_one("#preview", Static).render())
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, HistoryScreen) and app.screen.data is not None
        assert [c.op for c in app.screen.data.changes] == ["assert", "expire", "retract"]
        await pilot.press("escape")
        await settle(pilot)
        assert "Sam is allergic to penicillin" not in _texts(app)
        await pilot.press("r")
        await settle(pilot)
        row = next(r for r in rows(app) if r[0] == "Sam is allergic to penicillin")
        assert "retracted" in row[1]


@pytest.mark.parametrize("case", ["missing", "directory", "not sqlite", "empty"])
@pilot_test
async def test_unusable_databases_give_a_clear_message(tmp_path: Path, case: str) -> None:
    """A missing path, a directory, a non-SQLite file and an empty store each show a message, no traceback."""
    path = tmp_path / "mem.db"
    if case == "directory":
        path = tmp_path
    elif case == "not sqlite":
        path.write_bytes(b"these are not the bytes of a database\n" * 200)
    elif case == "empty":
        localmem.open(path).close()
    app = LocalmemApp(path=path, clock=FrozenClock(FEE_AT))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, MessageScreen)
        text = str(app.screen.query_one("#message", Static).render())
        expected = {"missing": "no database at", "directory": "is a directory",
                    "not sqlite": "not", "empty": "no memories in it yet"}[case]
        assert expected in text
        assert "Traceback" not in text
        await pilot.press("q")
    assert not path.is_file() or case != "missing"  # the TUI never creates a database


@pilot_test
async def test_a_database_file_opens_and_is_closed(tmp_path: Path) -> None:
    """Given a path, the app opens the file, shows its first user, and closes it on exit."""
    path = tmp_path / "demo.db"
    demo.build(path).close()
    app = LocalmemApp(path=path, clock=FrozenClock(FEE_AT))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.view.user == demo.FEE_USER
        assert "fee for fill 42 = 4" in _texts(app)


@pilot_test
async def test_many_rows_load_in_pages_as_the_cursor_moves() -> None:
    """A user with more memories than a page gets them page by page as the cursor nears the end."""
    store = localmem.open(":memory:", clock=FrozenClock("2025-01-01T00:00:00Z"))
    with store.batch():
        for i in range(450):
            store.add(f"note {i}", user_id="u", valid_from="2024-01-01", resolve=False)
    app = make_app(store, "2025-02-01T00:00:00Z", "u")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert len(rows(app)) == PAGE
        pages = 1
        while len(rows(app)) < 450 and pages < 10:
            await pilot.press("end")
            await settle(pilot)
            pages += 1
        assert len(rows(app)) == 450 and pages == 5
        assert len(set(_texts(app))) == 450


def test_formatting_rules() -> None:
    """A word diff strikes what went and marks what came; the filter box reads kind: and key:."""
    diff = word_diff("Sam injured the left knee", "Sam injured the left knee (patellar tendinitis)")
    assert diff.plain == "Sam injured the left knee (patellar tendinitis)"
    assert [diff.plain[s.start:s.end].strip() for s in diff.spans] == ["(patellar tendinitis)"]
    assert parse_filter("kind:goal key=home_city") == ("goal", "home_city", "")
    assert parse_filter("diet") == (None, None, "diet")


def _tui_imports() -> dict[str, set[str]]:
    """Each module of tui/ and the tui modules it imports (TYPE_CHECKING and function-level ones too)."""
    root = Path(tui.__file__).parent
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        package = parts[:-1]  # what a relative import is relative to, for a module and an __init__
        name = ".".join(package if parts[-1] == "__init__" else parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
                found |= {base} | {f"{base}.{a.name}" for a in node.names}
        graph[name] = found
    # A package's __init__ re-exporting its submodules is not a cycle of design: skip edges to a parent.
    return {m: {d for d in ds if d in graph and d != m and not m.startswith(d + ".")}
            for m, ds in graph.items()}


def test_no_tui_module_imports_one_that_imports_it_back() -> None:
    """tui/ has no import cycle: the screens reach the app through tui.host, never tui.app."""
    graph = _tui_imports()
    assert {"tui.host", "tui.messages", "tui.state"} <= graph["tui.screens.base"]  # the walk sees imports
    assert "tui.screens.base" in graph["tui.app"]

    def in_a_cycle(start: str) -> bool:
        todo, seen = list(graph[start]), set()
        while todo:
            m = todo.pop()
            if m == start:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
        return False

    assert [m for m in graph if in_a_cycle(m)] == []


def test_the_app_is_the_host_its_screens_expect() -> None:
    """LocalmemApp has every member of the tui.host.Host protocol the screens use."""
    app = make_app(demo_store(), FEE_AT, demo.FEE_USER)
    assert isinstance(app, Host)
