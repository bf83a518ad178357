"""Rules for holidays and their breaks: "Christmas", "Easter weekend", "over the holidays", "Thanksgiving"."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from . import lexicon as lx
from .calendar import day_span, week_start
from .context import Context, Hit, make_hit, register_rule

_HOLIDAY_MOD = r"(?:(?P<mod>this|next|last|the\s+following|following)\s+)?"


@register_rule(
    rf"(?P<weof>(?:the\s+)?(?:long\s+)?weekend\s+of\s+)?(?:the\s+)?"
    rf"{_HOLIDAY_MOD}(?P<h>{lx.HOLIDAY})(?:\s+(?P<y>{lx.YEAR}))?"
    rf"(?:\s+(?P<we>weekend)(?:\s+(?P<y2>{lx.YEAR}))?|\s+(?P<per>break|holidays?|vacation|hols))?",
    when=lx.HOLIDAY_WORDS,  # every holiday holds one ("4th of july": "th", "july"): digits need not wake it
    needs=lx.HOLIDAY,
)
def _holiday(m: re.Match[str], ctx: Context) -> Hit | None:
    """Christmas, Easter 2024, next Thanksgiving, labor day weekend, Easter weekend, Christmas break."""
    if lx.COMPOUND_NOUN.match(ctx.text, m.end()):
        return None  # "an Easter egg", "the Christmas tree"
    name = m["h"]
    if m["per"] and not m["weof"]:
        key = "christmas" if name == "xmas" else name.split()[0]
        period = lx.HOLIDAY_PERIODS.get(key)
        if period is None:
            return None
        return _holiday_period(m, ctx, period)
    fn = lx.holiday(name, ctx.tz.key)
    year = m["y"] or m["y2"]
    d = fn(int(year)) if year else _occurrence(m, ctx, fn)
    free = not (year or m["mod"])
    if m["we"] or m["weof"]:
        sat = week_start(d) + timedelta(days=5)
        if d.weekday() == 0:  # a Monday holiday: the long weekend before it
            return make_hit(m, *day_span(d - timedelta(days=2), 3), "weekend", yearless=free)
        if d.weekday() == 3:  # Thanksgiving: Thursday to Sunday
            return make_hit(m, *day_span(d, 4), "weekend", yearless=free)
        if name.startswith("easter") and ctx.tz.key.startswith(lx.EASTER_MONDAY_PREFIXES):
            # Good Friday to Easter Monday, where both are public holidays
            return make_hit(m, *day_span(d - timedelta(days=2), 4), "weekend", yearless=free)
        return make_hit(m, *day_span(sat, 2), "weekend", yearless=free)
    return make_hit(m, *day_span(d), "day", yearless=free)


def _occurrence(m: re.Match[str], ctx: Context, fn: Callable[[int], date]) -> date:
    """The year-less holiday's date: "next"/"last" or the tense pick the year, else the nearest."""
    options = [fn(y) for y in range(ctx.today.year - 1, ctx.today.year + 2)]
    mod = " ".join((m["mod"] or "").split())
    if mod == "this":
        return fn(ctx.today.year)
    direction = {"next": "future", "following": "future", "the following": "future", "last": "past"}.get(
        mod, ctx.tense(m.start())
    )
    if direction == "past":
        return max(o for o in options if o < ctx.today)
    if direction == "future":
        return min(o for o in options if o > ctx.today)
    return min(options, key=lambda o: abs((o - ctx.today).days))


def _holiday_period(m: re.Match[str], ctx: Context, period: Callable[[int], tuple[date, int]]) -> Hit:
    """A holiday's break: the one under way, else by "next"/"last" or the tense, else the nearest."""

    def first(y: int) -> date:
        return period(y)[0]

    span = {y: period(y) for y in range(ctx.today.year - 1, ctx.today.year + 2)}
    current = [y for y, (d, n) in span.items() if d <= ctx.today < d + timedelta(days=n)]
    if m["y"]:
        d, n = period(int(m["y"].strip()))
    elif current and not m["mod"]:
        d, n = span[current[0]]
    else:
        d = _occurrence(m, ctx, first)
        n = period(d.year)[1]
    return make_hit(m, *day_span(d, n), "week", vague=True, yearless=not (m["y"] or m["mod"]))


_THE_WORD_END = re.compile(r"\bthe\s+\w+$")


@register_rule(
    rf"{_HOLIDAY_MOD}(?:the\s+)?(?:(?P<h>holidays|hols)|holiday\s+season|festive\s+season)(?P<y>\s+{lx.YEAR})?",
    when=("holidays", "hols", "holiday", "festive"),
)
def _the_holidays(m: re.Match[str], ctx: Context) -> Hit | None:
    """over the holidays, the holiday season: Christmas Eve through New Year's Day."""
    if m["h"] and not (m["mod"] or _THE_WORD_END.search(m.group())):
        return None  # "happy holidays", "holidays are expensive": no particular one
    return _holiday_period(m, ctx, lx.HOLIDAY_PERIODS["christmas"])
