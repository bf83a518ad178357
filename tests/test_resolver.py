"""Time phrases in chat text: what each family resolves to, written out by hand from the conventions.

Unless a case says otherwise, the message is sent on Wednesday 2025-06-18 at 15:00 in Berlin.
That week runs Mon 16 - Sun 22 June; last week 9-15, next week 23-29. Intervals are compared
as local strings: "2025-06-17" is local midnight, "2025-06-17T17:00" a wall-clock time; the
zone tests compare full ISO strings with offsets, because that is where the offsets matter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

import localmem
from localmem.time.resolver import TimeMention, find_times, rewrite
from localmem.time.resolver.combine import candidate_rules
from localmem.time.resolver.context import (
    all_rules,
    digit_shapes,
    rules_for,
    trigger_words,
)
from localmem.time.resolver.firstchar import first_chars

WED = "2025-06-18T15:00:00+02:00"  # Wednesday, mid-afternoon in Berlin
BERLIN = "Europe/Berlin"


def _sent(at: str) -> datetime:
    return datetime.fromisoformat(at)


def found(text: str, sent: str = WED, tz: str = BERLIN, date_order: str = "MDY") -> list[TimeMention]:
    """Every mention in ``text``, each checked to be aware in ``tz``."""
    mentions = find_times(text, sent_at=_sent(sent), tz=tz, date_order=date_order)
    for m in mentions:
        for at in (m.start, m.end):
            assert at is None or getattr(at.tzinfo, "key", None) == tz, (m, tz)
    return mentions


def one(text: str, sent: str = WED, tz: str = BERLIN, date_order: str = "MDY") -> TimeMention:
    """The single mention in ``text``; fails if there are none or several."""
    mentions = found(text, sent, tz, date_order)
    assert len(mentions) == 1, mentions
    return mentions[0]


def local(at: datetime | None) -> str | None:
    """A local wall time as "YYYY-MM-DD" (midnight) or "YYYY-MM-DDTHH:MM"."""
    if at is None:
        return None
    return at.strftime("%Y-%m-%d") if at.time() == time(0) else at.strftime("%Y-%m-%dT%H:%M")


def interval(m: TimeMention) -> tuple[str | None, str | None]:
    return local(m.start), local(m.end)


def iso(m: TimeMention) -> tuple[str | None, str | None]:
    return (m.start.isoformat() if m.start else None, m.end.isoformat() if m.end else None)


def hours(m: TimeMention) -> float:
    """Real elapsed hours of the interval (aware subtraction in one zone would ignore DST)."""
    assert m.start is not None and m.end is not None
    return (m.end.astimezone(UTC) - m.start.astimezone(UTC)).total_seconds() / 3600


class Bug:
    """A resolver bug the row documents: the row is expected to fail until it is fixed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def rows(*cases: tuple[object, ...]) -> list[Any]:
    """Table rows as params: the first item is the id (the phrase); a trailing ``Bug("...")`` marks xfail."""
    out = []
    for case in cases:
        marks = []
        values = list(case[1:])
        if values and isinstance(bug := values[-1], Bug):
            marks.append(pytest.mark.xfail(strict=True, reason=bug.reason))
            values.pop()
        out.append(pytest.param(*values, id=str(case[0]), marks=marks))
    return out


def phrase_of(request: pytest.FixtureRequest) -> str:
    """The phrase a row is about: its id without a "(past)"-style note."""
    callspec_id: str = request.node.callspec.id
    return callspec_id.split(" (")[0]


# -- relative days and parts of day ---------------------------------------------------------

RELATIVE_DAYS = rows(
    ("today", "I feel great today", "2025-06-18", "2025-06-19", "day"),
    ("tonight", "I'm cooking pasta tonight", "2025-06-18T17:00", "2025-06-19T05:00", "part_of_day"),
    ("this morning", "I did yoga this morning", "2025-06-18T05:00", "2025-06-18T12:00", "part_of_day"),
    ("this afternoon", "My knee hurt this afternoon", "2025-06-18T12:00", "2025-06-18T17:00", "part_of_day"),
    ("this evening", "I'll stretch this evening", "2025-06-18T17:00", "2025-06-18T21:00", "part_of_day"),
    ("last night", "I slept badly last night", "2025-06-17T17:00", "2025-06-18T05:00", "part_of_day"),
    ("yesterday", "I started the new knee meds yesterday", "2025-06-17", "2025-06-18", "day"),
    ("the day before yesterday", "I ran the day before yesterday", "2025-06-16", "2025-06-17", "day"),
    ("tomorrow", "I'll rest tomorrow", "2025-06-19", "2025-06-20", "day"),
    ("the day after tomorrow", "The race is the day after tomorrow", "2025-06-20", "2025-06-21", "day"),
    ("yesterday evening", "I swam yesterday evening", "2025-06-17T17:00", "2025-06-17T21:00", "part_of_day"),
    ("yesterday morning", "I swam yesterday morning", "2025-06-17T05:00", "2025-06-17T12:00", "part_of_day"),
    ("tomorrow morning", "I'll run tomorrow morning", "2025-06-19T05:00", "2025-06-19T12:00", "part_of_day"),
    ("tomorrow night", "The party is tomorrow night", "2025-06-19T21:00", "2025-06-20T05:00", "part_of_day"),
    ("Friday morning (future)", "I have a long run Friday morning",
     "2025-06-20T05:00", "2025-06-20T12:00", "part_of_day"),
    ("Friday morning (past)", "I ran Friday morning", "2025-06-13T05:00", "2025-06-13T12:00", "part_of_day"),
    ("Monday evening (past)", "I felt sore Monday evening",
     "2025-06-16T17:00", "2025-06-16T21:00", "part_of_day"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), RELATIVE_DAYS)
def test_relative_days(request: pytest.FixtureRequest, text: str, start: str, end: str,
                       precision: str) -> None:
    """Day words and parts of day are the sender's local day and hours (morning 05-12, night 21-05...)."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind, m.vague) == ((start, end), precision, "point", False)


# -- chat shorthand -----------------------------------------------------------------------------

SHORTHAND = rows(
    ("yday", "yday was rough", "2025-06-17", "2025-06-18", "day"),
    ("2moro", "see you 2moro", "2025-06-19", "2025-06-20", "day"),
    ("2nite", "pizza 2nite", "2025-06-18T17:00", "2025-06-19T05:00", "part_of_day"),
    ("the night before last", "the night before last I slept badly",
     "2025-06-16T17:00", "2025-06-17T05:00", "part_of_day"),
    ("sat morning", "sat morning I did a parkrun", "2025-06-14T05:00", "2025-06-14T12:00", "part_of_day"),
    ("Thurs", "I'm off Thurs", "2025-06-19", "2025-06-20", "day"),
    ("Sunday after next", "We meet Sunday after next", "2025-06-29", "2025-06-30", "day"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), SHORTHAND)
def test_chat_shorthand(
    request: pytest.FixtureRequest, text: str, start: str, end: str, precision: str
) -> None:
    """Spellings people type in chats read like the words they stand for."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision) == ((start, end), precision)


def test_sat_and_sun_alone_are_words() -> None:
    assert found("I sat down in the sun for a while") == []


APPROXIMATE = rows(
    # (text, start, end, precision): a hedged count is vague; of weeks or longer, the unit it lands in
    ("about a week ago", "about a week ago I fell", "2025-06-09", "2025-06-16", "week"),
    ("roughly 3 weeks ago", "roughly 3 weeks ago I started", "2025-05-26", "2025-06-02", "week"),
    ("around 3 years ago", "I first watched it around 3 years ago", "2022-01-01", "2023-01-01", "year"),
    ("a week or two ago", "a week or two ago I tried yoga", "2025-06-04", "2025-06-12", "week"),
    ("two or three days ago", "two or three days ago I felt pain", "2025-06-15", "2025-06-17", "day"),
    ("a month or so ago", "a month or so ago I hurt my knee", "2025-05-03", "2025-05-20", "month"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), APPROXIMATE)
def test_hedged_counts_are_vague_ranges(text: str, start: str, end: str, precision: str) -> None:
    m = one(text)
    assert (interval(m), m.precision, m.vague) == ((start, end), precision, True)


def test_by_the_end_of_the_week_is_a_deadline_through_sunday() -> None:
    m = one("by the end of the week I want to be done")
    assert (m.kind, m.start, local(m.end)) == ("until", None, "2025-06-23")
    assert m.render() == "through 2025-06-22"


# -- last / this / next -----------------------------------------------------------------------

RELATIVE_UNITS = rows(
    ("last Friday", "I ran last Friday", "2025-06-13", "2025-06-14", "day"),
    ("this Friday", "The race is this Friday", "2025-06-20", "2025-06-21", "day"),
    ("next Friday", "The race is next Friday", "2025-06-27", "2025-06-28", "day"),
    ("last Monday", "I started last Monday", "2025-06-09", "2025-06-10", "day"),
    ("previous Monday", "I started the previous Monday", "2025-06-09", "2025-06-10", "day"),
    ("this past Monday", "I started this past Monday", "2025-06-16", "2025-06-17", "day"),
    ("this past Wednesday", "I saw the physio this past Wednesday", "2025-06-11", "2025-06-12", "day"),
    ("this coming Friday", "The race is this coming Friday", "2025-06-20", "2025-06-21", "day"),
    ("this coming Thursday", "The clinic opens this coming Thursday", "2025-06-19", "2025-06-20", "day"),
    ("next Thursday", "The clinic opens next Thursday", "2025-06-26", "2025-06-27", "day"),
    ("last Sunday", "I rested last Sunday", "2025-06-15", "2025-06-16", "day"),
    ("next Sunday", "I'll rest next Sunday", "2025-06-29", "2025-06-30", "day"),
    ("this week", "I'm tired this week", "2025-06-16", "2025-06-23", "week"),
    ("last week", "I struggled last week", "2025-06-09", "2025-06-16", "week"),
    ("next week", "Suggest a workout for next week", "2025-06-23", "2025-06-30", "week"),
    ("this weekend", "I'll hike this weekend", "2025-06-21", "2025-06-23", "weekend"),
    ("last weekend", "I hiked last weekend", "2025-06-14", "2025-06-16", "weekend"),
    ("next weekend", "I'll hike next weekend", "2025-06-28", "2025-06-30", "weekend"),
    ("this month", "I've run 80 km this month", "2025-06-01", "2025-07-01", "month"),
    ("last month", "I ran 120 km last month", "2025-05-01", "2025-06-01", "month"),
    ("next month", "I'll race next month", "2025-07-01", "2025-08-01", "month"),
    ("this year", "My goal this year is a marathon", "2025-01-01", "2026-01-01", "year"),
    ("last year", "I got injured last year", "2024-01-01", "2025-01-01", "year"),
    ("next year", "I'll try an ultra next year", "2026-01-01", "2027-01-01", "year"),
    ("this summer", "I'm training hard this summer", "2025-06-01", "2025-09-01", "season"),
    ("last summer", "I ran a lot last summer", "2024-06-01", "2024-09-01", "season"),
    ("next summer", "I'll run Comrades next summer", "2026-06-01", "2026-09-01", "season"),
    ("last winter", "I was injured last winter", "2024-12-01", "2025-03-01", "season"),
    ("next winter", "I'll ski next winter", "2025-12-01", "2026-03-01", "season"),
    ("last spring", "I started running last spring", "2025-03-01", "2025-06-01", "season"),
    ("last autumn", "I raced a lot last autumn", "2024-09-01", "2024-12-01", "season"),
    ("last May", "I got new shoes last May", "2025-05-01", "2025-06-01", "month"),
    ("last September", "I got new shoes last September", "2024-09-01", "2024-10-01", "month"),
    ("last June", "I ran Comrades last June", "2024-06-01", "2024-07-01", "month"),
    ("next March", "I'll race Rome next March", "2026-03-01", "2026-04-01", "month"),
    ("next June", "I'll race Comrades next June", "2026-06-01", "2026-07-01", "month"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), RELATIVE_UNITS)
def test_last_this_next(request: pytest.FixtureRequest, text: str, start: str, end: str,
                        precision: str) -> None:
    """Calendar weeks run Monday-Sunday; "last Friday" is last week's, "this past" the nearest one."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind) == ((start, end), precision, "point")


# -- counted amounts ----------------------------------------------------------------------------

COUNTS_BACK = rows(
    # (text, start, end, precision): a count back from now is the calendar unit it lands in
    ("3 days ago", "I ran 3 days ago", "2025-06-15", "2025-06-16", "day"),
    ("ten days ago", "I ran ten days ago", "2025-06-08", "2025-06-09", "day"),
    ("a week ago", "I started a week ago", "2025-06-09", "2025-06-16", "week"),
    ("two weeks ago", "I got a puppy two weeks ago", "2025-06-02", "2025-06-09", "week"),
    ("3 weeks ago", "I started 3 weeks ago", "2025-05-26", "2025-06-02", "week"),
    ("a fortnight ago", "I started a fortnight ago", "2025-06-02", "2025-06-09", "week"),
    ("a month ago", "I started a month ago", "2025-05-01", "2025-06-01", "month"),
    ("3 months ago", "I started 3 months ago", "2025-03-01", "2025-04-01", "month"),
    ("a year ago", "I sold my car a year ago", "2024-01-01", "2025-01-01", "year"),
    ("2 years ago", "I started 2 years ago", "2023-01-01", "2024-01-01", "year"),
    ("five years ago", "I started surfing five years ago", "2020-01-01", "2021-01-01", "year"),
    ("two decades ago", "I moved here two decades ago", "2000-01-01", "2010-01-01", "decade"),
    ("an hour ago", "I ate an hour ago", "2025-06-18T14:00", "2025-06-18T15:00", "hour"),
    ("30 minutes ago", "I ate 30 minutes ago", "2025-06-18T14:30", "2025-06-18T14:31", "minute"),
    ("1 month and 21 days ago", "I hurt my knee 1 month and 21 days ago", "2025-04-27", "2025-04-28", "day"),
    ("2 weeks and 3 days ago", "I hurt my knee 2 weeks and 3 days ago", "2025-06-01", "2025-06-02", "day"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), COUNTS_BACK)
def test_counted_back_from_now_is_the_unit_it_lands_in(
    request: pytest.FixtureRequest, text: str, start: str, end: str, precision: str
) -> None:
    """"five years ago" is that year, "two weeks ago" that week; only day-sized units give a day."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind, m.vague) == ((start, end), precision, "point", False)


@pytest.mark.parametrize(
    ("text", "sent", "tz", "start", "end"),
    [
        ("I started surfing five years ago", "2023-07-16T16:21:00+00:00", "UTC",
         "2018-01-01T00:00:00+00:00", "2019-01-01T00:00:00+00:00"),
        ("I got a puppy two weeks ago", "2023-08-11T00:10:00+10:00", "Australia/Sydney",
         "2023-07-24T00:00:00+10:00", "2023-07-31T00:00:00+10:00"),
        ("I sold my car a year ago", "2025-01-01T00:30:00-08:00", "America/Los_Angeles",
         "2024-01-01T00:00:00-08:00", "2025-01-01T00:00:00-08:00"),
    ],
    ids=["five years ago, UTC", "two weeks ago, Sydney", "a year ago, Los Angeles on New Year's night"],
)
def test_counted_back_in_zones(text: str, sent: str, tz: str, start: str, end: str) -> None:
    """The unit is the sender's local one: a year ago said just after local midnight on 1 January."""
    assert iso(one(text, sent=sent, tz=tz)) == (start, end)


COUNTS_AHEAD = rows(
    # (text, start, end, precision): a count ahead is a schedule, arithmetic to the day
    ("in 3 days", "The race is in 3 days", "2025-06-21", "2025-06-22", "day"),
    ("in 2 weeks", "I'll see the physio in 2 weeks", "2025-07-02", "2025-07-03", "day"),
    ("in two months", "I'll race again in two months", "2025-08-18", "2025-08-19", "day"),
    ("in 20 minutes", "I'll call you in 20 minutes", "2025-06-18T15:20", "2025-06-18T15:21", "minute"),
    ("3 weeks from now", "The marathon is 3 weeks from now", "2025-07-09", "2025-07-10", "day"),
    ("10 days from now", "The marathon is 10 days from now", "2025-06-28", "2025-06-29", "day"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), COUNTS_AHEAD)
def test_counted_ahead_lands_on_a_day(request: pytest.FixtureRequest, text: str, start: str, end: str,
                                      precision: str) -> None:
    """A count ahead ("in 2 weeks", "3 weeks from now") is the day arithmetic gives: a schedule."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind, m.vague) == ((start, end), precision, "point", False)


def test_in_a_month_from_the_31st_lands_on_the_last_day_of_february() -> None:
    """Month arithmetic clips to the month's last day rather than spilling into March."""
    m = one("I'll start in a month", sent="2025-01-31T12:00:00+01:00")
    assert interval(m) == ("2025-02-28", "2025-03-01")


VAGUE_COUNTS = rows(
    # (text, a day it must cover, earliest plausible start, latest plausible end, precision one step coarser)
    ("a few days ago", "I hurt my knee a few days ago", "2025-06-15", "2025-06-08", "2025-06-18", "week"),
    ("a couple of days ago", "I hurt my knee a couple of days ago", "2025-06-16", "2025-06-11", "2025-06-18",
     "week"),
    ("a couple of weeks ago", "I hurt my knee a couple of weeks ago", "2025-06-04", "2025-05-14",
     "2025-06-18",
     "month"),
    ("a few weeks ago", "I hurt my knee a few weeks ago", "2025-05-28", "2025-04-18", "2025-06-18", "month"),
    ("several months ago", "I hurt my knee several months ago", "2025-02-18", "2024-06-18", "2025-06-18",
     "season"),
    ("in a few days", "I'll rest in a few days", "2025-06-21", "2025-06-18", "2025-06-29", "week"),
    ("in a couple of weeks", "I'll race in a couple of weeks", "2025-07-02", "2025-06-18", "2025-07-23",
     "month"),
)


@pytest.mark.parametrize(("text", "covers", "earliest", "latest", "precision"), VAGUE_COUNTS)
def test_vague_counts_widen(text: str, covers: str, earliest: str, latest: str, precision: str) -> None:
    """A vague count covers the plausible range, wider than a day, one precision step coarser, vague."""
    m = one(text)
    start, end = interval(m)
    assert start is not None and end is not None
    assert earliest <= start <= covers < end <= latest, (start, end)
    assert m.start is not None and m.end is not None and m.end - m.start > timedelta(days=1)
    assert (m.precision, m.vague, m.kind) == (precision, True, "point")


# -- named months and dates ----------------------------------------------------------------------

NAMED_DATES = rows(
    ("Nov 15", "Training for the Berlin half on Nov 15", "2025-11-15", "2025-11-16", "day"),
    ("15 November 2024", "I ran a PB on 15 November 2024", "2024-11-15", "2024-11-16", "day"),
    ("Jan 4 2019", "I started running on Jan 4 2019", "2019-01-04", "2019-01-05", "day"),
    ("March 2nd (past)", "I ran a half on March 2nd", "2025-03-02", "2025-03-03", "day"),
    ("March 2nd (future)", "I will run a half on March 2nd", "2026-03-02", "2026-03-03", "day"),
    ("the 6th of April", "We met on the 6th of April", "2025-04-06", "2025-04-07", "day"),
    ("the 21st of July", "I'll go on the 21st of July", "2025-07-21", "2025-07-22", "day"),
    ("Aug 3 (past)", "I raced on Aug 3", "2024-08-03", "2024-08-04", "day"),
    ("Aug 3 (future)", "I'll race on Aug 3", "2025-08-03", "2025-08-04", "day"),
    ("Jan 10 (past)", "I bought shoes on Jan 10", "2025-01-10", "2025-01-11", "day"),
    ("Jan 10 (future)", "I'll buy shoes on Jan 10", "2026-01-10", "2026-01-11", "day"),
    ("June 18 (past, today)", "I started on June 18", "2025-06-18", "2025-06-19", "day"),
    ("June 18 (future, today)", "I'll start on June 18", "2025-06-18", "2025-06-19", "day"),
    ("June 3 (future, gone this month)", "I'll race on June 3", "2026-06-03", "2026-06-04", "day"),
    ("March (past)", "I started physio in March", "2025-03-01", "2025-04-01", "month"),
    ("March (future)", "I'll start physio in March", "2026-03-01", "2026-04-01", "month"),
    ("October (past)", "I got injured in October", "2024-10-01", "2024-11-01", "month"),
    ("March 2024", "I moved in March 2024", "2024-03-01", "2024-04-01", "month"),
    ("Sept 2023", "I moved in Sept 2023", "2023-09-01", "2023-10-01", "month"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), NAMED_DATES)
def test_named_months_and_dates(request: pytest.FixtureRequest, text: str, start: str, end: str,
                                precision: str) -> None:
    """A year-less date or month follows the tense: past the latest not after today, future the next."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind) == ((start, end), precision, "point")


# -- ISO and numeric dates ------------------------------------------------------------------------

NUMERIC_DATES = rows(
    ("2025-06-14", "I ran on 2025-06-14", "MDY", "2025-06-14", "2025-06-15", "day"),
    ("2025-06-14 (DMY)", "I ran on 2025-06-14", "DMY", "2025-06-14", "2025-06-15", "day"),
    ("2024/03/05 (DMY)", "I ran on 2024/03/05", "DMY", "2024-03-05", "2024-03-06", "day"),
    ("2025-06-14 09:30", "I ran on 2025-06-14 09:30", "MDY", "2025-06-14T09:30", "2025-06-14T09:31",
     "minute"),
    ("03/04/2024 (MDY)", "I ran on 03/04/2024", "MDY", "2024-03-04", "2024-03-05", "day"),
    ("03/04/2024 (DMY)", "I ran on 03/04/2024", "DMY", "2024-04-03", "2024-04-04", "day"),
    ("15/04/2024 (MDY)", "I ran on 15/04/2024", "MDY", "2024-04-15", "2024-04-16", "day"),
    ("15/04/2024 (DMY)", "I ran on 15/04/2024", "DMY", "2024-04-15", "2024-04-16", "day"),
    ("03/04 (MDY, past)", "I ran on 03/04", "MDY", "2025-03-04", "2025-03-05", "day"),
    ("03/04 (DMY, past)", "I ran on 03/04", "DMY", "2025-04-03", "2025-04-04", "day"),
    ("03/04 (MDY, future)", "I'll race on 03/04", "MDY", "2026-03-04", "2026-03-05", "day"),
    ("25/12 (MDY, future)", "I'll fly home on 25/12", "MDY", "2025-12-25", "2025-12-26", "day"),
    ("12/25 (MDY, future)", "I'll fly home on 12/25", "MDY", "2025-12-25", "2025-12-26", "day"),
)


@pytest.mark.parametrize(("text", "order", "start", "end", "precision"), NUMERIC_DATES)
def test_numeric_dates(request: pytest.FixtureRequest, text: str, order: str, start: str, end: str,
                       precision: str) -> None:
    """03/04 is month first unless DMY; a first number above 12 is a day; a 4-digit year first is Y-M-D."""
    m = one(text, date_order=order)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision) == ((start, end), precision)


# -- since, until and ranges ------------------------------------------------------------------------

SPANS = rows(
    ("since March", "I've been running since March", "2025-03-01", None, "month", "since"),
    ("since 2024-01-15", "I've been vegetarian since 2024-01-15", "2024-01-15", None, "day", "since"),
    ("since last Tuesday", "My knee has hurt since last Tuesday", "2025-06-10", None, "day", "since"),
    ("since the previous Tuesday", "My knee has hurt since the previous Tuesday", "2025-06-10", None, "day",
     "since"),
    ("since 2022", "I've lived here since 2022", "2022-01-01", None, "year", "since"),
    ("after June 20", "I'll rest after June 20", "2025-06-21", None, "day", "since"),
    ("until Friday", "I'm off work until Friday", None, "2025-06-20", "day", "until"),
    ("until Friday (is closed)", "The gym is closed until Friday", None, "2025-06-20", "day", "until",
     ),
    ("until June 30", "The promo runs until June 30", None, "2025-06-30", "day", "until"),
    ("through June 30", "The promo runs through June 30", None, "2025-07-01", "day", "until"),
    ("until 2025-07-01", "I'm on antibiotics until 2025-07-01", None, "2025-07-01", "day", "until"),
    ("until 2026", "I'm on the team until 2026", None, "2026-01-01", "year", "until"),
    ("from July to September", "I'll train from July to September", "2025-07-01", "2025-10-01", "month",
     "range"),
    ("from November to February", "I trained from November to February",
     "2024-11-01", "2025-03-01", "month", "range"),
    ("from May 2023 to March 2024", "I lived in Lisbon from May 2023 to March 2024",
     "2023-05-01", "2024-04-01", "month", "range"),
    ("between Monday and Wednesday", "I'll be away between Monday and Wednesday",
     "2025-06-23", "2025-06-26", "day", "range"),
    ("from June 3 to June 5", "I was sick from June 3 to June 5", "2025-06-03", "2025-06-06", "day", "range"),
    ("between March 3 and March 7", "I was sick between March 3 and March 7",
     "2025-03-03", "2025-03-08", "day", "range"),
    ("June 3-5", "I was in Rome June 3-5", "2025-06-03", "2025-06-06", "day", "range"),
    ("from 4 to 22 January 2024", "I was away from 4 to 22 January 2024", "2024-01-04", "2024-01-23", "day",
     "range"),
    ("from 2025-06-01 to 2025-06-10", "I was away from 2025-06-01 to 2025-06-10",
     "2025-06-01", "2025-06-11", "day", "range"),
    ("from 2019 to 2021", "I lived in Lisbon from 2019 to 2021", "2019-01-01", "2022-01-01", "year", "range"),
    ("between 2010 and 2012", "I played rugby between 2010 and 2012", "2010-01-01", "2013-01-01", "year",
     "range"),
    ("2014-2018", "I rowed 2014-2018", "2014-01-01", "2019-01-01", "year", "range"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision", "kind"), SPANS)
def test_since_until_and_ranges(request: pytest.FixtureRequest, text: str, start: str | None, end: str | None,
                                precision: str, kind: str) -> None:
    """since: no end; until X: no start, ends where X starts (through: where X ends); ranges keep the last."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision, m.kind) == ((start, end), precision, kind)
    assert m.open_start == (start is None) and m.open_end == (end is None)


ROLLING = rows(
    ("the past week", "I've been tired the past week", "2025-06-11", "2025-06-18"),
    ("the past 3 days", "I've been tired the past 3 days", "2025-06-15", "2025-06-18"),
)


@pytest.mark.parametrize(("text", "start", "end"), ROLLING)
def test_the_past_week_is_rolling(text: str, start: str, end: str) -> None:
    """"the past week" is the seven days before today, not the calendar week."""
    m = one(text)
    assert (interval(m), m.kind) == ((start, end), "range")


# -- relative to another time ------------------------------------------------------------------------


AROUND = rows(
    ("the week before 2025-12-25", "I'll taper the week before 2025-12-25", "2025-12-15", "2025-12-22",
     "week"),
    ("the week after 2025-06-10", "I was sore the week after 2025-06-10", "2025-06-16", "2025-06-23", "week"),
    ("the day after 2025-06-14", "I was sore the day after 2025-06-14", "2025-06-15", "2025-06-16", "day"),
    ("the day before Nov 15", "I'll taper the day before Nov 15", "2025-11-14", "2025-11-15", "day"),
    ("the weekend after 2025-06-10", "I hiked the weekend after 2025-06-10", "2025-06-14", "2025-06-16",
     "weekend"),
    ("the weekend after Friday", "I hiked the weekend after Friday", "2025-06-14", "2025-06-16",
     "weekend"),
    ("2 weeks before 2025-07-01", "I'll taper 2 weeks before 2025-07-01", "2025-06-17", "2025-06-18", "day"),
    ("3 days after 2025-06-14", "I was sore 3 days after 2025-06-14", "2025-06-17", "2025-06-18", "day"),
    ("the week after next", "I'll race the week after next", "2025-06-30", "2025-07-07", "week"),
    ("the month before last", "I raced the month before last", "2025-04-01", "2025-05-01", "month"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), AROUND)
def test_relative_to_another_time(request: pytest.FixtureRequest, text: str, start: str, end: str,
                                  precision: str) -> None:
    """The week before X is the calendar week before X's; counted amounts move from X's start."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision) == ((start, end), precision)


# -- named periods: nth weekday, weeks of a month, years, decades, quarters, seasons -------------------

PERIODS = rows(
    ("first Monday of June (past)", "I raced on the first Monday of June", "2025-06-02", "2025-06-03", "day"),
    ("first Monday of June (future)", "I'll race on the first Monday of June", "2026-06-01", "2026-06-02",
     "day"),
    ("first Monday of June 2026", "The club meets on the first Monday of June 2026",
     "2026-06-01", "2026-06-02", "day"),
    ("the last week of July 2022", "I was sick the last week of July 2022", "2022-07-25", "2022-08-01",
     "week"),
    ("in 2022", "I moved in 2022", "2022-01-01", "2023-01-01", "year"),
    ("the 90s", "I grew up in the 90s", "1990-01-01", "2000-01-01", "decade"),
    ("the 1980s", "My dad ran marathons in the 1980s", "1980-01-01", "1990-01-01", "decade"),
    ("the nineties", "I grew up in the nineties", "1990-01-01", "2000-01-01", "decade"),
    ("Q3 2024", "Revenue grew in Q3 2024", "2024-07-01", "2024-10-01", "month"),
    ("H1 2025", "I ran 600 km in H1 2025", "2025-01-01", "2025-07-01", "month"),
    ("the first quarter of 2024", "I ran 300 km in the first quarter of 2024", "2024-01-01", "2024-04-01",
     "month"),
    ("winter 2024", "I ski in winter 2024", "2024-12-01", "2025-03-01", "season"),
    ("summer 2023", "I ran Comrades in summer 2023", "2023-06-01", "2023-09-01", "season"),
    ("Christmas Day 2024", "I ran on Christmas Day 2024", "2024-12-25", "2024-12-26", "day"),
    ("over the weekend (past)", "I hiked over the weekend", "2025-06-14", "2025-06-16", "weekend"),
    ("over the weekend (future)", "I'll hike over the weekend", "2025-06-21", "2025-06-23", "weekend"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), PERIODS)
def test_named_periods(request: pytest.FixtureRequest, text: str, start: str, end: str,
                       precision: str) -> None:
    """Quarters are month-precision calendar quarters; decades are ten years; seasons are meteorological."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision) == ((start, end), precision)


WEEKEND_FROM = rows(
    ("Sunday evening, past", "2025-06-15T19:00:00+02:00", "I hiked over the weekend",
     "2025-06-14", "2025-06-16"),
    ("Monday morning, past", "2025-06-16T08:00:00+02:00", "I hiked over the weekend",
     "2025-06-14", "2025-06-16"),
    ("Friday, future", "2025-06-13T18:00:00+02:00", "I'll hike over the weekend", "2025-06-14", "2025-06-16"),
)


@pytest.mark.parametrize(("sent", "text", "start", "end"), WEEKEND_FROM)
def test_over_the_weekend_around_the_weekend(sent: str, text: str, start: str, end: str) -> None:
    """Past tense is the weekend just gone (or under way); future the coming one."""
    m = one(text, sent=sent)
    assert (interval(m), m.precision) == ((start, end), "weekend")


PARTS_OF_MONTH = rows(
    # (text, start no earlier than, start no later than, end no earlier than, end no later than)
    ("early March 2025", "I was injured in early March 2025", "2025-03-01", "2025-03-01",
     "2025-03-08", "2025-03-12"),
    ("mid-June 2024", "I moved mid-June 2024", "2024-06-08", "2024-06-15", "2024-06-16", "2024-06-23"),
    ("late May", "I raced in late May", "2025-05-18", "2025-05-24", "2025-06-01", "2025-06-01"),
    ("the end of January", "I'll finish at the end of January", "2026-01-18", "2026-01-25",
     "2026-02-01", "2026-02-01"),
    ("the beginning of April", "I started at the beginning of April", "2025-04-01", "2025-04-01",
     "2025-04-08", "2025-04-12"),
)


@pytest.mark.parametrize(("text", "s_lo", "s_hi", "e_lo", "e_hi"), PARTS_OF_MONTH)
def test_early_mid_late_month(text: str, s_lo: str, s_hi: str, e_lo: str, e_hi: str) -> None:
    """early/mid/late cut a month in about thirds: early starts on the 1st, late ends at the month's end."""
    m = one(text)
    start, end = interval(m)
    assert start is not None and end is not None
    assert s_lo <= start <= s_hi and e_lo <= end <= e_hi, (start, end)
    assert m.precision in ("day", "week", "month")


# -- vague phrases ------------------------------------------------------------------------------------

COARSE = ("week", "month", "season", "year", "decade", "unknown")


def test_the_other_day_is_a_vague_recent_past() -> None:
    """"the other day": some day in the last week or two, not today; coarse and vague."""
    m = one("I saw Ana the other day")
    start, end = interval(m)
    assert start is not None and end is not None
    assert "2025-05-18" <= start <= "2025-06-15" and "2025-06-16" <= end <= "2025-06-18", (start, end)
    assert m.vague is True and m.precision in COARSE


def test_recently_is_a_vague_span_up_to_now() -> None:
    """"recently": a wide span reaching today; coarse and vague."""
    m = one("I've been sleeping badly recently")
    start, end = interval(m)
    assert start is not None and end is not None
    assert "2024-12-18" <= start <= "2025-06-11" and end >= "2025-06-18", (start, end)
    assert m.vague is True and m.precision in COARSE


# -- tense decides direction ----------------------------------------------------------------------------

TENSE = rows(
    ("I ran on Friday", "2025-06-13"),
    ("I'll run on Friday", "2025-06-20"),
    ("I'm running on Friday", "2025-06-20"),
    ("I have physio on Friday", "2025-06-20"),
    ("My physio is on Friday", "2025-06-20"),
    ("I went to yoga on Monday", "2025-06-16"),
    ("I will go to yoga on Monday", "2025-06-23"),
    ("We're meeting on Tuesday", "2025-06-24"),
    ("I met her on Tuesday", "2025-06-17"),
    ("I'm going to run on Saturday", "2025-06-21"),
    ("I swam on Saturday", "2025-06-14"),
)


@pytest.mark.parametrize("day", TENSE)
def test_tense_decides_which_weekday(request: pytest.FixtureRequest, day: str) -> None:
    """A bare weekday is the last one before today in the past tense, else the next one after today."""
    m = one(request.node.callspec.id)
    next_day = (datetime.fromisoformat(day) + timedelta(days=1)).strftime("%Y-%m-%d")
    assert (interval(m), m.precision) == ((day, next_day), "day")


# -- what is NOT a time: one test each ----------------------------------------------------------------


def nothing(text: str, tz: str = BERLIN) -> None:
    assert found(text, tz=tz) == []


def test_finished_in_58_minutes_is_a_duration() -> None:
    nothing("I finished in 58 minutes.")


def test_a_3_hour_hike_is_a_duration() -> None:
    nothing("We did a 3 hour hike.")


def test_in_3_weeks_in_the_past_tense_is_a_duration() -> None:
    nothing("I lost 5 kg in 3 weeks.")


def test_may_the_modal_verb() -> None:
    nothing("I may skip the gym.")


def test_may_i_ask() -> None:
    nothing("May I ask what pace that was?")


def test_march_the_verb() -> None:
    nothing("We'll march in the parade.")


def test_an_ordinal_is_not_a_date() -> None:
    nothing("This was my second marathon.")


def test_for_the_first_time() -> None:
    nothing("I ran without pain for the first time.")


def test_now_and_then() -> None:
    nothing("I still get twinges now and then.")


def test_sets_and_reps() -> None:
    nothing("I did 3 sets of 12.")


def test_a_score() -> None:
    nothing("We won, scored 3-2.")


def test_a_rating() -> None:
    nothing("I'd rate it 9/10.")


def test_a_fraction() -> None:
    nothing("I ran a 1/2 marathon.")


def test_a_pace() -> None:
    nothing("I held an 8:12 mile.")


def test_every_monday_is_a_habit() -> None:
    nothing("I swim every Monday.")


def test_on_mondays_is_a_habit() -> None:
    nothing("I swim on Mondays.")


# -- zones: both sides of UTC, DST edges -----------------------------------------------------------------

ZONES = rows(
    ("B2 yesterday, Singapore", "I started the new knee meds yesterday.", "2025-08-10T05:00:00+08:00",
     "Asia/Singapore", "2025-08-09T00:00:00+08:00", "2025-08-10T00:00:00+08:00", "day"),
    ("B2 this morning, Singapore", "I did yoga this morning", "2025-08-10T05:00:00+08:00",
     "Asia/Singapore", "2025-08-10T05:00:00+08:00", "2025-08-10T12:00:00+08:00", "part_of_day"),
    ("today, Los Angeles late evening", "I feel great today", "2025-06-18T23:30:00-07:00",
     "America/Los_Angeles", "2025-06-18T00:00:00-07:00", "2025-06-19T00:00:00-07:00", "day"),
    ("tomorrow, Los Angeles late evening", "I'll rest tomorrow", "2025-06-18T23:30:00-07:00",
     "America/Los_Angeles", "2025-06-19T00:00:00-07:00", "2025-06-20T00:00:00-07:00", "day"),
    ("yesterday, Los Angeles late evening", "I ran yesterday", "2025-06-18T23:30:00-07:00",
     "America/Los_Angeles", "2025-06-17T00:00:00-07:00", "2025-06-18T00:00:00-07:00", "day"),
    ("tonight, Los Angeles late evening", "I'm cooking tonight", "2025-06-18T23:30:00-07:00",
     "America/Los_Angeles", "2025-06-18T17:00:00-07:00", "2025-06-19T05:00:00-07:00", "part_of_day"),
    ("Saturday, Los Angeles on Friday night", "I'll run on Saturday", "2025-06-20T23:30:00-07:00",
     "America/Los_Angeles", "2025-06-21T00:00:00-07:00", "2025-06-22T00:00:00-07:00", "day"),
    ("today, Auckland morning", "I feel great today", "2025-06-18T20:00:00Z",
     "Pacific/Auckland", "2025-06-19T00:00:00+12:00", "2025-06-20T00:00:00+12:00", "day"),
    ("yesterday, Auckland morning", "I ran yesterday", "2025-06-18T20:00:00Z",
     "Pacific/Auckland", "2025-06-18T00:00:00+12:00", "2025-06-19T00:00:00+12:00", "day"),
    ("this morning, Auckland", "I did yoga this morning", "2025-06-18T20:00:00Z",
     "Pacific/Auckland", "2025-06-19T05:00:00+12:00", "2025-06-19T12:00:00+12:00", "part_of_day"),
    ("yesterday, Kolkata half-hour offset", "I ran yesterday", "2025-06-17T20:45:00Z",
     "Asia/Kolkata", "2025-06-17T00:00:00+05:30", "2025-06-18T00:00:00+05:30", "day"),
    ("last summer, Auckland", "I ran a lot last summer", "2025-06-18T12:00:00+12:00",
     "Pacific/Auckland", "2024-12-01T00:00:00+13:00", "2025-03-01T00:00:00+13:00", "season"),
    ("last summer, Sydney", "I ran a lot last summer", "2025-06-18T12:00:00+10:00",
     "Australia/Sydney", "2024-12-01T00:00:00+11:00", "2025-03-01T00:00:00+11:00", "season"),
    ("this winter, Sydney in June", "I'm training hard this winter", "2025-06-18T12:00:00+10:00",
     "Australia/Sydney", "2025-06-01T00:00:00+10:00", "2025-09-01T00:00:00+10:00", "season"),
    ("next summer, Sydney", "I'll swim a lot next summer", "2025-06-18T12:00:00+10:00",
     "Australia/Sydney", "2025-12-01T00:00:00+11:00", "2026-03-01T00:00:00+11:00", "season"),
    ("this summer, Sydney in January", "I'm swimming a lot this summer", "2025-01-15T12:00:00+11:00",
     "Australia/Sydney", "2024-12-01T00:00:00+11:00", "2025-03-01T00:00:00+11:00", "season"),
    ("this winter, Berlin in January", "I'm skiing a lot this winter", "2025-01-15T12:00:00+01:00",
     BERLIN, "2024-12-01T00:00:00+01:00", "2025-03-01T00:00:00+01:00", "season"),
)


@pytest.mark.parametrize(("text", "sent", "tz", "start", "end", "precision"), ZONES)
def test_zones(text: str, sent: str, tz: str, start: str, end: str, precision: str) -> None:
    """Days, parts of day and seasons are the sender's local ones, whatever the UTC date."""
    m = one(text, sent=sent, tz=tz)
    assert (iso(m), m.precision) == ((start, end), precision)


DST_DAYS = rows(
    ("Berlin spring forward, today", "I feel great today", "2025-03-30T12:00:00+02:00", BERLIN,
     "2025-03-30T00:00:00+01:00", "2025-03-31T00:00:00+02:00", 23),
    ("Berlin spring forward, yesterday", "I ran yesterday", "2025-03-31T09:00:00+02:00", BERLIN,
     "2025-03-30T00:00:00+01:00", "2025-03-31T00:00:00+02:00", 23),
    ("Berlin fall back, today", "I feel great today", "2025-10-26T12:00:00+01:00", BERLIN,
     "2025-10-26T00:00:00+02:00", "2025-10-27T00:00:00+01:00", 25),
    ("Berlin fall back, tomorrow", "I'll rest tomorrow", "2025-10-25T20:00:00+02:00", BERLIN,
     "2025-10-26T00:00:00+02:00", "2025-10-27T00:00:00+01:00", 25),
    ("Berlin fall back, last night", "I slept badly last night", "2025-10-26T09:00:00+01:00", BERLIN,
     "2025-10-25T17:00:00+02:00", "2025-10-26T05:00:00+01:00", 13),
    ("Santiago gap day, today", "I feel great today", "2025-09-07T12:00:00-03:00", "America/Santiago",
     "2025-09-07T01:00:00-03:00", "2025-09-08T00:00:00-03:00", 23),
    ("Santiago gap day, tomorrow", "I'll rest tomorrow", "2025-09-06T20:00:00-04:00", "America/Santiago",
     "2025-09-07T01:00:00-03:00", "2025-09-08T00:00:00-03:00", 23),
    ("Santiago gap day, yesterday", "I ran yesterday", "2025-09-08T09:00:00-03:00", "America/Santiago",
     "2025-09-07T01:00:00-03:00", "2025-09-08T00:00:00-03:00", 23),
    ("Santiago day before the gap", "I feel great today", "2025-09-06T12:00:00-04:00", "America/Santiago",
     "2025-09-06T00:00:00-04:00", "2025-09-07T01:00:00-03:00", 24),
)


@pytest.mark.parametrize(("text", "sent", "tz", "start", "end", "length"), DST_DAYS)
def test_days_across_dst(text: str, sent: str, tz: str, start: str, end: str, length: int) -> None:
    """A day on a DST night is 23 or 25 hours between local midnights; a missing midnight starts at 01:00."""
    m = one(text, sent=sent, tz=tz)
    assert iso(m) == (start, end)
    assert hours(m) == length


# -- clock times on a day, and mentions that must not overlap ------------------------------------------

CLOCKS = rows(
    ("tomorrow at 7pm", "I'll run tomorrow at 7pm", "2025-06-19T19:00", "2025-06-19T20:00", "hour"),
    ("at 7pm tomorrow", "I'll run at 7pm tomorrow", "2025-06-19T19:00", "2025-06-19T20:00", "hour"),
    ("on Friday at 7pm", "I'll run on Friday at 7pm", "2025-06-20T19:00", "2025-06-20T20:00", "hour"),
    ("at 7pm on Friday", "I'll run at 7pm on Friday", "2025-06-20T19:00", "2025-06-20T20:00", "hour"),
    ("yesterday at 18:30", "I ran yesterday at 18:30", "2025-06-17T18:30", "2025-06-17T18:31", "minute"),
    ("at 7pm on 2025-12-25", "I'll eat at 7pm on 2025-12-25", "2025-12-25T19:00", "2025-12-25T20:00", "hour"),
    ("at 7pm on Christmas Day 2025", "I'll eat at 7pm on Christmas Day 2025",
     "2025-12-25T19:00", "2025-12-25T20:00", "hour"),
    ("at 7pm (today)", "See you at 7pm", "2025-06-18T19:00", "2025-06-18T20:00", "hour"),
)


@pytest.mark.parametrize(("text", "start", "end", "precision"), CLOCKS)
def test_clock_times_on_a_day(request: pytest.FixtureRequest, text: str, start: str, end: str,
                              precision: str) -> None:
    """A clock time before or after a day is one mention: that hour (or minute) of that day."""
    m = one(text)
    assert phrase_of(request).lower() in m.phrase.lower()
    assert (interval(m), m.precision) == ((start, end), precision)


OVERLAPS = rows(
    ("rest the week before", "I'll rest the week before 2025-12-25"),
    ("weekend after Friday", "weekend after Friday"),
    ("03/04 week from Friday", "03/04 week from Friday"),
    ("at 7pm on Friday", "I'll run at 7pm on Friday"),
    ("on Friday at 7pm", "I'll run on Friday at 7pm"),
    ("7pm Christmas", "7pm Christmas"),
)


@pytest.mark.parametrize("text", OVERLAPS)
def test_mentions_never_overlap(text: str) -> None:
    """Mentions come back in text order and disjoint, so rewrite can replace each one."""
    spans = [m.span for m in found(text)]
    assert spans, text
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def test_rest_the_week_before_is_not_the_rest_of_the_week() -> None:
    """"rest" the verb: the only time here is the week before Christmas Day 2025."""
    m = one("I'll rest the week before 2025-12-25")
    assert m.phrase == "the week before 2025-12-25"
    assert (interval(m), m.precision) == (("2025-12-15", "2025-12-22"), "week")


def test_earlier_today_at_midnight_is_not_empty() -> None:
    """Whatever "earlier today" means at 00:00, it is not an interval that ends where it starts."""
    for m in found("I ate earlier today", sent="2025-06-18T00:00:00+02:00"):
        assert m.start is not None and m.end is not None and m.start < m.end, m


# -- scenario B1 ----------------------------------------------------------------------------------------

B1_TEXT = "I ran my first 10K last weekend, finished in 58 minutes."
B1_SENT = "2025-06-16T12:00:00+00:00"


def test_b1_last_weekend_is_the_only_time() -> None:
    """B1: one mention, the weekend just gone; "first" and "in 58 minutes" are not times."""
    m = one(B1_TEXT, sent=B1_SENT, tz="UTC")
    assert m.phrase == "last weekend"
    assert B1_TEXT[m.span[0]:m.span[1]] == "last weekend"
    assert iso(m) == ("2025-06-14T00:00:00+00:00", "2025-06-16T00:00:00+00:00")
    assert (m.precision, m.kind, m.vague) == ("weekend", "point", False)


def test_b1_rewrite_names_the_weekend() -> None:
    """B1: the rewritten memory names the weekend's dates instead of "last weekend"."""
    text = rewrite(B1_TEXT, find_times(B1_TEXT, sent_at=_sent(B1_SENT), tz="UTC"))
    assert "weekend of 2025-06-14 to 2025-06-15" in text
    assert "last weekend" not in text
    assert text.endswith("finished in 58 minutes.")


# -- render and rewrite -----------------------------------------------------------------------------------

REWRITES = rows(
    ("a day", "I ran yesterday.", "I ran on 2025-06-17."),
    ("a day, sentence start", "Yesterday I ran.", "On 2025-06-17 I ran."),
    ("a part of day", "I did yoga this morning.", "I did yoga on the morning of 2025-06-18."),
    ("a night", "I slept badly last night.", "I slept badly on the night of 2025-06-17."),
    ("a weekend", "I hiked last weekend.", "I hiked on the weekend of 2025-06-14 to 2025-06-15."),
    ("a week", "I struggled last week.", "I struggled in the week of 2025-06-09 to 2025-06-15."),
    ("a month", "I started physio in March", "I started physio in 2025-03"),
    ("a year", "I moved in 2022.", "I moved in 2022."),
    ("a since", "I've been vegetarian since January", "I've been vegetarian since 2025-01"),
    ("an until", "I'm off work until Friday.", "I'm off work until 2025-06-20."),
    ("a range", "I'll train from July to September", "I'll train from 2025-07 to 2025-09"),
    ("a range of days", "I was in Rome June 3-5.", "I was in Rome from 2025-06-03 to 2025-06-05."),
    ("counted weeks", "I started 3 weeks ago.", "I started in the week of 2025-05-26 to 2025-06-01."),
    ("counted months", "I started 3 months ago.", "I started in 2025-03."),
    ("counted years", "I started surfing five years ago.", "I started surfing in 2020."),
    ("counted days ahead", "I'll race in 3 days.", "I'll race on 2025-06-21."),
    ("vague weeks", "I started a couple of weeks ago.", "I started between 2025-05-28 and 2025-06-11."),
    ("two mentions", "I ran yesterday and I'll rest tomorrow.",
     "I ran on 2025-06-17 and I'll rest on 2025-06-19."),
)


@pytest.mark.parametrize(("text", "expected"), REWRITES)
def test_rewrite(text: str, expected: str) -> None:
    """Each phrase becomes its absolute rendering; the rest of the text is untouched."""
    mentions = found(text)
    assert rewrite(text, mentions) == expected
    assert rewrite(text, list(reversed(mentions))) == expected
    for m in mentions:
        assert m.render().lower() in expected.lower()




@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I started physio in March.", "I started physio in 2025-03."),
        ("I've been vegetarian since January.", "I've been vegetarian since 2025-01."),
        ("I'll train from July to September.", "I'll train from 2025-07 to 2025-09."),
    ],
    ids=["in March.", "since January.", "from July to September."],
)
def test_a_full_stop_after_a_month_stays_in_the_text(text: str, expected: str) -> None:
    """"March." at the end of a sentence is the month and a full stop, not an abbreviation."""
    mentions = found(text)
    assert [m.phrase[-1] for m in mentions] != ["."]
    assert rewrite(text, mentions) == expected


def test_rewrite_without_mentions_is_the_text() -> None:
    assert rewrite("I swim on Mondays.", []) == "I swim on Mondays."


# -- bad input ------------------------------------------------------------------------------------------


def test_naive_sent_at_is_refused() -> None:
    with pytest.raises(localmem.NaiveDatetimeError):
        find_times("I ran yesterday", sent_at=datetime(2025, 6, 18, 12), tz=BERLIN)  # noqa: DTZ001


@pytest.mark.parametrize("tz", ["Mars/Olympus", "", "Europe/Nowhere"])
def test_unknown_zone_is_refused(tz: str) -> None:
    with pytest.raises(localmem.UnknownZoneError):
        find_times("I ran yesterday", sent_at=_sent(WED), tz=tz)


def test_unknown_date_order_is_refused() -> None:
    with pytest.raises(localmem.InvalidInputError):
        find_times("I ran on 03/04", sent_at=_sent(WED), tz=BERLIN, date_order="YDM")


@pytest.mark.parametrize("text", [None, b"I ran yesterday", 42], ids=["None", "bytes", "int"])
def test_non_string_text_is_refused(text: object) -> None:
    with pytest.raises(localmem.InvalidInputError):
        find_times(text, sent_at=_sent(WED), tz=BERLIN)  # type: ignore[arg-type]  # deliberately wrong


# -- property: any text, any zone, any instant -----------------------------------------------------------

VOCAB = (
    "I ran will 'll I'm last next this past coming Friday Monday weekend week month year in on at 3 two "
    "a few couple of days weeks months ago from now since until through to between and the day after before "
    "tomorrow yesterday today tonight morning night March May June 2024 1999 03/04 15/04/2024 2025-06-14 "
    "3-5 summer winter early mid late Q3 90s first every Mondays recently other 58 minutes earlier later "
    "over , . 7pm 19:30 noon Christmas"
).split()
PROPERTY_ZONES = ("UTC", BERLIN, "America/Santiago", "Australia/Sydney", "Asia/Kolkata",
                  "America/Los_Angeles", "Pacific/Auckland", "Pacific/Kiritimati", "America/St_Johns")


@given(
    words=st.lists(st.sampled_from(VOCAB), max_size=14),
    tz=st.sampled_from(PROPERTY_ZONES),
    sent=st.datetimes(min_value=datetime(1990, 1, 1), max_value=datetime(2060, 12, 31),  # noqa: DTZ001
                      timezones=st.sampled_from([ZoneInfo(z) for z in PROPERTY_ZONES])),
)
def test_find_times_is_well_formed(words: list[str], tz: str, sent: datetime) -> None:
    """Never raises; spans are ordered, disjoint and match the phrase; intervals are proper and local."""
    text = " ".join(words)
    mentions = find_times(text, sent_at=sent, tz=tz)
    last_end = 0
    for m in mentions:
        lo, hi = m.span
        assert last_end <= lo < hi <= len(text)
        last_end = hi
        assert text[lo:hi] == m.phrase
        assert m.precision in localmem.PRECISIONS
        assert m.kind in ("point", "range", "since", "until")
        assert m.start is not None or m.end is not None
        if m.start is not None and m.end is not None:
            assert m.start < m.end, (text, m)
        for at in (m.start, m.end):
            assert at is None or getattr(at.tzinfo, "key", None) == tz


# -- the pre-filter and the trigger index: they may only skip what no rule could read -----------------------

def test_every_rules_trigger_words_are_in_the_pre_filter() -> None:
    """The word index is built from the registry: each of a rule's words wakes it (with one of its
    ``also`` words, if it has them), in a sentence."""
    for rule in all_rules():
        for word in rule.when:
            words = {"so", word, "ok", *sorted(rule.also)[:1]}
            assert rule in rules_for(words, 0), (rule.handler.__name__, word)
    assert trigger_words() == {w for rule in all_rules() for w in rule.when}


@pytest.mark.parametrize("text", [
    "Thanks, that helps a lot!",
    "I love my yoga class",
    "Can you pass the salt?",
    "we are so proud of her",
])
def test_a_message_with_no_time_word_stops_at_the_pre_filter(text: str) -> None:
    assert candidate_rules(text.lower()) == []
    assert found(text) == []


TRIGGER_VOCAB = sorted(trigger_words() | {
    "the", "on", "in", "of", "a", "I", "ran", "will", "from", "to", "since", "until", "by", "at", "and",
    "2019", "12", "3pm", "5/6", "10:30", "07.04.2021", "1990s", "'80s", "Q3", "H1", "20161016", "-", ",", "'",
    "7", "123", "90s", "4th", "11", "2016", "87", "3-7-27", "1865", "29th", "4-22",
    "7pm", "7 p.m.", "9:05", "1980's", "80 s", "3.4", "12/25/2024", "st", "on the 5", "the 21st",
})


@pytest.mark.parametrize(("text", "run"), [("no digits", 0), ("room 7", 1), ("the 90s", 2), ("at 123", 2),
                                           ("in 2019", 4), ("20161016", 4)])
def test_the_index_counts_digits_in_a_row(text: str, run: int) -> None:
    """Rules that need a year (four digits in a row) are not woken by "room 7"."""
    woken = candidate_rules(text)
    assert all(r.digits <= run for r in woken if not (r.when & set(text.split())))


@pytest.mark.parametrize(("text", "woken", "asleep"), [
    ("room 7 is free", set(), {"_numeric_date", "_decade", "_clock_time", "_day_of_month"}),
    ("we won 3-2", {"_numeric_date"}, {"_clock_time", "_decade"}),
    ("back in the 90s", {"_decade", "_day_of_month"}, {"_numeric_date", "_clock_time"}),
    ("at 7pm or 19:30", {"_clock_time"}, {"_decade", "_numeric_date"}),
    ("no digits here", set(), {"_numeric_date", "_decade", "_clock_time", "_day_of_month"}),
])
def test_a_digit_rule_wakes_only_for_its_shape(text: str, woken: set[str], asleep: set[str]) -> None:
    """A rule's digit shape, not any digit, wakes it: "room 7" holds no date's shape."""
    names = {r.handler.__name__ for r in candidate_rules(text)}
    assert woken <= names and not (asleep & names), names
    assert (digit_shapes(text) == 0) == (not woken)  # none of these texts holds a year's four digits


def test_every_digit_shape_holds_a_digit_and_its_digits_in_a_row() -> None:
    """A shape is a necessary condition for a match holding digits: it holds a digit (the pre-filter
    lets a message through on a digit) and as many in a row as the rule says its matches hold."""
    for rule in all_rules():
        if rule.digits:
            assert re.search(r"\\d", rule.shape), rule.handler.__name__
        else:
            assert rule.shape == "", rule.handler.__name__


@given(words=st.lists(st.sampled_from(TRIGGER_VOCAB), max_size=10),
       glue=st.sampled_from([" ", "  ", "-", "/", ". ", "\n"]))
def test_the_trigger_index_never_hides_a_phrase(words: list[str], glue: str) -> None:
    """Every rule whose pattern matches somewhere in a message is among the rules the index wakes for it,
    so a message that wakes none matches no rule at all."""
    low = glue.join(words).lower()
    woken = {id(r) for r in candidate_rules(low)}
    matching = [r for r in all_rules() if r.pattern.search(low)]
    assert all(id(r) in woken for r in matching), [r.handler.__name__ for r in matching if id(r) not in woken]



#: Phrases that wake the rules with ``also`` words or ``needs`` patterns, and their near misses.
GATED_PHRASES = (
    "from 3 to 5 June", "June 3-5", "3 - 5 of next month", "between the 4th and 22nd of Sept",
    "Sept 3 to 12 2024", "from 4 to January 22, 1995", "from the 02 to April 07", "18 and 19 June",
    "the 3rd or 4th of May",
    "2014-2018", "from 2014 to 2018", "between 2014 and 2018", "a 2010 trip", "the 2019 season",
    "my 2015 Honda",
    "2025-06-14", "2016 10 16", "2025/06/14 09:30", "20161016", "3/2015", "2016/11", "2016-11", "11 - 2016",
    "2016.11", "2016 - 11", "2018-may-03", "3-may-2019", "may/3", "Dec/2018-May/2019", "3rd-May",
    "Friday the 21st", "Monday 21", "thursday, 3rd", "on the 5th", "the 21st", "for the 27",
    "on the first of next month", "mid-June", "early March 2024", "the end of January", "beginning of May",
    "the week after next", "the year before last", "for the day", "done for the week.", "next week Tuesday",
    "tuesday of next week", "the 20th of next month", "the 15th day of this month", "in 2 weeks",
    "in a couple of days", "in about three months", "two Sundays from now", "three Fridays ago", "3 days ago",
    "two weeks back", "a year earlier", "5 years before now", "2 days later", "a week from now",
    "3 months hence", "two days in the future", "Christmas 2024", "Easter weekend", "the 4th of July",
    "new year's eve", "thanksgiving break", "mother's day", "in", "for", "of", "after", "before", "week",
    "early", "mid", "june", "3", "5", "to", "and", "-", "the", "2019", "10 16", "ago", "from", "later",
)


@given(words=st.lists(st.sampled_from(GATED_PHRASES + tuple(TRIGGER_VOCAB)), max_size=8),
       glue=st.sampled_from([" ", "  ", "-", "/", ", ", ". ", "\n", "~"]))
def test_a_rules_also_words_and_needs_hold_for_every_match(words: list[str], glue: str) -> None:
    """``also`` and ``needs`` are necessary conditions: every match of a rule holds one of its
    ``also`` words whole, and its text holds its ``needs``; so the index never hides a phrase."""
    low = glue.join(words).lower()
    tokens = [(t.start(), t.end(), t.group()) for t in re.finditer(r"[a-z]+", low)]
    for rule in all_rules():
        for m in rule.pattern.finditer(low):
            if rule.also:
                inside = {w for a, b, w in tokens if m.start() <= a and b <= m.end()}
                assert inside & rule.also, (rule.handler.__name__, m.group())
            if rule.needs:
                assert re.search(rule.needs, low), (rule.handler.__name__, m.group())
    woken = {id(r) for r in candidate_rules(low)}
    assert all(id(r) in woken for r in all_rules() if r.pattern.search(low)), low


@pytest.mark.parametrize("text", [p for p in GATED_PHRASES if len(p) > 6])
def test_a_gated_phrase_wakes_every_rule_that_reads_it(text: str) -> None:
    """Each phrase above: the rules whose pattern matches it are all among those woken for it."""
    low = text.lower()
    woken = {id(r) for r in candidate_rules(low)}
    matching = [r for r in all_rules() if r.pattern.search(low)]
    assert matching, text  # a phrase some rule reads
    assert all(id(r) in woken for r in matching), [r.handler.__name__ for r in matching if id(r) not in woken]


def test_every_holiday_name_holds_a_word_that_wakes_the_holiday_rule() -> None:
    """The holiday rule is woken by its words only, not by digits: "4th of July" holds "th" and "july"."""
    from localmem.time.resolver import lexicon as lx

    holiday_rule = next(r for r in all_rules() if r.handler.__name__ == "_holiday")
    assert not holiday_rule.digits
    assert all(set(re.findall(r"[a-z]+", name)) & holiday_rule.when for name in lx.HOLIDAYS)
    assert found("Happy 4th of July 2026!")

@pytest.mark.parametrize(("pattern", "starts", "not_starts"), [
    (r"(?:the\s+)?may", "tm", "ahe "),
    (r"(?<!x)(?:on\s+)?(?P<d>\d{1,2})(?:st|nd)?", "o07\u0663", "n s"),  # \d: any decimal digit
    (r"(?:a|an)?[b-d]", "abd", "ex "),
    (r"'(?P<d>\d)0s", "'", "0"),
])
def test_first_chars_is_every_character_a_match_can_begin_with(pattern: str, starts: str,
                                                               not_starts: str) -> None:
    cls = first_chars(pattern)
    assert cls is not None
    assert all(re.fullmatch(cls, c) for c in starts), cls
    assert not any(re.fullmatch(cls, c) for c in not_starts), cls


@pytest.mark.parametrize("pattern", [r"x?", r"(?:a|)", r".x", r"[^a]b", r"(?i:may)", r"\s*x", r"(a)?\1"])
def test_first_chars_answers_none_when_it_cannot_be_sure(pattern: str) -> None:
    """A pattern that can match nothing, or opens with a set it cannot list, is scanned ungated."""
    assert first_chars(pattern) is None


@given(words=st.lists(st.sampled_from(TRIGGER_VOCAB), max_size=10),
       glue=st.sampled_from([" ", "  ", "-", "/", ". ", "\n", "(", "~"]))
def test_a_rules_look_ahead_never_hides_a_match(words: list[str], glue: str) -> None:
    """Each rule finds the same matches, spans and groups with its first-character look-ahead as without."""
    low = glue.join(words).lower()
    for rule in all_rules():
        assert rule.gate, rule.handler.__name__  # every rule today opens with characters it can list
        bare = re.compile(rule.pattern.pattern.replace(rule.gate, "", 1))
        got = [(m.span(), m.groups()) for m in rule.pattern.finditer(low)]
        assert got == [(m.span(), m.groups()) for m in bare.finditer(low)], rule.handler.__name__


# -- round two: forms a journaling app meets every day -----------------------------------------------------
# (id, text, sent, zone, phrase, start, end, precision, kind, the text rewritten)

TUE = "2026-12-01T10:00:00+01:00"  # Tuesday 1 December 2026, Berlin
FORMS = rows(
    # "since X" names a past start whatever the verb's tense; "until X" in a present clause an end ahead
    ("since January, present verb", "Since January I do yoga", TUE, BERLIN, "Since January",
     "2026-01-01", None, "month", "since", "Since 2026-01 I do yoga"),
    ("since March, present verb", "I live in Berlin since March", TUE, BERLIN, "since March",
     "2026-03-01", None, "month", "since", "I live in Berlin since 2026-03"),
    ("since April 1st, Sydney", "I eat fish again since April 1st", "2026-12-01T10:00:00+11:00",
     "Australia/Sydney", "since April 1st", "2026-04-01", None, "day", "since",
     "I eat fish again since 2026-04-01"),
    ("since Christmas, Los Angeles", "My back hurts since Christmas", "2026-12-01T10:00:00-08:00",
     "America/Los_Angeles", "since Christmas", "2025-12-25", None, "day", "since",
     "My back hurts since 2025-12-25"),
    ("until Oct 5, present", "I'm off until Oct 5", TUE, BERLIN, "until Oct 5",
     None, "2027-10-05", "day", "until", "I'm off until 2027-10-05"),
    ("until Oct 5, past", "I was off until Oct 5", TUE, BERLIN, "until Oct 5",
     None, "2026-10-05", "day", "until", "I was off until 2026-10-05"),
    ("through Oct 5, present", "The offer runs through Oct 5", TUE, BERLIN, "through Oct 5",
     None, "2027-10-06", "day", "until", "The offer runs through 2027-10-05"),
    # a bare day of the month, by tense
    ("on the 15th, past", "I met my teammates on the 15th after my trip", "2023-08-17T14:00:00+00:00", "UTC",
     "on the 15th", "2023-08-15", "2023-08-16", "day", "point",
     "I met my teammates on 2023-08-15 after my trip"),
    ("on the 20th at 5pm, future", "I'll see her on the 20th at 5pm", "2023-08-17T14:00:00+02:00", BERLIN,
     "on the 20th at 5pm", "2023-08-20T17:00", "2023-08-20T18:00", "hour", "point",
     "I'll see her at 2023-08-20 17:00"),
    # weekends counted one by one
    ("two weekends ago, Monday", "We went camping two weekends ago", "2023-07-17T14:31:00+00:00", "UTC",
     "two weekends ago", "2023-07-08", "2023-07-10", "weekend", "point",
     "We went camping on the weekend of 2023-07-08 to 2023-07-09"),
    ("two weekends ago, Sunday", "We went camping two weekends ago", "2023-07-16T14:31:00+02:00", BERLIN,
     "two weekends ago", "2023-07-01", "2023-07-03", "weekend", "point",
     "We went camping on the weekend of 2023-07-01 to 2023-07-02"),
    ("in two weekends, Monday", "I'm hosting a party in two weekends", "2023-07-17T14:31:00+00:00", "UTC",
     "in two weekends", "2023-07-29", "2023-07-31", "weekend", "point",
     "I'm hosting a party on the weekend of 2023-07-29 to 2023-07-30"),
    # relative to a named day
    ("the weekend before April 10", "We hiked the weekend before April 10", WED, BERLIN,
     "the weekend before April 10", "2025-04-05", "2025-04-07", "weekend", "point",
     "We hiked on the weekend of 2025-04-05 to 2025-04-06"),
    ("the Sunday before 25 May", "I'll run the Sunday before 25 May", "2026-03-01T10:00:00+01:00", BERLIN,
     "the Sunday before 25 May", "2026-05-24", "2026-05-25", "day", "point", "I'll run on 2026-05-24"),
    ("the day after Christmas", "I rested the day after Christmas", WED, BERLIN,
     "the day after Christmas", "2024-12-26", "2024-12-27", "day", "point", "I rested on 2024-12-26"),
    ("a week after the race on June 3", "I rested a week after the race on June 3", WED, BERLIN,
     "a week after the race on June 3", "2025-06-10", "2025-06-11", "day", "point", "I rested on 2025-06-10"),
    # the present, at the day it was said (the weeks around it for "these days")
    ("now", "I'm in Berlin now", WED, BERLIN, "now", "2025-06-18", "2025-06-19", "day", "point",
     "I'm in Berlin now (2025-06-18)"),
    ("currently, Los Angeles late evening", "Currently I work at Google", "2025-06-18T23:30:00-07:00",
     "America/Los_Angeles", "Currently", "2025-06-18", "2025-06-19", "day", "point",
     "Currently (2025-06-18) I work at Google"),
    ("at the moment, Auckland morning", "At the moment I'm injured", "2025-06-18T20:00:00Z",
     "Pacific/Auckland",
     "At the moment", "2025-06-19", "2025-06-20", "day", "point", "At the moment (2025-06-19) I'm injured"),
    ("currently, after a preposition", "What are you working on currently?", WED, BERLIN, "currently",
     "2025-06-18", "2025-06-19", "day", "point", "What are you working on currently (2025-06-18)?"),
    ("up to now", "What are you up to now?", WED, BERLIN, "now", "2025-06-18", "2025-06-19", "day", "point",
     "What are you up to now (2025-06-18)?"),
    ("until now", "I've been fine until now", WED, BERLIN, "until now", None, "2025-06-18T15:00", "day",
     "until", "I've been fine until 2025-06-18 15:00"),
    ("from now on", "From now on I eat fish", WED, BERLIN, "From now on", "2025-06-18", None, "day", "since",
     "Since 2025-06-18 I eat fish"),
    ("between Jan 22 and now", "I have run 400 km between Jan 22 and now", WED, BERLIN,
     "between Jan 22 and now", "2025-01-22", "2025-06-18T15:00", "day", "range",
     "I have run 400 km from 2025-01-22 to 2025-06-18"),
    # quarters and halves
    ("Q3, past tense before it began", "Q3 was rough", WED, BERLIN, "Q3", "2024-07-01", "2024-10-01", "month",
     "point", "Between 2024-07 and 2024-09 was rough"),
    ("Q1, future tense after it ended", "Q1 will be busy", WED, BERLIN, "Q1", "2026-01-01", "2026-04-01",
     "month", "point", "Between 2026-01 and 2026-03 will be busy"),
    ("last quarter", "Sales fell last quarter", WED, BERLIN, "last quarter", "2025-01-01", "2025-04-01",
     "month", "point", "Sales fell between 2025-01 and 2025-03"),
    ("in the third quarter", "Sales will grow in the third quarter", WED, BERLIN, "in the third quarter",
     "2025-07-01", "2025-10-01", "month", "point", "Sales will grow between 2025-07 and 2025-09"),
    ("the first half of 2024", "I ran 600 km in the first half of 2024", WED, BERLIN,
     "in the first half of 2024", "2024-01-01", "2024-07-01", "month", "point",
     "I ran 600 km between 2024-01 and 2024-06"),
    # units counted inside a year or a month; weekdays inside a named week
    ("the first 2 weeks of 2021", "Rooms are booked for the first 2 weeks of 2021", WED, BERLIN,
     "the first 2 weeks of 2021", "2021-01-04", "2021-01-18", "day", "range",
     "Rooms are booked for 2021-01-04 to 2021-01-17"),
    ("the last four months of 2024", "Sales grew in the last four months of 2024", WED, BERLIN,
     "the last four months of 2024", "2024-09-01", "2025-01-01", "month", "range",
     "Sales grew in 2024-09 to 2024-12"),
    ("the third month of next year", "We move the third month of next year", WED, BERLIN,
     "the third month of next year", "2026-03-01", "2026-04-01", "month", "point", "We move in 2026-03"),
    ("the last day of the month", "Rent is due on the last day of the month", WED, BERLIN,
     "on the last day of the month", "2025-06-30", "2025-07-01", "day", "point", "Rent is due on 2025-06-30"),
    ("next week between Wednesday and Friday", "Let's meet next week between Wednesday and Friday", WED,
     BERLIN, "next week between Wednesday and Friday", "2025-06-25", "2025-06-28", "day", "range",
     "Let's meet from 2025-06-25 to 2025-06-27"),
    ("last week - Monday", "What happened last week - Monday?", WED, BERLIN, "last week - Monday",
     "2025-06-09", "2025-06-10", "day", "point", "What happened on 2025-06-09?"),
    # ranges whose ends were read apart: the second follows the first, and one holding today is meant
    ("from May to September, said in September", "What will happen from May to September",
     "2018-09-07T12:00:00+02:00", BERLIN, "from May to September", "2018-05-01", "2018-10-01", "month",
     "range", "What will happen from 2018-05 to 2018-09"),
    ("May to March, said in September", "What will happen May to March", "2018-09-07T12:00:00+02:00",
     BERLIN, "May to March", "2018-05-01", "2019-04-01", "month", "range",
     "What will happen from 2018-05 to 2019-03"),
    ("from 4 to January 22, 1995", "I was away from 4 to January 22, 1995", WED, BERLIN,
     "from 4 to January 22, 1995", "1995-01-04", "1995-01-23", "day", "range",
     "I was away from 1995-01-04 to 1995-01-22"),
    ("from 2007 to the end of 2008", "I lived there from 2007 to the end of 2008", WED, BERLIN,
     "from 2007 to the end of 2008", "2007-01-01", "2009-01-01", "season", "range",
     "I lived there from 2007-01 to 2008-12"),
    ("Sep-23-2020", "I moved on Sep-23-2020", WED, BERLIN, "on Sep-23-2020", "2020-09-23", "2020-09-24",
     "day", "point", "I moved on 2020-09-23"),
    ("the weekend of Halloween", "I want to fly out the weekend of Halloween", "2021-11-09T12:00:00+01:00",
     BERLIN, "the weekend of Halloween", "2022-10-29", "2022-11-01", "weekend", "point",
     "I want to fly out on the weekend of 2022-10-29 to 2022-10-31"),  # on a Monday: the long weekend
    # a weekday with a count: that weekday in the week the count lands in; weekdays counted one by one
    ("Monday two weeks from now", "I'll go back Monday two weeks from now", WED, BERLIN,
     "Monday two weeks from now", "2025-06-30", "2025-07-01", "day", "point", "I'll go back on 2025-06-30"),
    ("3 weeks after Christmas on Friday", "I'll go back 3 weeks after Christmas on Friday",
     "2021-01-02T10:00:00+01:00", BERLIN, "3 weeks after Christmas on Friday", "2022-01-14", "2022-01-15",
     "day", "point", "I'll go back on 2022-01-14"),
    ("two Sundays from now", "Are you free two Sundays from now?", WED, BERLIN, "two Sundays from now",
     "2025-06-29", "2025-06-30", "day", "point", "Are you free on 2025-06-29?"),
    ("three Fridays ago", "Three Fridays ago I fell", WED, BERLIN, "Three Fridays ago", "2025-05-30",
     "2025-05-31", "day", "point", "On 2025-05-30 I fell"),
    # decades in words; the unit under way
    ("the noughties", "I grew up in the noughties", WED, BERLIN, "in the noughties", "2000-01-01",
     "2010-01-01", "decade", "point", "I grew up in the 2000s"),
    ("the nineteen seventies", "My dad ran in the nineteen seventies", WED, BERLIN,
     "in the nineteen seventies", "1970-01-01", "1980-01-01", "decade", "point", "My dad ran in the 1970s"),
    ("done for the day", "I'm done for the day.", WED, BERLIN, "for the day", "2025-06-18", "2025-06-19",
     "day", "point", "I'm done on 2025-06-18."),
    ("on fifteen August nineteen ninety three", "The plant opened on fifteen August nineteen ninety three",
     WED, BERLIN, "on fifteen August nineteen ninety three", "1993-08-15", "1993-08-16", "day", "point",
     "The plant opened on 1993-08-15"),
    # "later" is the second half of the unit, or the rest of it once there; "earlier" up to today
    ("later this week, Monday", "I'll finish later this week", "2025-06-16T10:00:00+02:00", BERLIN,
     "later this week", "2025-06-19", "2025-06-23", "week", "point",
     "I'll finish between 2025-06-19 and 2025-06-22"),
    ("later this week, Friday", "I'll finish later this week", "2025-06-20T10:00:00+02:00", BERLIN,
     "later this week", "2025-06-20", "2025-06-23", "week", "point",
     "I'll finish between 2025-06-20 and 2025-06-22"),
    ("later this year", "I'll move later this year", WED, BERLIN, "later this year", "2025-07-01",
     "2026-01-01", "year", "point", "I'll move between 2025-07-01 and 2025-12-31"),
    # between two months; two-digit years after a month; a weekday before a count of units
    ("between August and October", "What will happen between August and October", "2018-09-07T12:00:00+02:00",
     BERLIN, "between August and October", "2018-08-01", "2018-11-01", "month", "range",
     "What will happen from 2018-08 to 2018-10"),
    ("April of 87", "I was born in April of 87", WED, BERLIN, "in April of 87", "1987-04-01", "1987-05-01",
     "month", "point", "I was born in 1987-04"),
    ("Jan '19", "I moved in Jan '19", WED, BERLIN, "in Jan '19", "2019-01-01", "2019-02-01", "month", "point",
     "I moved in 2019-01"),
    ("May of 12 people", "The class in May of 12 people was full", WED, BERLIN, "in May", "2025-05-01",
     "2025-06-01", "month", "point", "The class in 2025-05 of 12 people was full"),
    ("Sunday 3 weeks after January 15th", "I'll go back Sunday 3 weeks after January 15th",
     "2021-01-02T10:00:00+01:00", BERLIN, "Sunday 3 weeks after January 15th", "2021-02-07", "2021-02-08",
     "day", "point", "I'll go back on 2021-02-07"),
    # lists sharing a month; more holidays
    ("October, 1st", "The lease ends October, 1st", WED, BERLIN, "October, 1st", "2025-10-01", "2025-10-02",
     "day", "point", "The lease ends on 2025-10-01"),
    ("Juneteenth, the day before", "We marched on Juneteenth", WED, "America/New_York", "on Juneteenth",
     "2024-06-19", "2024-06-20", "day", "point", "We marched on 2024-06-19"),
    # a year used as an adjective keeps its words
    ("a 2010 trip", "I loved our 2010 trip to Rome", WED, BERLIN, "2010", "2010-01-01", "2011-01-01", "year",
     "point", "I loved our 2010 trip to Rome"),
    ("the 2019 season", "The 2019 season was great", WED, BERLIN, "2019", "2019-01-01", "2020-01-01", "year",
     "point", "The 2019 season was great"),
    # a day and a time of it
    ("tonight at 8", "Dinner tonight at 8", WED, BERLIN, "tonight at 8", "2025-06-18T20:00",
     "2025-06-18T21:00", "hour", "point", "Dinner at 2025-06-18 20:00"),
    ("tonight at 8, Auckland", "Dinner tonight at 8", "2025-06-18T20:00:00Z", "Pacific/Auckland",
     "tonight at 8", "2025-06-19T20:00", "2025-06-19T21:00", "hour", "point", "Dinner at 2025-06-19 20:00"),
    ("tomorrow at 6", "I'll call you tomorrow at 6", WED, BERLIN, "tomorrow at 6", "2025-06-19T18:00",
     "2025-06-19T19:00", "hour", "point", "I'll call you at 2025-06-19 18:00"),
    ("next Friday morning", "I have physio next Friday morning", WED, BERLIN, "next Friday morning",
     "2025-06-27T05:00", "2025-06-27T12:00", "part_of_day", "point",
     "I have physio on the morning of 2025-06-27"),
    ("next Friday morning at 9:30", "I have physio next Friday morning at 9:30", WED, BERLIN,
     "next Friday morning at 9:30", "2025-06-27T09:30", "2025-06-27T09:31", "minute", "point",
     "I have physio at 2025-06-27 09:30"),
    # holidays and their breaks
    ("over the holidays, Berlin", "I relaxed over the holidays", "2026-01-10T10:00:00+01:00", BERLIN,
     "over the holidays", "2025-12-24", "2026-01-02", "week", "point",
     "I relaxed between 2025-12-24 and 2026-01-01"),
    ("Christmas break, Sydney", "Christmas break was fun", "2026-01-10T10:00:00+11:00", "Australia/Sydney",
     "Christmas break", "2025-12-24", "2026-01-02", "week", "point",
     "Between 2025-12-24 and 2026-01-01 was fun"),
    ("Easter weekend, Berlin", "We hiked on Easter weekend", WED, BERLIN, "on Easter weekend",
     "2025-04-18", "2025-04-22", "weekend", "point", "We hiked on the weekend of 2025-04-18 to 2025-04-21"),
    ("Easter weekend, New York", "We hiked on Easter weekend", "2025-06-18T09:00:00-04:00",
     "America/New_York",
     "on Easter weekend", "2025-04-19", "2025-04-21", "weekend", "point",
     "We hiked on the weekend of 2025-04-19 to 2025-04-20"),
    ("Thanksgiving, Toronto", "We ate turkey on Thanksgiving", "2025-12-01T09:00:00-05:00", "America/Toronto",
     "on Thanksgiving", "2025-10-13", "2025-10-14", "day", "point", "We ate turkey on 2025-10-13"),
    ("Thanksgiving, New York", "We ate turkey on Thanksgiving", "2025-12-01T09:00:00-05:00",
     "America/New_York",
     "on Thanksgiving", "2025-11-27", "2025-11-28", "day", "point", "We ate turkey on 2025-11-27"),
    ("Mother's Day, London", "I called mum on Mother's Day", WED, "Europe/London", "on Mother's Day",
     "2025-03-30", "2025-03-31", "day", "point", "I called mum on 2025-03-30"),
    # a future context looks ahead; reported speech takes its own clause's tense
    ("see you on March 30", "See you on March 30", "2026-04-15T10:00:00+02:00", BERLIN, "on March 30",
     "2027-03-30", "2027-03-31", "day", "point", "See you on 2027-03-30"),
    ("she said she'd come on Friday", "She said she'd come on Friday", WED, BERLIN, "on Friday",
     "2025-06-20", "2025-06-21", "day", "point", "She said she'd come on 2025-06-20"),
    ("she'd already left on Friday", "She'd already left on Friday", WED, BERLIN, "on Friday",
     "2025-06-13", "2025-06-14", "day", "point", "She'd already left on 2025-06-13"),
    # "last Friday" is last week's on a weekday; said on a weekend, the week is over: the one just gone
    ("Last Friday, said on Sunday", "Last Friday at dance class I felt it", "2023-07-23T18:46:00+00:00",
     "UTC", "Last Friday", "2023-07-21", "2023-07-22", "day", "point",
     "On 2023-07-21 at dance class I felt it"),
    ("last Friday, said on Saturday", "I passed the interviews last Friday", "2023-07-15T10:00:00+02:00",
     BERLIN, "last Friday", "2023-07-14", "2023-07-15", "day", "point",
     "I passed the interviews on 2023-07-14"),
    ("last Friday, said on Wednesday", "I passed the interviews last Friday", "2023-07-19T10:00:00+02:00",
     BERLIN, "last Friday", "2023-07-14", "2023-07-15", "day", "point",
     "I passed the interviews on 2023-07-14"),
    ("last Monday, said on Wednesday", "I started last Monday", "2023-07-19T10:00:00+02:00",
     BERLIN, "last Monday", "2023-07-10", "2023-07-11", "day", "point", "I started on 2023-07-10"),
    ("this past Friday, said on Sunday", "This past Friday at dance class I felt it",
     "2023-07-23T18:46:00+00:00", "UTC", "This past Friday", "2023-07-21", "2023-07-22", "day", "point",
     "On 2023-07-21 at dance class I felt it"),
    # anchored relatives are one mention: "the last weekend before X" is the weekend before X
    ("last weekend before April 10, 2023", "We went hiking last weekend before April 10, 2023.",
     "2023-05-08T12:00:00+02:00", BERLIN, "last weekend before April 10, 2023", "2023-04-08", "2023-04-10",
     "weekend", "point", "We went hiking on the weekend of 2023-04-08 to 2023-04-09."),
    ("the last weekend before 10 April, Sydney", "What did she do the last weekend before 10 April?",
     "2023-05-08T12:00:00+10:00", "Australia/Sydney", "the last weekend before 10 April", "2023-04-08",
     "2023-04-10", "weekend", "point", "What did she do on the weekend of 2023-04-08 to 2023-04-09?"),
    ("the first Sunday after Easter 2023", "We met the first Sunday after Easter 2023",
     "2023-06-01T09:00:00-07:00", "America/Los_Angeles", "the first Sunday after Easter 2023", "2023-04-16",
     "2023-04-17", "day", "point", "We met on 2023-04-16"),
    # a relative weekday before a date on another weekday is read from that date
    ("last Friday on 23 January 2022", "I met her last Friday on 23 January 2022",
     "2023-05-08T12:00:00+00:00", "UTC", "last Friday on 23 January 2022", "2022-01-21", "2022-01-22",
     "day", "point", "I met her on 2022-01-21"),
    ("last Friday on 21 January 2022, Kolkata", "I met her last Friday on 21 January 2022",
     "2023-05-08T12:00:00+05:30", "Asia/Kolkata", "last Friday on 21 January 2022", "2022-01-21",
     "2022-01-22", "day", "point", "I met her on 2022-01-21"),
    # "weekend" as a noun keeps its word when rewritten
    ("a great weekend", "We had a great weekend", "2023-05-08T12:00:00+02:00", BERLIN, "weekend",
     "2023-05-06", "2023-05-08", "weekend", "point", "We had a great weekend (2023-05-06 to 2023-05-07)"),
    ("spent the weekend hiking", "Spent the weekend hiking", "2023-05-08T12:00:00+00:00", "UTC",
     "the weekend", "2023-05-06", "2023-05-08", "weekend", "point",
     "Spent the weekend (2023-05-06 to 2023-05-07) hiking"),
    # business days skip Saturdays and Sundays; "the next 4" end after the fourth
    ("the next 4 business days, Monday", "Block the next 4 business days for the move",
     "2018-08-20T10:00:00+02:00", BERLIN, "the next 4 business days", "2018-08-21", "2018-08-25", "day",
     "range", "Block from 2018-08-21 to 2018-08-24 for the move"),
    ("the previous 3 working days, New York", "I was sick the previous 3 working days",
     "2018-08-21T10:00:00-04:00", "America/New_York", "the previous 3 working days", "2018-08-16",
     "2018-08-21", "day", "range", "I was sick from 2018-08-16 to 2018-08-20"),
    ("in four business days, said on a Friday", "The parcel arrives in four business days",
     "2018-08-24T16:00:00+10:00", "Australia/Sydney", "in four business days", "2018-08-30", "2018-08-31",
     "day", "point", "The parcel arrives on 2018-08-30"),
    # "for N days from today" is the span; "N weeks in the future" the day it lands on
    ("for 3 days from today", "Set me out of office for 3 days from today", "2018-05-23T10:00:00+05:30",
     "Asia/Kolkata", "for 3 days from today", "2018-05-23", "2018-05-26", "day", "range",
     "Set me out of office from 2018-05-23 to 2018-05-25"),
    ("4 weeks in the future", "It will happen 4 weeks in the future", "2016-11-07T09:00:00+00:00", "UTC",
     "4 weeks in the future", "2016-12-05", "2016-12-06", "day", "point", "It will happen on 2016-12-05"),
    # two-digit years: "of 87" at a clause's end; in a future clause the next such year (20 years ahead)
    ("15 April of 87", "I was born on 15 April of 87", "2018-05-01T09:00:00+02:00", BERLIN,
     "on 15 April of 87", "1987-04-15", "1987-04-16", "day", "point", "I was born on 1987-04-15"),
    ("3-7-27 in a future clause", "I'll go back 3-7-27", "2016-11-07T09:00:00-08:00", "America/Los_Angeles",
     "3-7-27", "2027-03-07", "2027-03-08", "day", "point", "I'll go back on 2027-03-07"),
    # numbers apart: "2016 10 16" (a valid date), "11 - 2016"
    ("2016 10 16", "On 2016 10 16, the conference started.", "2017-01-01T09:00:00+00:00", "UTC",
     "On 2016 10 16", "2016-10-16", "2016-10-17", "day", "point", "On 2016-10-16, the conference started."),
    ("11 - 2016", "I'll be out 11 - 2016", "2016-10-07T09:00:00+01:00", "Europe/London", "11 - 2016",
     "2016-11-01", "2016-12-01", "month", "point", "I'll be out in 2016-11"),
    # today as a noun keeps its word; "the past day" is yesterday, as "the past week" the seven days before
    ("my day", "What does my day look like?", "2016-11-07T07:00:00+05:30", "Asia/Kolkata", "my day",
     "2016-11-07", "2016-11-08", "day", "point", "What does my day (2016-11-07) look like?"),
    ("over the past day", "It rained over the past day", "2016-11-07T07:00:00+00:00", "UTC",
     "over the past day", "2016-11-06", "2016-11-07", "day", "point", "It rained on 2016-11-06"),
    # more dates: "back to 1865", "in the April", "on 4-22" (a day after "on" at a clause's end), "on 29th"
    ("back to 1865", "It dates back to 1865.", "2020-06-01T07:00:00+00:00", "UTC", "1865", "1865-01-01",
     "1866-01-01", "year", "point", "It dates back to 1865."),
    ("in the April", "I went back to China in the April.", "2018-05-24T07:00:00+08:00", "Asia/Shanghai",
     "in the April", "2018-04-01", "2018-05-01", "month", "point", "I went back to China in 2018-04."),
    ("on 4-22", "I'll go back on 4-22", "2016-11-07T07:00:00-05:00", "America/New_York", "on 4-22",
     "2017-04-22", "2017-04-23", "day", "point", "I'll go back on 2017-04-22"),
    ("on 29th", "see you on 29th", "2020-05-20T07:00:00+01:00", "Europe/London", "on 29th", "2020-05-29",
     "2020-05-30", "day", "point", "see you on 2020-05-29"),
    # a week of a month under way is this year's, whatever the tense; one wholly past moves on
    ("the second week of November, said during it", "I'll travel the second week of November",
     "2023-11-08T09:00:00+01:00", BERLIN, "the second week of November", "2023-11-06", "2023-11-13", "week",
     "point", "I'll travel in the week of 2023-11-06 to 2023-11-12"),
    ("the second week of November, said after it", "I'll travel the second week of November",
     "2023-11-13T09:00:00-05:00", "America/New_York", "the second week of November", "2024-11-11",
     "2024-11-18", "week", "point", "I'll travel in the week of 2024-11-11 to 2024-11-17"),
)


READ_BACK = rows(
    ("a bare day takes the month of the date before it",
     "Lunch with Jane on May 25th, then dinner on the 29th", "2020-06-16T09:00:00+02:00", BERLIN,
     [("on May 25th", "2020-05-25", "2020-05-26", False), ("on the 29th", "2020-05-29", "2020-05-30", False)],
     "Lunch with Jane on 2020-05-25, then dinner on 2020-05-29"),
    ("a bare day after a weekday keeps its tense's month", "We met on Friday. I will race on the 29th.",
     TUE, BERLIN,
     [("on Friday", "2026-11-27", "2026-11-28", False), ("on the 29th", "2026-12-29", "2026-12-30", False)],
     "We met on 2026-11-27. I will race on 2026-12-29."),
    ("the day after a date", "We arrive on June 3 and leave the day after", "2020-05-01T09:00:00-07:00",
     "America/Los_Angeles",
     [("on June 3", "2020-06-03", "2020-06-04", False), ("the day after", "2020-06-04", "2020-06-05", False)],
     "We arrive on 2020-06-03 and leave on 2020-06-04"),
    ("the next day after a weekday", "I saw the concert on Friday and the next day I flew home",
     "2016-11-09T20:00:00+11:00", "Australia/Sydney",
     [("on Friday", "2016-11-04", "2016-11-05", False), ("the next day", "2016-11-05", "2016-11-06", False)],
     "I saw the concert on 2016-11-04 and on 2016-11-05 I flew home"),
    ("the day after, nothing before it: tomorrow, vague", "What's your plan for the day after?",
     "2018-11-08T10:00:00+01:00", BERLIN, [("the day after", "2018-11-09", "2018-11-10", True)],
     "What's your plan for 2018-11-09?"),
    ("the next day of an untold story", "Got home late and the next day I slept in",
     "2016-11-09T20:00:00+00:00", "UTC", [], "Got home late and the next day I slept in"),
)


@pytest.mark.parametrize(("text", "sent", "tz", "expected", "rewritten"), READ_BACK)
def test_phrases_read_from_the_day_named_before_them(text: str, sent: str, tz: str,
                                                      expected: list[tuple[str, str, str, bool]],
                                                      rewritten: str) -> None:
    """A bare day of the month, "the next day", "the day before" take the day named before them."""
    mentions = found(text, sent=sent, tz=tz)
    assert [(m.phrase, *interval(m), m.vague) for m in mentions] == expected
    assert rewrite(text, mentions) == rewritten


@pytest.mark.parametrize(
    ("text", "sent", "tz", "phrase", "start", "end", "precision", "kind", "rewritten"), FORMS
)
def test_forms_people_use(text: str, sent: str, tz: str, phrase: str, start: str | None, end: str | None,
                          precision: str, kind: str, rewritten: str) -> None:
    """Each form resolves to the sender's local interval, with its span and its rewriting right."""
    mentions = found(text, sent=sent, tz=tz)
    assert len(mentions) == 1, mentions
    m = mentions[0]
    assert text[m.span[0]:m.span[1]] == m.phrase == phrase
    assert (interval(m), m.precision, m.kind) == ((start, end), precision, kind)
    assert rewrite(text, mentions) == rewritten


NOT_TIMES_TOO = rows(
    ("now and then", "I treat myself to a donut now and then."),
    ("now that", "Now that you ask, I feel fine."),
    ("happy holidays", "Happy holidays to you all!"),
    ("a floor", "I live on the 3rd floor."),
    ("an ordinal time", "It worked on the 2nd try."),
    ("a measured year", "I'm on a 2000 calorie diet."),
    ("a model number", "I play the 2048 game a lot."),
    ("a part number", "The part number is 10-11-12."),
    ("a game's quarter", "We scored twice in the third quarter of the game."),
    ("a game's half", "In the second half we played better."),
    ("a count after May", "May twenty people join us?"),
    ("an hour that is a distance", "I ran at 5 km pace."),
    ("a cardinal before a month, no year", "It was one May day."),
    ("for the day we met", "I saved it for the day we met"),
    ("a holiday as an adjective", "Do you have any favorite Thanksgiving traditions?"),
    ("a weekend yoga class", "I joined a weekend yoga class."),
    ("weekend trips", "We love weekend trips."),
    ("a working day as a noun", "It was a long working day."),
    ("two digits after 'of' mid-clause", "I met April of 12 people in the club."),
    ("to this day", "To this day I remember her laugh."),
    ("a score after 'on'", "We won on 4-2 in the final."),
)


@pytest.mark.parametrize("text", NOT_TIMES_TOO)
def test_not_times_either(text: str) -> None:
    """Words near the new forms that are not times: "now and then", "the 3rd floor", "a 2000 calorie diet"."""
    nothing(text)


def test_a_list_of_days_shares_the_month_named_last() -> None:
    """"the 3rd or 4th of May": two days, both in May, each with its own span."""
    text = "I was in Rome on the 3rd or 4th of May"
    mentions = found(text)
    assert [(m.phrase, interval(m)) for m in mentions] == [
        ("on the 3rd", ("2025-05-03", "2025-05-04")),
        ("4th of May", ("2025-05-04", "2025-05-05")),
    ]
    assert rewrite(text, mentions) == "I was in Rome on 2025-05-03 or on 2025-05-04"


def test_a_hedged_count_of_years_is_that_year_flagged_vague() -> None:
    """"around 3 years ago" is the year three back, hedged: the unit already says how rough it is."""
    m = one("I first watched it around 3 years ago", sent="2022-01-21T19:31:00+00:00", tz="UTC")
    assert (interval(m), m.precision, m.vague) == (("2019-01-01", "2020-01-01"), "year", True)


def test_a_long_message_resolves_every_phrase() -> None:
    """A 100 KB message of repeated phrases yields each of them, in order, each resolved alike."""
    unit = "I ran yesterday and on 12 June at 3pm. "
    text = unit * (100_000 // len(unit))
    mentions = found(text)
    assert len(mentions) == 2 * (len(text) // len(unit))
    assert [m.span[0] for m in mentions[:4]] == [6, 20, len(unit) + 6, len(unit) + 20]
    assert {interval(m) for m in mentions[::2]} == {("2025-06-17", "2025-06-18")}
    assert {interval(m) for m in mentions[1::2]} == {("2025-06-12T15:00", "2025-06-12T16:00")}


def test_a_sentence_start_is_read_from_a_window_before_the_phrase() -> None:
    """Rewriting capitalises after a full stop within 40 characters; whitespace beyond that is not a start."""
    text = "Done." + " " * 30 + "yesterday I ran"
    assert rewrite(text, found(text)).endswith("On 2025-06-17 I ran")
    text = "ok" + " " * 60 + "yesterday I ran"
    assert rewrite(text, found(text)).endswith("on 2025-06-17 I ran")
@pytest.mark.parametrize(
    ("sent_at", "tz"),
    [(datetime(1, 1, 1, tzinfo=UTC), "Europe/Lisbon"),
     (datetime(9999, 12, 31, 23, tzinfo=UTC), "Asia/Tokyo")],
)
def test_a_message_sent_at_the_edge_of_the_calendar_has_no_phrases(sent_at: datetime, tz: str) -> None:
    """If the zone puts the send instant's local date outside years 1..9999, nothing resolves (no error)."""
    assert find_times("yesterday at 3pm, 0 or 12 June", sent_at=sent_at, tz=tz) == []


MARKER_VOCAB = ["had", "hadn't", "was", "wasn't", "xed", "ed", "b", "booked", "'", "ok", "é", "9", "_", "-",
                "going", "to", "go"]


@given(words=st.lists(st.sampled_from(MARKER_VOCAB), max_size=8), glue=st.sampled_from([" ", "", "'", "-"]))
def test_branches_regrouped_by_first_letter_match_the_plain_alternation(words: list[str], glue: str) -> None:
    """The tense markers' regrouping (one literal-first branch per letter) finds the same spans and
    words as ``\\b(?:...)\\b`` with the branches in their order, the catch-all last."""
    from localmem.time.resolver.context import at_word_start

    text = glue.join(words)
    branches = ["had", "hadn't", "was", r"going\s+to", "go"]
    plain = re.compile(r"\b(?:" + "|".join(branches) + r"|[a-z]{2,}ed)\b")
    regrouped = re.compile(at_word_start(branches, then=r"[a-z]+ed"))
    assert [m.span() for m in regrouped.finditer(text)] == [m.span() for m in plain.finditer(text)]
