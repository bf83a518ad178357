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
    if sre_parse is None:
        return None
    chars: set[str] = set()
    try:
        nullable, digit = _seq(sre_parse.parse(pattern).data, chars)
    except _Unknown:
        return None
    if nullable:
        return None
    return "[" + "".join(re.escape(c) for c in sorted(chars)) + ("\\d" if digit else "") + "]"
