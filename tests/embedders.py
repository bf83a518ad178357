"""A small deterministic embedder for tests: hashed bag of words, no model.

Each lowercased word is hashed (blake2b, so the vector is the same in every
process, whatever PYTHONHASHSEED says) to one of ``dimensions`` slots with a
sign; the counts are normalised to unit length. Texts that share words are
near, texts that share none are about orthogonal, and a text without words is
the zero vector.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

_WORD = re.compile(r"\w+")


class HashEmbedder:
    """Hashed bag-of-words vectors; counts its calls and the texts it was given."""

    def __init__(self, name: str = "test-hash-bow-v1", dimensions: int = 64) -> None:
        self.name = name
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    def vector(self, text: str) -> list[float]:
        """The vector of one text (what ``embed`` returns for it)."""
        out = [0.0] * self.dimensions
        for word in _WORD.findall(text.lower()):
            digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
            slot = int.from_bytes(digest[:4], "little") % self.dimensions
            out[slot] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in out))
        return [v / norm for v in out] if norm else out

    def embed(self, texts: Sequence[str]) -> list[Sequence[float]]:
        """One vector per text, in order."""
        self.calls.append(list(texts))
        return [self.vector(t) for t in texts]

    @property
    def texts_embedded(self) -> int:
        """How many texts all calls together were given."""
        return sum(len(c) for c in self.calls)
