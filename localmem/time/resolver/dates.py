"""Rules for phrases that name a date: "Nov 15", "2025-06-14", "in March", "Q3 2024", "June 3-5"."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from . import lexicon as lx
from .calendar import (
    add_months,
    calendar_unit,
    day_span,
    midnight,
    month_span,
    nth_week,
    part_of,
    year_span,
)
from .context import WORD_END, Context, Hit, make_hit, register_rule

_WORD_YEAR_HEAD = (
    r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty)"
)


_WORD_99 = lx.alt(k for k, v in lx.NUMBER_WORDS.items() if v < 100)


_WORD_10_99 = lx.alt(k for k, v in lx.NUMBER_WORDS.items() if 10 <= v < 100)


_WORD_YEAR = (
    rf"(?:{_WORD_YEAR_HEAD}\s+(?:hundred(?:\s+and)?(?:\s+{_WORD_99})?|oh\s+{_WORD_99}|{_WORD_10_99})"
    rf"|two\s+thousand(?:\s+and)?(?:\s+{_WORD_99})?)"
)


ANY_YEAR = rf"(?:{lx.YEAR}|{_WORD_YEAR})"


#: A day said as a cardinal before its month, after "on" ("on fifteen August").
_CARDINAL_BEFORE = lx.alt(k for k, v in lx.NUMBER_WORDS.items() if 1 <= v <= 31)


#: A day said as a cardinal after its month ("May twenty nine"); only 20-31, as "May one" is rarely a date.
_CARDINAL_DAY = (
    lx.alt(k for k, v in lx.NUMBER_WORDS.items() if 20 <= v <= 31)
    # "May twenty people" is a count
    + r"(?!\s+(?:of|more|people|(?!(?:was|is|this|has|as|us|its|his)\b)[a-z]+s)\b)"
)


#: "15 April of 87": two digits after "of" are a year only at a clause's end ("May of 12 people" is not).
_OF_YY = r"\s+of\s+'?(?P<yy>\d\d)(?=\s*(?:[.,!?;)]|$))"


def two_digit_year(yy: int, ctx: Context, pos: int) -> int:
    """The year a two-digit year names: in a future clause the first one not before this year
    (within 20 years: "I'll go back 3-7-27" said in 2016 is 2027); otherwise the latest one at
    most ten years ahead ("born in April of 87" is 1987, "Jan '29" said in 2026 is 2029)."""
    this = ctx.today.year
    if ctx.tense(pos) == "future":
        ahead = next((c + yy for c in (this // 100 * 100, this // 100 * 100 + 100) if c + yy >= this), this)
        if ahead - this <= 20:
            return ahead
    return 2000 + yy if 2000 + yy <= this + 10 else 1900 + yy


def year_of(text: str) -> int:
    if text.isdigit():  # "2019": nothing to normalise
        return int(text)
    text = " ".join(text.replace(" and ", " ").split())
    if text.isdigit():
        return int(text)
    if text.startswith("two thousand"):
        rest = text[len("two thousand") :].strip()
        return 2000 + (lx.number(rest) or 0 if rest else 0)
    head, _, rest = text.partition(" ")
    base = lx.NUMBER_WORDS[head] * 100
    if rest.startswith("hundred"):
        rest = rest[len("hundred") :].strip()
    elif rest.startswith("oh "):
        rest = rest[3:]
    return base + (lx.number(rest) or 0 if rest else 0)


_MONEY_BEFORE, _LEADS = re.compile(r"[$£€]\s*$"), {"next": "future", "last": "past"}


def yearless_day(m: re.Match[str], ctx: Context, month: int, day: int, year: str | None) -> Hit | None:
    if not year and _MONEY_BEFORE.search(ctx.text[max(0, m.start() - 2) : m.start()]):
        return None
    if year:
        try:
            d = date(year_of(year), month, day)
        except ValueError:
            return None
        return make_hit(m, *day_span(d), "day")
    named = _NAMED_WEEKDAY.match(m.group())
    if named:  # "Friday, June 15": the year within half a year of today where it is a Friday
        wd = lx.WEEKDAYS[named["wd"].rstrip(".")]
        near = [
            d
            for y in range(ctx.today.year - 1, ctx.today.year + 2)
            if _weekday_of(y, month, day) == wd and abs(((d := date(y, month, day)) - ctx.today).days) <= 183
        ]
        if len(near) == 1:
            return make_hit(m, *day_span(near[0]), "day", yearless=True)
    lead = m.group().split(None, 1)[0]
    direction = _LEADS.get(lead)
    picked = ctx.pick_date(month, day, m.start(), direction)
    if direction and picked == ctx.today:
        picked = ctx.pick_date(month, day, m.start() + 1, direction)
    if picked is None:
        return None
    return make_hit(m, *day_span(picked), "day", yearless=True)


_LEAD_WD = rf"(?:(?:this|next|last|on)\s+)?(?:{lx.WEEKDAY}(?:,?\s+|\s*-\s*)(?:the\s+)?)?"


_NAMED_WEEKDAY = re.compile(rf"(?:(?:this|next|last|on)\s+)?(?P<wd>{lx.WEEKDAY})(?![a-z])")
_LEAD_WD_RE = re.compile(_LEAD_WD)


def _weekday_of(year: int, month: int, day: int) -> int | None:
    try:
        return date(year, month, day).weekday()
    except ValueError:
        return None


@register_rule(
    rf"{_LEAD_WD}(?P<m>{lx.MONTH})(?:\s*|-|,\s*(?=\d{{1,2}}(?:st|nd|rd|th)|{lx.ORDINAL_WORD}))(?:the\s+)?(?P<d>{lx.DAY}|{_CARDINAL_DAY}){WORD_END}(?:(?:\s*,\s*|\s+|-)(?:in\s+|of\s+)?(?P<y>{ANY_YEAR}))?",
    when=lx.MONTH_WORDS,
    # the month (a dot after any name: a wider net), then the day
    needs=rf"{lx.alt(lx.MONTHS)}\.?(?:\s*|-|,\s*)(?:the\s+)?(?:\d|{lx.ORDINAL_WORD}|twenty|thirty)",
)
@register_rule(
    rf"{_LEAD_WD}(?:the\s+)?(?P<d>{lx.DAY}|(?<=on\s){_CARDINAL_BEFORE})(?:\s+of)?[\s-]+(?P<m>{lx.MONTH})"
    rf"(?:(?:,\s*|\s+|-)(?:in\s+|of\s+)?(?P<y>{ANY_YEAR})|{_OF_YY})?",
    when=lx.MONTH_WORDS,
)
def _named_day(m: re.Match[str], ctx: Context) -> Hit | None:
    """Nov 15, March 2nd, May twenty-first, Tuesday March 7; 15 November 2024, the 6th of April."""
    d = m["d"]
    cardinal = not (d[:1].isdigit() or " ".join(d.split()) in lx.ORDINAL_WORDS)
    if cardinal and not m["y"] and m.start("d") < m.start("m"):
        return None  # "on one May day": a cardinal before the month only with a year after it
    day = lx.number(d) if cardinal else lx.day_number(d)
    yy = m.groupdict().get("yy")
    year = str(two_digit_year(int(yy), ctx, m.start())) if yy else m["y"]
    return yearless_day(m, ctx, lx.MONTHS[m["m"].rstrip(".")], day or 0, year)


@register_rule(
    r"(?:(?P<y>\d{4})[-/.](?P<mo>\d{1,2})[-/.](?P<d>\d{1,2})"
    # "2016 10 16": year, month and day apart, only as a valid date of this century or the last
    r"|(?P<sy>(?:19|20)\d\d) (?P<smo>0?[1-9]|1[0-2]) (?P<sd>0?[1-9]|[12]\d|3[01])(?![\d:]))"
    r"(?:[t\s]+(?:at\s+)?(?P<h>[01]?\d|2[0-3]):(?P<mi>[0-5]\d))?",
    digits=4,
    needs=r"\d[-/. ]\d",
)
def _iso_date(m: re.Match[str], ctx: Context) -> Hit | None:
    """2025-06-14, 2024/03/05, 2025-06-14 09:30, 2016 10 16."""
    try:
        d = date(int(m["y"] or m["sy"]), int(m["mo"] or m["smo"]), int(m["d"] or m["sd"]))
    except ValueError:
        return None
    if m["h"]:
        at = datetime.combine(d, time(int(m["h"]), int(m["mi"])))
        return make_hit(m, at, at + timedelta(minutes=1), "minute")
    return make_hit(m, *day_span(d), "day")


_ON_BEFORE = re.compile(r"on\s")
_ON_FOR = re.compile(r"(?:on|for)\s")
_YEAR_LIST = re.compile(r"\b(?:between|from)\b[^.]*$|\d{4}\s*,?\s*(?:and|or|to)\s+$")
_CLAUSE_END_AFTER = re.compile(r"\s*(?:[.,!?;)]|$|at\b)")


_DATE_CUE_BEFORE = re.compile(
    r"(?:^|\b(?:on|by|until|till|since|from|before|after|to|through|thru|due|and|or|between|back|of)|[-,(]|^\s*)\s*$"
)


_FRACTION_AFTER = re.compile(
    r"\s*(?:of\b|miles?\b|mi\b|km\b|k\b|cups?\b|marathon|lbs?\b|kg\b|tsp|tbsp|inch|in\b|teaspoon|tablespoon"
    r"|pounds?\b|oz\b|hours?\b|hrs?\b|way\b|done\b|full\b|empty\b|speed|power|time\b|%)"
)


@register_rule(
    rf"{_LEAD_WD}(?P<a>\d{{1,2}})(?:(?P<sep>[/.])(?P<b>\d{{1,2}})(?:(?P=sep)(?P<y>\d{{4}}|\d{{2}}))?"
    rf"|-(?P<b2>\d{{1,2}})(?:-(?P<y2>\d{{4}}|\d{{2}}))?)",
    digits=True,
    shape=r"\d[/.-]\d",
)
def _numeric_date(m: re.Match[str], ctx: Context) -> Hit | None:
    """03/04, 3/4/2024, 21/04/16, 02-02-2020: month first unless date_order says day first."""
    a, b = int(m["a"]), int(m["b"] or m["b2"])
    if m["b2"] and not m["y2"]:
        if not (_NAMED_WEEKDAY.match(m.group()) or (
            _ON_BEFORE.match(m.group()) and _CLAUSE_END_AFTER.match(ctx.text, m.end())
        )):
            return None  # "won 3-2", "3-5 days": a weekday or "on" makes "7-6" a date ("on 4-22")
        month, day = (b, a) if ctx.date_order == "DMY" or a > 12 else (a, b)
        return yearless_day(m, ctx, month, day, None) if 1 <= month <= 12 and 1 <= day <= 31 else None
    cue = _DATE_CUE_BEFORE.search(ctx.text, max(0, m.start() - 12), m.start())
    if m["y2"] and len(m["y2"]) == 2 and not (cue or _NAMED_WEEKDAY.match(m.group())):
        return None  # "part number 10-11-12": a two-digit year needs "on", "back", "by"...
    if m["y2"]:
        y = int(m["y2"])
        y = y if y >= 100 else two_digit_year(y, ctx, m.start())
        return yearless_day(m, ctx, *((b, a) if ctx.date_order == "DMY" or a > 12 else (a, b)), str(y))
    if m["sep"] == "." and not m["y"] and not _LEAD_WD_RE.match(m.group()).group():  # type: ignore[union-attr]
        return None  # "7.6" alone is a decimal
    if (
        not m["y"]
        and not m["y2"]
        and not m.group()[:1].isalpha()
        and not _DATE_CUE_BEFORE.search(ctx.text, max(0, m.start() - 12), m.start())
    ):
        return None  # "rate it 9/10", "apartment 3/12": a date needs "on", "by", "until"...
    if not m["y"] and _FRACTION_AFTER.match(ctx.text, m.end()):
        return None  # a fraction: "3/4 of the way", "1/2 marathon"
    month, day = (b, a) if ctx.date_order == "DMY" else (a, b)
    if month > 12 >= day:
        month, day = day, month
    if month > 12 or day > 31 or month == 0 or day == 0:
        return None
    year = None
    if m["y"]:
        y = int(m["y"])
        if y < 100:
            y = two_digit_year(y, ctx, m.start())
        year = str(y)
    return yearless_day(m, ctx, month, day, year)


@register_rule(
    rf"(?P<y>{lx.YEAR})[/-](?P<m>{lx.MONTH})[/-](?P<d>{lx.DAY_NUMBER})|(?P<d2>{lx.DAY_NUMBER})[/-](?P<m2>{lx.MONTH})"
    rf"(?:[/-](?P<y2>{lx.YEAR}))?|(?P<m3>{lx.MONTH})/(?P<d3>{lx.DAY_NUMBER})",
    when=lx.MONTH_WORDS,
    needs=r"[/-](?:(?<=\d[/-])|(?<=st[/-])|(?<=nd[/-])|(?<=rd[/-])|(?<=th[/-])|(?<=/)(?=\d))",  # 3/may
)
def _mixed_date(m: re.Match[str], ctx: Context) -> Hit | None:
    """2019/aug/01, 22/Jan/2019, Oct/2."""
    month = lx.MONTHS[(m["m"] or m["m2"] or m["m3"]).rstrip(".")]
    day = lx.day_number(m["d"] or m["d2"] or m["d3"])
    return yearless_day(m, ctx, month, day, m["y"] or m["y2"])


@register_rule(
    rf"(?P<wd>{lx.WEEKDAY})[\s,]+(?:the\s+)?(?P<d>{lx.DAY})(?!\s*(?:/|:|am|pm|{lx.MONTH}|{lx.UNIT}\b))",
    when=lx.WEEKDAY_WORDS,
    needs=rf"{lx.WEEKDAY}[\s,]+(?:the\s+)?(?:\d|{lx.ORDINAL_WORD})",
)
def _weekday_day(m: re.Match[str], ctx: Context) -> Hit | None:
    """Monday 21, Thursday the 21st: the nearest month where that day is that weekday."""
    wd, day = lx.WEEKDAYS[m["wd"].rstrip(".")], lx.day_number(m["d"])
    chosen = _weekday_day_near(ctx.today, wd, day, ctx.tense(m.start()))
    if chosen is None:
        return None
    return make_hit(m, *day_span(chosen), "day", yearless=True)


@lru_cache(maxsize=4096)
def _weekday_day_near(today: date, wd: int, day: int, direction: str | None) -> date | None:
    """The day ``day`` of a month within 14 of today's that falls on weekday ``wd``, nearest today
    in ``direction``: pure, so memoised (it walks 29 months)."""
    first = today.replace(day=1)
    options = []
    for step in range(-14, 15):
        month = add_months(first, step)
        try:
            d = month.replace(day=day)
        except ValueError:
            continue
        if d.weekday() == wd:
            options.append(d)
    if direction == "past":
        options = [d for d in options if d <= today] or options
    elif direction == "future":
        options = [d for d in options if d >= today] or options
    if not options:
        return None
    return min(options, key=lambda d: abs((d - today).days))


@register_rule(r"(?P<y>(?:19|20)\d\d)(?P<mo>0[1-9]|1[0-2])(?P<d>0[1-9]|[12]\d|3[01])", digits=4,
               needs=r"\d" * 8)
def _compact_date(m: re.Match[str], ctx: Context) -> Hit | None:
    """20161016, as in file names."""
    try:
        return make_hit(m, *day_span(date(int(m["y"]), int(m["mo"]), int(m["d"]))), "day")
    except ValueError:
        return None


@register_rule(
    r"(?P<a>\d{1,2})(?:[/-](?P<y>\d{4})|(?:\s+-\s*|\s*-\s+)(?P<ys>(?:19|20)\d\d))|(?P<y2>\d{4})\s?/\s?(?P<a2>\d{1,2})|(?P<y3>\d{4})\s?[-.]\s?(?P<a3>0?[1-9]|1[0-2])(?!\d)",
    digits=4,
    needs=r"\d\s*[/.-]\s*\d",
)
def _numeric_month(m: re.Match[str], ctx: Context) -> Hit | None:
    """3/2015, 2016/11, 2016-11, 11 - 2016."""
    month = int(m["a"] or m["a2"] or m["a3"])
    year = int(m["y"] or m["ys"] or m["y2"] or m["y3"])
    if not 1 <= month <= 12:
        return None
    return make_hit(m, *month_span(year, month), "month")


@register_rule(
    rf"(?P<m>{lx.MONTH})(?:\s*,?\s+(?:of\s+|in\s+)?|\s*[-/,]\s*)(?P<y>{ANY_YEAR})|(?P<y2>{lx.YEAR})\s*,?\s+(?P<m2>{lx.MONTH})"
    rf"|(?P<m3>{lx.MONTH})\s+(?:of\s+)?(?P<rel>next|last|this)\s+year"
    rf"|(?P<m4>{lx.MONTH})\s*(?:\s+')(?P<yy>\d\d)(?![\w:/.])"
    # "April of 87", not "May of 12 people": bare digits after "of" only at a clause's end
    rf"|(?P<m5>{lx.MONTH})\s+of\s+'?(?P<yy5>\d\d)(?=\s*(?:[.,!?;)]|$)|\s+(?:and|but|when|i|we|he|she|they)\b)",
    when=lx.MONTH_WORDS,
)
def _month_year(m: re.Match[str], ctx: Context) -> Hit | None:
    """March 2024, Oct 2020, 2016, nov, June next year, April of 87, Jan '19."""
    if m["m4"] or m["m5"]:  # a two-digit year
        year = two_digit_year(int(m["yy"] or m["yy5"]), ctx, m.start())
        return make_hit(m, *month_span(year, lx.MONTHS[(m["m4"] or m["m5"]).rstrip(".")]), "month")
    if m["m3"]:
        year = ctx.today.year + {"this": 0, "next": 1, "last": -1}[m["rel"]]
        return make_hit(m, *month_span(year, lx.MONTHS[m["m3"].rstrip(".")]), "month")
    month = lx.MONTHS[(m["m"] or m["m2"]).rstrip(".")]
    return make_hit(m, *month_span(year_of(m["y"] or m["y2"]), month), "month")


_MODAL_MAY = re.compile(r"\s+(?:i|we|you|he|she|it|they|be|have|not|also|well|just|need|want|take|get|go)\b")


_MONTH_AFTER = re.compile(rf"\s*(?:-|–|to|till|until|through)\s*{lx.MONTH}\b")
_MONTH_BEFORE = re.compile(rf"\b{lx.MONTH}\s*(?:-|–|to|till|until|through|and)\s*$")
_RANGE_ENDS = ("-", "–", "to", "till", "until", "through", "and")  # what _MONTH_BEFORE's text ends in


_MONTH_CUE = (
    r"(?:in|during|since|until|till|by|of|from|between|through|throughout|before|after|around|early|mid|late"
    r"|end\s+of|start\s+of|beginning\s+of|middle\s+of)"
)


@register_rule(
    # "in the April": a cue may take "the" (not before "may" or "march", the verbs and the noun)
    rf"(?:(?P<mod>this|last|next|past|coming|previous|the\s+following)\s+|(?P<cue>{_MONTH_CUE})\s+(?P<the>the\s+(?!ma[ry]))?)?"
    rf"(?P<m>{lx.MONTH})",
    when=lx.MONTH_WORDS,
)
def _month_name(m: re.Match[str], ctx: Context) -> Hit | None:
    """in March, last September, next June, since January: a month alone."""
    name = m["m"].rstrip(".")
    month = lx.MONTHS[name]
    mod = (m["mod"] or "").replace("the ", "")
    after_month = (  # the look-back ends in a range word: a string test spares most searches
        ctx.text[max(0, m.start() - 16) : m.start()].rstrip().endswith(_RANGE_ENDS)
        and _MONTH_BEFORE.search(ctx.text, max(0, m.start() - 16), m.start()) is not None
    ) or _MONTH_AFTER.match(ctx.text, m.end()) is not None
    if after_month and not (mod or m["cue"]):
        hit = make_hit(m, *month_span(ctx.pick_month(month, m.start()), month), "month", yearless=True)
        return hit
    if not (mod or m["cue"]):
        return None  # the modal "may", "march" the verb, "my sister June", "an august gathering"
    if name == "may" and _MODAL_MAY.match(ctx.text, m.end()):
        return None  # "in may be", "this may take"
    if (
        name in ("mar", "jan", "dec", "jun", "jul", "aug", "sep", "oct", "nov", "feb", "apr")
        and not mod
        and m["cue"] not in ("in", "since", "until", "during", "from", "till", "by", "of")
    ):
        return None
    cur = ctx.today.month
    if mod == "this":
        year = ctx.today.year
    elif mod in ("last", "past", "previous"):
        year = ctx.today.year if month < cur else ctx.today.year - 1
    elif mod in ("next", "coming", "following"):
        year = ctx.today.year if month > cur else ctx.today.year + 1
    else:
        year = ctx.pick_month(month, m.start())
        hit = make_hit(m, *month_span(year, month), "month", yearless=True)
        if m["cue"]:
            hit.lo = m.start("the") if m["the"] else m.start("m")
        return hit
    return make_hit(m, *month_span(year, month), "month")


@register_rule(
    rf"(?P<mod>early|mid|late|the\s+(?:beginning|start|middle|end)\s+of|(?:beginning|start|middle|end)\s+of)"
    rf"[\s-]+(?P<m>{lx.MONTH})(?:,?\s+(?P<y>{lx.YEAR}))?",
    when=lx.MONTH_WORDS,
    also=("early", "mid", "late", "beginning", "start", "middle", "end"),
)
def _month_part(m: re.Match[str], ctx: Context) -> Hit | None:
    """early March, mid-June 2024, late May, the end of January."""
    month = lx.MONTHS[m["m"].rstrip(".")]
    year = int(m["y"]) if m["y"] else ctx.pick_month(month, m.start())
    start, end = month_span(year, month)
    return part_of(m, start, end, m["mod"], "week", yearless=not m["y"])


@register_rule(
    r"(?:the\s+)?(?P<q>q[1-4]|h[12]|(?:first|second|third|fourth|1st|2nd|3rd|4th)\s+(?P<what>quarter|half))"
    rf"(?:(?:\s+of|,|-)?\s*(?:(?P<y>{lx.YEAR})|(?P<rel>this|next|last)\s+year|(?P<the>the\s+year)))?|(?P<y2>{lx.YEAR})[\s-]*(?P<q2>q[1-4]|h[12])",
    when=("q", "h", "quarter", "half"),
)
def _quarter(m: re.Match[str], ctx: Context) -> Hit | None:
    """Q3 2024, 2019-Q1, the third quarter this year, H2 2016, the first half of 2024."""
    q = (m["q"] or m["q2"]).lower()
    if q[0] not in "qh":
        n = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}[
            q.split()[0]
        ]
        kind = "q" if m["what"] == "quarter" else "h"
        if not (m["y"] or m["rel"] or m["the"]) and (
            kind == "h"
            or not _QUARTER_CUE.search(ctx.text, max(0, m.start() - 12), m.start())
            or _SPORT.search(ctx.text)
        ):
            return None  # "the second half" of a game, "the third quarter" of a match
    else:
        kind, n = q[0], int(q[1])
    size = 3 if kind == "q" else 6
    if m["y"] or m["y2"]:
        year = int(m["y"] or m["y2"])
    elif m["rel"] or m["the"]:
        year = ctx.today.year + {None: 0, "this": 0, "next": 1, "last": -1}[m["rel"]]
    else:  # a bare "Q1" follows the tense like a year-less month
        year, direction = ctx.today.year, ctx.tense(m.start())
        first, end = date(year, (n - 1) * size + 1, 1), add_months(date(year, (n - 1) * size + 1, 1), size)
        if direction == "past" and first > ctx.today:
            year -= 1
        elif direction == "future" and end <= ctx.today:
            year += 1
    return make_hit(m, *month_span(year, (n - 1) * size + 1, size), "month")


_QUARTER_CUE = re.compile(r"\b(?:in|during|for|by|over|through|throughout|since|until|of)\s+$")


_SPORT = re.compile(
    r"\b(?:game|match|score[ds]?|goals?|points?|touchdowns?|innings?|period|halftime|lead|team|quarterback|refs?)\b"
)


_NOT_A_YEAR_BEFORE = re.compile(
    r"(?:number|no\.?|#|bib|code|pin|room|id|version|model|score|was|is|=|:|\$)\s*$"
)


@register_rule(
    rf"(?P<pre>in|since|during|of|by|until|till|from|before|after|around|circa|throughout|back\s+(?:in|to)|"
    rf"the\s+year|year|early|mid|late|(?:the\s+)?(?:beginning|start|middle|end)\s+of|between|and|or|to)\s+"
    rf"(?P<y>{ANY_YEAR})|(?P<y2>(?:19|20)\d\d)(?=\s*[.!?,;)]|\s*$)",
    when=lx.NUMBER_TOKENS,
    digits=4,
)
def _year_alone(m: re.Match[str], ctx: Context) -> Hit | None:
    """in 2022, the year 2011, since two thousand and fifteen, "... 2020" at a clause end."""
    year = year_of(m["y"] or m["y2"])
    if m["pre"] in ("and", "to", "or") and not _YEAR_LIST.search(
        ctx.text[max(0, m.start() - 80) : m.start() + len(m["pre"]) + 1],
    ):
        return None  # "2 and 2020"? only inside a range or a list of years
    if m["y2"] and _NOT_A_YEAR_BEFORE.search(ctx.text, max(0, m.start() - 12), m.start()):
        return None  # "my bib number was 1987"
    start = m.start("y") if m["y"] else m.start("y2")
    if m["pre"] in ("early", "mid", "late") or (m["pre"] or "").endswith(" of"):
        s, e = midnight(date(year, 1, 1)), midnight(date(year + 1, 1, 1))
        return part_of(m, s, e, m["pre"], "season")
    hit = make_hit(m, *year_span(year), "year")
    if m["pre"] in (
        "in",
        "since",
        "during",
        "of",
        "by",
        "until",
        "till",
        "from",
        "before",
        "after",
        "and",
        "to",
        "around",
        "circa",
        "throughout",
        "between",
        "back to",
    ):
        hit.lo = start  # the preposition belongs to whatever combines it
    return hit


@register_rule(
    r"(?:the\s+)?(?:(?P<c>1[5-9]|20)(?P<d>\d)0\s?'?s|'(?P<d2>\d)0s|(?:(?<=the\s)|(?<=\bin\s))(?P<d3>\d)0\s?'?s"
    r"|(?:(?<=the\s)|(?<=\bin\s))(?:(?P<cw>nineteen|eighteen)[\s-]+)?(?P<w>" + lx.alt(lx.DECADE_WORDS) + r")"
    r"|(?<=the\s)(?P<w2k>two\s+thousands|noughties|aughts|(?:twenty|two\s+thousand\s+and)[\s-]+(?P<wt>tens|twenties)))",
    when=(*lx.DECADE_WORDS, "noughties", "aughts", "thousands", "tens"),
    digits=2,
    shape=r"\d0\s?'?s",
)
def _decade(m: re.Match[str], ctx: Context) -> Hit | None:
    """the 90s, the 1990s, the '80s, the seventies."""
    if m["w2k"]:
        start = 2000 + {None: 0, "tens": 10, "twenties": 20}[m["wt"]]
    elif m["cw"]:
        start = {"nineteen": 1900, "eighteen": 1800}[m["cw"]] + lx.DECADE_WORDS[m["w"]]
    elif m["c"]:
        start = int(m["c"]) * 100 + int(m["d"]) * 10
    else:
        tens = int(m["d2"] or m["d3"]) * 10 if (m["d2"] or m["d3"]) else lx.DECADE_WORDS[m["w"]]
        start = ctx.today.year // 100 * 100 + tens
        if start > ctx.today.year:
            start -= 100
    return make_hit(m, midnight(date(start, 1, 1)), midnight(date(start + 10, 1, 1)), "decade")


@register_rule(
    rf"(?:the\s+)?(?P<n>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\s+(?P<wd>{lx.WEEKDAY_FULL}|week|weekend)"
    rf"\s+(?:of|in)\s+(?:(?:the\s+)?(?P<mod>this|next|last|previous|following)\s+(?P<unit>month|year)|(?:the\s+)?(?P<m>{lx.MONTH})(?:,?\s*(?P<y>{lx.YEAR}))?"
    rf"|(?P<y2>{lx.YEAR}))|(?:the\s+)?(?P<n2>first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th)\s+(?P<wd2>{lx.WEEKDAY_FULL})"
    r"(?!\s+(?:of|in)\b)",
    when=("first", "second", "third", "fourth", "fifth", "last", "st", "nd", "rd", "th"),
)
def _nth_in(m: re.Match[str], ctx: Context) -> Hit | None:
    """the first Monday of June, the last week of July, the first week of 2019, the third week of May."""
    n = {
        "first": 1,
        "1st": 1,
        "second": 2,
        "2nd": 2,
        "third": 3,
        "3rd": 3,
        "fourth": 4,
        "4th": 4,
        "fifth": 5,
        "5th": 5,
        "last": -1,
    }[m["n"] or m["n2"]]
    if m["n2"]:  # "the second Sunday": of this month
        first = ctx.today.replace(day=1)
        end = add_months(first, 1)
    elif m["unit"]:
        step = {"this": 0, "next": 1, "following": 1, "last": -1, "previous": -1}[m["mod"]]
        unit_hit = calendar_unit(m, ctx.today, m["unit"], step)
        assert unit_hit.start is not None and unit_hit.end is not None
        first, end = unit_hit.start.date(), unit_hit.end.date()
    elif m["m"]:
        month = lx.MONTHS[m["m"].rstrip(".")]
        year = int(m["y"]) if m["y"] else ctx.pick_month(month, m.start())
        first, end = date(year, month, 1), add_months(date(year, month, 1), 1)
    else:
        year = int(m["y2"])
        first, end = date(year, 1, 1), date(year + 1, 1, 1)
    what = m["wd"] or m["wd2"]
    hit = _nth_of(m, first, end, what, n)
    if hit is not None and hit.start is not None and m["m"] and not m["y"]:
        # A year-less month follows the tense as a whole; the day inside it must too.
        direction = ctx.tense(m.start())
        shift = {"future": 1, "past": -1}.get(direction or "", 0)
        # a period under way is this year's in either tense ("I'll travel the second week of
        # November" said during it); only one wholly past (future tense) or not begun (past) moves
        assert hit.end is not None
        if (shift > 0 and hit.end.date() <= ctx.today) or (shift < 0 and hit.start.date() > ctx.today):
            first, end = (
                date(first.year + shift, first.month, 1),
                add_months(date(first.year + shift, first.month, 1), 1),
            )
            hit = _nth_of(m, first, end, what, n)
    return hit


def _nth_of(m: re.Match[str], first: date, end: date, what: str, n: int) -> Hit | None:
    """The n-th (or last, n=-1) week, weekend or weekday in [first, end)."""
    if what == "week":
        return make_hit(m, *day_span(nth_week(first, end, n), 7), "week")
    wd = 5 if what == "weekend" else lx.WEEKDAYS[what]
    days = [
        first + timedelta(days=i)
        for i in range((end - first).days)
        if (first + timedelta(days=i)).weekday() == wd
    ]
    if not days or abs(n) > len(days):
        return None
    if what == "weekend":
        return make_hit(m, *day_span(days[n - 1 if n > 0 else -1], 2), "weekend")
    return make_hit(m, *day_span(days[n - 1 if n > 0 else -1]), "day")


@register_rule(
    rf"week\s+(?P<n>[1-9]|[1-4]\d|5[0-3])(?:\s+(?:of\s+)?(?:(?P<y>{lx.YEAR})|(?P<rel>this|next|last)\s+year))?",
    when=("week",),
)
def _week_number(m: re.Match[str], ctx: Context) -> Hit | None:
    """week 27, week 10 of 2019, week 27 of last year: ISO weeks."""
    year = int(m["y"]) if m["y"] else ctx.today.year + {None: 0, "this": 0, "next": 1, "last": -1}[m["rel"]]
    try:
        monday = date.fromisocalendar(year, int(m["n"]), 1)
    except ValueError:
        return None
    return make_hit(m, *day_span(monday, 7), "week")


@register_rule(
    rf"(?:the\s+)?(?P<d>{lx.DAY})(?:\s+day)?\s+of\s+(?:the\s+)?(?P<rel>this|next|last|previous|following)\s+month",
    when=("month",),
    also=("of",),
)
def _day_of_relative_month(m: re.Match[str], ctx: Context) -> Hit | None:
    """the 20th of next month, the 15th day of this month."""
    step = {"this": 0, "next": 1, "following": 1, "last": -1, "previous": -1}[m["rel"]]
    first = add_months(ctx.today.replace(day=1), step)
    try:
        return make_hit(m, *day_span(first.replace(day=lx.day_number(m["d"]))), "day")
    except ValueError:
        return None


@register_rule(
    # "on 29th" may drop "the" when the digits carry an ordinal ending
    r"(?:(?:on|for)\s+the\s+|the\s+|on\s+(?=\d{1,2}(?:st|nd|rd|th)\b))(?P<d>"
    + lx.DAY_NUMBER
    + "|"
    + lx.ORDINAL_WORD
    + r")(?=\s*(?:[.,!?;)]|$|of\s+(?:this|next|last)\s+month|[-–—]\s)"
    r"|\s+(?:after|before|but|so|at|in|for|with|when|because|too|then|i|we|he|she|they|you|my|our|his|her|their|morning|afternoon|evening|night)\b)"
    r"(?:\s+of\s+(?P<rel>this|next|last)\s+month)?",
    when=lx.NUMBER_TOKENS,
    needs=rf"(?:the|on)\s+(?:\d|{lx.ORDINAL_WORD})",
    digits=True,
    shape=r"(?:the|on)\s+\d",
)
def _day_of_month(m: re.Match[str], ctx: Context) -> Hit | None:
    """on the 21st, for the 27: a day of the current or adjacent month, by tense."""
    word = m["d"]
    if word.isdigit() and not _ON_FOR.match(m.group()):
        return None
    if not word[:1].isdigit() and not m.group().startswith("on"):
        return None  # "the first" is an ordinal unless it is "on the first"
    day = lx.day_number(word)
    t = ctx.today
    if m["rel"]:
        first = add_months(t.replace(day=1), {"this": 0, "next": 1, "last": -1}[m["rel"]])
        try:
            return make_hit(m, *day_span(first.replace(day=day)), "day")
        except ValueError:
            return None
    direction = ctx.tense(m.start())
    options = []
    for step in (-1, 0, 1):
        first = add_months(t.replace(day=1), step)
        try:
            options.append(first.replace(day=day))
        except ValueError:
            continue
    if direction == "past":
        chosen = max((o for o in options if o <= t), default=None)
    elif direction == "future":
        chosen = min((o for o in options if o >= t), default=None)
    else:
        chosen = min(options, key=lambda o: (abs((o - t).days), o > t), default=None)
    return None if chosen is None else make_hit(m, *day_span(chosen), "day", moves="month")


@register_rule(
    r"(?<!\bto\s)(?<!\bon\s)(?P<w>my\s+day|this\s+day)(?=\s*(?:[.,!?;)]|$)|\s+(?:look|looks|looked|was|is|went|has|had"
    r"|been|so|started|starts|going|goes)\b)|(?P<past>(?:(?:over|in|during)\s+)?(?:the\s+)?past\s+day)",
    when=("day",),
)
def _today_words(m: re.Match[str], ctx: Context) -> Hit | None:
    """ "What does my day look like?", "this day" are today ("to this day" is until now, "on this day"
    an anniversary: neither); "the past day" is yesterday, as "the past week" is the seven days before."""
    if m["past"]:
        return make_hit(m, *day_span(ctx.today - timedelta(days=1)), "day")
    return make_hit(m, *day_span(ctx.today), "day")


@register_rule(
    r"(?P<next>(?:the\s+)?(?:next|following)\s+day|the\s+day\s+after)(?![\s-]+(?:tomorrow|after|next|off)\b)"
    r"|the\s+day\s+before(?!\s+(?:yesterday|last)\b)",
    when=("day",),
)
def _day_from_before(m: re.Match[str], ctx: Context) -> Hit | None:
    """the next day, the following day, the day after, the day before: a day from the day named
    before them in the message (see combine), else from today."""
    return make_hit(m, *day_span(ctx.today), "day", anaphor=1 if m["next"] else -1)


@register_rule(r"(?P<n>1\d|20|21)(?:st|nd|rd|th)\s+century", when=("century",))
def _century(m: re.Match[str], ctx: Context) -> Hit | None:
    """the 21st century, 15th century."""
    start = (int(m["n"]) - 1) * 100
    return make_hit(m, midnight(date(max(start, 1), 1, 1)), midnight(date(start + 100, 1, 1)), "decade")
