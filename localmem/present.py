"""How the interfaces show the library's values to people, and read what people type.

One module the command line and the TUI share, so they agree: the flags of a
revision (one set, one order), a valid-time interval (the one rule of
:func:`localmem.time.interval.render_interval`), an instant on a user's wall
clock, a memory's text with its value, and a JSON value typed by a person
(refused, never guessed, when it is not JSON). Pure functions over public
types: no I/O, no clock, no textual or rich (the library never imports them).
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from .core.revision import Revision
from .errors import InvalidInputError
from .time.interval import ValidTime, render_interval

__all__ = [
    "FLAGS",
    "VALUE_HINT",
    "flags",
    "flags_text",
    "marks",
    "interval",
    "local_time",
    "local_iso",
    "value_text",
    "memory_text",
    "parse_json",
]

#: The flags a revision can carry, in the order every interface shows them:
#: first what hides it from default reads, then what changed its content, then
#: what makes it doubtful, then what replaced it.
FLAGS = ("expired", "retracted", "erased", "corrected", "stale", "superseded")

#: What a JSON value looks like, for the error that refuses one.
VALUE_HINT = "numbers as they are (7), strings quoted ('\"seven\"')"


def flags(rev: Revision) -> list[str]:
    """The names of the flags set on ``rev``, in :data:`FLAGS` order."""
    state = (rev.expired, rev.retracted, rev.erased, rev.corrected, rev.stale, rev.superseded_by is not None)
    return [name for name, on in zip(FLAGS, state, strict=True) if on]


def flags_text(rev: Revision) -> str:
    """The flags as one short cell: ``expired, corrected`` ("" for none)."""
    return ", ".join(flags(rev))


def marks(rev: Revision) -> str:
    """The flags with the chain's ids: ``corrected, superseded by ID, supersedes ID`` ("" for none).

    Where ids fit (the command line), ``superseded`` names its successor and
    the link to a predecessor follows the flags.
    """
    out = [f"superseded by {rev.superseded_by}" if name == "superseded" else name for name in flags(rev)]
    if rev.supersedes:
        out.append(f"supersedes {rev.supersedes}")
    return ", ".join(out)


def interval(valid: ValidTime | None) -> str:
    """A valid-time interval at its precision, in its zone (``-`` for none).

    One rule for every interface, the library's own (``str(valid)``, the
    ``valid`` of a revision's JSON): ``2025-08-09``, ``weekend of 2025-06-14 to
    2025-06-15``, ``since 2024-01``, ``2023-05 until 2025-09-01`` (the end is
    exclusive: it names the first moment no longer inside).
    """
    if valid is None:
        return "-"
    return render_interval(valid.start, valid.end, valid.precision, valid.tz)


def local_time(at: datetime | None, tz: str, *, seconds: bool = False) -> str:
    """An instant on the user's wall clock, compact: ``2026-03-02 09:05`` (``-`` for none).

    The form the TUI's clock fields read back (a time without an offset is on
    the user's wall clock).
    """
    if at is None:
        return "-"
    return at.astimezone(ZoneInfo(tz)).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def local_iso(at: datetime | None, tz: str) -> str:
    """An instant on the user's wall clock with its offset: ``2025-09-03T18:55:00+02:00`` (``-`` for none).

    The form the command line's time options read back exactly.
    """
    if at is None:
        return "-"
    return at.astimezone(ZoneInfo(tz)).isoformat(timespec="seconds")


def value_text(value: Any) -> str:
    """A memory's JSON value as one line, as it would be typed: ``7``, ``"seven"`` ("" for none)."""
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def memory_text(rev: Revision) -> str:
    """What a memory says, with its value: ``fee for fill 42 = 7`` (``[erased]`` once erased)."""
    if rev.erased or rev.text is None:
        return "[erased]"
    value = value_text(rev.value)
    return f"{rev.text} = {value}" if value else rev.text


def parse_json(text: str, name: str, hint: str = VALUE_HINT) -> Any:
    """Read a JSON value a person typed (``7``, ``"seven"``, ``{"a": 1}``).

    The rule: what is not JSON is refused, never stored as a string instead,
    so ``7`` and ``"7"`` stay different values and a typo is caught.

    Raises:
        InvalidInputError: ``text`` is not JSON; the message names ``name``,
            the text and ``hint`` (what was expected).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(
            f"{name} {text!r:.80} is not JSON: {hint} ({exc.msg} at column {exc.colno})"
        ) from exc
    except RecursionError:
        raise InvalidInputError(f"{name} {text!r:.80} nests too deeply to read: {hint}") from None
