"""What a write is handed: checked and encoded before anything is stored.

Every check raises a :class:`~localmem.errors.InvalidInputError` (or a time
error from :mod:`localmem.clock`) naming the bad value and what was expected.

What SQLite cannot hold faithfully is refused here, before any SQL runs:

- text with a lone surrogate (``"caf\\udcff"``, what ``surrogateescape`` makes of
  undecodable bytes): SQLite stores UTF-8, which has no encoding for it;
- text with a NUL character: SQLite's text functions (``length``, the FTS5
  tokenizer, ``instr``) stop at the first NUL, so the stored text would not be
  the text searched and checked;
- JSON nested deeper than :data:`MAX_JSON_DEPTH` levels (SQLite's JSON
  functions stop at 1,000, Python's encoder at its recursion limit), and JSON
  whose text is not valid UTF-8 or whose numbers Python cannot write out
  (an int of more than 4,300 digits).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError, NotFoundError, shown
from ..time.clock import TimeInput, parse_time, to_micros
from .jsontext import CompactEncoder

__all__ = [
    "check_path",
    "writable_path",
    "MAX_JSON_DEPTH",
    "check_text",
    "check_encodable",
    "check_memory_id",
    "optional_text",
    "observed_micros",
    "encode_json",
    "encode_attributes",
]

#: How deep a JSON value (value, attributes, source, meta) may nest: a list or
#: dict inside another counts one level; a scalar at the top is depth 0.
MAX_JSON_DEPTH = 64


def check_encodable(value: str, name: str) -> str:
    """``value`` if SQLite can store it as it is: UTF-8 encodable, no NUL.

    Raises:
        InvalidInputError: a lone surrogate, or a NUL character.
    """
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidInputError(
                f"{name}={shown(value)} has a lone surrogate {value[exc.start]!r} at position "
                f"{exc.start}: SQLite stores text as UTF-8, which cannot encode it "
                "(decode bytes with errors='replace', not 'surrogateescape')"
            ) from None
    nul = value.find("\x00")
    if nul >= 0:
        raise InvalidInputError(
            f"{name}={shown(value)} has a NUL character at position {nul}: "
            "SQLite's text functions and full-text index stop at NUL, so it cannot be stored"
        )
    return value


def check_memory_id(value: object) -> str:
    """``value`` if it can be looked up as a memory id (or prefix): a string SQLite can bind.

    Raises:
        NotFoundError: not a string, or a string no memory id can equal (a lone
            surrogate or a NUL: ids are ASCII), naming it.
    """
    if not isinstance(value, str):
        raise NotFoundError(f"memory id {shown(value)} is not an id: expected a string")
    try:
        check_encodable(value, "memory_id")
    except InvalidInputError as exc:
        raise NotFoundError(f"no memory with id {shown(value)}: {exc}") from None
    return value


def check_text(value: object, name: str = "text") -> str:
    """A non-empty string that SQLite can store (see :func:`check_encodable`)."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name}={shown(value)} is not text: expected a non-empty string")
    if not value.strip():
        raise InvalidInputError(f"{name}={shown(value)} is empty: expected a non-empty string")
    return check_encodable(value, name)


def optional_text(value: object, name: str) -> str | None:
    """None, or a non-empty string."""
    return None if value is None else check_text(value, name)


def observed_micros(observed_at: TimeInput | None, now: int, z: ZoneInfo) -> int:
    """When the fact reached the app, in UTC microseconds (default: now)."""
    if observed_at is None:
        return now
    return to_micros(parse_time(observed_at, name="observed_at", tz=z).at)


def _too_deep(value: object, limit: int) -> bool:
    """Whether ``value`` nests lists/dicts more than ``limit`` levels (never recursing past it)."""
    if type(value) in _SCALARS:
        return False
    if isinstance(value, (list, tuple)):
        return limit == 0 or any(_too_deep(v, limit - 1) for v in value)
    if isinstance(value, Mapping):
        return limit == 0 or any(_too_deep(v, limit - 1) for v in value.values())
    return False


_SCALARS = frozenset({str, int, float, bool, type(None)})


# One encoder, made once (see :mod:`~localmem.core.jsontext`): same arguments, same output.
_dumps = CompactEncoder(allow_nan=False, ensure_ascii=False)


def encode_json(value: object, name: str) -> str | None:
    """A JSON value as compact text for the store (None stays None).

    Raises:
        InvalidInputError: not JSON (a NaN, a set, a non-string key), nested
            deeper than :data:`MAX_JSON_DEPTH`, or holding text SQLite cannot store.
    """
    if value is None:
        return None
    def too_deep() -> InvalidInputError:
        return InvalidInputError(
            f"{name}={shown(value)} nests lists and dicts more than {MAX_JSON_DEPTH} levels deep: "
            f"expected at most {MAX_JSON_DEPTH}"
        )

    try:
        text = _dumps(value)
    except RecursionError:  # the C encoder stops cleanly at Python's recursion limit
        raise too_deep() from None
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name}={shown(value)} is not JSON-serialisable: expected numbers, strings, "
            f"booleans, None, lists and dicts with string keys ({shown(str(exc))})"
        ) from exc
    # Fewer brackets than the limit cannot nest past it (the common case, at C speed);
    # brackets inside strings only send a value to the exact walk.
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and _too_deep(value, MAX_JSON_DEPTH):
        raise too_deep()
    # NUL is escaped by json.dumps (\u0000); a lone surrogate is not.
    return check_encodable(text, name)


def encode_attributes(value: object) -> str | None:
    """A dict of JSON values with string keys, as JSON text."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInputError(
            f"attributes={shown(value)} is not acceptable: expected a dict with string keys"
        )
    return encode_json(dict(value), "attributes")


def check_path(path: object, name: str) -> Path:
    """``path`` as a Path if the operating system can be given it: text or os.PathLike, no NUL,
    encodable to the file system's encoding.

    Raises:
        InvalidInputError: anything else, naming ``name`` and the value.
    """
    try:
        text = os.fspath(path)  # type: ignore[call-overload]  # checked here: anything may come in
    except TypeError:
        raise InvalidInputError(f"{name} {shown(path)} is not a path: expected text or a path") from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text or "\x00" in text:
        raise InvalidInputError(f"{name} {shown(text)} is not a path: it is empty or holds a NUL")
    try:
        os.fsencode(text)
    except UnicodeError:
        raise InvalidInputError(
            f"{name} {shown(text)} is not a path: it holds characters no file name can") from None
    return Path(text)


def writable_path(path: object, name: str) -> Path:
    """``path`` (see :func:`check_path`) if a file can be written there: its folder exists and it
    is not a directory.

    Raises:
        InvalidInputError: a bad path, a missing folder, a directory, or one the system refuses
            to look at (a name too long, a loop of links), naming it.
    """
    target = check_path(path, name)
    try:
        is_dir, folder = target.is_dir(), target.parent.is_dir()
    except OSError as exc:
        raise InvalidInputError(f"{name} {str(target)!r}: {exc.strerror or exc}") from exc
    if is_dir:
        raise InvalidInputError(f"{name} {str(target)!r} is a directory: expected a file path")
    if not folder:
        raise InvalidInputError(f"{name} {str(target)!r}: folder {str(target.parent)!r} does not exist")
    return target
