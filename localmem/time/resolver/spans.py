"""Rules for spans of dates and parts of periods: "June 3-5", "3 to 5 June", "2014-2018",
"a 2010 trip", "the first two weeks of 2021"."""

from __future__ import annotations

import re
from datetime import date, timedelta

from . import lexicon as lx
from .calendar import (
    ONE_DAY,
    add_months,
    calendar_unit,
    day_span,
    midnight,
    month_span,
    nth_week,
)
from .context import Context, Hit, make_hit, register_rule
from .dates import ANY_YEAR, year_of, yearless_day

_TO = r"\s*(?:-|–|—|~|to|till|til|until|through|thru|and)\s*"
#: What a range of days holds: "3-5", "4 to the 22nd": a first day ending in a digit or in st, nd, rd,
#: th (as every ordinal does), the dash or word, a second day. It opens with one character set.
_TWO_DAYS = rf"[\ddht]{_TO}(?:the\s+)?(?:\d|{lx.ORDINAL_WORD})"


@register_rule(
    rf"(?:(?P<pre>from|between)\s+)?(?:the\s+)?(?P<d1>{lx.DAY}){_TO}(?:the\s+)?(?P<d2>{lx.DAY})(?:\s+of)?\s+"
    rf"(?:(?P<m>{lx.MONTH})(?:,?\s+(?P<y>{ANY_YEAR}))?|(?P<rel>this|next|last)\s+month)",
    when=lx.MONTH_WORDS | {"month"},
    needs=_TWO_DAYS,
)
def _days_then_month(m: re.Match[str], ctx: Context) -> Hit | None:
    """from 4 to 22 January 1995, between 3 and 12 of Sept, 4 to 23 next month."""
    return _day_range(m, ctx, m["d1"], m["d2"])


@register_rule(
    rf"(?:(?P<pre>from|between)\s+)?(?P<m>{lx.MONTH})\s+(?:between\s+)?(?:the\s+)?(?P<d1>{lx.DAY})"
    rf"{_TO}(?:the\s+)?(?P<d2>{lx.DAY})(?:,?\s+(?P<y>{ANY_YEAR}))?",
    when=lx.MONTH_WORDS,
    needs=_TWO_DAYS,
)
def _month_then_days(m: re.Match[str], ctx: Context) -> Hit | None:
    """June 3-5, Sept 3 to 12 2024, November between 19 and 20."""
    return _day_range(m, ctx, m["d1"], m["d2"])


@register_rule(
    rf"(?P<pre>from|between)\s+(?:the\s+)?(?P<d1>{lx.DAY}){_TO}(?P<m>{lx.MONTH})\s+(?:the\s+)?(?P<d2>{lx.DAY})"
    rf"(?:,?\s+(?P<y>{ANY_YEAR}))?",
    when=lx.MONTH_WORDS,
    also=("from", "between"),
)
def _day_to_month_day(m: re.Match[str], ctx: Context) -> Hit | None:
    """from 4 to January 22, 1995; from 02 to April 07: the first day shares the month named last."""
    return _day_range(m, ctx, m["d1"], m["d2"])


@register_rule(
    rf"(?:the\s+)?(?P<d1>{lx.DAY})(?:\s*,\s*|\s+(?:and|or|&)\s+|\s*&\s*)(?:the\s+)?(?P<d2>{lx.DAY})(?:\s+of)?\s+"
    rf"(?P<m>{lx.MONTH})(?:,?\s+(?P<y>{ANY_YEAR}))?",
    when=lx.MONTH_WORDS,
)
def _day_listed(m: re.Match[str], ctx: Context) -> Hit | None:
    """18 and 19 June, the 3rd or 4th of May: the first day of a list shares the month named last
    (the last day is read by the rule for "19 June")."""
    hit = yearless_day(m, ctx, lx.MONTHS[m["m"].rstrip(".")], lx.day_number(m["d1"]), m["y"])
    if hit is not None:
        hit.hi = m.end("d1")
    return hit


_AND = re.compile(r"\band\b")


def _day_range(m: re.Match[str], ctx: Context, d1: str, d2: str) -> Hit | None:
    a, b = lx.day_number(d1), lx.day_number(d2)
    if m["pre"] is None and _AND.search(m.group()) and "between" not in m.group():
        return None
    if m["rel"] if "rel" in m.re.groupindex else None:
        first = add_months(ctx.today.replace(day=1), {"this": 0, "next": 1, "last": -1}[m["rel"]])
        year, month, yearless = first.year, first.month, False
    else:
        month = lx.MONTHS[m["m"].rstrip(".")]
        yearless = not m["y"]
        year = year_of(m["y"]) if m["y"] else ctx.pick_month(month, m.start())
    try:
        start, end = date(year, month, a), date(year, month, b)
    except ValueError:
        return None
    if end < start:
        return None
    return make_hit(m, midnight(start), midnight(end + ONE_DAY), "day", kind="range", yearless=yearless)


@register_rule(
    rf"(?:(?P<pre>from|between)\s+)?(?P<y1>{lx.YEAR})\s*(?:-|–|~|to|till|until|through|and)\s*(?P<y2>{lx.YEAR})",
    digits=4,
    needs=rf"{lx.YEAR}\s*(?:-|–|~|to|till|until|through|and)\s*{lx.YEAR}",
)
def _year_range(m: re.Match[str], ctx: Context) -> Hit | None:
    """2014-2018, from 2014 to 2018, between 2014 and 2018."""
    a, b = int(m["y1"]), int(m["y2"])
    if b <= a or (m["pre"] is None and " and" in m.group()):
        return None
    return make_hit(m, midnight(date(a, 1, 1)), midnight(date(b + 1, 1, 1)), "year", kind="range")


_MEASURE = (
    r"(?:k?cal(?:orie)?s?|kcals?|met(?:er|re)s?|m|km|k|mi|miles?|words?|pages?|steps?|people|persons?|members?|feet"
    r"|ft|foot|lbs?|pounds?|kgs?|grams?|g|mg|ml|cc|dollars?|euros?|bucks|yards?|yd|points?|pts|elo|rating|sq|square"
    r"|watts?|w|rpm|hp|units?|pieces?|times|downloads|followers|subscribers|views|likes|votes|students|employees"
    r"|users|customers|participants|runners|entries|rows|lines|characters|chars|tokens|pixels|px|mah|gb|mb|kb|tb"
    r"|series|piece|x|%|percent|calls|emails|messages|reps|sets|laps|acres?|hectares?|liters?|litres?|gallons?)"
)


@register_rule(
    rf"(?:a|an|the|my|our|his|her|their|that|this|its|your)\s+(?P<y>(?:19|20)\d\d)"
    rf"(?=\s+(?!{_MEASURE}\b)[a-z])",
    digits=4,
    needs=r"\s(?:19|20)\d\d\s",
)
def _adjectival_year(m: re.Match[str], ctx: Context) -> Hit | None:
    """a 2010 trip, the 2019 season, my 2015 Honda: a year used as an adjective."""
    year = int(m["y"])
    if year > ctx.today.year + 10:
        return None  # "the 2048 game", a model number
    hit = make_hit(m, midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1)), "year")
    hit.lo = m.start("y")
    return hit


_ORDINAL_N = {"first": 1, "last": -1, "final": -1}


@register_rule(
    rf"(?:the\s+)?(?P<pos>first|last|final|(?P<ord>{lx.ORDINAL_WORD}|\d{{1,2}}(?:st|nd|rd|th)))\s+"
    rf"(?:(?P<n>{lx.QUANTITY})\s+)?(?P<unit>days?|weeks?|months?)\s+(?:(?:of|in)\s+)?(?:the\s+)?"
    rf"(?:(?P<rel>this|next|last|previous|(?<=the\s)(?=year|month))\s*(?P<pu>year|month)|(?P<y>{lx.YEAR})"
    rf"|(?P<m>{lx.MONTH})(?:,?\s+(?P<my>{lx.YEAR}))?)",
    when=("day", "days", "week", "weeks", "month", "months"),
    # every ordinal ends in st, nd, rd or th ("first", "3rd", "twentieth"), as "last" does
    needs=rf"(?:st|nd|rd|th|final)\s+(?:{lx.QUANTITY}\s+)?(?:days?|weeks?|months?)\s",
)
def _units_of_period(m: re.Match[str], ctx: Context) -> Hit | None:
    """the third month of 2021, the first 2 weeks of 2021, the last four months of 2021, first ten days
    of last year, the third week next year: units counted inside a year or month (weeks are the
    Monday-Sunday ones whose Thursday falls inside, as ISO counts them)."""
    unit = m["unit"].rstrip("s")
    plural = m["unit"].endswith("s")
    if m["pu"]:
        step = {"this": 0, "next": 1, "last": -1, "previous": -1}.get(m["rel"], 0)
        whole = calendar_unit(m, ctx.today, m["pu"], step)
        assert whole.start is not None and whole.end is not None
        first, end = whole.start.date(), whole.end.date()
    elif m["y"]:
        first, end = date(int(m["y"]), 1, 1), date(int(m["y"]) + 1, 1, 1)
    else:
        month = lx.MONTHS[m["m"].rstrip(".")]
        year = int(m["my"]) if m["my"] else ctx.pick_month(month, m.start())
        first = date(year, month, 1)
        end = add_months(first, 1)
    if m["ord"]:
        if plural or m["n"]:
            return None
        k = lx.day_number(m["ord"])
        if unit == "month":
            if (end.year - first.year) * 12 + end.month - first.month < k:
                return None
            start = add_months(first, k - 1)
            return make_hit(m, *month_span(start.year, start.month), "month")
        if unit == "week":
            if m["m"] or (m["y"] and "of" not in m.group()):
                return None  # "the third week of May" is _nth_in's
            return make_hit(m, *day_span(nth_week(first, end, k), 7), "week")
        d = first + timedelta(days=k - 1)
        return make_hit(m, *day_span(d), "day") if d < end else None
    n = lx.number(" ".join(m["n"].split())) if m["n"] else 1
    if n is None or n < 1 or (not m["n"] and unit == "week"):
        return None  # vague counts; "the first week of May" is _nth_in's
    sign = _ORDINAL_N[m["pos"]]
    kind = "range" if m["n"] else "point"  # "the last day of the month" is one day
    if unit == "day":
        lo, hi = (first, first + timedelta(days=n)) if sign > 0 else (end - timedelta(days=n), end)
        if lo < first or hi > end:
            return None
        return make_hit(m, *day_span(lo, (hi - lo).days), "day", kind=kind)
    if unit == "week":
        last = nth_week(first, end, -1) - timedelta(days=7 * (n - 1))
        monday = nth_week(first, end, 1) if sign > 0 else last
        return make_hit(m, *day_span(monday, 7 * n), "day", kind="range")
    months = (end.year - first.year) * 12 + end.month - first.month
    if n >= months:
        return None
    lo = first if sign > 0 else add_months(first, months - n)
    return make_hit(m, *month_span(lo.year, lo.month, n), "month", kind=kind)
