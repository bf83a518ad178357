"""Messages as memories: what a message says about time, and bulk import of a conversation.

A message's time phrases mean something only against the instant it was sent:
:func:`read_times` resolves them for one write, and :func:`checked_messages`
checks a whole conversation before any of it is written (each message is then
read at its own ``sent_at``, never against the day of the import); nothing here
falls back to the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError
from ..time.clock import from_micros, to_micros
from ..time.resolver import find_times, rewrite
from .inputs import encode_json

__all__ = ["checked_messages", "read_times", "said_in", "with_message", "with_message_json", "Phrased"]

_FIELDS = ("role", "content", "sent_at")


def checked_messages(messages: object, roles: Sequence[str]) -> list[tuple[int, Mapping[str, Any]]]:
    """The messages of ``roles`` with their indexes, every message checked first (a bad one is refused)."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise InvalidInputError(
            f"messages={messages!r:.60} is not a list: expected a list of "
            '{"role", "content", "sent_at"} mappings'
        )
    if isinstance(roles, str) or not all(isinstance(r, str) for r in roles):
        raise InvalidInputError(f"roles={roles!r} is not a list of role names")
    kept = []
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping):
            raise InvalidInputError(
                f"messages[{i}]={message!r:.60} is not a mapping with {', '.join(_FIELDS)}"
            )
        missing = [f for f in _FIELDS if f not in message]
        if missing:
            raise InvalidInputError(
                f"messages[{i}] has no {', '.join(missing)}: every message needs {', '.join(_FIELDS)} "
                "(sent_at is what its time phrases are read against)"
            )
        if not isinstance(message["role"], str):
            raise InvalidInputError(f"messages[{i}].role={message['role']!r} is not a string")
        content = message["content"]
        if not isinstance(content, str) or not content.strip():
            raise InvalidInputError(f"messages[{i}].content={content!r:.60} is not a non-empty string")
        if message["role"] in roles:
            kept.append((i, message))
    return kept


#: What a message's phrases say: its text rewritten in absolute dates and its valid time
#: (start, end or None, precision), in UTC microseconds; None when they say nothing.
Phrased = tuple[str, tuple[int, int | None, str]] | None


def read_times(
    text: str, source: Any, observed: int, z: ZoneInfo, resolve: bool, state: bool = False
) -> tuple[str, Any, tuple[int, int | None, str] | None]:
    """Resolve the time phrases in ``text`` said at ``observed``: (stored text, source, valid time).

    The valid time comes from the first definite phrase that names a time of its
    own (a vague one, or one that only says "now", only when there is nothing
    else); every phrase is rewritten in absolute dates, and the message as said
    is kept in the source. For a ``state`` (a keyed fact, or one that supersedes
    another: "moved to Berlin on Sept 1") the phrase says when it began, so the
    valid time stays open.
    """
    said = said_in(text, observed, z, state) if resolve else None
    if said is None:
        return text, source, None
    return said[0], with_message(text, source), said[1]


def said_in(text: str, observed: int, z: ZoneInfo, state: bool) -> Phrased:
    """What :func:`read_times` reads from ``text`` alone: a pure function of its arguments (it runs
    in :mod:`~localmem.core.phrases`' reader processes too)."""
    mentions = find_times(text, sent_at=from_micros(observed), tz=z)
    if not mentions:
        return None
    # A definite phrase over a vague one, and a phrase that names a time over one that only names
    # the present ("Now I run daily; I started last week" began last week).
    chosen = min(mentions, key=lambda m: (m.vague, m.present))
    start = observed if chosen.start is None else to_micros(chosen.start)
    end = None if chosen.end is None or (state and chosen.kind != "range") else to_micros(chosen.end)
    if end is not None and end <= start:  # "until 09:00" said at 10:00
        return None
    return rewrite(text, mentions), (start, end, chosen.precision)


def with_message(text: str, source: Any) -> Any:
    """``source`` holding the message as said (under ``"message"``), once its phrases were rewritten."""
    if source is None:
        return {"message": text}
    if isinstance(source, Mapping) and "message" not in source:
        return {"message": text, **source}
    if not isinstance(source, Mapping):
        return {"message": text, "source": source}
    return source


def with_message_json(text: str, source: Any, encoded: str | None) -> str | None:
    """The JSON text of :func:`with_message` ``(text, source)``, given ``encoded``, the JSON text of
    ``source`` (:func:`~localmem.core.inputs.encode_json`, which accepted it): for a plain dict
    (or None) it is ``encoded`` with the message put first, not encoded again; the very text
    ``encode_json(with_message(text, source))`` gives (the message leads the new dict, the
    source's items follow in their order, under the same encoder; ``text`` was checked)."""
    if source is None or (type(source) is dict and "message" not in source and encoded is not None):
        quoted = encode_json(text, "text")
        assert quoted is not None  # a string encodes to a string
        head = '{"message":' + quoted
        return head + "}" if encoded is None or encoded == "{}" else head + "," + encoded[1:]
    kept = with_message(text, source)
    return encoded if kept is source else encode_json(kept, "source")
