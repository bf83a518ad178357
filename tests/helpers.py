"""Small helpers the tests share: every row (to prove nothing changed), a revision found, example counts."""

from __future__ import annotations

from typing import Any

import apsw
from hypothesis import settings

import localmem

TABLES = ("store_meta", "memories", "revisions", "content", "erasures")


def dump(conn: apsw.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every localmem table, in a stable order."""
    return {t: conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in TABLES}


def found(rev: localmem.Revision | None) -> localmem.Revision:
    """A revision the test knows is there (a read that may find none, of a memory known by then)."""
    assert rev is not None
    return rev


def examples(n: int) -> int:
    """A property's example count, ``n`` under the ci profile, scaled like the active profile.

    The profiles in conftest.py are the one place counts are set: a property that
    needs fewer or more examples than the profile's own count states its ci count
    here, and HYPOTHESIS_PROFILE=thorough raises it by the same factor as the rest.
    """
    factor = settings().max_examples / settings.get_profile("ci").max_examples
    return max(1, round(n * factor))
