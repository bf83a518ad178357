"""Globally unique, time-ordered ids (ULIDs) for memories, revisions, tombstones.

Sync recognises the same row from two devices by its id, so ids are random
enough never to collide and sort by the time they were made (the store's
recorded clock, not the wall clock), which keeps index inserts append-mostly.
"""

from __future__ import annotations

import os

__all__ = ["new_id", "new_ids", "is_id"]

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford base32
# Two base32 characters for every 10-bit chunk: 13 lookups make an id.
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
_SHIFTS = range(120, -1, -10)


def new_id(at_micros: int) -> str:
    """A 26-character ULID: 48 bits of milliseconds, then 80 random bits."""
    ms = max(at_micros // 1000, 0) & ((1 << 48) - 1)
    n = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join([_PAIRS[(n >> shift) & 1023] for shift in _SHIFTS])


def new_ids(at_micros: int, n: int) -> list[str]:
    """``n`` ids of one instant, as :func:`new_id` makes them, from one read of the random source."""
    ms = (max(at_micros // 1000, 0) & ((1 << 48) - 1)) << 80
    noise = os.urandom(10 * n)
    pairs, shifts = _PAIRS, _SHIFTS
    return ["".join([pairs[(x >> shift) & 1023] for shift in shifts])
            for x in (ms | int.from_bytes(noise[i:i + 10], "big") for i in range(0, 10 * n, 10))]


def is_id(text: str) -> bool:
    """Whether ``text`` has the shape of a full id (26 Crockford base32 characters)."""
    return len(text) == 26 and all(c in _ALPHABET for c in text.upper())
