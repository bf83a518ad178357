"""Store.read_page: the paged read the TUI browses large stores with."""

from __future__ import annotations

from typing import TypedDict

import pytest

import localmem
from localmem.cli import demo


class ReadArgs(TypedDict):
    """The read arguments a page walk shares with the one read it is checked against."""

    as_of: str
    current_only: bool
    include_expired: bool


@pytest.fixture(scope="module")
def demo_store() -> localmem.Store:
    """The demo stories in memory."""
    return demo.build(":memory:")


@pytest.mark.parametrize("current_only", [True, False])
@pytest.mark.parametrize("as_of", ["2025-07-01", "2025-10-01", "2025-12-01"])
def test_pages_hold_exactly_what_read_returns(
    demo_store: localmem.Store, current_only: bool, as_of: str
) -> None:
    """Walking every page with a small page size gives the same memories as one read()."""
    args: ReadArgs = {"as_of": as_of, "current_only": current_only, "include_expired": True}
    whole = demo_store.read("sam", **args)
    got: list[localmem.Revision] = []
    cursor = None
    while True:
        page, cursor = demo_store.read_page("sam", **args, after=cursor, limit=2)
        got.extend(page)
        if cursor is None:
            break
    assert sorted(r.rev_id for r in got) == sorted(r.rev_id for r in whole)
    recorded = [(r.recorded_at, r.rev_id) for r in got]
    assert [t for t, _ in recorded] == sorted((t for t, _ in recorded), reverse=True)


def test_only_expired_keeps_the_expired_plan(demo_store: localmem.Store) -> None:
    """only_expired lists the Berlin-half plan after Nov 15 and nothing before it."""
    after, _ = demo_store.read_page("sam", as_of="2025-12-01", only_expired=True, current_only=False)
    assert [r.text for r in after] == ["Training for the Berlin half marathon on Nov 15"]
    assert after[0].expired
    before, _ = demo_store.read_page("sam", as_of="2025-11-01", only_expired=True, current_only=False)
    assert before == []


@pytest.mark.parametrize("bad", ["x", "12", "1:x", ":3"])
def test_a_malformed_cursor_is_refused(demo_store: localmem.Store, bad: str) -> None:
    """A cursor that read_page did not return raises InvalidInputError naming it."""
    with pytest.raises(localmem.InvalidInputError, match="cursor"):
        demo_store.read_page("sam", after=bad)


def test_limit_is_checked(demo_store: localmem.Store) -> None:
    """A limit outside 1..10000 is refused."""
    with pytest.raises(localmem.InvalidInputError, match="limit"):
        demo_store.read_page("sam", limit=0)
