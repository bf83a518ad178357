"""The message being read: its local clock, its tense, and the registry of phrase rules."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from . import lexicon as lx
from .firstchar import first_chars


class Hit:
    """A phrase being resolved: naive local bounds, before zone conversion.

    A plain class with ``__slots__`` and its own ``__init__`` (what ``@dataclass(slots=True)``
    would write), not a dataclass: compiled by mypyc, a dataclass keeps the interpreted
    ``__init__`` the dataclasses module generates, and a hit is built for every phrase."""

    __slots__ = ("lo", "hi", "start", "end", "precision", "kind", "vague", "yearless", "standalone",
                 "weekday", "moves", "present", "counted", "weekdays", "anaphor")

    def __init__(
        self,
        lo: int,
        hi: int,
        start: datetime | None,
        end: datetime | None,
        precision: str,
        kind: str = "point",
        vague: bool = False,
        yearless: bool = False,
        standalone: bool = True,
        weekday: bool = False,
        moves: str = "",
        present: bool = False,
        counted: bool = False,
        weekdays: bool = False,
        anaphor: int = 0,
    ) -> None:
        self.lo = lo
        self.hi = hi
        self.start = start
        self.end = end
        self.precision = precision
        self.kind = kind
        self.vague = vague
        self.yearless = yearless  # its year was chosen by tense, so a range may move it
        self.standalone = standalone  # "now" only means something inside a range
        self.weekday = weekday  # a weekday alone, which a date right after it overrides
        self.moves = moves  # "month" for a bare day of the month: which month was chosen by tense
        self.present = present  # "now": the send time, and the end of a range that reaches it
        # an amount from a time ("two weeks from now"), which a weekday next to it narrows
        self.counted = counted
        self.weekdays = weekdays  # a range of weekdays ("Tuesday to Thursday"), which a week before it places
        self.anaphor = anaphor  # "the next day" (+1), "the day before" (-1): from the day named before it

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Hit({fields})"


#: Where a clause ends. Every branch opens with a literal, so ``re`` skips to those characters
#: instead of trying each position ("\bbut" is written "b(?<=\bb)ut": the same edge).
_CLAUSE_BREAK = re.compile(
    r"\.[.!?;\n]*(?:\s|$)|![.!?;\n]*(?:\s|$)|\?[.!?;\n]*(?:\s|$)|;[.!?;\n]*(?:\s|$)|\n[.!?;\n]*(?:\s|$)"
    r"|b(?<=\bb)ut\b|,\s*(?:and|so|then)\b"
)


_PAST_WORDS = (
    "was were did didn't had hadn't went ran got came began started finished ate drank saw met "
    "felt made took gave left found told said thought bought brought caught taught fought kept "
    "slept swam rode wrote drove spoke broke chose wore won lost paid sent spent built hurt hit "
    "quit fell sat stood held heard knew grew flew threw ago used been done gone happened "
    "yesterday earlier"
)


def at_word_start(branches: list[str], then: str = "") -> str:
    """``\\b(?:b1|b2|...)\\b`` (each branch opening with a lower-case letter; ``then`` tried last
    after that letter, for every letter) as one branch per first letter, ``w(?<=\\bw)(?:ill|on't)\\b``,
    each letter's branches in their order. The same matches, but every branch opens with a
    literal, so ``re`` skips to the letters that can start one instead of trying every position."""
    groups: dict[str, list[str]] = {c: [] for c in "abcdefghijklmnopqrstuvwxyz"} if then else {}
    for branch in branches:
        assert "a" <= branch[0] <= "z" and branch[1:2] not in ("?", "*", "+", "{"), branch
        groups.setdefault(branch[0], []).append(branch[1:])
    return "|".join(
        rf"{c}(?<=\b{c})(?:{'|'.join(rest + ([then] if then else []))})\b" for c, rest in groups.items()
    )


_HAD_AFTER = (  # after "'d", a participle or an adverb makes it "had"
    "|".join(_PAST_WORDS.split()) + r"|been|seen|gone|eaten|taken|given|driven|written"
    r"|ridden|broken|chosen|spoken|forgotten|gotten|never|already|just|\w+ed"
)


_FUTURE = re.compile(
    at_word_start([
        "will", "shall", "won't", "gonna", r"going\s+to", r"plan(?:s|ning)?\s+to", r"want(?:s|ed)?\s+to",
        "wanna", r"need(?:s)?\s+to", r"have\s+to", r"has\s+to", r"hop(?:e|es|ing)\s+to", r"would\s+like",
        "let's", "lets", r"let\s+us", r"can\s+we", r"could\s+we", r"should\s+we", r"can\s+you",
        r"could\s+you", r"schedul\w*", "book(?:ed|ing)?", "remind", r"set\s+up", r"arrang\w*", "registered",
        r"signed\s+up", "due", "deadline", "upcoming", r"coming\s+up",
        *(rf"{w}\s+\w+ing" for w in ("i'm", "im", r"i\s+am", "we're", r"we\s+are", "you're", r"you\s+are",
                                     "he's", "she's", "they're", "is", "are", "am")),
        "would", r"see\s+(?:you|ya)", r"looking\s+forward", r"can'?t\s+wait",
    ])
    + r"|'ll\b"
    # "she said she'd come on Friday": 'd before a bare verb is "would", the future of its clause
    + r"|'d\s+(?!(?:" + _HAD_AFTER + r")\b)[a-z]+"
)


_PAST = re.compile(
    at_word_start(_PAST_WORDS.split(), then=r"[a-z]+ed")
    + r"|'ve\b|'d(?=\s+(?:(?:" + _HAD_AFTER + r")\b|[^a-z\s]|$))"
)


_NOT_PAST = frozenset(
    "need needed feed speed seed breed indeed weed bleed proceed succeed exceed hundred sacred "
    "bed red shed wed embed naked wicked tired bored interested excited worried stressed scared "
    "supposed expected scheduled booked planned arranged registered wanted needed closed located based "
    "retired engaged married limited crowded packed reserved".split()
)


class Context:
    """The message (lower-cased, same offsets), its local send time and zone."""

    def __init__(self, text: str, now: datetime, tz: ZoneInfo, date_order: str) -> None:
        self.text = text
        self.now = now
        self.today = now.date()
        self.tz = tz
        self.date_order = date_order
        self._clause_ends: list[int] | None = None  # found on the first tense question
        self._tenses: dict[int, str | None] = {}

    @property
    def southern(self) -> bool:
        """Whether the zone is in the southern hemisphere (asked only by seasons)."""
        return self.tz.key.startswith(lx.SOUTHERN_PREFIXES)

    @property
    def _clauses(self) -> list[int]:
        if self._clause_ends is None:
            self._clause_ends = [m.end() for m in _CLAUSE_BREAK.finditer(self.text)]
        return self._clause_ends

    def tense(self, pos: int) -> str | None:
        """'past', 'future' or None for the clause around ``pos``: the nearest marker wins."""
        ends = self._clauses
        i = bisect.bisect_right(ends, pos)
        lo = ends[i - 1] if i else 0
        if lo in self._tenses:
            return self._tenses[lo]
        hi = ends[i] if i < len(ends) else len(self.text)
        # Searched in place (pos, endpos), not in a slice: a clause starts after a space or before a
        # non-letter, so the word edges the markers open with fall the same; the end is the slice's.
        # The nearest marker wins, the first found (future before past) on a tie.
        found, near = None, -1
        for m in _FUTURE.finditer(self.text, lo, hi):
            d = abs(m.start() - pos)
            if near < 0 or d < near:
                found, near = "future", d
        for m in _PAST.finditer(self.text, lo, hi):
            d = abs(m.start() - pos)
            if (near < 0 or d < near) and m.group().strip("'") not in _NOT_PAST:
                found, near = "past", d
        self._tenses[lo] = found
        return found

    def pick_date(self, month: int, day: int, pos: int, direction: str | None = None) -> date | None:
        """The year-less date ``month``/``day`` nearest today in the clause's direction."""
        return _pick_date(self.today, month, day, direction or self.tense(pos))

    def pick_month(self, month: int, pos: int, direction: str | None = None) -> int:
        """The year of the year-less ``month`` in the clause's direction."""
        direction = direction or self.tense(pos)
        y, cur = self.today.year, self.today.month
        if direction == "past":
            return y if month <= cur else y - 1
        if direction == "future":
            return y if month >= cur else y + 1
        if month == cur:
            return y
        ahead = (month - cur) % 12
        return y + (month < cur) if ahead < 6 else y - (month > cur)

    def weekday(self, wd: int, pos: int, direction: str | None = None) -> date:
        """A bare weekday: the last one before today in the past tense, else the next one."""
        direction = direction or self.tense(pos)
        if direction == "past":
            return self.today - timedelta(days=(self.today.weekday() - wd - 1) % 7 + 1)
        return self.today + timedelta(days=(wd - self.today.weekday() - 1) % 7 + 1)


@lru_cache(maxsize=4096)
def _pick_date(today: date, month: int, day: int, direction: str | None) -> date | None:
    """What :meth:`Context.pick_date` answers: pure in its arguments, so memoised."""
    y = today.year
    options = []
    for year in range(y - 4, y + 5):
        try:
            options.append(date(year, month, day))
        except ValueError:
            continue
    if not options:
        return None
    if direction == "past":
        past = [d for d in options if d <= today]
        return max(past) if past else min(options)
    if direction == "future":
        future = [d for d in options if d >= today]
        return min(future) if future else max(options)
    return min(options, key=lambda d: (abs((d - today).days), d > today))


_Handler = Callable[[re.Match[str], "Context"], "Hit | None"]


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    handler: _Handler
    when: frozenset[str]
    digits: int  # the digits in a row a match holds (0: it may hold none, and words wake it)
    gate: str = ""  # the look-ahead after the word edge: what a match can begin with ("" none)
    shape: str = ""  # what every match holding a digit contains ("" when no digit wakes the rule)
    also: frozenset[str] = frozenset()  # words of which every match holds one, whole (empty: no such set)
    needs: str = ""  # a pattern every match holds a substring of ("" none)


_RULES: list[Rule] = []
_BY_WORD: dict[str, list[int]] = {}  # trigger word -> the rules (by index) it wakes
_SHAPES: dict[str, tuple[re.Pattern[str], list[int]]] = {}  # digit shape -> its pattern, the rules it wakes
_TRIGGERS: set[str] = set()  # every word in some rule's ``when`` (the keys of _BY_WORD, as a set)
_KEYWORDS: set[str] = set()  # _TRIGGERS and every rule's ``also`` words: what a message's words are cut to
_NEEDS: dict[str, re.Pattern[str]] = {}  # each distinct ``needs`` pattern, compiled once
#: What rules_for answered for each (words, shapes) seen so far: the rules, the distinct ``needs``
#: patterns among them, and the rules left for each mask of the needs a message holds.
_Pick = tuple[list["Rule"], tuple[re.Pattern[str], ...], dict[int, list["Rule"]]]
_PICKED: dict[tuple[frozenset[str], int], _Pick] = {}
_PICKED_MAX = 4096


def digit_shapes(text: str) -> int:
    """Which of the registered digit shapes the lower-cased ``text`` holds, as a bit mask (bit i:
    the i-th shape registered). A text with no digit holds none: every shape holds one."""
    if not _SHAPES or _DIGIT.search(text) is None:
        return 0
    mask, bit = 0, 1
    for pattern, _rules in _SHAPES.values():
        if pattern.search(text) is not None:
            mask |= bit
        bit <<= 1
    return mask


def _picked(words: set[str], shapes: int) -> _Pick:
    key = (frozenset(words & _KEYWORDS), shapes)
    entry = _PICKED.get(key)
    if entry is None:
        picked: set[int] = set()
        for bit, (_pattern, woken) in enumerate(_SHAPES.values()):
            if shapes >> bit & 1:
                picked.update(woken)
        for word in key[0] & _TRIGGERS:
            picked.update(_BY_WORD[word])
        rules = [r for r in (_RULES[i] for i in sorted(picked)) if not r.also or r.also & key[0]]
        needs = tuple(dict.fromkeys(_NEEDS[r.needs] for r in rules if r.needs))
        if len(_PICKED) >= _PICKED_MAX:  # many distinct word sets: start over rather than grow
            _PICKED.clear()
        entry = _PICKED[key] = (rules, needs, {})
    return entry


def rules_for(words: set[str], shapes: int) -> list[Rule]:
    """The rules a message with these words, holding the digit shapes ``shapes`` (a
    :func:`digit_shapes` mask), can match, in registration order: woken by a ``when`` word or a
    shape, and holding one of their ``also`` words. Their ``needs`` are not looked at here
    (:func:`rules_in` does, given the text)."""
    return _picked(words, shapes)[0]


def rules_in(text: str, words: set[str], shapes: int) -> list[Rule]:
    """The rules the lower-cased ``text``, whose words are ``words`` and digit shapes ``shapes``,
    can match: :func:`rules_for`, less those whose ``needs`` pattern the text does not hold.
    Each distinct ``needs`` is searched once, and only when some woken rule asks for it."""
    rules, needs, by_mask = _picked(words, shapes)
    if not needs:
        return rules
    mask, bit = 0, 1
    for pattern in needs:
        if pattern.search(text) is not None:
            mask |= bit
        bit <<= 1
    kept = by_mask.get(mask)
    if kept is None:
        held = {p.pattern for i, p in enumerate(needs) if mask >> i & 1}
        kept = by_mask[mask] = [r for r in rules if not r.needs or r.needs in held]
    return kept


def all_rules() -> list[Rule]:
    """Every registered rule, in registration order (what the trigger index picks from)."""
    return list(_RULES)


def trigger_words() -> frozenset[str]:
    """Every word that wakes some rule: the union of the rules' ``when``."""
    return frozenset(_BY_WORD)


_DIGIT = re.compile(r"\d")


_B = r"(?<![\w/.:])"  # a phrase starts at a word edge, not inside a number or a path


WORD_END = r"(?![\w/]|[.:]\d)"  # ... and ends at one


def register_rule(
    pattern: str,
    *,
    when: Iterable[str] = (),
    digits: bool | int = False,
    shape: str = "",
    also: Iterable[str] = (),
    needs: str = "",
) -> Callable[[_Handler], _Handler]:
    """Register a phrase rule. It runs only on a message holding one of the words ``when``
    or, with ``digits``, that many digits in a row (True: one; 4 for a rule whose every match
    holds a year): a set lookup that spares most rules on most messages.

    ``shape`` sharpens ``digits``: a pattern that every match holding a digit contains (a
    necessary condition, never a guess: "\\d0\\s?'?s" for "the 90s", "1980's"), so a message
    whose digits are a price or a score does not wake the rule. It must hold a digit and imply
    ``digits`` in a row; without it the shape is the digits in a row themselves.

    ``also`` and ``needs`` spare a woken rule its scan when the message cannot hold a match
    after all; both are necessary conditions, never guesses. ``also``: words of which every
    match holds one whole (as ``[a-z]+`` cuts the text: "in" for "in 2 weeks"), a set lookup.
    ``needs``: a pattern (compiled without flags) that matches a substring of every match, searched
    once per message however many rules share it, e.g. the two days and the dash of "June 3-5".
    It pays when it opens with a literal or one character set (every branch with a literal), which
    lets ``re`` skip to the characters that can start it: "\\d\\d\\d\\d", not "\\d{4}"."""

    def register(fn: _Handler) -> _Handler:
        index = len(_RULES)
        body = "(?:" + pattern + ")" + WORD_END
        first = first_chars(body)  # a look-ahead that spares most word edges a whole try
        gate = f"(?={first})" if first else ""
        # Every branch starts and ends at a word edge. The look-ahead goes first: at most positions
        # it fails on one character, before the look-behind is tried (the same matches either way).
        full = gate + _B + body
        run = int(digits)
        # "\d\d\d\d", not "\d{4}": a pattern opening with a character set lets re skip to the digits
        digit_shape = (shape or r"\d" * run) if run else ""
        rule = Rule(re.compile(full), fn, frozenset(when), run, gate, digit_shape, frozenset(also), needs)
        _RULES.append(rule)
        for word in frozenset(when):
            _BY_WORD.setdefault(word, []).append(index)
            _TRIGGERS.add(word)
        _KEYWORDS.update(when, also)
        if needs:
            _NEEDS.setdefault(needs, re.compile(needs))
        if digit_shape:
            _SHAPES.setdefault(digit_shape, (re.compile(digit_shape), []))[1].append(index)
        _PICKED.clear()
        return fn

    return register


def make_hit(
    m: re.Match[str],
    start: datetime | None,
    end: datetime | None,
    precision: str,
    *,
    kind: str = "point",
    vague: bool = False,
    yearless: bool = False,
    standalone: bool = True,
    weekday: bool = False,
    moves: str = "",
    present: bool = False,
    counted: bool = False,
    anaphor: int = 0,
) -> Hit:
    """The hit for match ``m``'s span (the options are :class:`Hit`'s, spelled out so a compiled
    call passes them natively rather than through a dict)."""
    return Hit(m.start(), m.end(), start, end, precision, kind, vague, yearless, standalone, weekday, moves,
               present, counted, False, anaphor)
