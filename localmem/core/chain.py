"""Tamper evidence: the hashes that chain every revision to its content and its past.

Three SHA-256 digests (32-byte BLOBs; hex in sync files) sit on each revision row (schema 8):

* ``content_hash`` covers what the revision says (text, value, attributes, source,
  reason). It stays when an erase destroys the words, so the revision's hash can
  still be checked after the erase: the content is gone, the evidence of what it
  was is not (a digest does not give the words back).
* ``rev_hash`` covers the revision's fields (every column that travels, its memory's
  kind and key), its ``content_hash`` and the ``rev_hash`` of the revision it follows
  (``prev_rev``): a chain **per memory**, which is the same on every device because
  it runs along global ids, so it travels in sync files and an import checks it.
  Forks (two devices correcting one memory while apart) make it a tree, as in git.
* ``chain`` links each revision to the one before it **in this store** (local
  revision order, ``seq``): the hash of the previous row's ``chain``, this row's
  ``rev_hash`` and its local ``arrived_at``. Local, never synced. Deleting, inserting
  or reordering revisions anywhere but at the very end breaks it; the newest
  ``chain`` (the *head*, which ``doctor`` prints) pins the end too, for whoever
  keeps a copy of it.

The hashes carry no secret: they make an edit evident, not impossible. Whoever
rewrites a row and recomputes every later hash defeats the file's own check, but
not a head recorded elsewhere, nor a peer's copy of the rows (every device holds
the same ``rev_hash`` for a revision, and an import refuses a row whose hash
differs from the one it already has). Revisions written before schema 8 have no
hashes; the local chain starts at the first revision written after the migration.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["HASHED_FIELDS", "Digest", "content_hash", "rev_hash", "link"]

#: A SHA-256 digest, as stored: 32 bytes.
Digest = bytes

#: The revision columns a ``rev_hash`` covers, in order (not seq, arrived_at or the hashes).
HASHED_FIELDS = (
    "rev_id", "memory_id", "user_id", "version", "op", "valid_from", "valid_to", "precision",
    "valid_source", "observed_at", "recorded_at", "tz", "expires_at", "retracted", "corrected",
    "prev_rev", "supersedes", "superseded_by", "origin", "hlc",
)


# One encoder, made once: json.dumps with any non-default argument builds a new one per call,
# which cost more than the hashing. JSON of a flat list of ints, strings and nulls is canonical
# (ensure_ascii escapes everything else, lone surrogates included): no two lists encode alike.
_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True, check_circular=False)
_encode: Callable[[list[Any]], str] = _ENCODER.encode


def _c_encoder() -> Callable[[list[Any]], str] | None:
    """The stdlib's C encoder, made once with _ENCODER's settings: ``encode`` makes a new one
    (and its closures) at every call, a third of a revision's hashing. None where it is
    missing or does not write what ``encode`` writes (its private signature changed)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        scan = make(None, _ENCODER.default, json.encoder.encode_basestring_ascii, None, ":", ",",
                    False, False, True)
        sample = ["01J\u00e9\ud800", -(2**63), 2**63 - 1, None, True, 0.5, "a\"b\\c\n"]
        if "".join(scan(sample, 0)) != _encode(sample):
            return None
    except Exception:  # any other signature: the plain encoder
        return None

    def encode(items: list[Any]) -> str:
        return "".join(scan(items, 0))
    return encode


_encode = _c_encoder() or _encode
_NONE = bytes(32)


def content_hash(text: str, value: str | None, attributes: str | None, source: str | None,
                 reason: str | None) -> Digest:
    """The digest of a revision's content (its columns as stored: JSON values as text)."""
    return hashlib.sha256(_encode([text, value, attributes, source, reason]).encode("ascii")).digest()


def rev_hash(fields: Sequence[Any], kind: str, key: str | None, content: Digest | None,
             prev_hash: Digest | None) -> Digest:
    """The digest of a revision: its :data:`HASHED_FIELDS` values, its memory's kind and key,
    its content hash and the hash of the revision it follows (None for a first revision)."""
    items = [*fields, kind, key, None if content is None else content.hex(),
             None if prev_hash is None else prev_hash.hex()]
    return hashlib.sha256(_encode(items).encode("ascii")).digest()


def link(prev_chain: Digest | None, revision: Digest | None, arrived_at: int) -> Digest:
    """The local chain value of a revision: the previous row's chain, its hash, its arrival
    (fixed-width bytes; a missing digest counts as 32 zero bytes, which no SHA-256 gives)."""
    return hashlib.sha256((prev_chain or _NONE) + (revision or _NONE)
                          + arrived_at.to_bytes(8, "big", signed=True)).digest()
