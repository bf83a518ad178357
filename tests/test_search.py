"""Search: text relevance reranked by time, read as of a time (scenarios B3-B6), safe queries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import apsw
import pytest
from embedders import HashEmbedder
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock

BERLIN = "Europe/Berlin"


def texts(hits: list[localmem.Hit]) -> list[str]:
    return [h.revision.text or "" for h in hits]


@pytest.fixture
def coach(clock: FrozenClock) -> localmem.Store:
    """Sam's summer on the coach app, each message recorded the evening it was sent."""
    store = localmem.open(":memory:", clock=clock)
    said = [
        ("2025-06-03T18:00:00Z", "Struggled with the hill repeats, calves cramped"),
        ("2025-07-01T18:00:00Z", "Knee injury: sharp pain on the left knee after the long run"),
        ("2025-07-28T18:00:00Z", "Struggled with the long run in the heat"),
        ("2025-07-30T18:00:00Z", "Tempo run felt easy"),
        ("2025-08-20T18:00:00Z", "Knee much better, physio says keep cycling"),
        ("2025-09-25T18:00:00Z", "Knee pain gone, back to running hills"),
        ("2025-10-20T18:00:00Z", "Struggled with motivation in the rain"),
    ]
    for at, text in said:
        clock.set(at)
        store.add(text, user_id="sam", tz=BERLIN, observed_at=at)
    clock.set("2025-11-01T12:00:00Z")
    return store


# -- B5: time-aware retrieval ---------------------------------------------------------------


def test_a_june_window_returns_only_june(coach: localmem.Store) -> None:
    june = {"valid_time": {"gte": "2025-06-01", "lt": "2025-07-01"}}
    hits = coach.search("struggled run", user_id="sam", filters=june, current_only=False)
    assert texts(hits) == ["Struggled with the hill repeats, calves cramped"]


def test_last_week_ranks_what_was_said_that_week_first(coach: localmem.Store) -> None:
    """A relative phrase orders the memories holding the query's words, at a relative phrase's weight."""
    hits = coach.search("What did I struggle with last week?", user_id="sam", as_of="2025-08-04T12:00:00Z")
    assert texts(hits)[0] == "Struggled with the long run in the heat"
    assert hits[0].time == localmem.search.when.RELATIVE_WEIGHT
    june = next(h for h in hits if h.revision.text == "Struggled with the hill repeats, calves cramped")
    assert june.time is not None and june.time < 0.1 and june.score < hits[0].score  # lower, not gone


def test_a_memory_without_the_querys_words_stays_out_when_it_has_some(coach: localmem.Store) -> None:
    """"Tempo run felt easy" was said last week but holds no word of the question, so it is not a hit."""
    hits = coach.search("What did I struggle with last week?", user_id="sam", as_of="2025-08-04T12:00:00Z")
    assert "Tempo run felt easy" not in texts(hits)
    assert all(h.text > 0 for h in hits)


def test_next_week_in_a_request_neither_filters_nor_reranks(coach: localmem.Store) -> None:
    asked = coach.search(
        "Suggest a workout for next week after the long run", user_id="sam", as_of="2025-08-04T12:00:00Z"
    )
    plain = coach.search("Suggest a workout after the long run", user_id="sam", as_of="2025-08-04T12:00:00Z")
    assert [h.revision.memory_id for h in asked] == [h.revision.memory_id for h in plain]
    assert all(h.time is None for h in asked)


def test_from_july_to_september_prefers_the_knee_memories_of_that_range(coach: localmem.Store) -> None:
    hits = coach.search(
        "my knee injury's progress from July to September", user_id="sam", as_of="2025-10-30T12:00:00Z"
    )
    assert set(texts(hits)[:3]) == {
        "Knee injury: sharp pain on the left knee after the long run",
        "Knee much better, physio says keep cycling",
        "Knee pain gone, back to running hills",
    }
    assert all(h.time is not None and h.time > 0.5 for h in hits[:3])


def test_a_memory_said_on_a_day_fits_a_question_about_that_day(coach: localmem.Store) -> None:
    hits = coach.search("what did I feel on 30 July 2025?", user_id="sam")
    assert texts(hits)[0] == "Tempo run felt easy"


def test_a_query_that_is_only_a_time_ranks_by_time(coach: localmem.Store) -> None:
    hits = coach.search("what did I do yesterday?", user_id="sam", as_of="2025-07-31T10:00:00+02:00")
    assert texts(hits)[0] == "Tempo run felt easy"
    assert all(h.text == 0.0 for h in hits)


def test_no_time_phrase_no_time_score(coach: localmem.Store) -> None:
    hits = coach.search("knee", user_id="sam")
    assert hits and all(
        h.time is None and h.score == h.text + localmem.search.ranking.USAGE_WEIGHT * h.usage for h in hits
    )


# -- B6: a fixed now ---------------------------------------------------------------------------


def test_a_fixed_as_of_gives_the_same_hits_later_and_after_new_writes() -> None:
    clock = FrozenClock("2025-08-10T09:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    store.add(
        "Ate a huge bowl of ramen last night", user_id="sam", tz=BERLIN, observed_at="2025-08-10T08:00:00Z"
    )
    store.add("Dinner was a ramen bowl with eggs", user_id="sam", observed_at="2025-08-05T19:00:00Z")
    ask: dict[str, Any] = {
        "query": "What did I eat last night? ramen",
        "user_id": "sam",
        "as_of": "2025-08-10T12:00:00Z",
    }
    clock.set("2025-08-10T12:00:00Z")  # asked live; each search logs its hits at its own time
    first = [(h.revision.rev_id, h.score, h.text, h.time) for h in store.search(**ask)]
    clock.set("2026-03-01T00:00:00Z")
    store.add("Ate pizza last night", user_id="sam", observed_at="2026-03-01T00:00:00Z")
    # said before the as_of, recorded after it: a search as of then must not see it, nor count it
    store.add("Ate ramen again", user_id="sam", observed_at="2025-08-09T21:00:00Z")
    assert [(h.revision.rev_id, h.score, h.text, h.time) for h in store.search(**ask)] == first
    top = store.search(**ask)[0].revision.text
    assert top == "Ate a huge bowl of ramen on the night of 2025-08-09"
    assert len(first) == 2


# -- B3, B4: current-only and expiry --------------------------------------------------------


def test_current_only_hides_lisbon_history_finds_it(store: localmem.Store) -> None:
    store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05", tz=BERLIN)
    store.add("Sam lives in Berlin", user_id="sam", key="home_city", valid_from="2025-09-01")
    now = store.search("where does Sam live", user_id="sam", valid_at="2025-10-01")
    assert texts(now) == ["Sam lives in Berlin"]
    ever = store.search("where does Sam live lives", user_id="sam", valid_at="2025-10-01", current_only=False)
    assert sorted(texts(ever)) == ["Sam lives in Berlin", "Sam lives in Lisbon"]


def test_an_expired_goal_is_hidden_and_found_on_request(store: localmem.Store, clock: FrozenClock) -> None:
    clock.set("2025-09-03T10:00:00Z")
    store.add(
        "Training for the Berlin half marathon",
        user_id="sam",
        tz=BERLIN,
        kind="goal",
        valid_from="2025-09-03",
        expires="2025-11-15",
    )
    assert texts(store.search("half marathon", user_id="sam", as_of="2025-11-15T23:30:00+01:00"))
    assert store.search("half marathon", user_id="sam", as_of="2025-11-16T00:30:00+01:00") == []
    late = store.search(
        "half marathon", user_id="sam", as_of="2025-11-16T00:30:00+01:00", include_expired=True
    )
    assert late and late[0].revision.expired


# -- safe queries and bad input -----------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        '"knee',
        'knee" OR "x',
        "NEAR(knee pain)",
        "knee*",
        "-knee",
        "knee AND",
        "^knee",
        "knee:pain",
        "col:text",
        "(knee",
        "{knee}",
        "knee + pain",
        "'knee'",
        "knee\x00pain",
        "ölknee ünïcode 膝",
    ],
)
def test_fts_syntax_in_a_query_is_only_words(coach: localmem.Store, query: str) -> None:
    hits = coach.search(query, user_id="sam")
    assert all(isinstance(h, localmem.Hit) for h in hits)


def test_quotes_and_operators_do_not_change_what_is_found(coach: localmem.Store) -> None:
    plain = [h.revision.memory_id for h in coach.search("knee pain", user_id="sam")]
    assert [h.revision.memory_id for h in coach.search('"knee" AND NOT pain*', user_id="sam")] == plain


@pytest.mark.parametrize(
    ("kwargs", "error", "says"),
    [
        ({"query": ""}, localmem.InvalidInputError, "no words"),
        ({"query": "what is it?"}, localmem.InvalidInputError, "no words"),
        ({"query": 3}, localmem.InvalidInputError, "not text"),
        ({"query": "knee", "limit": 0}, localmem.InvalidInputError, "limit=0"),
        ({"query": "knee", "limit": True}, localmem.InvalidInputError, "limit=True"),
        ({"query": "knee", "user_id": ""}, localmem.InvalidInputError, "user_id"),
        ({"query": "knee", "filters": {"colour": 1}}, localmem.InvalidFilterError, "filters.colour"),
        ({"query": "knee", "as_of": "2025-08-10T12:00:00"}, localmem.NaiveDatetimeError, "as_of"),
    ],
    ids=[
        "empty",
        "only-function-words",
        "not-text",
        "limit-0",
        "limit-bool",
        "no-user",
        "bad-filter",
        "naive",
    ],
)
def test_bad_searches_are_refused(
    coach: localmem.Store, kwargs: dict[str, Any], error: type[Exception], says: str
) -> None:
    args: dict[str, Any] = {"user_id": "sam", **kwargs}
    with pytest.raises(error, match=says):
        coach.search(**args)


# -- properties ------------------------------------------------------------------------------

WORDS = ("knee", "run", "hill", "ramen", "pain", "easy", "yesterday", "last week", "in July")


@settings(max_examples=examples(40), deadline=None)
@given(
    writes=st.lists(
        st.tuples(
            st.sampled_from(["sam", "ana"]),
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
            st.integers(0, 120),
        ),
        min_size=1,
        max_size=15,
    ),
    cut=st.integers(0, 120),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_a_search_as_of_t_sees_nothing_recorded_later_nor_anyone_else(
    writes: list[tuple[str, list[str], int]], cut: int, query: list[str]
) -> None:
    """As of t, before and after the later writes: the same hits and scores, all sam's, all known by t."""
    clock = FrozenClock("2025-07-01T00:00:00Z")
    base = datetime.fromisoformat("2025-07-01T00:00:00+00:00")
    t = base + timedelta(hours=cut)
    ordered = sorted(writes, key=lambda w: w[2])

    def write(batch: list[tuple[str, list[str], int]]) -> None:
        for user, words, hours in batch:
            clock.set(base + timedelta(hours=hours))
            store.add(" ".join(words), user_id=user, tz=BERLIN)

    def ask() -> list[tuple[str, float, float, float | None]]:
        hits = store.search(" ".join(query), user_id="sam", as_of=t, current_only=False, limit=50, log=False)
        for h in hits:
            assert h.revision.user_id == "sam"
            assert h.revision.recorded_at <= t
        return [(h.revision.rev_id, h.score, h.text, h.time) for h in hits]

    with localmem.open(":memory:", clock=clock) as store:
        write([w for w in ordered if w[2] <= cut])
        try:
            before = ask()
        except localmem.InvalidInputError:
            return  # a query of only future phrases and function words: nothing to ask
        write([w for w in ordered if w[2] > cut])
        assert ask() == before


# -- B7: usage decay ---------------------------------------------------------------------------


def test_b7_a_retrieved_allergy_stays_a_healed_knee_drifts_and_returns_when_named() -> None:
    clock = FrozenClock("2023-11-01T09:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    allergy = store.add("Health note: allergic to penicillin", user_id="sam", tz=BERLIN)
    clock.set("2025-07-01T09:00:00Z")
    knee = store.add("Health note: left knee injury, swollen after hills", user_id="sam")
    # The coach asks about medication every month; the knee is never asked about again.
    for month in range(24):
        clock.set(datetime(2024, 1, 15, 9, tzinfo=UTC) + timedelta(days=30 * month))
        assert texts(store.search("penicillin allergy", user_id="sam"))[0] == allergy.text
    clock.set("2026-11-20T09:00:00Z")
    shoes = store.add("Health note: new running shoes", user_id="sam")
    sleep = store.add("Health note: sleeping better", user_id="sam")
    clock.set("2026-12-01T09:00:00Z")

    hits = store.search("health note", user_id="sam")
    order = [h.revision.memory_id for h in hits]
    assert order.index(allergy.memory_id) < order.index(knee.memory_id)  # retrieved: stays reachable
    assert order.index(shoes.memory_id) < order.index(knee.memory_id)  # newer than the unused knee
    assert order.index(sleep.memory_id) < order.index(knee.memory_id)
    assert order[-1] == knee.memory_id and hits[-1].usage > 0  # lowest, never gone
    assert texts(store.search("my knee", user_id="sam"))[0] == knee.text  # named: back on top


def test_being_new_does_not_outrank_holding_every_word(clock: FrozenClock) -> None:
    """An unused note said an hour ago that holds one of the query's words ranks below one said a
    year ago that holds them all: creation counts a twentieth of a retrieval, not a recency prior."""
    store = localmem.open(":memory:", clock=clock)
    clock.set("2024-12-01T09:00:00Z")
    for text in ("easy run with the club", "swim drills", "rest day", "yoga class", "bike commute"):
        store.add(text, user_id="sam")
    old = store.add("knee sore after the run", user_id="sam")
    clock.set("2025-12-01T08:00:00Z")
    new = store.add("knee sore, knee swollen", user_id="sam")
    clock.set("2025-12-01T09:00:00Z")
    hits = store.search("knee run", user_id="sam", log=False)
    assert [h.revision.memory_id for h in hits[:2]] == [old.memory_id, new.memory_id]
    assert hits[1].usage > hits[0].usage > 0  # the newer one still leans up, never the older out


def test_a_replay_ranks_as_the_search_did_whatever_was_retrieved_after(clock: FrozenClock) -> None:
    store = localmem.open(":memory:", clock=clock)
    clock.set("2025-01-01T09:00:00Z")
    for text in ("long run in the rain", "long run by the river", "tempo run"):
        store.add(text, user_id="sam", tz=BERLIN)
    clock.set("2025-02-01T09:00:00Z")
    first = [(h.revision.memory_id, h.score, h.usage) for h in store.search("run", user_id="sam")]
    for _ in range(20):  # later, the agent keeps retrieving one memory
        clock.advance(days=1)
        store.search("river", user_id="sam", run_id="later")
    replay = store.search("run", user_id="sam", as_of="2025-02-01T09:00:00Z", log=False)
    assert [(h.revision.memory_id, h.score, h.usage) for h in replay] == first
    now = store.search("run", user_id="sam", log=False)
    assert now[0].revision.text == "long run by the river"  # used often since: ranks first now


def test_usage_is_logged_per_hit_with_its_run(clock: FrozenClock) -> None:
    store = localmem.open(":memory:", clock=clock)
    store.add("tempo run", user_id="sam", tz=BERLIN)
    store.add("long run", user_id="sam")
    clock.advance(minutes=5)
    store.search("run", user_id="sam", run_id="eval-7")
    store.search("run", user_id="sam", log=False)
    rows = store.connection.execute(
        "SELECT user_id, run_id, rank, used_at FROM usage ORDER BY rank"
    ).fetchall()
    assert [(u, r, k) for u, r, k, _ in rows] == [("sam", "eval-7", 1), ("sam", "eval-7", 2)]
    with pytest.raises(apsw.ConstraintError, match="usage is immutable"):
        store.connection.execute("DELETE FROM usage")


# -- bounded work: a few candidates per word, and still fixed as of a time --------------------


@pytest.fixture
def busy(clock: FrozenClock, monkeypatch: pytest.MonkeyPatch) -> localmem.Store:
    """Two months of daily notes, each said and recorded on its day; the words are common."""
    monkeypatch.setattr(localmem.search.ranking, "CANDIDATES_PER_TERM", 5)
    monkeypatch.setattr(localmem.search.ranking, "CANDIDATES_BY_TIME", 2)
    store = localmem.open(":memory:", clock=clock)
    for day in range(60):
        at = datetime(2025, 1, 1, 18, tzinfo=UTC) + timedelta(days=day)
        clock.set(at)
        text = "knee felt stiff" if day % 3 == 0 else "easy run by the river"
        text = "knee run" if day == 0 else text
        store.add(text, user_id="sam", tz=BERLIN, observed_at=at)
    clock.set("2025-03-15T12:00:00Z")
    return store


def test_a_common_word_finds_its_newest_matches_up_to_the_limit(busy: localmem.Store) -> None:
    hits = busy.search("run", user_id="sam", limit=3)
    assert len(hits) == 3 and all("run" in t for t in texts(hits))
    assert len(busy.search("run", user_id="sam", limit=30)) == 30  # the limit widens the candidates


def test_an_old_memory_holding_every_word_is_found_beyond_each_words_newest(busy: localmem.Store) -> None:
    hits = busy.search("knee run", user_id="sam", limit=3)
    assert texts(hits)[0] == "knee run"  # day 0, older than both words' newest matches


def test_what_was_said_in_a_past_window_is_found_by_its_common_word(busy: localmem.Store) -> None:
    hits = busy.search("what about my knee on 10 January 2025?", user_id="sam")
    jan10 = hits[0]
    assert jan10.revision.observed_at.date().isoformat() == "2025-01-10"
    assert jan10.time == 1.0 and jan10.text > 0  # found by its word, though 'knee' has many newer


def test_a_bounded_search_as_of_a_time_ignores_later_matching_writes(
    busy: localmem.Store, clock: FrozenClock
) -> None:
    ask: dict[str, Any] = {"query": "knee run last week", "user_id": "sam", "as_of": "2025-02-20T12:00:00Z"}
    first = [(h.revision.rev_id, h.score) for h in busy.search(**ask, log=False)]
    for day in range(10):
        clock.set(datetime(2025, 3, 16, tzinfo=UTC) + timedelta(days=day))
        busy.add("knee run knee run", user_id="sam", observed_at="2025-02-14T10:00:00Z")
    assert [(h.revision.rev_id, h.score) for h in busy.search(**ask, log=False)] == first


# -- the semantic hook: vector similarity fused with BM25 ------------------------------------

CONCEPTS = {"sneakers": "shoe", "trainers": "shoe", "shoes": "shoe", "knee": "knee", "hurts": "pain"}


class ConceptEmbedder(HashEmbedder):
    """Words mapped to a few concepts before hashing: 'sneakers' means shoes, as a model would say."""

    def __init__(self) -> None:
        super().__init__(name="test-concepts-v1", dimensions=32)

    def vector(self, text: str) -> list[float]:
        words = (CONCEPTS.get(w, w) for w in text.lower().split())
        return super().vector(" ".join(words))


@pytest.fixture
def meaning(clock: FrozenClock) -> localmem.Store:
    store = localmem.open(":memory:", clock=clock, embedder=ConceptEmbedder())
    store.add("Bought new running shoes", user_id="sam", tz=BERLIN)
    store.add("Knee pain after the hill session", user_id="sam")
    store.add("Bought trainers for the gym", user_id="kim", tz=BERLIN)
    clock.advance(hours=1)
    return store


def test_an_embedder_finds_by_meaning_what_no_word_matches(meaning: localmem.Store) -> None:
    hits = meaning.search("sneakers", user_id="sam", log=False)
    assert texts(hits)[0] == "Bought new running shoes"  # never Kim's trainers
    assert hits[0].bm25 is None and hits[0].text == 1.0
    assert [round(h.semantic or 0, 2) for h in hits] == [0.41]  # one word in four; the knee: unrelated
    lexical = localmem.open(":memory:")
    lexical.add("Bought new running shoes", user_id="sam")
    assert lexical.search("sneakers", user_id="sam", log=False) == []  # the default: words only


def test_words_and_meaning_agree_on_the_knee(meaning: localmem.Store) -> None:
    hits = meaning.search("my knee hurts", user_id="sam", log=False)
    top = hits[0]
    assert top.revision.text == "Knee pain after the hill session"
    assert top.bm25 is not None and top.semantic is not None and top.text == 1.0
    assert all(h.text < 1.0 for h in hits[1:])


def test_meaning_is_read_as_of_a_time_and_within_the_scope(
    meaning: localmem.Store, clock: FrozenClock
) -> None:
    asked = clock()

    def replay() -> list[tuple[str, float]]:
        return [(h.revision.rev_id, h.score) for h in meaning.search("sneakers", user_id="sam", as_of=asked)]

    first = replay()
    clock.advance(hours=1)
    later = meaning.add("Trainers worn out, need sneakers", user_id="sam")
    old = meaning.search("sneakers", user_id="sam", log=False)[1].revision
    meaning.retract(old.memory_id, reason="returned them")
    assert replay() == first
    assert texts(meaning.search("sneakers", user_id="sam", log=False)) == [later.text]  # retracted: gone


def test_reciprocal_rank_fusion_sums_ranks_and_scales_the_best_to_one() -> None:
    fused = localmem.search.ranking.fuse([{"a": 2.0, "b": 1.0}, {"b": 0.9, "c": 0.5}])
    b = 1 / 62 + 1 / 61
    assert fused == pytest.approx({"a": (1 / 61) / b, "b": 1.0, "c": (1 / 62) / b})


def test_an_embedder_that_fails_during_a_search_raises_and_logs_nothing(meaning: localmem.Store) -> None:
    def broken(texts: Any) -> Any:
        raise RuntimeError("model server down")

    assert meaning.embedder is not None
    meaning.embedder.embed = broken  # type: ignore[method-assign]  # the model breaks on purpose
    with pytest.raises(localmem.EmbeddingError, match="model server down"):
        meaning.search("sneakers", user_id="sam")
    assert meaning.connection.execute("SELECT count(*) FROM usage").fetchone() == (0,)


# -- no loss to BM25: as-of statistics that equal FTS5's give FTS5's order ----------------------


def test_with_the_stores_own_statistics_and_fts5s_b_the_order_is_fts5s_bm25(
    clock: FrozenClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When every memory holds a query word (so the statistics are the whole index's) and the
    length normalisation is FTS5's (b 0.75), search ranks as FTS5's own bm25() does."""
    monkeypatch.setattr(localmem.search.ranking, "B", 0.75)
    store = localmem.open(":memory:", clock=clock)
    said = [
        "knee knee knee after the long run",
        "knee pain",
        "the long run by the river felt easy and the knee held up fine today",
        "run run run",
        "knee brace bought, the physio says run less",
        "tempo run",
    ]
    for text in said:
        store.add(text, user_id="sam")
    query = "knee run"
    ours = texts(store.search(query, user_id="sam", log=False))
    owner = "u" + b"sam".hex()
    rows = store.connection.execute(
        "SELECT c.text FROM content_fts JOIN content AS c ON c.rev_seq = content_fts.rowid"
        " WHERE content_fts MATCH ? ORDER BY bm25(content_fts, 1.0, 0.0), c.text",
        (f'owner : "{owner}" AND text : ("knee" OR "run")',),
    ).fetchall()
    assert ours == [r[0] for r in rows]


def test_a_story_that_returns_to_the_word_outranks_a_short_echo(clock: FrozenClock) -> None:
    """A long message that uses the query's word twice in telling what happened ranks above
    short ones that name it once, though FTS5's own bm25() (b 0.75) puts them first."""
    store = localmem.open(":memory:", clock=clock)
    story = (
        "Yeah, I play clarinet! Started when I was young, and these are the friends I play"
        " with in a little band at the community hall near the park"
    )
    for text in ("Cool! What do you play?", story, "Play it again!", "Thanks, that was lovely."):
        store.add(text, user_id="sam")
    assert texts(store.search("what does she play?", user_id="sam", log=False))[0] == story
    owner = "u" + b"sam".hex()
    fts5 = store.connection.execute(
        "SELECT c.text FROM content_fts JOIN content AS c ON c.rev_seq = content_fts.rowid"
        " WHERE content_fts MATCH ? ORDER BY bm25(content_fts, 1.0, 0.0) LIMIT 1",
        (f'owner : "{owner}" AND text : "play"',),
    ).fetchone()
    assert fts5 is not None and fts5[0] != story


def test_function_words_do_not_count(coach: localmem.Store) -> None:
    """A query's stop words ("what", "would", "about") add nothing: the same hits, the same scores."""
    plain = coach.search("knee pain", user_id="sam", log=False)
    wordy = coach.search("What is it about the knee pain?", user_id="sam", log=False)
    assert [(h.revision.rev_id, h.score) for h in wordy] == [(h.revision.rev_id, h.score) for h in plain]


# -- morphology: irregular forms match their lemma -------------------------------------------


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("I ran 5k along the canal", "when did I run?"),
        ("ate grilled fish with rice", "what did I eat"),
        ("went to the climbing gym", "where do I go climbing"),
        ("the children loved the zoo", "what did my child love"),
        ("I run every morning", "when I ran"),
    ],
)
def test_an_irregular_form_finds_its_lemma_and_back(store: localmem.Store, said: str, asked: str) -> None:
    """The past tense finds the present and the plural the singular, both ways."""
    store.add(said, user_id="sam")
    store.add("bought new shoes", user_id="sam")
    assert texts(store.search(asked, user_id="sam", log=False)) == [said]


def test_an_irregular_form_counts_as_one_word_with_its_lemma(store: localmem.Store) -> None:
    """"ran" and "run" in one memory are one term held twice, not two terms."""
    store.add("ran run", user_id="sam")
    store.add("run run", user_id="sam")
    store.add("bought new shoes", user_id="sam")
    hits = store.search("run", user_id="sam", log=False)
    assert len(hits) == 2 and hits[0].text == hits[1].text == 1.0


# -- query time, read as people mean it -------------------------------------------------------


@pytest.fixture
def diary(clock: FrozenClock) -> localmem.Store:
    """Ana's autumn 2022, each message said on its day; the painting is mentioned twice."""
    store = localmem.open(":memory:", clock=clock)
    said = [
        ("2022-10-16T18:00:00Z", "Showed my painting of the lake at the gallery"),
        ("2022-10-23T18:00:00Z", "Showed my painting of the harbour at the gallery"),
        ("2022-10-30T18:00:00Z", "Showed my painting of the forest at the gallery"),
        ("2023-05-03T18:00:00Z", "The gallery sold a painting of mine"),
    ]
    for at, text in said:
        clock.set(at)
        store.add(text, user_id="ana", tz="UTC", observed_at=at)
    clock.set("2023-06-01T12:00:00Z")
    return store


def test_an_anchored_relative_is_read_against_its_anchor(diary: localmem.Store) -> None:
    """"the Sunday before 25 October 2022" is 23 October 2022, not the Sunday before as_of."""
    hits = diary.search("What painting did I show the Sunday before 25 October 2022?", user_id="ana")
    assert texts(hits)[0] == "Showed my painting of the harbour at the gallery"
    assert hits[0].time == localmem.search.when.CALENDAR_WEIGHT


def test_a_relative_phrase_relative_to_a_named_date_is_read_against_it(diary: localmem.Store) -> None:
    """"last week, as mentioned on 2 November 2022" is the week of 24 October 2022."""
    asked = "Which painting did I show last week, as mentioned on 2 November 2022?"
    hits = diary.search(asked, user_id="ana")
    assert texts(hits)[0] == "Showed my painting of the forest at the gallery"


def test_a_date_named_in_the_query_finds_what_was_said_that_day(diary: localmem.Store) -> None:
    """A memory said on the day asked about fits it, even when it was about another day."""
    diary.add(
        "Last weekend I sold the lake painting", user_id="ana", tz="UTC", observed_at="2022-11-07T18:00:00Z"
    )
    hits = diary.search("What did I tell you about the lake painting on 7 November 2022?", user_id="ana")
    assert texts(hits)[0] == "On the weekend of 2022-11-05 to 2022-11-06 I sold the lake painting"
    assert hits[0].time == localmem.search.when.SAID_WEIGHT


def test_a_relative_phrase_about_the_past_does_not_outweigh_the_words(
    diary: localmem.Store, clock: FrozenClock
) -> None:
    """"last week" asked long after: a memory of last week barely holding the words is not lifted
    over the one holding them, and among those holding them the one of last week comes first."""
    clock.set("2023-05-25T18:00:00Z")
    diary.add("Sketched at the gallery", user_id="ana", tz="UTC", observed_at="2023-05-25T18:00:00Z")
    diary.add("Sold the harbour painting", user_id="ana", tz="UTC", observed_at="2023-05-25T18:00:00Z")
    clock.set("2023-06-01T12:00:00Z")
    hits = diary.search("Did the gallery sell my harbour painting last week?", user_id="ana")
    assert texts(hits)[0] == "Sold the harbour painting"
    sketched = next(h for h in hits if h.revision.text == "Sketched at the gallery")
    older = texts(hits).index("Showed my painting of the harbour at the gallery")
    assert sketched.time is not None and sketched.time < 0.01 and hits.index(sketched) > older


@pytest.mark.parametrize("vague", ["recently", "lately", "these days", "nowadays"])
def test_vague_recency_leans_but_does_not_filter(diary: localmem.Store, vague: str) -> None:
    """"recently" leans towards the last month a little; older memories holding the words stay in."""
    hits = diary.search(f"which painting did I show at the gallery {vague}?", user_id="ana")
    assert len(hits) == 4
    recent = next(h for h in hits if h.revision.text == "The gallery sold a painting of mine")
    assert recent.time is not None and 0 < recent.time <= localmem.search.when.RECENCY_WEIGHT
    assert all(h.time is not None and h.time < 0.01 for h in hits if h is not recent)


def test_when_questions_prefer_memories_with_a_resolved_date(
    store: localmem.Store, clock: FrozenClock
) -> None:
    """"When did ...?" asks for a date: the memory whose time came from a phrase ranks first."""
    clock.set("2025-09-30T00:00:00Z")
    store.add("marathon training plan: marathon pace", user_id="sam", observed_at="2025-09-01T10:00:00Z")
    store.add("Ran the Berlin marathon yesterday", user_id="sam", tz="UTC", observed_at="2025-09-29T10:00Z")
    hits = store.search("When did I run the marathon?", user_id="sam", as_of="2025-10-01T00:00:00Z")
    assert texts(hits)[0] == "Ran the Berlin marathon on 2025-09-28"
    assert [h.time for h in hits] == [localmem.search.when.WHEN_BONUS, 0.0]


# -- determinism: ranking never depends on random ids ----------------------------------------

SESSIONS = [
    (
        "2025-03-01T10:00:00Z",
        ["ran 5k with Ana", "ran 5k with Bea", "ran 5k with Cem", "ran 5k with Dov", "ran 5k with Eli"],
    ),
    ("2025-03-08T10:00:00Z", ["ate pasta with Ana", "ate pasta with Bea", "ate soup with Cem"]),
    ("2025-03-15T10:00:00Z", ["knee sore", "knee fine", "knee ok", "swim 1k", "swim 2k", "swim 3k"]),
]
QUERIES = ["ran 5k", "what did I eat?", "knee", "what did I do on 15 March 2025?", "swim", "with Ana"]


def _built(clock: FrozenClock) -> localmem.Store:
    store = localmem.open(":memory:", clock=clock)
    for at, said in SESSIONS:
        clock.set(at)
        with store.batch():
            for text in said:
                store.add(text, user_id="sam", tz="UTC", observed_at=at)
    return store


def test_two_stores_of_the_same_messages_rank_alike_whatever_their_ids() -> None:
    """Two stores holding the same messages under other random ids return the same ranked texts."""
    first, second = _built(FrozenClock("2025-03-01T10:00:00Z")), _built(FrozenClock("2025-03-01T10:00:00Z"))
    ids = {r.memory_id for r in first.read(user_id="sam", current_only=False)}
    assert ids.isdisjoint(r.memory_id for r in second.read(user_id="sam", current_only=False))
    for query in QUERIES:
        for limit in (2, 4, 10):
            a = first.search(query, user_id="sam", as_of="2025-04-01T00:00:00Z", limit=limit, log=False)
            b = second.search(query, user_id="sam", as_of="2025-04-01T00:00:00Z", limit=limit, log=False)
            assert [(h.revision.text, h.score) for h in a] == [(h.revision.text, h.score) for h in b], query


def test_searchs_tokenizer_is_the_indexs() -> None:
    """Search counts a message's length with the tokenizer schema.sql gives the full-text index."""
    schema = (Path(__file__).parent.parent / "schema.sql").read_text()
    name, args = localmem.search.sql.FTS_TOKENIZER
    assert f"tokenize = '{' '.join([name, *args])}'" in schema


def test_a_rewritten_message_is_as_long_as_it_was_said(store: localmem.Store, clock: FrozenClock) -> None:
    """The dates a resolved phrase is rewritten into do not lengthen the memory for BM25."""
    clock.set("2025-06-10T12:00:00Z")
    resolved = store.add("won the club chess final last week", user_id="sam", tz="UTC")
    plain = store.add("won the club chess final at home", user_id="sam", tz="UTC", resolve=False)
    assert resolved.text == "won the club chess final in the week of 2025-06-02 to 2025-06-08"
    hits = store.search("chess final", user_id="sam", log=False)
    assert {h.revision.memory_id for h in hits} == {resolved.memory_id, plain.memory_id}
    assert hits[0].bm25 == hits[1].bm25
