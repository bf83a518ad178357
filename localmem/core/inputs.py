"""What a write is handed: checked and encoded before anything is stored.

Every check raises a :class:`~localmem.errors.InvalidInputError` (or a time
error from :mod:`localmem.clock`) naming the bad value and what was expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from zoneinfo import ZoneInfo

from ..errors import InvalidInputError
from ..time.clock import TimeInput, parse_time, to_micros

__all__ = ["check_text", "optional_text", "observed_micros", "encode_json", "encode_attributes"]


def check_text(value: object, name: str = "text") -> str:
    """A non-empty string."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{name}={value!r} is not text: expected a non-empty string")
    if not value.strip():
        raise InvalidInputError(f"{name}={value!r} is empty: expected a non-empty string")
    return value


def optional_text(value: object, name: str) -> str | None:
    """None, or a non-empty string."""
    return None if value is None else check_text(value, name)


def observed_micros(observed_at: TimeInput | None, now: int, z: ZoneInfo) -> int:
    """When the fact reached the app, in UTC microseconds (default: now)."""
    if observed_at is None:
        return now
    return to_micros(parse_time(observed_at, name="observed_at", tz=z).at)


def encode_json(value: object, name: str) -> str | None:
    """A JSON value as compact text for the store (None stays None)."""
    if value is None:
        return None
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(
            f"{name}={value!r} is not JSON-serialisable: expected numbers, strings, "
            f"booleans, None, lists and dicts with string keys ({exc})"
        ) from exc


def encode_attributes(value: object) -> str | None:
    """A dict of JSON values with string keys, as JSON text."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise InvalidInputError(
            f"attributes={value!r} is not acceptable: expected a dict with string keys"
        )
    return encode_json(dict(value), "attributes")
