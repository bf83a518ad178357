"""Words the time-phrase resolver reads: months, weekdays, numbers, units, holidays.

Kept apart from the grammar so the grammar reads as rules. Every table here is
lower case; regex fragments are non-capturing and ordered longest first, so
an alternation never stops at a prefix ("sept" before "sep").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date, timedelta
from typing import Any

MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sept": 9,
    "sep": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}

WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
    "mon": 0,
    "tues": 1,
    "tue": 1,
    "weds": 2,
    "wed": 2,
    "thurs": 3,
    "thur": 3,
    "thu": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}

_ONES = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ORD_ONES = {
    "first": 1,
    "second": 2,
    "third": 3,
    "fourth": 4,
    "fifth": 5,
    "sixth": 6,
    "seventh": 7,
    "eighth": 8,
    "ninth": 9,
    "tenth": 10,
    "eleventh": 11,
    "twelfth": 12,
    "thirteenth": 13,
    "fourteenth": 14,
    "fifteenth": 15,
    "sixteenth": 16,
    "seventeenth": 17,
    "eighteenth": 18,
    "nineteenth": 19,
}
_ORD_TENS = {"twentieth": 20, "thirtieth": 30}


def alt(words: Iterable[str]) -> str:
    """A regex matching any of ``words``, longest first, factored into a trie.

    Python's ``re`` tries the branches of an alternation one by one at every
    position; sharing prefixes ("t(?:wo|hree|en)") lets it drop most of them
    on the first character, which made the phrase rules several times faster.
    """
    trie: dict[str, Any] = {}
    for word in set(words):
        node = trie
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}
    return "(?:" + _emit(trie) + ")"


def _emit(node: dict[str, Any]) -> str:
    """The alternation of a trie node's branches, each a run of letters and its own tail."""
    branches = []
    for ch, child in sorted(node.items()):
        if not ch:
            continue
        label = ch
        while len(child) == 1 and "" not in child:  # a run with no word ending inside it
            ((nxt, child),) = child.items()
            label += nxt
        tail = ""
        if any(child):
            inner = _emit({k: v for k, v in child.items() if k})
            tail = f"(?:{inner})?" if "" in child else inner
        branches.append(re.escape(label) + tail)
    return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"


def _number_words() -> dict[str, int]:
    words = dict(_ONES)
    words.update(_TENS)
    for tens, t in _TENS.items():
        for ones, o in _ONES.items():
            if o < 10:
                words[f"{tens}-{ones}"] = words[f"{tens} {ones}"] = t + o
    return words


def _ordinal_words() -> dict[str, int]:
    words = dict(_ORD_ONES)
    words.update(_ORD_TENS)
    for tens, t in (("twenty", 20), ("thirty", 30)):
        for ones, o in _ORD_ONES.items():
            if o < 10 and t + o <= 31:
                words[f"{tens}-{ones}"] = words[f"{tens} {ones}"] = t + o
    return words


NUMBER_WORDS = _number_words()
ORDINAL_WORDS = _ordinal_words()

#: A month's name; only an abbreviation takes a dot ("Oct. 2"), so "in March." ends at the name.
MONTH = (
    "(?:"
    + alt(k for k in MONTHS if len(k) > 4 or k in ("may", "june", "july"))
    + "|"
    + alt(k for k in MONTHS if len(k) <= 4 and k not in ("may", "june", "july"))
    + r"\.?)"
)
WEEKDAY_FULL = alt(k for k in WEEKDAYS if k.endswith("day"))
WEEKDAY = alt(WEEKDAYS) + r"\.?"
ORDINAL_WORD = alt(ORDINAL_WORDS)
DAY_NUMBER = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
#: A day of the month, in digits or words ("21st", "twenty-first").
DAY = rf"(?:{DAY_NUMBER}|{ORDINAL_WORD})"
YEAR = r"(?:1\d\d\d|20\d\d|21\d\d)"
#: A count: digits, number words, or a vague quantity ("a few").
QUANTITY = (
    r"(?:\d{1,3}|" + alt(NUMBER_WORDS) + r"|an?|a\s+couple(?:\s+of)?|couple(?:\s+of)?"
    r"|a\s+few|few|several|some)"
)
#: The words that place a weekday relative to a day: "last Friday", "this coming Monday".
RELATIVE_WEEKDAY_MODS = frozenset(
    "this|last|previous|next|following|this past|past|this coming|coming|upcoming".split("|")
)

VAGUE_QUANTITIES = {"couple": (1, 3), "few": (2, 5), "several": (3, 7), "some": (2, 6)}

UNITS = {
    "second": "second",
    "sec": "second",
    "minute": "minute",
    "min": "minute",
    "hour": "hour",
    "hr": "hour",
    "day": "day",
    "night": "day",
    "business day": "workday",
    "working day": "workday",
    "workday": "workday",
    "week": "week",
    "wk": "week",
    "fortnight": "fortnight",
    "month": "month",
    "mo": "month",
    "quarter": "quarter",
    "year": "year",
    "yr": "year",
    "decade": "decade",
}
UNIT = alt(UNITS) + r"s?"

#: Precision of an amount of time counted in this unit ("3 weeks ago" is known to a week).
UNIT_PRECISION = {
    "second": "instant",
    "minute": "minute",
    "hour": "hour",
    "day": "day",
    "workday": "day",
    "week": "week",
    "fortnight": "week",
    "month": "month",
    "quarter": "month",
    "year": "year",
    "decade": "decade",
}
#: One step coarser, for vague quantities ("a few days ago" is known to about a week).
WIDER = {
    "instant": "minute",
    "minute": "hour",
    "hour": "part_of_day",
    "part_of_day": "day",
    "day": "week",
    "weekend": "week",
    "week": "month",
    "month": "season",
    "season": "year",
    "year": "decade",
    "decade": "decade",
}

PARTS_OF_DAY = {  # local hours [from, to); to > 24 runs into the next day
    "morning": (5, 12),
    "afternoon": (12, 17),
    "evening": (17, 21),
    "night": (21, 29),
    "tonight": (17, 29),
    "lunchtime": (11, 14),
    "noon": (12, 13),
    "midday": (12, 13),
}
PART_OF_DAY = alt(("morning", "afternoon", "evening", "night"))

DECADE_WORDS = {
    "twenties": 20,
    "thirties": 30,
    "forties": 40,
    "fifties": 50,
    "sixties": 60,
    "seventies": 70,
    "eighties": 80,
    "nineties": 90,
}

SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}

#: Zones south of the equator, where "summer" is December to February.
SOUTHERN_PREFIXES = (
    "Australia/",
    "Antarctica/",
    "Pacific/Auckland",
    "Pacific/Chatham",
    "Pacific/Fiji",
    "Pacific/Tongatapu",
    "Pacific/Noumea",
    "Pacific/Efate",
    "America/Argentina/",
    "America/Buenos_Aires",
    "America/Santiago",
    "America/Punta_Arenas",
    "America/Sao_Paulo",
    "America/Montevideo",
    "America/Asuncion",
    "America/La_Paz",
    "America/Lima",
    "Africa/Johannesburg",
    "Africa/Maputo",
    "Africa/Harare",
    "Africa/Lusaka",
    "Africa/Windhoek",
    "Africa/Gaborone",
    "Africa/Maseru",
    "Africa/Mbabane",
    "Indian/Mauritius",
    "Indian/Reunion",
    "Indian/Antananarivo",
    "Chile/",
    "Brazil/East",
    "NZ",
)


def number(word: str) -> int | None:
    """The value of a count ("3", "three", "twenty-one", "a"); None for vague ones."""
    word = " ".join(word.split())
    if word.isdigit():
        return int(word)
    if word in ("a", "an"):
        return 1
    return NUMBER_WORDS.get(word)


_NON_DIGIT = re.compile(r"\D")


def day_number(word: str) -> int:
    """The value of a day of the month ("21st", "twenty-first", "07")."""
    word = " ".join(word.split())
    if word[:1].isdigit():
        return int(_NON_DIGIT.sub("", word))
    return ORDINAL_WORDS[word]


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year + month // 12, month % 12 + 1, 1) - timedelta(days=1)
    return last - timedelta(days=(last.weekday() - weekday) % 7)


def _easter(year: int) -> date:
    # Anonymous Gregorian computus (Meeus/Jones/Butcher).
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    m = (32 + 2 * e + 2 * i - h - k) % 7
    n = (a + 11 * h + 22 * m) // 451
    month, day = divmod(h + m - 7 * n + 114, 31)
    return date(year, month, day + 1)


#: Holidays whose date English speakers take for granted (US dates where they differ).
HOLIDAYS: dict[str, Callable[[int], date]] = {
    "new year's day": lambda y: date(y, 1, 1),
    "new years day": lambda y: date(y, 1, 1),
    "new year day": lambda y: date(y, 1, 1),
    "new year": lambda y: date(y, 1, 1),
    "new year's": lambda y: date(y, 1, 1),
    "new year's eve": lambda y: date(y, 12, 31),
    "new years eve": lambda y: date(y, 12, 31),
    "valentine's day": lambda y: date(y, 2, 14),
    "valentines day": lambda y: date(y, 2, 14),
    "st patrick's day": lambda y: date(y, 3, 17),
    "st. patrick's day": lambda y: date(y, 3, 17),
    "saint patrick's day": lambda y: date(y, 3, 17),
    "saint patrick": lambda y: date(y, 3, 17),
    "black friday": lambda y: _nth_weekday(y, 11, 3, 4) + timedelta(days=1),
    "earth day": lambda y: date(y, 4, 22),
    "easter": _easter,
    "easter sunday": _easter,
    "good friday": lambda y: _easter(y) - timedelta(days=2),
    "easter monday": lambda y: _easter(y) + timedelta(days=1),
    "mother's day": lambda y: _nth_weekday(y, 5, 6, 2),
    "mothers day": lambda y: _nth_weekday(y, 5, 6, 2),
    "memorial day": lambda y: _nth_weekday(y, 5, 0, -1),
    "father's day": lambda y: _nth_weekday(y, 6, 6, 3),
    "fathers day": lambda y: _nth_weekday(y, 6, 6, 3),
    "independence day": lambda y: date(y, 7, 4),
    "fourth of july": lambda y: date(y, 7, 4),
    "4th of july": lambda y: date(y, 7, 4),
    "labor day": lambda y: _nth_weekday(y, 9, 0, 1),
    "labour day": lambda y: _nth_weekday(y, 9, 0, 1),
    "halloween": lambda y: date(y, 10, 31),
    "thanksgiving": lambda y: _nth_weekday(y, 11, 3, 4),
    "christmas eve": lambda y: date(y, 12, 24),
    "christmas": lambda y: date(y, 12, 25),
    "christmas day": lambda y: date(y, 12, 25),
    "xmas": lambda y: date(y, 12, 25),
    "boxing day": lambda y: date(y, 12, 26),
    "martin luther king day": lambda y: _nth_weekday(y, 1, 0, 3),
    "mlk day": lambda y: _nth_weekday(y, 1, 0, 3),
    "groundhog day": lambda y: date(y, 2, 2),
    "presidents' day": lambda y: _nth_weekday(y, 2, 0, 3),
    "presidents day": lambda y: _nth_weekday(y, 2, 0, 3),
    "april fools' day": lambda y: date(y, 4, 1),
    "april fools day": lambda y: date(y, 4, 1),
    "anzac day": lambda y: date(y, 4, 25),
    "international workers' day": lambda y: date(y, 5, 1),
    "international workers day": lambda y: date(y, 5, 1),
    "cinco de mayo": lambda y: date(y, 5, 5),
    "juneteenth": lambda y: date(y, 6, 19),
    "canada day": lambda y: date(y, 7, 1),
    "bastille day": lambda y: date(y, 7, 14),
    "columbus day": lambda y: _nth_weekday(y, 10, 0, 2),
    "veterans day": lambda y: date(y, 11, 11),
    "veterans' day": lambda y: date(y, 11, 11),
    "remembrance day": lambda y: date(y, 11, 11),
    "australia day": lambda y: date(y, 1, 26),
}
HOLIDAY = alt(HOLIDAYS)

#: Zones where a holiday falls on another day than in HOLIDAYS (which has the US dates).
CANADA_PREFIXES = (
    "America/Toronto",
    "America/Vancouver",
    "America/Edmonton",
    "America/Winnipeg",
    "America/Halifax",
    "America/St_Johns",
    "America/Regina",
    "America/Montreal",
    "America/Moncton",
    "America/Whitehorse",
    "America/Yellowknife",
    "America/Iqaluit",
    "America/Glace_Bay",
    "America/Goose_Bay",
    "Canada/",
)
UK_PREFIXES = ("Europe/London", "Europe/Dublin", "Europe/Belfast", "GB", "Eire")
ANZ_PREFIXES = ("Australia/", "Pacific/Auckland", "Pacific/Chatham", "NZ")
#: Where Good Friday and Easter Monday are both public holidays: "Easter weekend" runs Friday to Monday.
EASTER_MONDAY_PREFIXES = ("Europe/", "Africa/", "Atlantic/", "GB", "Eire", *ANZ_PREFIXES)

_LOCAL_HOLIDAYS: dict[str, tuple[tuple[tuple[str, ...], Callable[[int], date]], ...]] = {
    "thanksgiving": ((CANADA_PREFIXES, lambda y: _nth_weekday(y, 10, 0, 2)),),
    "mother's day": ((UK_PREFIXES, lambda y: _easter(y) - timedelta(days=21)),),  # Mothering Sunday
    "father's day": ((ANZ_PREFIXES, lambda y: _nth_weekday(y, 9, 6, 1)),),
}
_LOCAL_HOLIDAYS["mothers day"] = _LOCAL_HOLIDAYS["mother's day"]
_LOCAL_HOLIDAYS["fathers day"] = _LOCAL_HOLIDAYS["father's day"]


def holiday(name: str, zone_key: str) -> Callable[[int], date]:
    """The date rule of a named holiday for a sender in ``zone_key`` (US dates unless the zone differs)."""
    for prefixes, fn in _LOCAL_HOLIDAYS.get(name, ()):
        if zone_key.startswith(prefixes):
            return fn
    return HOLIDAYS[name]


#: Holiday periods: (first day, days) for the occurrence around the holiday of ``year``.
HOLIDAY_PERIODS: dict[str, Callable[[int], tuple[date, int]]] = {
    # "the holidays", "Christmas break": Christmas Eve through New Year's Day, the days most
    # workplaces and schools share (school breaks themselves vary by district).
    "christmas": lambda y: (date(y, 12, 24), 9),
    # "Easter break": Good Friday through Easter Monday.
    "easter": lambda y: (_easter(y) - timedelta(days=2), 4),
    # "Thanksgiving break": the Thursday through Sunday.
    "thanksgiving": lambda y: (_nth_weekday(y, 11, 3, 4), 4),
}


def _tokens(phrases: object) -> frozenset[str]:
    return frozenset(t for p in phrases for t in re.findall(r"[a-z]+", str(p)))  # type: ignore[attr-defined]


# Trigger words: a rule runs on a message only if one of its words is there (see context._Rule).
MONTH_WORDS = frozenset(MONTHS)
WEEKDAY_WORDS = frozenset(WEEKDAYS)
UNIT_WORDS = frozenset(UNITS) | frozenset(u + "s" for u in UNITS)
HOLIDAY_WORDS = _tokens(HOLIDAYS) - {"s", "day", "of", "eve"}
NUMBER_TOKENS = _tokens(NUMBER_WORDS) | _tokens(ORDINAL_WORDS) | {"thousand", "hundred"}
SEASON_WORDS = frozenset(SEASONS)

#: A noun after a holiday or "weekend" that makes it an attribute ("the weekend bag", "Easter eggs").
COMPOUND_NOUN = re.compile(
    r"\s+(?:eggs?|bunny|tree|cards?|gifts?|presents?|lists?|lights|sweaters?|jumpers?|costumes?|candy|market|movies?"
    r"|songs?|carols?|spirit|decorations?|bags?|warriors?|editions?|rates?|pass|special|jobs?|shifts?|getaways?"
    r"|ornaments?|dinner\s+menu|traditions?|magic|music|food|shopping|cookies?|vibes?|wishes|mood|classics?|films?)\b"
)
