"""Which characters a regular expression's match can begin with, read from its parse tree.

A rule's pattern opens with a look-behind and, mostly, optional words ("the", "this",
"from"), so ``re`` tries the whole pattern at every word edge. Put as a look-ahead after
the word edge, the class of its possible first characters turns most of those tries into
one character test (measured: the scan 1.09x faster on the dev texts).

The answer is a superset, never a guess: anything the reader does not know for sure (a
negated set, ``.``, a case-insensitive group, a pattern that can match nothing) answers
None, and such a rule is scanned the old way.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

with warnings.catch_warnings():  # the parser's public name is deprecated, its interface stable since 3.0
    warnings.simplefilter("ignore", DeprecationWarning)
    try:
        import sre_parse
    except ImportError:  # a Python that dropped the name: every rule is scanned the old way
        sre_parse = None  # type: ignore[assignment]


_RANGE_MAX = 256  # a wider range ([^...] aside) is not expanded: the rule is scanned the old way
_TRANSPARENT = ("ASSERT", "ASSERT_NOT", "AT")  # zero-width: the next item decides


class _Unknown(Exception):
    pass


def _in(items: list[tuple[Any, Any]], chars: set[str]) -> bool:
    """Add a character set's members to ``chars``; whether it holds ``\\d``."""
    digit = False
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            chars.add(chr(av))
        elif name == "RANGE" and av[1] - av[0] <= _RANGE_MAX:
            chars.update(chr(i) for i in range(av[0], av[1] + 1))
        elif name == "CATEGORY" and str(av) == "CATEGORY_DIGIT":
            digit = True
        else:
            raise _Unknown
    return digit


def _seq(items: Any, chars: set[str]) -> tuple[bool, bool]:
    """Add what the sequence ``items`` can begin with; (whether it can match empty, whether \\d)."""
    digit = False
    for op, av in items:
        name = str(op)
        nullable = False
        if name in _TRANSPARENT:
            continue
        if name == "LITERAL":
            chars.add(chr(av))
        elif name == "IN":
            digit |= _in(av, chars)
        elif name == "BRANCH":
            nullable = False
            for alt in av[1]:
                n, d = _seq(alt, chars)
                nullable |= n
                digit |= d
        elif name == "SUBPATTERN":
            _group, add_flags, _del_flags, sub = av
            if add_flags:  # (?i) and the like change what a literal matches
                raise _Unknown
            nullable, d = _seq(sub, chars)
            digit |= d
        elif name == "ATOMIC_GROUP":
            nullable, d = _seq(av, chars)
            digit |= d
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, _hi, sub = av
            n, d = _seq(sub, chars)
            nullable = lo == 0 or n
            digit |= d
        else:
            raise _Unknown
        if not nullable:
            return False, digit
    return True, digit


def first_chars(pattern: str) -> str | None:
    """A character class holding every character a match of ``pattern`` (compiled without
    flags) can begin with, or None when that is not known for sure or the pattern can match
    the empty string."""
    return read_pattern(pattern)[0]


def read_pattern(pattern: str, width: int = 3) -> tuple[str | None, frozenset[str] | None]:
    """:func:`first_chars` and :func:`openings` of ``pattern`` from one parse."""
    if sre_parse is None:
        return None, None
    tree = sre_parse.parse(pattern).data
    chars: set[str] = set()
    try:
        nullable, digit = _seq(tree, chars)
    except _Unknown:
        return None, None
    if nullable:
        return None, None
    first = "[" + "".join(re.escape(c) for c in sorted(chars)) + ("\\d" if digit else "") + "]"
    return first, openings(tree, width)


# -- openings: what the first few characters of a match can be, in an ASCII text -------------------
#
# A rule's matches can start only where the text's first ``width`` characters are one of its
# openings, so a message is tried only there (``pattern.match(text, pos)``) instead of scanned
# whole. Read in a reduced alphabet: every digit stands for "0" and every white-space character
# for " " (``SHAPE``, applied to the text's bytes with ``bytes.translate``), which keeps the sets small; a
# set holding a digit (a space) holds "0" (" "). Every set is a superset: what the reader cannot
# list ends the opening there (a shorter opening, which says less), and too many openings give
# None (the rule is scanned whole). Only for ASCII texts, whose classes the reader lists exactly.

_ASCII = [chr(i) for i in range(128)]
SHAPE = bytes.maketrans(
    bytes(i for i in range(128) if chr(i).isdigit() or chr(i).isspace()),
    bytes(ord("0" if chr(i).isdigit() else " ") for i in range(128) if chr(i).isdigit() or chr(i).isspace()),
)
_STOP = "\x80"  # not ASCII: marks an opening cut short (what follows is not listed)
_MAX_OPENINGS = 4096


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


_CATEGORIES: dict[str, Callable[[str], bool]] = {
    "CATEGORY_DIGIT": str.isdigit,
    "CATEGORY_SPACE": str.isspace,
    "CATEGORY_WORD": _is_word,
}



def _accepts(op: Any, av: Any) -> set[str] | None:
    """The characters (reduced) a one-character item accepts in ASCII, or None if not one."""
    name = str(op)
    if name == "LITERAL":
        hit = {chr(av)} if av < 128 else set()
    elif name == "NOT_LITERAL":
        hit = {c for c in _ASCII if ord(c) != av}
    elif name == "ANY":
        hit = {c for c in _ASCII if c != "\n"}
    elif name == "IN":
        hit, negate = set(), False
        for iop, iav in av:
            iname = str(iop)
            if iname == "NEGATE":
                negate = True
            elif iname == "LITERAL":
                hit.update(c for c in _ASCII if ord(c) == iav)
            elif iname == "RANGE":
                hit.update(c for c in _ASCII if iav[0] <= ord(c) <= iav[1])
            elif iname == "CATEGORY" and str(iav) in _CATEGORIES:
                hit.update(filter(_CATEGORIES[str(iav)], _ASCII))
            elif iname == "CATEGORY" and str(iav).replace("_NOT", "", 1) in _CATEGORIES:
                hit.update(c for c in _ASCII if not _CATEGORIES[str(iav).replace("_NOT", "", 1)](c))
            else:
                return {_STOP}
        if negate:
            hit = set(_ASCII) - hit
    else:
        return None
    return {c.encode().translate(SHAPE).decode() for c in hit}


def _then(heads: set[str], tails: set[str], width: int) -> set[str]:
    out = set()
    for h in heads:
        if len(h) >= width or h.endswith(_STOP):
            out.add(h)
        else:
            out.update((h + t)[:width] for t in tails)
    if len(out) > _MAX_OPENINGS:
        raise _Unknown
    return out


def _openings(items: Any, width: int) -> set[str]:
    """Every match of the sequence ``items`` begins with one of these (cut to ``width``; shorter
    ones are a whole match, or end in ``_STOP`` where the reader stopped)."""
    out = {""}
    for op, av in items:
        name = str(op)
        if name in _TRANSPARENT:
            continue
        if all(len(w) >= width or w.endswith(_STOP) for w in out):
            break
        one = _accepts(op, av)
        if one is not None:
            tails = one
        elif name == "SUBPATTERN":
            tails = {_STOP} if av[1] or av[2] else _openings(av[3], width)
        elif name == "ATOMIC_GROUP":
            tails = _openings(av, width)
        elif name == "BRANCH":
            tails = set().union(*(_openings(alt, width) for alt in av[1]))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            each = _openings(sub, width)
            tails, run = ({""} if lo == 0 else set()), {""}
            for n in range(1, min(hi, width) + 1):  # past ``width`` repeats the openings are all cut
                run = _then(run, each, width)
                if n >= lo or n == width:
                    tails |= run
        else:
            tails = {_STOP}
        out = _then(out, tails, width)
    return out


def openings(tree: Any, width: int) -> frozenset[str] | None:
    """The openings of a parsed pattern, cut to at most ``width`` characters of the reduced
    alphabet (:data:`SHAPE`), without the stop marks; None when there are too many or a match
    may begin with nothing listed."""
    try:
        found = _openings(tree, width)
    except _Unknown:
        return None
    cut = frozenset(w.split(_STOP)[0] for w in found)
    return None if "" in cut else cut
