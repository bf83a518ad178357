"""Time values in: the accepted forms, the zone of a date, and the local day boundary."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

import localmem
from localmem.testing import FrozenClock
from localmem.time.clock import (
    TimeInput,
    from_micros,
    instant_micros,
    parse_time,
    period_end,
    to_micros,
    zone,
)

BERLIN = ZoneInfo("Europe/Berlin")


@pytest.mark.parametrize(
    ("value", "expected", "precision"),
    [
        ("2025-06-16T12:00:00Z", datetime(2025, 6, 16, 12, tzinfo=UTC), "instant"),
        ("2025-06-16T14:00:00+02:00", datetime(2025, 6, 16, 12, tzinfo=UTC), "instant"),
        (1750075200, datetime(2025, 6, 16, 12, tzinfo=UTC), "instant"),
        (1750075200.5, datetime(2025, 6, 16, 12, 0, 0, 500000, tzinfo=UTC), "instant"),
        ("1750075200", datetime(2025, 6, 16, 12, tzinfo=UTC), "instant"),
        ("2025-06-16", datetime(2025, 6, 15, 22, tzinfo=UTC), "day"),
        (date(2025, 6, 16), datetime(2025, 6, 15, 22, tzinfo=UTC), "day"),
        ("2025-06", datetime(2025, 5, 31, 22, tzinfo=UTC), "month"),
        ("2025", datetime(2024, 12, 31, 23, tzinfo=UTC), "year"),
        (datetime(2025, 6, 16, 9, tzinfo=ZoneInfo("Asia/Singapore")),
         datetime(2025, 6, 16, 1, tzinfo=UTC), "instant"),
    ],
)
def test_accepted_forms(value: TimeInput, expected: datetime, precision: str) -> None:
    """Every accepted time form becomes the right UTC instant; dates are local, with precision."""
    m = parse_time(value, name="t", tz=BERLIN)
    assert (m.at, m.precision) == (expected, precision)
    assert m.at.tzinfo is UTC


@given(st.integers(min_value=-(2**55), max_value=2**55))
def test_micros_round_trip(us: int) -> None:
    """Storage microseconds and aware datetimes convert both ways without loss."""
    assert to_micros(from_micros(us)) == us


def test_zone_names_are_checked() -> None:
    """A real IANA name is a zone; anything else is UnknownZoneError."""
    assert zone("Asia/Singapore").key == "Asia/Singapore"
    # "A" * 300 is too long for a file name (zoneinfo raised OSError); "Europe" is a directory.
    for bad in ("", "Mars/Olympus", "../etc/passwd", 5, "A" * 300, "Europe", "UTC\x00", "caf\udcff"):
        with pytest.raises(localmem.UnknownZoneError):
            zone(bad)  # type: ignore[arg-type]  # deliberately wrong: 5 is no zone name


def test_period_end_of_a_day_a_month_and_a_year() -> None:
    """A date's period ends at the next local midnight, month start or year start."""
    day = parse_time("2025-12-31", name="t", tz=BERLIN)
    month = parse_time("2025-12", name="t", tz=BERLIN)
    year = parse_time("2025", name="t", tz=BERLIN)
    new_year = datetime(2025, 12, 31, 23, tzinfo=UTC)
    assert period_end(day, BERLIN) == period_end(month, BERLIN) == period_end(year, BERLIN) == new_year


# Expiry at the local day boundary: (zone, expiry date, last visible local time,
# first hidden local time). Berlin and New York cross DST the night before
# their boundary; Santiago's DST gap swallows the midnight itself.
BOUNDARIES = [
    ("Europe/Berlin", "2025-11-15", "2025-11-15T23:30:00+01:00", "2025-11-16T00:00:00+01:00"),
    ("Europe/Berlin", "2025-03-30", "2025-03-30T23:59:59+02:00", "2025-03-31T00:00:00+02:00"),
    ("Europe/Berlin", "2025-10-25", "2025-10-25T23:59:59+02:00", "2025-10-26T00:00:00+02:00"),
    ("America/New_York", "2026-03-07", "2026-03-07T23:59:59-05:00", "2026-03-08T00:00:00-05:00"),
    ("America/New_York", "2026-03-08", "2026-03-08T23:59:59-04:00", "2026-03-09T00:00:00-04:00"),
    ("Asia/Singapore", "2025-08-09", "2025-08-09T23:59:59+08:00", "2025-08-10T00:00:00+08:00"),
    ("Pacific/Auckland", "2025-09-27", "2025-09-27T23:59:59+12:00", "2025-09-28T00:00:00+12:00"),
    ("America/Santiago", "2025-09-06", "2025-09-06T23:59:59-04:00", "2025-09-07T01:00:00-03:00"),
    ("UTC", "2026-01-31", "2026-01-31T23:59:59+00:00", "2026-02-01T00:00:00+00:00"),
]


@pytest.mark.parametrize(("tz", "day", "visible", "hidden"), BOUNDARIES)
def test_expiry_follows_the_local_day(tz: str, day: str, visible: str, hidden: str) -> None:
    """A memory expiring on a date is visible through that local day and hidden after it."""
    clock = FrozenClock("2025-01-01T00:00:00Z")
    store = localmem.open(":memory:", clock=clock)
    m = store.add("goal", user_id="u", tz=tz, valid_from="2025-01-01T00:00:00Z", expires=day)
    assert [r.memory_id for r in store.read("u", valid_at=visible)] == [m.memory_id]
    assert store.read("u", valid_at=hidden) == []
    hidden_at = datetime.fromisoformat(hidden)
    assert store.read("u", valid_at=hidden_at - timedelta(microseconds=1)) != []
    assert m.expires_at == hidden_at
    store.close()


def test_expiry_at_an_instant_is_exact(store: localmem.Store) -> None:
    """An instant as expiry hides the memory from exactly that instant (half-open)."""
    m = store.add("offer", user_id="u", valid_from="2026-01-01T00:00:00Z",
                  expires="2026-03-02T12:00:00Z")
    before = store.get(m.memory_id, valid_at="2026-03-02T11:59:59Z")
    at = store.get(m.memory_id, valid_at="2026-03-02T12:00:00Z")
    assert before is not None and before.expired is False
    assert at is not None and at.expired is True


def test_dates_are_read_in_the_users_last_zone(store: localmem.Store) -> None:
    """Without tz=, a user's dates use the zone last given for that user, else UTC."""
    a = store.add("a", user_id="u", valid_from="2025-08-10")
    assert a.tz == "UTC" and a.valid_from == datetime(2025, 8, 10, tzinfo=UTC)
    store.add("b", user_id="u", tz="Asia/Singapore")
    c = store.add("c", user_id="u", valid_from="2025-08-10")
    assert c.tz == "Asia/Singapore"
    assert c.valid_from == datetime(2025, 8, 9, 16, tzinfo=UTC)


def test_singapore_morning_is_the_previous_utc_day(store: localmem.Store) -> None:
    """B2: "this morning" at 05:00 Singapore is 2025-08-10 local though the UTC date is the 9th."""
    sent = "2025-08-10T05:00:00+08:00"
    m = store.add("I did yoga this morning", user_id="sam", tz="Asia/Singapore",
                  observed_at=sent, valid_from="2025-08-10", valid_to="2025-08-11")
    assert m.valid_from.astimezone(ZoneInfo("Asia/Singapore")).date() == date(2025, 8, 10)
    assert m.observed_at.date() == date(2025, 8, 9)
    assert str(m.valid) == "2025-08-10"


TOKYO = ZoneInfo("Asia/Tokyo")


@pytest.mark.parametrize(
    ("value", "tz"),
    [
        ("0001-01-01", TOKYO),  # starts in year 0 in UTC
        ("0001", TOKYO),
        (date(1, 1, 1), TOKYO),
        ("0001-01-01T00:00:00+09:00", UTC),
        (datetime(1, 1, 1, tzinfo=TOKYO), UTC),
        (datetime(9999, 12, 31, 23, tzinfo=ZoneInfo("America/New_York")), UTC),  # year 10000 in UTC
        (10**400, UTC),  # too big for a float
        (-(10**400), UTC),
        (10**12, UTC),  # year 33658
        (1e300, UTC),
        ("1" * 400, UTC),
    ],
    ids=repr,
)
def test_a_time_outside_the_datetime_range_is_invalid_time(value: object, tz: ZoneInfo) -> None:
    """Instants before 0001-01-01Z or after 9999-12-31Z raise InvalidTimeError, not OverflowError."""
    with pytest.raises(localmem.InvalidTimeError, match=r"^t="):
        parse_time(value, name="t", tz=tz)  # type: ignore[arg-type]


def test_the_edges_of_the_range_are_times() -> None:
    """The first and last instants of the range, and their days in UTC, are accepted."""
    utc = ZoneInfo("UTC")
    assert parse_time("0001-01-01", name="t", tz=utc).at == datetime(1, 1, 1, tzinfo=UTC)
    assert parse_time("9999-12-31T23:59:59.999999Z", name="t", tz=utc).at == datetime.max.replace(tzinfo=UTC)
    assert parse_time(-62135596800, name="t", tz=utc).at == datetime(1, 1, 1, tzinfo=UTC)
    assert period_end(parse_time("9999-12-30", name="t", tz=utc), utc) == datetime(9999, 12, 31, tzinfo=UTC)


@pytest.mark.parametrize("value", ["9999-12-31", "9999-12", "9999"])
def test_a_period_ending_after_9999_is_invalid_time(value: str) -> None:
    """The last day, month or year of 9999 has no end localmem can store: InvalidTimeError naming it."""
    moment = parse_time(value, name="t", tz=ZoneInfo("UTC"))
    with pytest.raises(localmem.InvalidTimeError, match="9999") as err:
        period_end(moment, ZoneInfo("UTC"))
    assert "ends after 9999-12-31T23:59:59.999999Z" in str(err.value)


@given(st.one_of(
    st.integers(), st.floats(), st.text(), st.dates(), st.datetimes(timezones=st.timezones()),
    st.from_regex(r"-?\d{1,6}(-\d{1,2}(-\d{1,2})?)?", fullmatch=True),
))
def test_any_value_is_a_moment_or_a_localmem_error(value: object) -> None:
    """parse_time and period_end never raise anything but LocalmemError, in any zone."""
    for tz in (TOKYO, ZoneInfo("Pacific/Kiritimati"), ZoneInfo("America/Adak")):
        try:
            moment = parse_time(value, name="t", tz=tz)  # type: ignore[arg-type]
            end = period_end(moment, tz)
        except localmem.LocalmemError:
            continue
        assert moment.at.tzinfo is UTC and end >= moment.at


@pytest.mark.parametrize(
    "value",
    [datetime(1, 1, 1, tzinfo=TOKYO), datetime(9999, 12, 31, 23, tzinfo=ZoneInfo("America/Adak"))],
    ids=repr,
)
def test_the_fast_path_for_aware_datetimes_checks_the_range_too(value: datetime) -> None:
    """instant_micros (the read axes' fast path) refuses years outside 1..9999 UTC, as parse_time does."""
    with pytest.raises(localmem.InvalidTimeError, match="as_of=.* is out of range"):
        instant_micros(value, name="as_of", tz=TOKYO)
    assert instant_micros(datetime.min.replace(tzinfo=UTC), name="as_of", tz=TOKYO) == to_micros(
        datetime.min.replace(tzinfo=UTC))


@given(st.datetimes(timezones=st.sampled_from([UTC, TOKYO, BERLIN, ZoneInfo("America/Adak")])))
def test_to_micros_counts_the_microseconds_since_the_epoch(value: datetime) -> None:
    """to_micros is the elapsed days, seconds and microseconds since 1970-01-01 UTC, counted out."""
    delta = value - datetime(1970, 1, 1, tzinfo=UTC)
    assert to_micros(value) == (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


class _NoOffset(tzinfo):
    """A tzinfo that knows no offset: a datetime carrying it is naive (Python's rule)."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None

    def dst(self, dt: datetime | None) -> timedelta | None:
        return None

    def tzname(self, dt: datetime | None) -> str | None:
        return None


@given(st.datetimes(timezones=st.sampled_from([UTC, TOKYO, BERLIN, ZoneInfo("America/Adak")])))
def test_the_fast_path_gives_the_storage_microseconds_of_any_aware_datetime(value: datetime) -> None:
    """instant_micros of an aware datetime is its to_micros, or out of range just when parse_time says so."""
    try:
        expected = to_micros(parse_time(value, name="known_at", tz=TOKYO).at)
    except localmem.InvalidTimeError:
        with pytest.raises(localmem.InvalidTimeError, match="out of range"):
            instant_micros(value, name="known_at", tz=TOKYO)
    else:
        assert instant_micros(value, name="known_at", tz=TOKYO) == expected == to_micros(value)


@pytest.mark.parametrize("value", [datetime(2025, 6, 16, 12), datetime(2025, 6, 16, 12, tzinfo=_NoOffset())],  # noqa: DTZ001
                         ids=["no tzinfo", "tzinfo without an offset"])
def test_the_fast_path_refuses_a_naive_datetime_naming_it(value: datetime) -> None:
    """A datetime with no offset raises NaiveDatetimeError naming the argument, not a bare TypeError."""
    with pytest.raises(localmem.NaiveDatetimeError, match="known_at=.*has no time zone"):
        instant_micros(value, name="known_at", tz=TOKYO)
