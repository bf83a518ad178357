"""Phrases relative to the send time: "yesterday", "last weekend", "3 weeks ago", "the past 3 days"."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from . import lexicon as lx
from .calendar import (
    ONE_DAY,
    RANK,
    add_months,
    calendar_unit,
    day_span,
    midnight,
    month_span,
    part_of,
    shift_date,
    week_start,
    weekday_from,
    weekend_span,
)
from .context import Context, Hit, make_hit, register_rule


@register_rule(
    r"(?:the\s+)?(?P<w>day\s+before\s+yesterday|day\s+after\s+tomorrow|night\s+before\s+last)"
    r"|(?P<d>today|tonight|tonite|2nite|2night|yesterday|yday|tomorrow|tmrw|tmr|2moro|2morrow"
    r"|(?:this|last|tomorrow|yesterday)\s+(?:morning|afternoon|evening|night))",
    when=("today", "tonight", "tonite", "nite", "night", "yesterday", "yday", "tomorrow", "tmrw", "tmr",
          "moro", "morrow", "morning", "afternoon", "evening", "day"),
)
def _day_word(m: re.Match[str], ctx: Context) -> Hit | None:
    """today, yesterday, the day before yesterday, tonight, this morning, last night."""
    if m["w"]:
        if m["w"].startswith("night"):
            return _part_of_day(m, ctx.today - timedelta(days=2), "tonight")
        offset = -2 if "before" in m["w"] else 2
        return make_hit(m, *day_span(ctx.today + timedelta(days=offset)), "day")
    word = m["d"].split()
    d = ctx.today + timedelta(days=_DAY_OFFSETS[word[0]])
    tonight = ("tonight", "tonite", "2nite", "2night")
    if len(word) == 1 and word[0] not in tonight:
        return make_hit(m, *day_span(d), "day")
    part = "tonight" if word[0] in tonight or word == ["last", "night"] else word[-1]
    return _part_of_day(m, d, part)


_DAY_OFFSETS = {"today": 0, "tonight": 0, "tonite": 0, "2nite": 0, "2night": 0, "this": 0, "yesterday": -1,
                "yday": -1, "last": -1, "tomorrow": 1, "tmrw": 1, "tmr": 1, "2moro": 1, "2morrow": 1}


def _part_of_day(m: re.Match[str], d: date, part: str) -> Hit:
    lo, hi = lx.PARTS_OF_DAY[part]
    base = midnight(d)
    return make_hit(m, base + timedelta(hours=lo), base + timedelta(hours=hi), "part_of_day")


_HABIT_BEFORE = re.compile(r"\b(?:every|each)\s+$")
_REL = r"(?P<mod>this\s+past|this\s+coming|this|current|last|next|past|coming|upcoming|previous|following)"


@register_rule(
    rf"(?:(?:the\s+)?{_REL}\s+)?(?P<wd>{lx.WEEKDAY_FULL}|(?:(?<=last\s)|(?<=next\s)|(?<=this\s)|(?<=on\s)|(?<=off\s)"
    rf"|(?<=by\s)|(?<=until\s)|(?<=till\s))(?:{lx.WEEKDAY})|{lx.WEEKDAY}(?=\s+{lx.PART_OF_DAY}))"
    rf"(?P<after>\s+after\s+next)?(?:\s+(?:in\s+the\s+)?(?P<part>{lx.PART_OF_DAY}))?",
    when=lx.WEEKDAY_WORDS,
)
def _weekday(m: re.Match[str], ctx: Context) -> Hit | None:
    """Friday, last Friday, next Monday, this past Wednesday, Friday morning."""
    before = ctx.text[max(0, m.start() - 8) : m.start()]
    if _HABIT_BEFORE.search(before):
        return None  # a habit, not a day
    wd = lx.WEEKDAYS[m["wd"].rstrip(".")]
    mod = " ".join((m["mod"] or "").split())
    if mod in lx.RELATIVE_WEEKDAY_MODS:
        d = weekday_from(mod, wd, ctx.today)
    elif m["after"]:  # "Sunday after next": the Sunday after the coming one
        d = ctx.weekday(wd, m.start(), "future") + timedelta(days=7)
    else:
        d = ctx.weekday(wd, m.start())
    if m["part"]:
        return _part_of_day(m, d, m["part"])
    return make_hit(m, *day_span(d), "day", weekday=True)


@register_rule(
    rf"(?:{_REL}\s+week(?:'s)?\s+(?:on\s+)?(?P<wd>{lx.WEEKDAY})|(?P<wd2>{lx.WEEKDAY})\s+(?:of\s+)?"
    r"(?P<mod2>this|last|next|previous|the\s+following)\s+week)",
    when=lx.WEEKDAY_WORDS,
    also=("week",),
)
def _weekday_of_week(m: re.Match[str], ctx: Context) -> Hit | None:
    """next week Tuesday, tuesday of next week, this week Monday."""
    mod = m["mod"] or m["mod2"]
    wd = lx.WEEKDAYS[(m["wd"] or m["wd2"]).rstrip(".")]
    shift = {
        "this": 0,
        "last": -7,
        "previous": -7,
        "next": 7,
        "coming": 7,
        "upcoming": 7,
        "following": 7,
        "the following": 7,
        "past": -7,
    }.get(" ".join(mod.split()), 0)
    return make_hit(m, *day_span(week_start(ctx.today) + timedelta(days=shift + wd)), "day")


def step_of(mod: str) -> int:
    """How many units away "this", "last", "next"... point."""
    return {
        "this": 0,
        "current": 0,
        "last": -1,
        "previous": -1,
        "past": -1,
        "this past": -1,
        "next": 1,
        "coming": 1,
        "upcoming": 1,
        "following": 1,
        "this coming": 1,
    }[" ".join(mod.split())]


@register_rule(
    rf"(?:the\s+)?{_REL}\s+(?P<unit>week|weekend|fortnight|work\s*week|working\s+week|month|year|calendar\s+year"
    r"|quarter|decade|"
    r"spring|summer|autumn|fall|winter)",
    when=("week", "weekend", "fortnight", "workweek", "working", "work", "month", "year", "quarter", "decade")
    + tuple(lx.SEASON_WORDS),
)
def _this_next_last(m: re.Match[str], ctx: Context) -> Hit | None:
    """this week, last weekend, next month, the past year, this summer, last quarter."""
    mod = " ".join(m["mod"].split())
    unit = m["unit"].replace("calendar ", "")
    if unit.startswith("work"):
        hit = calendar_unit(m, ctx.today, "week", step_of(m["mod"]))
        hit.end = hit.end - timedelta(days=2) if hit.end else None
        return hit
    step = step_of(mod)
    t = ctx.today
    if unit == "fortnight":  # two calendar weeks next to this one
        return calendar_unit(m, t, "week", 1 if step >= 0 else -2, 2)
    if mod == "past" and unit in ("week", "month", "year"):  # the rolling one
        return make_hit(m, midnight(shift_date(t, unit, -1)), midnight(t), unit, kind="range")
    if unit in lx.SEASONS:
        return _season(m, ctx, unit, step)
    return calendar_unit(m, t, unit, step)


def _season_bounds(ctx: Context, name: str, year: int) -> tuple[datetime, datetime]:
    month = lx.SEASONS[name]
    if ctx.southern:
        month = (month + 5) % 12 + 1
    return month_span(year, month, 3)


def _season(m: re.Match[str], ctx: Context, name: str, step: int | None, year: int | None = None) -> Hit:
    if year is not None:
        return make_hit(m, *_season_bounds(ctx, name, year), "season")
    now = ctx.now
    current = None  # the season's occurrence containing today, or the latest one before it
    for y in (now.year - 1, now.year):
        s, e = _season_bounds(ctx, name, y)
        if s <= now:
            current = (y, s, e)
    assert current is not None
    y, s, e = current
    ongoing = now < e
    if step is None:  # "in the summer": tense picks
        step = 0 if ongoing else (-1 if ctx.tense(m.start()) == "past" else 1)
        if not ongoing and step == -1:
            step = 0
    elif step == 0:
        step = 0 if ongoing or ctx.tense(m.start()) == "past" else 1
    elif step == -1 and not ongoing:
        step = 0
    return make_hit(m, *_season_bounds(ctx, name, y + step), "season")


_SEASON_LEAD = re.compile(r"(?:in|during|over|through)\b")
_THE_FALL = re.compile(r"\bthe\s+fall")


@register_rule(
    rf"(?:(?:in|during|over|through)\s+)?(?:the\s+)?(?P<s>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?P<y>{lx.YEAR}))?",
    when=lx.SEASON_WORDS,
)
def _season_name(m: re.Match[str], ctx: Context) -> Hit | None:
    """in the summer, summer 2024, winter of 2023."""
    if not m["y"] and not _SEASON_LEAD.match(m.group()):
        return None  # "fall" the verb, "spring" the coil, "summer" the name
    if m["s"] == "fall" and not m["y"] and not _THE_FALL.search(m.group()):
        return None
    return _season(m, ctx, m["s"], None, int(m["y"]) if m["y"] else None)


_INDEFINITE_BEFORE = re.compile(r"\ban?\s+$")


#: A word after a bare "weekend" that makes it an attribute ("weekend yoga"): any word but these.
_NOUN_AFTER = re.compile(
    r"\s+(?!(?:is|was|were|will|would|has|had|and|or|but|so|then|with|in|at|on|of|to|for|too|again|already"
    r"|went|got|came|plans?|off|away|together|before|after|ago|i|we|you|he|she|they|it)\b)[a-z]"
)


@register_rule(r"(?:(?P<lead>over|on|at|during|for)\s+)?(?:the\s+|my\s+|this\s+)?weekend", when=("weekend",))
def _the_weekend(m: re.Match[str], ctx: Context) -> Hit | None:
    """over the weekend, the weekend, my weekend: the nearest weekend in the clause's direction."""
    if "this" in m.group().split() or lx.COMPOUND_NOUN.match(ctx.text, m.end()):
        return None  # left to "this weekend"; "the weekend bag"
    if m.group() == "weekend" and (
        _INDEFINITE_BEFORE.search(ctx.text, max(0, m.start() - 4), m.start())
        or _NOUN_AFTER.match(ctx.text, m.end())
    ):
        return None  # "a weekend yoga class", "weekend trips": a kind of thing, not a weekend
    t = ctx.today
    monday = week_start(t)
    if t.weekday() < 5 and ctx.tense(m.start()) == "past":
        monday -= timedelta(days=7)
    return make_hit(m, *weekend_span(monday), "weekend")


@register_rule(
    r"the\s+(?P<unit>week|weekend|month|year)\s+(?P<dir>after|before)\s+(?:the\s+)?(?P<rel>next|last)",
    when=("week", "weekend", "month", "year"),
    also=("after", "before"),
)
def _after_next(m: re.Match[str], ctx: Context) -> Hit | None:
    """the week after next, the year before last."""
    step = 2 if m["dir"] == "after" else -2
    if (m["rel"] == "next") != (m["dir"] == "after"):
        return None
    return calendar_unit(m, ctx.today, m["unit"], step)


def _qty_unit(tag: str = "") -> str:
    return rf"(?P<q{tag}>{lx.QUANTITY})\s*(?P<u{tag}>{lx.UNIT})"


_QTY_UNIT = _qty_unit()


DURATION = rf"{_QTY_UNIT}(?:(?:,\s*|\s+)(?:and\s+)?(?P<q2>{lx.QUANTITY})\s*(?P<u2>{lx.UNIT}))*"


_AMOUNT = re.compile(rf"({lx.QUANTITY})\s*({lx.UNIT})")


def _amount(text: str) -> list[tuple[str, int | None, tuple[int, int] | None]]:
    """(unit, count, vague range) for each part of "1 month and 21 days", "a few weeks"."""
    parts = []
    for q, u in _AMOUNT.findall(text):
        q = " ".join(q.split())
        unit = lx.UNITS[u.rstrip("s")] if u.rstrip("s") in lx.UNITS else lx.UNITS[u]
        vague = next((r for w, r in lx.VAGUE_QUANTITIES.items() if w in q), None)
        parts.append((unit, lx.number(q), vague))
    return parts


def counted_offset(
    m: re.Match[str], ctx: Context, anchor: datetime, sign: int, text: str, calendar: bool = False
) -> Hit | None:
    """The moment ``text`` (an amount) away from ``anchor``, at the unit's precision.

    With ``calendar`` (a count back from now: "five years ago") the answer is the whole
    calendar unit the arithmetic lands in (that year, that week), as people round a
    recollection to the unit they count in; without it, the day the arithmetic gives."""
    parts = _amount(text)
    if not parts:
        return None
    finest = min(parts, key=lambda p: RANK[lx.UNIT_PRECISION[p[0]]])[0]
    precision = lx.UNIT_PRECISION[finest]
    unit, _, vague = parts[0]
    if len(parts) == 1 and vague is not None:
        lo, hi = vague
        far, near = (hi, lo) if sign < 0 else (lo, hi)
        a = _moved(anchor, unit, sign * far, precision)
        b = _moved(anchor, unit, sign * near, precision)
        start, end = (a, b) if a <= b else (b, a)
        return make_hit(m, start, _ceil(end, precision), lx.WIDER[precision], vague=True)
    at = anchor
    for unit_, count, _ in parts:
        at = _moved(at, unit_, sign * (count or 1), precision)
    if calendar and finest in _CALENDAR_UNIT:
        hit = calendar_unit(m, at.date(), _CALENDAR_UNIT[finest], 0)
        hit.counted = True
        return hit
    # Otherwise an exact count lands on one day: "in 3 weeks" is that day, as arithmetic says.
    if precision in ("instant", "minute", "hour"):
        step = {"instant": timedelta(seconds=1), "minute": timedelta(minutes=1), "hour": timedelta(hours=1)}
        return make_hit(m, at, at + step[precision], precision)
    return make_hit(m, *day_span(at.date()), "day", counted=True)


#: The calendar period a count back from now lands in, by its finest unit.
_CALENDAR_UNIT = {
    "week": "week",
    "fortnight": "week",
    "month": "month",
    "quarter": "quarter",
    "year": "year",
    "decade": "decade",
}


def _moved(at: datetime, unit: str, n: float, precision: str) -> datetime:
    if unit in ("second", "minute", "hour"):
        at = at + timedelta(**{unit + "s": n})
        if precision == "hour":
            return at.replace(minute=0, second=0, microsecond=0)
        if precision == "minute":
            return at.replace(second=0, microsecond=0)
        return at.replace(microsecond=0)
    return midnight(shift_date(at.date(), unit, n))


def _ceil(at: datetime, precision: str) -> datetime:
    steps = {"instant": timedelta(seconds=1), "minute": timedelta(minutes=1), "hour": timedelta(hours=1)}
    return at + steps.get(precision, ONE_DAY)


@register_rule(
    # not the tail of "the last 3 months and 2 days ago": that count belongs to "the last"
    r"(?<!last\s)(?<!past\s)(?<!next\s)(?<!previous\s)"
    rf"{DURATION}\s+(?P<dir>ago|back|earlier|before\s+now|later(?!\s+(?:this|today|in\s+the|that))|from\s+now"
    r"|from\s+today|hence|in\s+the\s+(?:future|past))",
    when=("ago", "back", "earlier", "before", "later", "from", "hence", "future", "past"),
    needs=rf"{lx.UNIT}\s+(?:ago|back|earlier|before\s+now|later|from\s+now|from\s+today|hence|in\s+the\s+(?:future|past))",
)
def _ago(m: re.Match[str], ctx: Context) -> Hit | None:
    """3 days ago, a few weeks ago, 1 month and 21 days ago, two weeks from now, 3 weeks later,
    4 weeks in the future; "for 3 days from today" is the three days from today (counts of days
    and more; "for 2 hours from now" stays the moment two hours ahead)."""
    direction = " ".join(m["dir"].split())
    sign = -1 if direction in ("ago", "back", "earlier", "before now", "in the past") else 1
    lead = _FOR_BEFORE.search(ctx.text, max(0, m.start() - 5), m.start())
    if lead and direction in ("from now", "from today"):
        moved = counted_offset(m, ctx, ctx.now, 1, m.group())
        if moved is not None and not moved.vague and moved.start is not None and moved.precision == "day":
            hit = make_hit(m, midnight(ctx.today), moved.start, "day", kind="range")
            hit.lo = lead.start()
            return hit
    return counted_offset(m, ctx, ctx.now, sign, m.group(), calendar=sign < 0)


_FOR_BEFORE = re.compile(r"\bfor\s+$")


_HEDGE = r"(?:about|around|roughly|approximately|approx\.?|like|maybe|almost|nearly|circa|~)"
_DAYS_PER = {
    "day": 1,
    "workday": 1.4,
    "week": 7,
    "fortnight": 14,
    "month": 30.44,
    "quarter": 91.31,
    "year": 365.25,
    "decade": 3652.5,
}


@register_rule(
    rf"{_HEDGE}\s+(?P<q>{lx.QUANTITY})\s*(?P<u>{lx.UNIT})\s+ago"
    rf"|(?P<q1>{lx.QUANTITY})\s*(?:or|to|-|–)\s*(?P<q2>{lx.QUANTITY})\s+(?P<u2>{lx.UNIT})\s+ago"
    rf"|(?P<q3>{lx.QUANTITY})\s+(?P<u3>{lx.UNIT})\s+or\s+(?:so|(?P<q4>{lx.QUANTITY}))\s+ago",
    when=("ago",),
)
def _ago_about(m: re.Match[str], ctx: Context) -> Hit | None:
    """about 3 weeks ago, two or three days ago, a week or two ago, a month or so ago: a range, vague."""
    u = m["u"] or m["u2"] or m["u3"]
    unit = lx.UNITS.get(u.rstrip("s"), lx.UNITS.get(u, ""))
    if unit not in _DAYS_PER:
        return None  # hours and minutes are said precisely enough
    lo: float | None
    hi: float | None
    if m["q1"]:
        lo, hi = lx.number(m["q1"]), lx.number(m["q2"])
    elif m["q3"]:
        lo = lx.number(m["q3"])
        hi = lx.number(m["q4"]) if m["q4"] else (lo * 1.5 if lo else None)
    else:
        n = lx.number(m["q"])
        if n and unit in _CALENDAR_UNIT:  # "about 3 years ago": that year, hedged
            hit = counted_offset(m, ctx, ctx.now, -1, f"{n} {unit}", calendar=True)
            if hit is not None:
                hit.vague = True
            return hit
        lo, hi = (n * 0.7, n * 1.3) if n else (None, None)
    if not lo or not hi or hi <= lo:
        return None
    per = _DAYS_PER[unit]
    far = ctx.today - timedelta(days=round(hi * per))
    near = ctx.today - timedelta(days=round(lo * per))
    return make_hit(m, midnight(far), midnight(near + ONE_DAY), lx.UNIT_PRECISION[unit], vague=True)


@register_rule(
    rf"(?:within|less\s+than)\s+{DURATION}\s+(?:from|after)\s+(?P<a>today|now|tomorrow|tmrw)",
    when=("within", "less"),
)
def _within_from(m: re.Match[str], ctx: Context) -> Hit | None:
    """within 2 weeks from today, less than 3 days after tomorrow: the days up to that point."""
    first = ctx.today + (ONE_DAY if m["a"].startswith("t") and m["a"] != "today" else timedelta(0))
    end = counted_offset(m, ctx, midnight(first), 1, m.group())
    if end is None or end.start is None or end.vague:
        return None
    return make_hit(m, midnight(first), end.start, "day", kind="range")


#: What makes "in 25 minutes" a duration: a distance, a weight, a record or an effort before it.
_DURATION_CUE = re.compile(
    r"\b(?:\d+(?:\.\d+)?\s*(?:k|km|mi|miles?|m|meters?|kg|lbs?|pounds?|reps?)|pr|record|under|"
    r"over|done|finish\w*|complete\w*|run|ran|lose|lost|gain\w*)\W*$"
)


@register_rule(
    rf"in\s+(?:(?:about|around|roughly|like|maybe|just)\s+)?{DURATION}(?!\s+(?:time|of|from|since))",
    when=lx.UNIT_WORDS,
    also=("in",),
)
def _in_duration(m: re.Match[str], ctx: Context) -> Hit | None:
    """in 2 weeks, in a couple of days: a future moment, unless it is a duration ("in 58 minutes")."""
    unit = _amount(m.group())[0][0]
    tense = ctx.tense(m.start())
    short = unit in ("second", "minute", "hour")
    if tense == "past" or (short and tense != "future"):
        return None
    before = ctx.text[max(0, m.start() - 30) : m.start()]
    if _DURATION_CUE.search(before):
        return None  # a duration: "a 10K in 25 minutes", "lose 5 kg in 3 weeks"
    return counted_offset(m, ctx, ctx.now, 1, m.group())


@register_rule(
    rf"(?:(?:with)?in\s+)?(?:the\s+)?(?P<dir>next|past|last|previous|coming|following|upcoming)\s+{_QTY_UNIT}"
    rf"|(?P<q2>{lx.QUANTITY})\s+(?P<dir2>next|upcoming|coming|past|previous)\s+(?P<u2>{lx.UNIT[:-2]}s)"
    rf"|within\s+(?:the\s+)?(?P<dir3>next\s+)?{_qty_unit('3')}",
    when=("next", "past", "last", "previous", "coming", "following", "upcoming", "within"),
)
def _rolling(m: re.Match[str], ctx: Context) -> Hit | None:
    """the past 3 days, next 2 weeks, the last 3 months, within 9 months, 5 upcoming years."""
    direction = m["dir"] or m["dir2"] or "next"
    q = m["q"] or m["q2"] or m["q3"]
    u = m["u"] or m["u2"] or m["u3"]
    unit = lx.UNITS.get(u.rstrip("s"), lx.UNITS.get(u, "day"))
    n = lx.number(" ".join(q.split()))
    vague = n is None
    if n is None:
        n = {"couple": 2, "few": 3, "several": 5, "some": 3}[next(w for w in lx.VAGUE_QUANTITIES if w in q)]
    back = direction in ("past", "last", "previous")
    t = ctx.today
    if unit in ("quarter", "decade"):
        hit = calendar_unit(m, t, unit, -n if back else 1, n)
        hit.kind, hit.vague = "range", vague
        return hit
    if unit in ("second", "minute", "hour"):
        span = timedelta(**{unit + "s": n})
        start, end = (ctx.now - span, ctx.now) if back else (ctx.now, ctx.now + span)
        return make_hit(m, start, end, lx.UNIT_PRECISION[unit], kind="range", vague=vague)
    if back:
        return make_hit(m, midnight(shift_date(t, unit, -n)), midnight(t), "day", kind="range", vague=vague)
    first = t if m.group().startswith("within") else t + ONE_DAY
    # "the next 4 business days" ends after the fourth, counting the first day if it is one
    last = shift_date(first - ONE_DAY, unit, n) + ONE_DAY if unit == "workday" else shift_date(first, unit, n)
    return make_hit(m, midnight(first), midnight(last), "day", kind="range", vague=vague)


@register_rule(
    r"(?P<w>the\s+other\s+day|(?:just\s+)?recently|lately|not\s+(?:so\s+)?long\s+ago|a\s+while\s+(?:ago|back)"
    r"|some\s+time\s+ago|a\s+long\s+time\s+ago|ages\s+ago)",
    when=("other", "recently", "lately", "long", "while", "time", "ages"),
)
def _vague(m: re.Match[str], ctx: Context) -> Hit | None:
    """the other day, recently, lately, a while ago: wide, coarse, flagged vague."""
    w = " ".join(m["w"].split())
    t = ctx.today
    if w == "the other day":
        return make_hit(m, *day_span(t - timedelta(days=10), 9), "week", vague=True)
    if w in ("a while ago", "a while back", "some time ago"):
        return make_hit(
            m, midnight(add_months(t, -12)), midnight(t - timedelta(days=14)), "unknown", vague=True
        )
    if w in ("a long time ago", "ages ago"):
        return make_hit(m, midnight(add_months(t, -120)), midnight(add_months(t, -6)), "unknown", vague=True)
    return make_hit(m, midnight(add_months(t, -1)), midnight(t + ONE_DAY), "month", vague=True)


@register_rule(
    r"(?P<mod>earlier|later)\s+(?:this|in\s+the)\s+(?P<unit>week|month|year)"
    r"|(?:the\s+)?(?:(?:rest|remainder)\s+of\s+(?:the\s+|this\s+|my\s+)?|remaining\s+(?:of\s+)?(?:the\s+|this\s+|my\s+)"
    r"|rest\s+this\s+)(?P<rest>week|month|year)"
    r"|(?P<mod2>earlier|later)\s+today",
    when=("earlier", "later", "rest", "remaining", "remainder"),
)
def _earlier_later(m: re.Match[str], ctx: Context) -> Hit | None:
    """earlier this month, later this week, later in the year, the rest of the week, later today."""
    t = ctx.today
    if m["mod2"]:
        start, end = (midnight(t), ctx.now) if m["mod2"] == "earlier" else (ctx.now, midnight(t + ONE_DAY))
        return make_hit(m, start, end, "day") if start < end else None
    if m["rest"]:
        whole = calendar_unit(m, t, m["rest"], 0)
        whole.start, whole.precision, whole.kind = midnight(t), "day", "range"
        return whole
    whole = calendar_unit(m, t, m["unit"], 0)
    assert whole.start is not None and whole.end is not None
    if m["mod"] == "earlier":
        whole.end = midnight(t)
    else:  # "later": the second half of the unit (from Thursday, the 16th, July), or from today once in it
        half = {
            "week": week_start(t) + timedelta(days=3),
            "month": t.replace(day=16),
            "year": date(t.year, 7, 1),
        }
        whole.start = midnight(max(half[m["unit"]], t))
    if whole.end is not None and whole.start is not None and whole.end <= whole.start:
        return None
    return whole


_OF = re.compile(r"\bof\b")


@register_rule(
    r"(?P<mod>early|mid|late|the\s+(?:beginning|start|middle|end)\s+of|(?:beginning|start|middle|end)\s+of)"
    r"[\s-]+(?:(?:the\s+)?(?P<rel>this|next|last)\s+|the\s+)?(?P<unit>week|month|year)",
    when=("early", "mid", "late", "beginning", "start", "middle", "end"),
)
def _unit_part(m: re.Match[str], ctx: Context) -> Hit | None:
    """early next week, the end of this month, late last year, by the end of the week."""
    if m["rel"] is None and not _OF.search(m.group()):
        return None  # "mid year" alone is an adjective; "the end of the year" is this year's end
    step = {"this": 0, "next": 1, "last": -1}[m["rel"] or "this"]
    whole = calendar_unit(m, ctx.today, m["unit"], step)
    assert whole.start is not None and whole.end is not None
    precision = {"week": "day", "month": "week", "year": "season"}[m["unit"]]
    return part_of(m, whole.start, whole.end, m["mod"], precision)


CLOCK = (
    r"(?:(?P<h>1[0-2]|0?[1-9])(?::(?P<mi>[0-5]\d))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w)"
    r"|(?P<h24>[01]?\d|2[0-3]):(?P<mi24>[0-5]\d)(?!\s*(?:/|pace|per|min|mile|km|ratio|split))"
    r"|(?P<word>noon|midday|midnight))"
)


_CLOCK_RANGE_BEFORE = re.compile(r"\d(?::\d\d)?\s*(?:[ap]\.?m\.?)?\s*(?:-|–|to|and|until|till)\s*$")


@register_rule(
    # a word cue needs a space: "afternoon" is not "after noon"
    rf"(?P<cue>(?:at|around|by|from|until|till|before|after|since|between)\s+|@\s*)?{CLOCK}",
    when=("noon", "midday", "midnight"),
    digits=True,
    shape=r"\d(?::\d\d)?\s*[ap]\.?m|\d:\d",
)
def _clock_time(m: re.Match[str], ctx: Context) -> Hit | None:
    """at 7pm, 19:30, at noon: today's, or the nearest one in the clause's direction."""
    if not (m["cue"] or m["ap"]) and not _CLOCK_RANGE_BEFORE.search(
        ctx.text, max(0, m.start() - 16), m.start()
    ):
        return None  # "a 8:12 mile", "1:10 ratio", "midnight blue"
    hour, minute, precision = clock_parts(m)
    direction = ctx.tense(m.start())
    at = datetime.combine(ctx.today, time(hour, minute))
    if direction == "past" and at > ctx.now:
        at -= ONE_DAY
    elif direction == "future" and at <= ctx.now:
        at += ONE_DAY
    step = timedelta(hours=1) if precision == "hour" else timedelta(minutes=1)
    return make_hit(m, at, at + step, precision)


def clock_parts(m: re.Match[str]) -> tuple[int, int, str]:
    if m["word"]:
        return (0 if m["word"] == "midnight" else 12), 0, "minute"
    if m["h24"]:
        return int(m["h24"]), int(m["mi24"]), "minute"
    hour = int(m["h"]) % 12 + (12 if m["ap"].startswith("p") else 0)
    return hour, int(m["mi"] or 0), "minute" if m["mi"] else "hour"


@register_rule(r"(?P<u>year|month)[\s-]to[\s-]date|ytd", when=("date", "ytd"))
def _to_date(m: re.Match[str], ctx: Context) -> Hit | None:
    """year to date, month to date."""
    t = ctx.today
    first = t.replace(month=1, day=1) if m["u"] != "month" else t.replace(day=1)
    return make_hit(m, midnight(first), midnight(t + ONE_DAY), "day", kind="range")


@register_rule(
    r"(?P<since>from\s+now\s+on)|(?P<until>(?:up\s+until|until|till|til)\s+now)|(?P<w>(?:right\s+|just\s+)?now|at\s+the\s+moment|at\s+present|currently|presently|as\s+we\s+speak"
    r"|(?P<wide>these\s+days|nowadays)|(?P<end>the\s+present|current\s+date|present))",
    when=("now", "present", "current", "currently", "presently", "moment", "days", "nowadays", "speak"),
)
def _now(m: re.Match[str], ctx: Context) -> Hit | None:
    """now, currently, at the moment: the day it was said; these days, nowadays: the weeks
    around it, vague. "the present" only ends a range ("between Jan 22 and the present")."""
    if m["since"]:
        return make_hit(m, midnight(ctx.today), None, "day", kind="since")
    if m["until"]:
        return make_hit(m, None, ctx.now, "day", kind="until")
    if m["end"]:
        return make_hit(m, *day_span(ctx.today), "day", standalone=False, present=True)
    before = _NOT_NOW_BEFORE.search(ctx.text, max(0, m.start() - 8), m.start())
    if before or _NOT_NOW.match(ctx.text, m.end()):
        return None  # "now and then", "now that you ask", "every now and again"
    if m["wide"]:
        start = midnight(add_months(ctx.today, -1))
        return make_hit(m, start, midnight(ctx.today + ONE_DAY), "month", vague=True, present=True)
    return make_hit(m, *day_span(ctx.today), "day", present=True)


_NOT_NOW = re.compile(r"\s+(?:and\s+(?:then|again)|that)\b")


_NOT_NOW_BEFORE = re.compile(r"\b(?:every|by)\s+$")


# -- ranges with a shared month: "June 3-5", "from 4 to 22 January", "between 3 and 12 of Sept" ------


@register_rule(
    rf"in\s+(?P<q0>{lx.QUANTITY})\s+weekends?"
    rf"|(?P<q>{lx.QUANTITY})\s+weekends?\s+(?P<dir>ago|back|earlier|later|from\s+now|hence)",
    when=("weekend", "weekends"),
)
def _weekends_away(m: re.Match[str], ctx: Context) -> Hit | None:
    """two weekends ago, two weekends later, in two weekends: weekends counted one by one
    from today, so "one weekend ago" is the last one gone and "in one weekend" the first
    one to come (this week's, on a weekday)."""
    q = " ".join((m["q0"] or m["q"]).split())
    sign = -1 if m["dir"] in ("ago", "back", "earlier") else 1
    # Weekends are counted in calendar weeks; the weekend of this week is the first to come
    # on a weekday, but already under way on Saturday and Sunday.
    first = 0 if sign > 0 and ctx.today.weekday() < 5 else sign

    def step(k: int) -> int:
        return first + sign * (k - 1)

    n = lx.number(q)
    if n is not None:
        return calendar_unit(m, ctx.today, "weekend", step(n)) if n > 0 else None
    lo, hi = next(r for w, r in lx.VAGUE_QUANTITIES.items() if w in q)
    near = calendar_unit(m, ctx.today, "weekend", step(lo))
    far = calendar_unit(m, ctx.today, "weekend", step(hi))
    assert near.start is not None and far.start is not None and near.end is not None and far.end is not None
    start, end = (far.start, near.end) if sign < 0 else (near.start, far.end)
    return make_hit(m, start, end, "week", vague=True)


@register_rule(
    rf"(?P<q>{lx.QUANTITY})\s+(?P<wd>{lx.WEEKDAY_FULL})s?\s+"
    r"(?P<dir>ago|back|earlier|later|from\s+now|from\s+today|hence)",
    when=tuple(w + "s" for w in lx.WEEKDAY_WORDS) + tuple(lx.WEEKDAY_WORDS),
    also=("ago", "back", "earlier", "later", "from", "hence"),
)
def _weekdays_away(m: re.Match[str], ctx: Context) -> Hit | None:
    """two Sundays from now, three Fridays ago: that weekday counted one by one from today."""
    n = lx.number(" ".join(m["q"].split()))
    if not n:
        return None  # "a few Fridays ago": no one day
    wd = lx.WEEKDAYS[m["wd"]]
    if m["dir"] in ("ago", "back", "earlier"):
        d = ctx.weekday(wd, m.start(), "past") - timedelta(days=7 * (n - 1))
    else:
        d = ctx.weekday(wd, m.start(), "future") + timedelta(days=7 * (n - 1))
    return make_hit(m, *day_span(d), "day")


@register_rule(
    r"for\s+the\s+(?P<unit>day|week|month|year)(?=\s*(?:[.,!?;)]|$|\s+(?:and|but|so|too|though|anyway)\b))",
    when=("day", "week", "month", "year"),
    also=("for",),
)
def _for_the_unit(m: re.Match[str], ctx: Context) -> Hit | None:
    """I'm done for the day, away for the month: the one under way (not "for the day we met")."""
    if m["unit"] == "day":
        return make_hit(m, *day_span(ctx.today), "day")
    return calendar_unit(m, ctx.today, m["unit"], 0)
