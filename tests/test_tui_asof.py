"""The TUI's reads at the header's clocks (tui/asof.py): nothing shown was recorded after known_at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from tui_helpers import demo_store

import localmem
from localmem.cli import demo
from localmem.present import flags_text, memory_text
from localmem.testing import FrozenClock
from tui.asof import Pair, compare_memory, compare_user, pair_up, read_history
from tui.screens.compare import pair_cells
from tui.screens.history import change_card, link_labels, title_text
from tui.screens.memories import revision_row

STORE = demo_store()
USERS = (demo.SAM, demo.FEE_USER)
FAR = datetime(2100, 1, 1, tzinfo=UTC)
EVERY = [r for u in USERS for r in STORE.snapshot(u, known_at=FAR).revisions]
START, END = datetime(2025, 6, 1, tzinfo=UTC), datetime(2026, 3, 3, tzinfo=UTC)


def _future_texts(known: datetime) -> set[str]:
    """Memory texts that exist only in revisions recorded after ``known``."""
    before = {memory_text(r) for r in EVERY if r.recorded_at <= known}
    return {memory_text(r) for r in EVERY if r.recorded_at > known} - before


def _instants() -> st.SearchStrategy[datetime]:
    # Minutes across the stories, with the recorded instants themselves (the half-open edges) likely.
    edges = sorted({r.recorded_at for r in EVERY})
    minutes = int((END - START).total_seconds() // 60)
    return st.one_of(st.sampled_from(edges),
                     st.integers(0, minutes).map(lambda m: START + timedelta(minutes=m)))


def _history_text(mid: str, known: datetime, valid: datetime) -> tuple[str, list[datetime]]:
    data = read_history(STORE, mid, known, valid)
    tz = data.head.tz if data.head else "UTC"
    parts = [title_text(data), *(label for _, label in link_labels(data)),
             *(str(change_card(c, tz)) for c in data.changes)]
    recorded = [c.recorded_at for c in data.changes] + [r.recorded_at for r in data.chain]
    if data.head is not None:
        recorded.append(data.head.recorded_at)
    return "\n".join(parts), recorded


@given(known=_instants(), valid=st.one_of(st.none(), _instants()), user=st.sampled_from(USERS))
def test_nothing_on_any_screen_was_recorded_after_known_at(
        known: datetime, valid: datetime | None, user: str) -> None:
    """For random clocks, rows, titles, links, flags and history cards hold only what known_at knew."""
    valid_at = valid or known
    future = _future_texts(known)
    rows, _ = STORE.read_page(user, known_at=known, valid_at=valid_at, current_only=False,
                              include_expired=True, include_retracted=True, limit=500)
    shown: list[str] = [" | ".join(c.plain for c in revision_row(r)) for r in rows]
    recorded = [r.recorded_at for r in rows]
    for mid in {r.memory_id for r in EVERY if r.user_id == user}:
        text, times = _history_text(mid, known, valid_at)
        shown.append(text)
        recorded += times
    screen = "\n".join(shown)
    assert all(t <= known for t in recorded)
    assert not [t for t in future if t in screen]
    superseded_then = any(r.op == "superseded" and r.recorded_at <= known and r.user_id == user
                          for r in EVERY)
    if not superseded_then:
        assert "superseded" not in screen


@given(a=_instants(), b=_instants(), user=st.sampled_from(USERS))
def test_each_side_of_a_comparison_holds_only_what_its_cutoff_knew(
        a: datetime, b: datetime, user: str) -> None:
    """Compare's side A was recorded by cutoff A and side B by cutoff B (whole user and each memory)."""
    pairs = compare_user(STORE, user, a, b, a, current_only=True, include_expired=False,
                         include_retracted=False)
    for mid in {r.memory_id for r in EVERY if r.user_id == user}:
        pairs += compare_memory(STORE, mid, a, b, a)
    for p in pairs:
        assert p.a is None or p.a.recorded_at <= a
        for rev in (p.b, p.b_state, p.successor):
            assert rev is None or rev.recorded_at <= b
        cells = pair_cells(p)
        assert not [t for t in _future_texts(a) if t in cells[1]]
        assert not [t for t in _future_texts(b) if t in cells[2]]


def test_a_superseded_fact_is_one_row_beside_its_successor() -> None:
    """Vegetarian at A and eats fish at B pair up as one "superseded" row, not a loss and a gain."""
    a, b = datetime(2025, 8, 1, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC)
    pairs = compare_user(STORE, demo.SAM, a, b, b, current_only=True, include_expired=False,
                         include_retracted=False)
    diet = [pair_cells(p) for p in pairs if getattr(p.a or p.b, "key", None) == "diet"]
    assert diet == [["diet", "Sam is vegetarian", "Sam eats fish", "superseded", "since 2025-03-01"]]
    assert all("not known" not in c and "gone" not in c for p in pairs for c in pair_cells(p))


def test_pairing_keeps_a_memory_missing_at_b_with_its_state_there() -> None:
    """A memory current at A and retracted by B reads "retracted by B", never "gone"."""
    clock = FrozenClock("2026-01-01T00:00:00Z")
    s = localmem.open(":memory:", clock=clock)
    rev = s.add("Sam likes jazz", user_id="u", valid_from="2025-01-01")
    a = clock()
    clock.advance(seconds=60)
    s.retract(rev.memory_id, "forget that")
    b = clock()
    left, right = s.read("u", known_at=a), s.read("u", known_at=b)
    state = s.get(rev.memory_id, known_at=b)
    assert state is not None
    [pair] = pair_up(left, right, {rev.memory_id: state})
    assert pair == Pair(rev.memory_id, left[0], None, state)
    assert pair.change == "retracted by B"
    assert flags_text(state) == "retracted"


def test_a_fact_still_valid_at_b_names_what_superseded_it() -> None:
    """Valid at 2025-08-01, Lisbon still holds as known at 2025-10-01, marked superseded → Berlin."""
    a, b = datetime(2025, 8, 1, tzinfo=UTC), datetime(2025, 10, 1, tzinfo=UTC)
    pairs = compare_user(STORE, demo.SAM, a, b, a, current_only=True, include_expired=False,
                         include_retracted=False)
    city = [pair_cells(p) for p in pairs if p.a is not None and p.a.key == "home_city"]
    assert [c[1:4] for c in city] == [["Sam lives in Lisbon", "Sam lives in Lisbon  → Sam lives in Berlin",
                                       "superseded"]]
