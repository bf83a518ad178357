"""Joining phrases found next to each other: ranges, since/until, offsets, week-of, times of day."""

from __future__ import annotations

import bisect
import re
from datetime import date, timedelta

from . import lexicon as lx
from .calendar import (
    ONE_DAY,
    RANK,
    add_months,
    day_span,
    midnight,
    month_span,
    week_start,
    weekday_from,
    years_later,
)
from .context import Context, Hit, Rule, at_word_start, digit_shapes, rules_in
from .relative import CLOCK, DURATION, clock_parts, counted_offset

_WORD = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")


def candidate_rules(text: str) -> list[Rule]:
    """The rules worth running on ``text`` (lower-cased): those its words or digits can wake."""
    return rules_in(text, set(_WORD.findall(text)), digit_shapes(text))


def find_matches(text: str, rules: list[Rule]) -> list[tuple[Rule, list[re.Match[str]]]]:
    """Each rule's matches in ``text`` (lower-cased), for the rules that have any, in rule order.
    Matching has no side effects, so it runs before any context is built: a message whose woken
    rules all fail to match costs no more."""
    found = []
    for rule in rules:
        matches = list(rule.pattern.finditer(text))
        if matches:
            found.append((rule, matches))
    return found


def scan(ctx: Context, matched: list[tuple[Rule, list[re.Match[str]]]]) -> list[Hit]:
    """The phrases the rules' matches (:func:`find_matches`) read, none overlapping: each match's
    handler runs in rule order, then match order (the order tense is first asked in, which
    its per-clause memo depends on); the longest phrases win."""
    found: list[Hit] = []
    for rule, matches in matched:
        handler = rule.handler
        for m in matches:
            try:
                hit = handler(m, ctx)
            except (ValueError, OverflowError):  # arithmetic past year 9999 or before year 1
                continue
            if hit is not None:
                found.append(hit)
    if len(found) < 2:
        return found
    found.sort(key=lambda h: (-(h.hi - h.lo), h.lo))
    # Longest first; a phrase is kept when it overlaps none kept so far. The kept ones are
    # disjoint, so their starts (sorted) find the only two neighbours that could overlap.
    starts: list[int] = []
    taken: list[Hit] = []
    for hit in found:
        i = bisect.bisect_right(starts, hit.lo)
        if i > 0 and taken[i - 1].hi > hit.lo:
            continue
        if i < len(taken) and taken[i].lo < hit.hi:
            continue
        starts.insert(i, hit.lo)
        taken.insert(i, hit)
    return taken


_DATE_AFTER_WEEKDAY = re.compile(r"[\s,(-]*")


_RANGE_GAP = re.compile(r"\s*(?:-|–|—|~|to|till|til|until|through|thru|and|through\s+to|up\s+to)\s*$")


# The look-backs searched for every atom open with a literal (``at_word_start``): the same
# matches as "\b(?:from|between)\s+$" and so on, found without trying every position.
_RANGE_LEAD = re.compile("(?:" + at_word_start(["from", "between"]) + r")\s+$")


_SINCE_LEAD = re.compile("(?:" + at_word_start([
    r"ever\s+since", "since", r"starting(?:\s+(?:from|on|in))?", r"beginning(?:\s+(?:on|in))?", r"as\s+of",
    "after",
]) + r")\s+$")


_UNTIL_LEAD = re.compile(r"\b(?P<w>up\s+until|until|till|til|'til|up\s+to|through|thru|by|before)\s+$")


_PREP_LEAD = re.compile("(?:" + at_word_start(["on", "in", "at", "during", "over", "throughout"]) + r")\s+$")


_WEEK_OF = re.compile(
    r"\b(?P<a>an?\s+|the\s+)?(?:week\s+(?:of|beginning(?:\s+on)?|starting(?:\s+on)?|commencing)|w/c)\s+(?:the\s+)?$"
)


_SPAN_FROM = re.compile(
    rf"\b(?:(?P<for>for)\s+)?{DURATION}\s*,?\s+(?P<how>from|starting|beginning|as\s+of)(?:\s+(?:from|on))?\s+$"
)


#: An event named between an offset and its date: "a week after the race on June 3".
_EVENT = r"(?:(?:the|my|our|his|her|their|your|a|an)\s+[a-z'-]+(?:\s+[a-z'-]+)?\s+(?:(?:on|in)\s+)?)?"


_UNIT_AROUND = re.compile(
    # "the last weekend before April 10", "the first Sunday after Easter": the nearest one, as without
    rf"\b(?:the\s+)?(?:(?:last|final|first|next)\s+)?(?P<u>day|week|weekend|month|year|{lx.WEEKDAY_FULL})\s+"
    rf"(?P<dir>before|after|following|prior\s+to)\s+{_EVENT}$"
)


_COUNT_AROUND = re.compile(rf"\b{DURATION}\s+(?P<dir>before|after|from|since|prior\s+to)\s+{_EVENT}$")


_PART_AFTER = re.compile(rf"\s+(?:in\s+the\s+)?(?P<part>{lx.PART_OF_DAY})\b")


_CLOCK_AFTER = re.compile(rf"\s*(?:,\s*)?(?:at\s+|around\s+|@\s*)?{CLOCK}")


_BARE_HOUR_AFTER = re.compile(
    r"\s*(?:,\s*)?(?:at|around|@)\s*(?P<bh>1[0-2]|0?[1-9])(?:[:.](?P<bm>[0-5]\d))?"
    r"(?![\w:/%]|\.\d|\s*(?:%|km\b|k\b|mi\b|miles?\b|kg\b|lbs?\b|people\b|of\b|percent\b|[-–]\s*\d))"
)


def _at_clock(h: Hit, hour: int, minute: int, precision: str, hi: int) -> None:
    """Narrow a day's phrase to a clock time on it (``hour`` may run past 24 into the next day)."""
    assert h.start is not None
    h.start = midnight(h.start.date()) + timedelta(hours=hour, minutes=minute)
    h.end = h.start + (timedelta(hours=1) if precision == "hour" else timedelta(minutes=1))
    h.precision, h.hi = precision, hi


_CLOCK_BEFORE = re.compile(rf"\b(?:at\s+|around\s+)?{CLOCK}\s*(?:,\s*)?(?:on\s+)?$")


def combine_hits(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """Join atoms into ranges, since/until, offsets and times of day."""
    text = ctx.text
    out: list[Hit] = []
    i = 0
    while i < len(hits):
        a = hits[i]
        b = hits[i + 1] if i + 1 < len(hits) else None
        if (
            b is not None
            and a.weekday
            and not b.weekday
            and not b.counted
            and b.precision == "day"
            and _DATE_AFTER_WEEKDAY.fullmatch(text, a.hi, b.lo)
        ):
            if "(" in text[a.hi : b.lo] and text.startswith(")", b.hi):
                b.hi += 1
            b.lo = a.lo  # "Friday 7/6", "this friday (jun-15)": the date says which Friday
            if b.yearless and b.start is not None and a.start is not None:
                _same_weekday(ctx, b, a.start.weekday())  # ... and the Friday which year
            _anchored_weekday(text, a, b)
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
    out = _weekdays_in_week(text, out)
    kept: list[Hit] = []
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
        if kept and _weekday_of_offset(ctx, kept[-1], h):
            kept.pop()
        kept.append(h)
    return _read_back(ctx, kept)


_NEAR = 80  # how far back a bare day of the month looks for the date whose month it shares
#: A date that names its month (not "Friday", not "yesterday"): a bare day after it shares the month.
_NAMES_MONTH = re.compile(rf"{lx.MONTH}|\d[/.-]\d")


def _read_back(ctx: Context, hits: list[Hit]) -> list[Hit]:
    """Phrases read from the day named before them in the message.

    A bare day of the month after a date that names its month takes that month: "May 25th -
    coffee - on 29th" is May 29th ("I ran on Friday, I race on the 29th" keeps the tense's
    month). "the next day", "the day before" are a day from the last day named; with none they
    are from today, flagged vague, and in a past clause (a day of a story not told) dropped.
    """
    out: list[Hit] = []
    anchor: Hit | None = None
    for h in hits:
        if h.anaphor:
            if anchor is not None and anchor.start is not None:
                h.start, h.end = day_span(anchor.start.date() + timedelta(days=h.anaphor))
            elif ctx.tense(h.lo) == "past":
                continue
            else:
                h.start, h.end = day_span(ctx.today + timedelta(days=h.anaphor))
                h.vague = True
        elif (
            h.moves == "month"
            and anchor is not None
            and anchor.start is not None
            and h.start is not None
            and not anchor.moves
            and h.lo - anchor.hi <= _NEAR
            and _NAMES_MONTH.search(ctx.text, anchor.lo, anchor.hi)
        ):
            try:
                day = anchor.start.date().replace(day=h.start.day)
            except ValueError:  # "on the 31st" after a date in a shorter month: keep the tense's month
                day = None
            if day is not None:
                h.start, h.end = day_span(day)
        if h.kind == "point" and h.precision == "day" and h.start is not None:
            anchor = h
        out.append(h)
    return out


_WEEKDAY_MOD = re.compile(r"(?:the\s+)?(this\s+past|this\s+coming|[a-z]+)\s")


def _anchored_weekday(text: str, a: Hit, b: Hit) -> None:
    """ "last Friday on 23 January 2022" (a Sunday): a relative weekday before a date on another
    weekday is read from that date, as if said then (the Friday just gone, the 21st)."""
    if a.start is None or b.start is None or b.start.weekday() == a.start.weekday():
        return
    m = _WEEKDAY_MOD.match(text, a.lo)
    mod = " ".join(m[1].split()) if m else ""
    if mod in lx.RELATIVE_WEEKDAY_MODS:
        b.start, b.end = day_span(weekday_from(mod, a.start.weekday(), b.start.date()))


_OFFSET_WEEKDAY_GAP = re.compile(r"\s*,?\s*")


def _weekday_of_offset(ctx: Context, a: Hit, b: Hit) -> bool:
    """ "Monday two weeks from now", "3 weeks after Christmas on Friday": that weekday in the week the
    count lands in. Folds ``a`` into ``b`` (True) when one is a weekday and the other a count."""
    count, day = (b, a) if a.weekday else (a, b)
    if not (day.weekday and count.counted) or not _OFFSET_WEEKDAY_GAP.fullmatch(ctx.text, a.hi, b.lo):
        return False
    if count.start is None or day.start is None or count.precision not in ("day", "week"):
        return False
    if "," in ctx.text[a.hi : b.lo] and count.start < ctx.now:
        return False  # "I ran on Monday, two weeks ago I swam": two phrases
    b.start, b.end = day_span(week_start(count.start.date()) + timedelta(days=day.start.weekday()))
    b.precision, b.kind, b.lo, b.weekday, b.counted = "day", "point", a.lo, False, False
    return True


_WEEK_THEN_WEEKDAY = re.compile(r"\s*(?:[:–-]\s*)?(?:on\s+)?")


def _calendar_week(h: Hit) -> bool:
    return (
        h.kind == "point"
        and h.precision == "week"
        and h.start is not None
        and h.end is not None
        and h.start.weekday() == 0
        and (h.end - h.start).days == 7
    )


def _weekdays_in_week(text: str, hits: list[Hit]) -> list[Hit]:
    """A week then weekdays in it: "next week between Wednesday and Friday", "last week - Monday"."""
    out: list[Hit] = []
    for h in hits:
        w = out[-1] if out else None
        if (
            w is not None
            and (h.weekday or h.weekdays)
            and h.start is not None
            and h.end is not None
            and _calendar_week(w)
            and _WEEK_THEN_WEEKDAY.fullmatch(text, w.hi, h.lo)
        ):
            assert w.start is not None
            shift = w.start.date() - week_start(h.start.date())
            h.start, h.end, h.lo = h.start + shift, h.end + shift, w.lo
            h.weekday = h.weekdays = False
            out[-1] = h
            continue
        out.append(h)
    return out


def _range(ctx: Context, a: Hit, b: Hit) -> bool:
    """Make ``a`` the range from ``a`` through ``b``; False when they do not form one."""
    if a.start is None or b.end is None or b.start is None or a.kind != "point" or b.kind != "point":
        return False
    clock = ("instant", "minute", "hour")
    if (a.present and b.present) or (_calendar_week(a) and b.weekday):
        return False  # "previous week - Monday" is that week's Monday
    if not (a.present or b.present) and (a.precision in clock) != (b.precision in clock):
        return False  # "3pm - this week" is not a range
    if a.present:  # "between now and November 15th": from the moment it was said
        a.start, a.precision = ctx.now, b.precision
    if a.yearless and b.yearless and a.precision == b.precision and a.precision in ("day", "month"):
        # Each end's year was picked alone; put the second in the year that follows the first...
        lag = a.start.year - b.start.year
        b.start, b.end = years_later(b.start, lag), years_later(b.end, lag)
        if b.end <= a.start:
            b.start, b.end = years_later(b.start, 1), years_later(b.end, 1)
        for shift in (-1, 0, 1):  # ... and a range that contains today is the one meant
            s, e = years_later(a.start, shift), years_later(b.end, shift)
            if s <= ctx.now < e:
                a.start, b.start, b.end = s, years_later(b.start, shift), e
                break
    if b.weekday and b.start < a.start:
        weeks = (a.start - b.start).days // 7 + 1
        b.start, b.end = b.start + timedelta(weeks=weeks), b.end + timedelta(weeks=weeks)
    if b.yearless and b.start < a.start:
        b.start, b.end = years_later(b.start, 1), years_later(b.end, 1)
    elif a.yearless and not b.yearless and a.start.year != b.start.year and a.precision in ("day", "month"):
        a.start, a.end = years_later(a.start, b.start.year - a.start.year), None
        if a.start > b.start:
            a.start = years_later(a.start, -1)
    if b.end <= a.start:
        return False
    end = ctx.now if b.present else b.end
    if end <= a.start:
        return False
    a.precision = a.precision if b.present else min(a.precision, b.precision, key=RANK.__getitem__)
    a.present = False
    a.weekdays = a.weekday and b.weekday
    a.hi, a.end, a.kind, a.standalone = b.hi, end, "range", True
    a.vague = a.vague or b.vague
    return True


def _refine(ctx: Context, h: Hit) -> None:
    """Leading and trailing words that change an atom: since, until, the day after, 3 weeks before, at 7pm."""
    text = ctx.text
    window = max(0, h.lo - 40)
    before = text[window : h.lo]  # cheap word checks (inline, as this runs per atom) spare most lead patterns

    if h.kind == "point" and h.start is not None and h.end is not None:
        if h.precision == "day" and h.end - h.start == ONE_DAY:
            m = _PART_AFTER.match(text, h.hi)
            if m:
                lo, hi = lx.PARTS_OF_DAY[m["part"]]
                h.start, h.end = h.start + timedelta(hours=lo), h.start + timedelta(hours=hi)
                h.precision, h.hi = "part_of_day", m.end()
            else:
                m = _CLOCK_AFTER.match(text, h.hi)
                mb = (
                    _CLOCK_BEFORE.search(text, window, h.lo)
                    if _DIGIT.search(before) or "noon" in before or "midday" in before or "midnight" in before
                    else None
                )
                if m or mb:
                    hour, minute, precision = clock_parts(m or mb)  # type: ignore[arg-type]
                    h.start = h.start + timedelta(hours=hour, minutes=minute)
                    h.end = h.start + (timedelta(hours=1) if precision == "hour" else timedelta(minutes=1))
                    h.precision = precision
                    if m:
                        h.hi = m.end()
                    else:
                        h.lo = mb.start()  # type: ignore[union-attr]
                elif mh := _BARE_HOUR_AFTER.match(text, h.hi):
                    # "tomorrow at 8": 1-6 is afternoon, 7-11 morning, as appointments go
                    hour = int(mh["bh"]) % 12 + (12 if 1 <= int(mh["bh"]) <= 6 else 0)
                    _at_clock(h, hour, int(mh["bm"] or 0), "minute" if mh["bm"] else "hour", mh.end())
        if h.precision == "part_of_day" and (h.end - h.start) <= ONE_DAY:
            m = _CLOCK_AFTER.match(text, h.hi)
            mh = None if m else _BARE_HOUR_AFTER.match(text, h.hi)
            if m or mh:  # "tonight at 8", "tomorrow morning at 9:30": the hour inside that part
                hour, minute, precision = clock_parts(m) if m else (
                    int(mh["bh"]) % 12, int(mh["bm"] or 0), "minute" if mh["bm"] else "hour"  # type: ignore[index]
                )
                day = midnight(h.start.date())
                offsets = (0, 24) if m and m["ap"] else (0, 12, 24, 36)
                for cand in (hour + k for k in offsets):
                    at = day + timedelta(hours=cand, minutes=minute)
                    if h.start <= at < h.end:
                        h.start = day
                        _at_clock(h, cand, minute, precision, (m or mh).end())  # type: ignore[union-attr]
                        break
        m = _WEEK_OF.search(text, window, h.lo) if "week" in before or "w/c" in before else None
        if m and h.precision == "day":
            if m["a"] and m["a"].startswith("a"):  # "a week starting tomorrow": seven days from it
                h.end, h.kind, h.lo = h.start + timedelta(days=7), "range", m.start()
                return
            # "the week of April 10th", "w/c Feb 4": the Monday-Sunday week holding the day
            h.start, h.end = day_span(week_start(h.start.date()), 7)
            h.precision, h.lo = "week", m.start()
            return
        m = (
            _SPAN_FROM.search(text, window, h.lo)
            if "from" in before or "starting" in before or "beginning" in before or "as of" in before
            else None
        )
        if m and (m["for"] or m["how"] != "from"):
            moved = counted_offset(m, ctx, h.start, 1, m.group())
            if moved is not None and moved.start is not None:
                h.end, h.kind, h.lo = midnight(moved.start.date()), "range", m.start()
                h.precision = "day"
                return
        m = (
            _COUNT_AROUND.search(text, window, h.lo)
            if "before" in before or "after" in before or "from" in before or "since" in before
            or "prior" in before
            else None
        )
        if m and RANK[h.precision] > RANK["day"]:
            # "a year after 2019" moves the whole period; "two days after June" says nothing finer.
            sign = -1 if m["dir"] in ("before", "prior to") else 1
            moved = counted_offset(m, ctx, h.start, sign, m.group())
            moved_end = counted_offset(m, ctx, h.end, sign, m.group())
            if (
                moved is not None
                and moved_end is not None
                and not moved.vague
                and RANK[moved.precision if moved.precision != "day" else _unit_precision(m)]
                >= RANK[h.precision]
            ):
                h.start, h.end, h.lo = moved.start, moved_end.start, m.start()
                return
            m = None
        if m:
            sign = -1 if m["dir"] in ("before", "prior to") else 1
            moved = counted_offset(m, ctx, h.start, sign, m.group())
            if moved is not None:
                h.start, h.end, h.precision, h.vague = moved.start, moved.end, moved.precision, moved.vague
                h.lo, h.counted = m.start(), True
                return
        m = (
            _UNIT_AROUND.search(text, window, h.lo)
            if "before" in before or "after" in before or "following" in before or "prior" in before
            else None
        )
        if m:
            _adjacent(h, m["u"], -1 if m["dir"] in ("before", "prior to") else 1)
            h.lo = m.start()
            return
    if h.kind in ("point", "range") and h.start is not None:
        m = (
            _UNTIL_LEAD.search(text, window, h.lo)
            if "til" in before or "up to" in before or "through" in before or "thru" in before
            or "by" in before or "before" in before
            else None
        )
        if m and h.standalone and not h.present:  # "what are you up to now?"
            if ctx.tense(h.lo) != "past":  # "I'm off until Oct 5" in December: next October
                while h.start < midnight(ctx.today) and _move(h, 1):
                    pass
            inclusive = m["w"] in ("through", "thru", "by")
            h.end = h.end if inclusive else h.start
            h.start, h.kind, h.lo = None, "until", m.start()
            return
        m = (
            _SINCE_LEAD.search(text, window, h.lo)
            if "since" in before or "start" in before or "beginning" in before or "as of" in before
            or "after" in before
            else None
        )
        if m and h.kind == "point":
            if "since" in m.group():  # "since X" names a past start, whatever the verb's tense
                while h.start > ctx.now and _move(h, -1):
                    pass
            if m.group().startswith("after"):
                h.start = h.end
            h.end, h.kind, h.lo = None, "since", m.start()
            return
    # "working on currently", "it's over now"; the lead ends in a space, so no space, no search
    if h.kind == "point" and not h.present and text[h.lo - 1 : h.lo].isspace() \
            and (m := _PREP_LEAD.search(text, window, h.lo)):
        h.lo = m.start()


def _same_weekday(ctx: Context, h: Hit, wd: int) -> None:
    """Move a year-less day to the year, nearest today, in which it falls on weekday ``wd``."""
    assert h.start is not None
    d = h.start.date()
    options = []
    for shift in range(-1, 2):
        try:
            moved = d.replace(year=d.year + shift)
        except ValueError:
            continue
        if moved.weekday() == wd and abs((moved - ctx.today).days) <= 183:
            options.append(moved)
    if len(options) == 1:  # only a weekday that picks one date within half a year of today
        h.start, h.end = day_span(options[0])


def _unit_precision(m: re.Match[str]) -> str:
    """The precision of the finest unit an amount is counted in ("a year" -> year)."""
    units = [lx.UNITS.get(u.rstrip("s"), lx.UNITS.get(u, "day")) for u in (m["u"], m["u2"]) if u]
    return min((lx.UNIT_PRECISION[u] for u in units), key=RANK.__getitem__)


def _move(h: Hit, sign: int) -> bool:
    """Move a phrase whose year, month or week was chosen by tense one step; False if it is fixed."""
    assert h.start is not None and h.end is not None
    if h.weekday:
        step = timedelta(days=7 * sign)
        h.start, h.end = h.start + step, h.end + step
    elif h.moves == "month":
        d = h.start.date()
        first = add_months(d.replace(day=1), sign)
        try:
            h.start, h.end = day_span(first.replace(day=d.day))
        except ValueError:  # "the 31st" in a shorter month: skip it
            first = add_months(first, sign)
            h.start, h.end = day_span(first.replace(day=d.day))
    elif h.yearless:
        h.start, h.end = years_later(h.start, sign), years_later(h.end, sign)
    else:
        return False
    return True


def _adjacent(h: Hit, unit: str, sign: int) -> None:
    assert h.start is not None and h.end is not None
    d = (h.start if sign < 0 else h.end - ONE_DAY).date()
    if unit == "day":
        h.start, h.end = day_span(d + timedelta(days=sign))
        h.precision = "day"
    elif unit == "week":
        h.start, h.end = day_span(week_start(d) + timedelta(days=7 * sign), 7)
        h.precision = unit
    elif unit == "weekend":  # the first weekend wholly after (or before) the day
        if sign > 0:
            saturday = d + timedelta(days=(5 - d.weekday()) % 7 or 7)
        else:
            saturday = d - timedelta(days=(d.weekday() - 5) % 7 or 7)
            if saturday + ONE_DAY >= d:
                saturday -= timedelta(days=7)
        h.start, h.end = day_span(saturday, 2)
        h.precision = unit
    elif unit in lx.WEEKDAYS:  # "the Sunday before 25 May": the nearest one strictly before
        wd = lx.WEEKDAYS[unit]
        h.start, h.end = day_span(d + timedelta(days=sign * ((sign * (wd - d.weekday()) - 1) % 7 + 1)))
        h.precision = "day"
    elif unit == "month":
        first = add_months(d.replace(day=1), sign)
        h.start, h.end = month_span(first.year, first.month)
        h.precision = "month"
    else:
        y = d.year + sign
        h.start, h.end, h.precision = midnight(date(y, 1, 1)), midnight(date(y + 1, 1, 1)), "year"
