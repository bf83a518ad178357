"""Valid-time intervals: precision names and how intervals render for people."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import localmem
from localmem.time.interval import PRECISIONS, ValidTime, check_precision


def utc(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


@pytest.mark.parametrize(
    ("start", "end", "precision", "tz", "text"),
    [
        (utc(2025, 6, 13, 22), utc(2025, 6, 15, 22), "weekend", "Europe/Berlin",
         "weekend of 2025-06-14 to 2025-06-15"),
        (utc(2025, 8, 9, 16), utc(2025, 8, 10, 16), "day", "Asia/Singapore", "2025-08-10"),
        (utc(2025, 6, 1), utc(2025, 7, 1), "month", "UTC", "2025-06"),
        (utc(2025, 1, 1), utc(2026, 1, 1), "year", "UTC", "2025"),
        (utc(2023, 4, 30, 22), None, "month", "Europe/Berlin", "since 2023-05"),
        (utc(2023, 4, 30, 22), utc(2025, 8, 31, 22), "month", "Europe/Berlin",
         "2023-05 until 2025-09-01"),
        (utc(2026, 3, 2, 9), None, "instant", "UTC", "since 2026-03-02T09:00:00+00:00"),
    ],
)
def test_rendering_follows_precision_and_zone(
    start: datetime, end: datetime | None, precision: str, tz: str, text: str
) -> None:
    """An interval reads at its precision, in its zone, never as a relative phrase."""
    assert str(ValidTime(start, end, precision, tz)) == text


def test_half_open_contains() -> None:
    """[start, end) holds its start but not its end; an open end holds everything after."""
    v = ValidTime(utc(2025, 1, 1), utc(2025, 2, 1), "month")
    assert v.contains(utc(2025, 1, 1)) and not v.contains(utc(2025, 2, 1))
    assert ValidTime(utc(2025, 1, 1), None, "day").contains(utc(2999, 1, 1))


def test_precision_names_match_the_schema() -> None:
    """PRECISIONS is the same list the schema's CHECK accepts."""
    from localmem.core.db import schema_sql

    for p in PRECISIONS:
        assert f"'{p}'" in schema_sql()
        assert check_precision(p) == p
    with pytest.raises(localmem.InvalidInputError):
        check_precision("fortnight")
