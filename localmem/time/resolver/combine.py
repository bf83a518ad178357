"""Joining phrases found next to each other: ranges, since/until, offsets, week-of, times of day."""

from __future__ import annotations

import re
from datetime import date, timedelta

from . import lexicon as lx
from .calendar import _DAY, _RANK, _add_months, _days, _midnight, _month, _week_start, _years_later
from .context import _Context, _Hit, _Rule, rules_for
from .relative import _CLOCK, _DURATION, _clock_parts, _counted

_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")


def candidate_rules(text: str) -> list[_Rule]:
    """The rules worth running on ``text`` (lower-cased): those its words or digits can wake."""
    return rules_for(set(_WORD.findall(text)), _DIGIT.search(text) is not None)


def _scan(ctx: _Context, rules: list[_Rule]) -> list[_Hit]:
    found: list[_Hit] = []
    for rule in rules:
        pattern, handler = rule.pattern, rule.handler
        for m in pattern.finditer(ctx.text):
            try:
                hit = handler(m, ctx)
            except (ValueError, OverflowError):  # arithmetic past year 9999 or before year 1
                continue
            if hit is not None:
                found.append(hit)
    found.sort(key=lambda h: (-(h.hi - h.lo), h.lo))
    taken: list[_Hit] = []
    for hit in found:
        if all(hit.hi <= t.lo or hit.lo >= t.hi for t in taken):
            taken.append(hit)
    taken.sort(key=lambda h: h.lo)
    return taken


_DATE_AFTER_WEEKDAY = re.compile(r"[\s,(-]*")


_RANGE_GAP = re.compile(r"\s*(?:-|–|—|~|to|till|til|until|through|thru|and|through\s+to|up\s+to)\s*$")


_RANGE_LEAD = re.compile(r"\b(?:from|between)\s+$")


_SINCE_LEAD = re.compile(
    r"\b(?:ever\s+since|since|starting(?:\s+(?:from|on|in))?|beginning(?:\s+(?:on|in))?|as\s+of|after)\s+$"
)


_UNTIL_LEAD = re.compile(r"\b(?P<w>up\s+until|until|till|til|'til|up\s+to|through|thru|by|before)\s+$")


_PREP_LEAD = re.compile(r"\b(?:on|in|at|during|over|throughout)\s+$")


_WEEK_OF = re.compile(
    r"\b(?:the\s+)?(?:week\s+(?:of|beginning|starting(?:\s+on)?|commencing)|w/c)\s+(?:the\s+)?$"
)


_SPAN_FROM = re.compile(
    rf"\b(?:(?P<for>for)\s+)?{_DURATION}\s*,?\s+(?P<how>from|starting|beginning|as\s+of)(?:\s+(?:from|on))?\s+$"
)


_UNIT_AROUND = re.compile(
    r"\b(?:the\s+)?(?P<u>day|week|weekend|month|year)\s+(?P<dir>before|after|following|prior\s+to)\s+$"
)


_COUNT_AROUND = re.compile(rf"\b{_DURATION}\s+(?P<dir>before|after|from|since|prior\s+to)\s+$")


_PART_AFTER = re.compile(rf"\s+(?:in\s+the\s+)?(?P<part>{lx.PART_OF_DAY})\b")


_CLOCK_AFTER = re.compile(rf"\s*(?:,\s*)?(?:at\s+|around\s+|@\s*)?{_CLOCK}")


_CLOCK_BEFORE = re.compile(rf"\b(?:at\s+|around\s+)?{_CLOCK}\s*(?:,\s*)?(?:on\s+)?$")


def _combine(ctx: _Context, hits: list[_Hit]) -> list[_Hit]:
    """Join atoms into ranges, since/until, offsets and times of day."""
    text = ctx.text
    out: list[_Hit] = []
    i = 0
    while i < len(hits):
        a = hits[i]
        b = hits[i + 1] if i + 1 < len(hits) else None
        if (
            b is not None
            and a.weekday
            and not b.weekday
            and b.precision == "day"
            and _DATE_AFTER_WEEKDAY.fullmatch(text, a.hi, b.lo)
        ):
            b.lo = a.lo  # "Friday 7/6", "this friday (jun-15)": the date says which Friday
            i += 1
            continue
        if b is not None and b.lo - a.hi <= 16:
            lead = _RANGE_LEAD.search(text, max(0, a.lo - 10), a.lo)
            gap = text[a.hi : b.lo]
            m = _RANGE_GAP.match(gap)
            if m and (lead or "and" not in gap) and _range(ctx, a, b):
                if lead:
                    a.lo = lead.start()
                out.append(a)
                i += 2
                continue
        out.append(a)
        i += 1
    kept: list[_Hit] = []
    for h in out:
        before = (h.lo, h.hi, h.start, h.end, h.precision, h.kind, h.vague)
        try:
            _refine(ctx, h)
        except (ValueError, OverflowError):  # an offset past the calendar: keep the phrase as found
            h.lo, h.hi, h.start, h.end, h.precision, h.kind, h.vague = before
        if kept and h.hi <= kept[-1].hi:
            continue  # the previous phrase took this one in ("tomorrow afternoon")
        # A refinement may reach back over the previous phrase ("3pm Wednesday" takes "3pm").
        while kept and h.lo < kept[-1].hi:
            if h.lo <= kept[-1].lo:
                kept.pop()
            else:
                h.lo = kept[-1].hi
                while h.lo < h.hi and ctx.text[h.lo] in " ,":
                    h.lo += 1
        kept.append(h)
    return kept


def _range(ctx: _Context, a: _Hit, b: _Hit) -> bool:
    """Make ``a`` the range from ``a`` through ``b``; False when they do not form one."""
    if a.start is None or b.end is None or b.start is None or a.kind != "point" or b.kind != "point":
        return False
    clock = ("instant", "minute", "hour")
    if b.standalone and (a.precision in clock) != (b.precision in clock):
        return False  # "3pm - this week" is not a range
    if a.yearless and b.yearless and a.precision == b.precision and a.precision in ("day", "month"):
        for shift in (-1, 0):  # a range of months that contains today is the one meant
            s, e = _years_later(a.start, shift), _years_later(b.end, shift)
            if e <= s:
                e = _years_later(e, 1)
            if s <= ctx.now < e:
                a.start, b.start, b.end = s, _years_later(b.start, shift), e
                break
    if b.weekday and b.start < a.start:
        weeks = (a.start - b.start).days // 7 + 1
        b.start, b.end = b.start + timedelta(weeks=weeks), b.end + timedelta(weeks=weeks)
    if b.yearless and b.start < a.start:
        b.start, b.end = _years_later(b.start, 1), _years_later(b.end, 1)
    elif a.yearless and not b.yearless and a.start.year != b.start.year and a.precision in ("day", "month"):
        a.start, a.end = _years_later(a.start, b.start.year - a.start.year), None
        if a.start > b.start:
            a.start = _years_later(a.start, -1)
    if b.end <= a.start:
        return False
    end = b.end if b.standalone else b.start
    if end <= a.start:
        return False
    a.precision = min(a.precision, b.precision, key=_RANK.__getitem__) if b.standalone else a.precision
    a.hi, a.end, a.kind, a.standalone = b.hi, end, "range", True
    a.vague = a.vague or b.vague
    return True


def _refine(ctx: _Context, h: _Hit) -> None:
    """Leading and trailing words that change an atom: since, until, the day after, 3 weeks before, at 7pm."""
    text = ctx.text
    window = max(0, h.lo - 40)
    before = text[window : h.lo]  # cheap word checks spare most of the lead patterns below

    def near(*words: str) -> bool:
        return any(w in before for w in words)

    if h.kind == "point" and h.start is not None and h.end is not None:
        if h.precision == "day" and h.end - h.start == _DAY:
            m = _PART_AFTER.match(text, h.hi)
            if m:
                lo, hi = lx.PARTS_OF_DAY[m["part"]]
                h.start, h.end = h.start + timedelta(hours=lo), h.start + timedelta(hours=hi)
                h.precision, h.hi = "part_of_day", m.end()
            else:
                m = _CLOCK_AFTER.match(text, h.hi)
                mb = (
                    _CLOCK_BEFORE.search(text, window, h.lo)
                    if _DIGIT.search(before) or near("noon", "midday", "midnight")
                    else None
                )
                if m or mb:
                    hour, minute, precision = _clock_parts(m or mb)  # type: ignore[arg-type]
                    h.start = h.start + timedelta(hours=hour, minutes=minute)
                    h.end = h.start + (timedelta(hours=1) if precision == "hour" else timedelta(minutes=1))
                    h.precision = precision
                    if m:
                        h.hi = m.end()
                    else:
                        h.lo = mb.start()  # type: ignore[union-attr]
        m = _WEEK_OF.search(text, window, h.lo) if near("week", "w/c") else None
        if m and h.precision == "day":
            h.end, h.precision, h.lo = h.start + timedelta(days=7), "week", m.start()
            return
        m = _SPAN_FROM.search(text, window, h.lo) if near("from", "starting", "beginning", "as of") else None
        if m and (m["for"] or m["how"] != "from"):
            moved = _counted(m, ctx, h.start, 1, m.group())
            if moved is not None and moved.start is not None:
                h.end, h.kind, h.lo = _midnight(moved.start.date()), "range", m.start()
                h.precision = "day"
                return
        m = (
            _COUNT_AROUND.search(text, window, h.lo)
            if near("before", "after", "from", "since", "prior")
            else None
        )
        if m:
            sign = -1 if m["dir"] in ("before", "prior to") else 1
            moved = _counted(m, ctx, h.start, sign, m.group())
            if moved is not None:
                h.start, h.end, h.precision, h.vague = moved.start, moved.end, moved.precision, moved.vague
                h.lo = m.start()
                return
        m = _UNIT_AROUND.search(text, window, h.lo) if near("before", "after", "following", "prior") else None
        if m:
            _adjacent(h, m["u"], -1 if m["dir"] in ("before", "prior to") else 1)
            h.lo = m.start()
            return
    if h.kind in ("point", "range") and h.start is not None:
        m = (
            _UNTIL_LEAD.search(text, window, h.lo)
            if near("til", "up to", "through", "thru", "by", "before")
            else None
        )
        if m and h.standalone:
            inclusive = m["w"] in ("through", "thru", "by")
            h.end = h.end if inclusive else h.start
            h.start, h.kind, h.lo = None, "until", m.start()
            return
        m = (
            _SINCE_LEAD.search(text, window, h.lo)
            if near("since", "start", "beginning", "as of", "after")
            else None
        )
        if m and h.kind == "point":
            if m.group().startswith("after"):
                h.start = h.end
            h.end, h.kind, h.lo = None, "since", m.start()
            return
    m = _PREP_LEAD.search(text, window, h.lo)
    if m and h.kind == "point":
        h.lo = m.start()


def _adjacent(h: _Hit, unit: str, sign: int) -> None:
    assert h.start is not None and h.end is not None
    d = (h.start if sign < 0 else h.end - _DAY).date()
    if unit == "day":
        h.start, h.end = _days(d + timedelta(days=sign))
        h.precision = "day"
    elif unit == "week":
        h.start, h.end = _days(_week_start(d) + timedelta(days=7 * sign), 7)
        h.precision = unit
    elif unit == "weekend":  # the first weekend wholly after (or before) the day
        if sign > 0:
            saturday = d + timedelta(days=(5 - d.weekday()) % 7 or 7)
        else:
            saturday = d - timedelta(days=(d.weekday() - 5) % 7 or 7)
            if saturday + _DAY >= d:
                saturday -= timedelta(days=7)
        h.start, h.end = _days(saturday, 2)
        h.precision = unit
    elif unit == "month":
        first = _add_months(d.replace(day=1), sign)
        h.start, h.end = _month(first.year, first.month)
        h.precision = "month"
    else:
        y = d.year + sign
        h.start, h.end, h.precision = _midnight(date(y, 1, 1)), _midnight(date(y + 1, 1, 1)), "year"
