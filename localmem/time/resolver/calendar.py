"""Calendar arithmetic on naive local dates: days, weeks (Monday first), months, units of a period."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

from .context import Hit, make_hit

ONE_DAY = timedelta(days=1)


RANK = {
    p: i
    for i, p in enumerate(
        (
            "instant",
            "minute",
            "hour",
            "part_of_day",
            "day",
            "weekend",
            "week",
            "month",
            "season",
            "year",
            "decade",
            "unknown",
        )
    )
}


def midnight(d: date) -> datetime:
    # Naive on purpose: rules compute on the sender's wall clock; zones are attached at the end.
    return datetime(d.year, d.month, d.day)  # noqa: DTZ001


# The helpers below are pure and immutable in what they return, and a chat log names the same
# few days over and over: each is memoised (a bounded cache, so a long run cannot grow it).
_MEMO = 4096


@lru_cache(maxsize=_MEMO)
def day_span(d: date, n: int = 1) -> tuple[datetime, datetime]:
    return midnight(d), midnight(d + timedelta(days=n))


@lru_cache(maxsize=_MEMO)
def add_months(d: date, n: int) -> date:
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    last = (date(y + (m == 11), (m + 1) % 12 + 1, 1) - ONE_DAY).day
    return date(y, m + 1, min(d.day, last))


@lru_cache(maxsize=_MEMO)
def year_span(y: int, n: int = 1) -> tuple[datetime, datetime]:
    return midnight(date(y, 1, 1)), midnight(date(y + n, 1, 1))


@lru_cache(maxsize=_MEMO)
def month_span(y: int, m: int, n: int = 1) -> tuple[datetime, datetime]:
    first = date(y, m, 1)
    return midnight(first), midnight(add_months(first, n))


def week_start(d: date) -> date:
    return d - timedelta(days=d.weekday())


def weekend_span(week_monday: date) -> tuple[datetime, datetime]:
    return day_span(week_monday + timedelta(days=5), 2)


def shift_date(d: date, unit: str, n: float) -> date:
    """``d`` moved ``n`` units; a workday (business day) step skips Saturdays and Sundays."""
    if unit in ("day",):
        return d + timedelta(days=round(n))
    if unit == "workday":
        step, count = (1 if n >= 0 else -1), abs(round(n))
        while count:
            d += timedelta(days=step)
            count -= d.weekday() < 5
        return d
    if unit in ("week", "fortnight"):
        return d + timedelta(days=round(n * (14 if unit == "fortnight" else 7)))
    months = {"month": 1, "quarter": 3, "year": 12, "decade": 120}[unit]
    return add_months(d, round(n * months))


def nth_week(first: date, end: date, n: int) -> date:
    """Monday of the n-th (or last, n=-1) Monday-Sunday week whose Thursday is in [first, end)."""
    monday = week_start(first)
    if monday + timedelta(days=3) < first:
        monday += timedelta(days=7)
    if n > 0:
        return monday + timedelta(days=7 * (n - 1))
    last = week_start(end - ONE_DAY)
    if last + timedelta(days=3) >= end:
        last -= timedelta(days=7)
    return last + timedelta(days=7 * (n + 1))


def part_of(
    m: re.Match[str], start: datetime, end: datetime, mod: str, precision: str, *, yearless: bool = False
) -> Hit:
    days = (end - start).days
    third = round(days / 3) if days > 14 else max(days // 3, 1)
    if mod.startswith("early") or "beginning" in mod or "start" in mod:
        return make_hit(m, start, start + timedelta(days=third), precision, yearless=yearless)
    if mod.startswith("mid") or "middle" in mod:
        return make_hit(m, start + timedelta(days=third), end - timedelta(days=days - 2 * third), precision,
                        yearless=yearless)
    return make_hit(m, end - timedelta(days=days - 2 * third), end, precision, yearless=yearless)


def calendar_unit(m: re.Match[str], t: date, unit: str, step: int, count: int = 1) -> Hit:
    if unit == "week":
        monday = week_start(t) + timedelta(days=7 * step)
        return make_hit(m, *day_span(monday, 7 * count), "week")
    if unit == "weekend":
        return make_hit(m, *weekend_span(week_start(t) + timedelta(days=7 * step)), "weekend")
    if unit == "month":
        first = add_months(t.replace(day=1), step)
        return make_hit(m, *month_span(first.year, first.month, count), "month")
    if unit == "quarter":
        first = add_months(date(t.year, (t.month - 1) // 3 * 3 + 1, 1), 3 * step)
        return make_hit(m, *month_span(first.year, first.month, 3 * count), "month")
    if unit == "decade":
        y = t.year // 10 * 10 + 10 * step
        return make_hit(m, midnight(date(y, 1, 1)), midnight(date(y + 10 * count, 1, 1)), "decade")
    y = t.year + step
    return make_hit(m, midnight(date(y, 1, 1)), midnight(date(y + count, 1, 1)), "year")


def years_later(at: datetime, n: int) -> datetime:
    try:
        return at.replace(year=at.year + n)
    except ValueError:  # 29 February
        return at.replace(year=at.year + n, day=28)


def weekday_from(mod: str, wd: int, today: date) -> date:
    """The weekday ``wd`` that ``mod`` ("last", "next", "this past", ...) names, seen from ``today``.

    "last Friday" is the Friday of last week and "next Friday" the Friday of next week;
    "this Friday" the one in this week; "this past" and "this coming" the nearest ones.
    Said on a Saturday or Sunday, when the week's days are over, "last Friday" is the one
    just gone."""
    week = week_start(today)
    back = today - timedelta(days=(today.weekday() - wd - 1) % 7 + 1)
    ahead = today + timedelta(days=(wd - today.weekday() - 1) % 7 + 1)
    if mod == "this":
        return week + timedelta(days=wd)
    if mod == "last" and today.weekday() >= 5:
        return back
    if mod in ("last", "previous"):
        return week - timedelta(days=7 - wd)
    if mod in ("next", "following"):
        return week + timedelta(days=7 + wd)
    if mod in ("this past", "past"):
        return back
    return ahead  # this coming, coming, upcoming
