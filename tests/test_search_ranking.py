"""How search reads its candidates: the same hits whoever else shares the store, term counts
as the full-text index counts them, each memory's said day in its own zone, and one budget
of candidates shared by a long query's words."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

import localmem
from localmem.search.when import Window, time_fit
from localmem.testing import FrozenClock

LINES = [
    "ran the river loop, ran it again after lunch",
    "run club cancelled, the river path is flooded",
    "knee stiff after the run",
    "dentist said the knee is not her department",
    "children ran the relay, the child in blue won",
    "a long run by the river with Ana and the children",
    "bought new running shoes for the river run",
]
QUERIES = ["ran river", "run", "knee run", "children", "river run last week", "what did Ana run?"]


def _store(clock: FrozenClock, others: bool) -> localmem.Store:
    """Sam's lines, one a day; with ``others``, two more users' lines between them."""
    store = localmem.open(":memory:", clock=clock)
    for day, text in enumerate(LINES * 3):
        at = datetime(2025, 3, 1, 18, tzinfo=UTC) + timedelta(days=day)
        clock.set(at)
        if others:
            store.add(f"{text} (Kim's)", user_id="kim", tz="UTC", observed_at=at)
        store.add(text, user_id="sam", tz="UTC", observed_at=at)
        if others:
            store.add("river run and knee again", user_id="zoe", tz="UTC", observed_at=at)
    return store


@pytest.mark.parametrize("cap", [3, 100])
def test_a_users_hits_are_the_same_alone_or_sharing_the_store(
    cap: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone, a search drops the owner term from its full-text queries; sharing the store, it
    keeps it. Either way the user's hits and every part of their scores are the same (with a
    small cap the bounded seeks, the window's and the all-words one, are exercised too)."""
    monkeypatch.setattr(localmem.search.ranking, "CANDIDATES_PER_TERM", cap)
    monkeypatch.setattr(localmem.search.ranking, "STATS_WINDOW", 10)
    alone = _store(FrozenClock("2025-03-01T00:00:00Z"), others=False)
    shared = _store(FrozenClock("2025-03-01T00:00:00Z"), others=True)
    for query in QUERIES:
        ask = {"user_id": "sam", "as_of": "2025-03-20T12:00:00Z", "limit": 5, "log": False}
        a, b = alone.search(query, **ask), shared.search(query, **ask)  # type: ignore[arg-type]
        assert [(h.revision.text, h.score, h.text, h.time, h.bm25) for h in a] == [
            (h.revision.text, h.score, h.text, h.time, h.bm25) for h in b
        ], query
        assert a, query


def test_term_counts_are_the_full_text_indexs_own(clock: FrozenClock) -> None:
    """A memory's BM25 rises with how often the index counts the word in it (stemmed: "runs",
    "running" and "run" are one token; "ran" is another form of the lemma, searched too)."""
    store = localmem.open(":memory:", clock=clock)
    for text in ("run", "runs and running, run", "ran", "walked"):
        store.add(text, user_id="sam", tz="UTC", resolve=False)
    hits = store.search("run", user_id="sam", log=False)
    by_text = {h.revision.text: h.bm25 or 0.0 for h in hits}
    assert set(by_text) == {"run", "runs and running, run", "ran"}
    assert by_text["runs and running, run"] > by_text["run"]  # three "run" tokens of four
    assert by_text["ran"] == by_text["run"]  # one token of one, either form


@dataclass(frozen=True)
class _Said:
    observed_at: int
    tz: str
    valid_from: int = 0
    valid_to: int | None = None
    precision: str = "day"
    valid_source: str = "assumed"


def _micros(at: datetime) -> int:
    return (at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)


@pytest.mark.parametrize(
    ("zone", "said"),
    [
        ("Europe/Berlin", datetime(2025, 10, 26, 0, 30, tzinfo=UTC)),  # the repeated hour, second time
        ("Europe/Berlin", datetime(2025, 10, 25, 23, 30, tzinfo=UTC)),  # ... and the first
        ("Europe/Berlin", datetime(2025, 3, 30, 0, 59, 59, 999_999, tzinfo=UTC)),  # just before the gap
        ("America/St_Johns", datetime(2025, 6, 1, 2, 29, tzinfo=UTC)),  # a half-hour zone's midnight
        ("Pacific/Kiritimati", datetime(2025, 6, 1, 9, 59, tzinfo=UTC)),  # UTC+14
        ("UTC", datetime(1969, 12, 31, 23, 59, 59, tzinfo=UTC)),  # before the epoch
    ],
)
def test_a_memory_fits_the_day_it_was_said_in_its_own_zone(zone: str, said: datetime) -> None:
    """An assumed valid time is the local day the memory was said on, from its local midnight:
    a window of exactly that day fits it fully, the day before does not."""
    local = said.astimezone(ZoneInfo(zone))
    midnight = _micros(local.replace(hour=0, minute=0, second=0, microsecond=0))
    day = 86_400_000_000
    p = _Said(_micros(said), zone)
    assert time_fit(p, (Window(midnight, midnight + day, 1.0, "that day"),), midnight + day) == (1.0, 0.0)
    before = time_fit(p, (Window(midnight - day, midnight, 1.0, "the day before"),), midnight + day)
    assert before[0] < 1.0


def _texts(hits: list[localmem.Hit]) -> list[str]:
    return [h.revision.text or "" for h in hits]


def test_the_words_of_a_long_query_share_one_budget_of_candidates(
    clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone, 'alpha' brings all its matches, the oldest and best among them; one of four words
    as common, it brings only its newest quarter of the query's budget, which the oldest is not
    in."""
    monkeypatch.setattr(localmem.search.ranking, "CANDIDATES_PER_TERM", 30)
    monkeypatch.setattr(localmem.search.ranking, "CANDIDATES_PER_QUERY", 20)
    store = localmem.open(":memory:", clock=clock)
    words = ("alpha", "beta", "gamma", "delta")
    lines = ["alpha alpha alpha"] + [f"{w} note {i}" for i in range(15) for w in words]
    lines += [f"other line {i}" for i in range(60)]
    for day, text in enumerate(lines):
        clock.set(datetime(2025, 1, 1, 18, tzinfo=UTC) + timedelta(days=day))
        store.add(text, user_id="sam", tz="UTC", resolve=False)
    assert _texts(store.search("alpha", user_id="sam", limit=1, log=False)) == ["alpha alpha alpha"]
    many = _texts(store.search("alpha beta gamma delta", user_id="sam", limit=2, log=False))
    assert len(many) == 2 and "alpha alpha alpha" not in many
    wide = _texts(store.search("alpha beta gamma delta", user_id="sam", limit=10, log=False))
    assert "alpha alpha alpha" in wide  # twice the hits asked for, 20, reach all 16 of alpha's
