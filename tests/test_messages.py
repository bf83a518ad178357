"""Writes that read time phrases: Store.add resolves them, add_messages imports a chat at its own times."""

from __future__ import annotations

import re
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import localmem
from localmem.core.inputs import encode_json
from localmem.core.messages import with_message, with_message_json
from localmem.testing import FrozenClock

SAM_10K = "I ran my first 10K last weekend, finished in 58 minutes."
SENT_10K = 1750075200  # 2025-06-16T12:00:00Z, the day Sam said it


def local(at: datetime | None, tz: str) -> str | None:
    return None if at is None else at.astimezone(ZoneInfo(tz)).isoformat(timespec="minutes")


# -- B1: old history import ----------------------------------------------------------


def test_last_weekend_is_the_weekend_before_the_message_not_before_the_import(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC")
    assert rev.valid_to is not None
    assert (rev.valid_from.isoformat(), rev.valid_to.isoformat()) == (
        "2025-06-14T00:00:00+00:00",
        "2025-06-16T00:00:00+00:00",
    )
    assert (rev.precision, rev.valid_source) == ("weekend", "resolved")
    assert rev.observed_at.isoformat() == "2025-06-16T12:00:00+00:00"


def test_the_stored_text_names_the_dates_and_the_source_keeps_the_message(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC")
    assert rev.text is not None
    assert "weekend of 2025-06-14 to 2025-06-15" in rev.text
    assert "last weekend" not in rev.text
    assert "finished in 58 minutes" in rev.text
    assert rev.source == {"message": SAM_10K}


def test_june_filters_on_either_clock_find_the_imported_run(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC")
    june, july = datetime.fromisoformat("2025-06-01T00:00Z"), datetime.fromisoformat("2025-07-01T00:00Z")
    assert rev.valid_from is not None and rev.valid_to is not None
    assert june <= rev.valid_from and rev.valid_to <= july
    assert june <= rev.observed_at < july


def test_a_caller_source_is_kept_beside_the_message(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC", source={"session": "s1"})
    assert rev.source == {"message": SAM_10K, "session": "s1"}
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC", source="import-7")
    assert rev.source == {"message": SAM_10K, "source": "import-7"}


# -- B2: time zones ------------------------------------------------------------------


def test_yesterday_in_singapore_is_the_local_day_before(store: localmem.Store) -> None:
    rev = store.add(
        "I started the new knee meds yesterday.",
        user_id="sam",
        observed_at="2025-08-10T05:00:00+08:00",
        tz="Asia/Singapore",
    )
    assert local(rev.valid_from, "Asia/Singapore") == "2025-08-09T00:00+08:00"
    assert local(rev.valid_to, "Asia/Singapore") == "2025-08-10T00:00+08:00"
    assert rev.precision == "day"


def test_this_morning_at_5am_in_singapore_is_that_local_morning(store: localmem.Store) -> None:
    rev = store.add(
        "I did yoga this morning", user_id="sam", observed_at="2025-08-10T05:00:00+08:00", tz="Asia/Singapore"
    )
    assert rev.valid_from is not None
    assert rev.valid_from.astimezone(ZoneInfo("Asia/Singapore")).date().isoformat() == "2025-08-10"
    assert rev.valid_from.date().isoformat() == "2025-08-09"  # the UTC date is the day before
    assert rev.precision == "part_of_day"


# -- C2 and the sources of valid time ------------------------------------------------


def test_since_january_is_open_ended_from_january(store: localmem.Store, clock: FrozenClock) -> None:
    clock.set("2025-03-04T09:00:05Z")  # said Tuesday, recorded at once
    rev = store.add(
        "I've preferred text messages since January",
        user_id="ana",
        observed_at="2025-03-04T09:00:00Z",
        tz="UTC",
    )
    assert rev.valid_from.isoformat() == "2025-01-01T00:00:00+00:00"
    assert rev.valid_to is None
    assert (rev.precision, rev.valid_source) == ("month", "resolved")
    feb = store.read("ana", valid_at="2025-02-15T12:00:00Z", known_at="2025-03-05T00:00:00Z")
    assert [r.memory_id for r in feb] == [rev.memory_id]
    monday = store.read("ana", as_of="2025-03-03T12:00:00Z")
    assert monday == []


def test_no_phrase_means_valid_from_observed_at_and_marked_assumed(store: localmem.Store) -> None:
    rev = store.add("Sam is vegetarian", user_id="sam", observed_at="2025-03-04T09:00:00Z")
    assert rev.valid_from == rev.observed_at
    assert (rev.valid_to, rev.precision, rev.valid_source) == (None, "instant", "assumed")
    assert rev.text == "Sam is vegetarian" and rev.source is None


def test_an_explicit_valid_time_wins_over_the_phrase(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, valid_from="2025-06-15", tz="UTC")
    assert (rev.valid_source, rev.precision, rev.text) == ("explicit", "day", SAM_10K)


def test_resolve_false_keeps_the_text_and_assumes(store: localmem.Store) -> None:
    rev = store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, resolve=False)
    assert (rev.text, rev.valid_source) == (SAM_10K, "assumed")


def test_a_keyed_fact_starts_at_the_phrase_and_stays_open(store: localmem.Store) -> None:
    store.add("Sam lives in Lisbon", user_id="sam", key="home_city", valid_from="2023-05", tz="Europe/Berlin")
    berlin = store.add(
        "Sam moved to Berlin on September 1",
        user_id="sam",
        key="home_city",
        observed_at="2025-09-03T10:00:00Z",
        tz="Europe/Berlin",
    )
    assert local(berlin.valid_from, "Europe/Berlin") == "2025-09-01T00:00+02:00"
    assert berlin.valid_to is None and berlin.valid_source == "resolved"
    now = store.read("sam", valid_at="2025-10-01T12:00:00Z")
    assert [r.text for r in now] == ["Sam moved to Berlin on 2025-09-01"]


def test_vague_phrases_give_a_wide_interval_only_when_nothing_definite_is_said(store: localmem.Store) -> None:
    rev = store.add(
        "I pulled a hamstring the other day", user_id="sam", observed_at="2025-06-16T12:00:00Z", tz="UTC"
    )
    assert rev.precision == "week" and rev.valid_source == "resolved"
    assert rev.valid_to is not None and rev.valid_to <= datetime.fromisoformat("2025-06-16T00:00Z")
    rev = store.add(
        "Recently I ran hills on Saturday", user_id="sam", observed_at="2025-06-16T12:00:00Z", tz="UTC"
    )
    assert (rev.precision, rev.valid_from.isoformat()) == ("day", "2025-06-14T00:00:00+00:00")


# -- bulk import -----------------------------------------------------------------------

CHAT = [
    {
        "role": "user",
        "content": "I started the new knee meds yesterday.",
        "sent_at": "2025-08-10T05:00:00+08:00",
    },
    {
        "role": "assistant",
        "content": "Thanks, noted for tomorrow's plan.",
        "sent_at": "2025-08-10T05:00:30+08:00",
    },
    {"role": "user", "content": "I ran my first 10K last weekend", "sent_at": "2025-06-16T20:00:00+08:00"},
    {"role": "user", "content": "Knee feels fine", "sent_at": "2025-08-11T07:00:00+08:00"},
]


def test_every_message_is_read_against_its_own_send_time_never_today(clock: FrozenClock) -> None:
    clock.set("2026-11-29T10:00:00Z")  # the import runs long after the chat
    with localmem.open(":memory:", clock=clock) as store:
        revs = store.add_messages(CHAT, user_id="sam", tz="Asia/Singapore")
    assert [r.text for r in revs] == [
        "I started the new knee meds on 2025-08-09.",
        "I ran my first 10K on the weekend of 2025-06-14 to 2025-06-15",
        "Knee feels fine",
    ]
    assert [r.valid_source for r in revs] == ["resolved", "resolved", "assumed"]
    assert [local(r.observed_at, "Asia/Singapore") for r in revs] == [
        "2025-08-10T05:00+08:00",
        "2025-06-16T20:00+08:00",
        "2025-08-11T07:00+08:00",
    ]
    assert [r.kind for r in revs] == ["message"] * 3
    assert revs[0].source == {"message": CHAT[0]["content"], "role": "user", "index": 0}
    assert all(r.recorded_at.isoformat() == "2026-11-29T10:00:00+00:00" for r in revs)


def test_assistant_turns_are_skipped_unless_asked_for(store: localmem.Store) -> None:
    revs = store.add_messages(CHAT, user_id="sam", tz="Asia/Singapore", roles=("user", "assistant"))
    assert len(revs) == 4
    assert revs[1].text == "Thanks, noted for 2025-08-11's plan."


@pytest.mark.parametrize(
    ("messages", "error", "says"),
    [
        ("hello", localmem.InvalidInputError, "not a list"),
        ([["user", "hi"]], localmem.InvalidInputError, "messages[1]"),
        ([{"role": "user", "content": "hi"}], localmem.InvalidInputError, "has no sent_at"),
        (
            [{"role": "user", "content": "  ", "sent_at": "2025-01-01T00:00Z"}],
            localmem.InvalidInputError,
            "content",
        ),
        ([{"role": 1, "content": "hi", "sent_at": "2025-01-01T00:00Z"}], localmem.InvalidInputError, "role"),
        (
            [{"role": "user", "content": "hi", "sent_at": datetime(2025, 1, 1)}],  # noqa: DTZ001
            localmem.NaiveDatetimeError,
            "messages[1].sent_at",
        ),
        ([{"role": "user", "content": "hi", "sent_at": "not a time"}], localmem.InvalidTimeError, "sent_at"),
    ],
    ids=["not-a-list", "not-a-mapping", "no-sent-at", "empty-content", "role-not-str", "naive", "bad-time"],
)
def test_a_bad_message_refuses_the_whole_import(
    store: localmem.Store, messages: object, error: type[Exception], says: str
) -> None:
    good = {"role": "user", "content": "I ran yesterday", "sent_at": "2025-01-02T10:00:00Z"}
    batch = [good, *messages] if isinstance(messages, list) else messages
    with pytest.raises(error, match=re.escape(says)):
        store.add_messages(batch, user_id="sam", tz="UTC")  # type: ignore[arg-type]  # deliberately wrong
    assert store.info().revisions == 0


def test_an_unknown_zone_refuses_the_import(store: localmem.Store) -> None:
    with pytest.raises(localmem.UnknownZoneError, match="Mars/Olympus"):
        store.add_messages(CHAT, user_id="sam", tz="Mars/Olympus")
    assert store.info().revisions == 0


def test_bad_json_in_a_batch_is_refused_before_the_write_and_the_batch_goes_on(store: localmem.Store) -> None:
    with store.batch():
        with pytest.raises(localmem.InvalidInputError, match="attributes"):
            store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, attributes={1: "x"})  # type: ignore[dict-item]  # deliberately wrong: a key not a str
        with pytest.raises(localmem.InvalidInputError, match="resolve"):
            store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, resolve="yes")  # type: ignore[arg-type]  # deliberately wrong
        store.add(SAM_10K, user_id="sam", observed_at=SENT_10K, tz="UTC")
    assert store.info().revisions == 1


def test_a_phrase_that_names_a_time_wins_over_one_that_only_says_now(store: localmem.Store) -> None:
    """"Now I run daily; I started last week": the habit began last week, not on the day it was said."""
    rev = store.add("Now I run daily; I started last week", user_id="sam",
                    observed_at="2025-06-18T08:00:00Z", tz="UTC")
    assert (rev.valid_from.isoformat(), rev.precision) == ("2025-06-09T00:00:00+00:00", "week")
    alone = store.add("I am currently training for a half", user_id="sam",
                      observed_at="2025-06-18T08:00:00Z", tz="UTC")
    assert alone.valid_source == "resolved" and alone.valid_from.isoformat().startswith("2025-06-18")


# -- the source that keeps the message, as JSON -------------------------------------------------

_SOURCES = st.none() | st.dictionaries(
    st.text(max_size=8), st.none() | st.integers() | st.text(max_size=8)
    | st.lists(st.text(max_size=3), max_size=2), max_size=4) | st.integers() | st.lists(st.integers())


@settings(max_examples=examples(200))
@given(text=st.text(min_size=1).filter(lambda t: "\x00" not in t and t.strip() != ""), source=_SOURCES)
def test_the_kept_sources_json_is_what_encoding_it_anew_gives(text: str, source: object) -> None:
    """with_message_json reuses the source's JSON: byte for byte what encode_json of the new source is."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # add refuses such text before any source is built
    encoded = encode_json(source, "source")
    assert with_message_json(text, source, encoded) == encode_json(with_message(text, source), "source")
