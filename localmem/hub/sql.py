"""The device's read rules in PostgreSQL SQL: strings and parameters, no execution.

Each statement is the device's (:mod:`localmem.core.sql`) with the same rule, written for
the hub's tables (every join on ``user_id`` too, so a distributed table joins shard-local):

* A memory *as known at K* is, among its revisions that had arrived **on the hub** by K
  (``arrived_at <= K``: never before their file reached the hub), the first in the order
  :data:`localmem.core.sql.REVISION_ORDER` (hlc, origin, rev_id, all descending): here one
  walk of the user's revisions with ``DISTINCT ON (memory_id)`` (:func:`read_as_of`, a
  search), or one ``LIMIT 1`` probe of the ``revisions_asof`` index for one memory (a get).
* Its validity, expiry and retraction at V are the device's own terms:
  :func:`localmem.core.sql.read_conditions` builds them, and they are taken from it (with
  PostgreSQL's parameter style), so the two cannot drift apart.
* Erased memories never appear (their tombstone counts whatever the read's times, as on a device).

The selected columns are :data:`localmem.core.sql.REVISION_FIELDS`, in order, so a row decodes
with :func:`localmem.core.revision.revision_from_row` (``seq`` is the hub's).
"""

from __future__ import annotations

import re

from ..core.sql import IS_LATEST, REVISION_COLUMNS, REVISION_ORDER, read_conditions

__all__ = ["LATEST", "FROM", "read_as_of", "search", "snapshot", "history", "get_as_of", "USER_ZONE",
           "ERASURE", "STALE", "DERIVED", "DERIVED_HASHED", "pg_params"]

_ORDER = ", ".join(f"r.{c} DESC" for c in REVISION_ORDER)

#: Each of a user's memories' current revision as known at %(known)s: the latest-revision rule.
LATEST = f"""latest AS (
    SELECT DISTINCT ON (r.memory_id) r.* FROM revisions AS r
    WHERE r.user_id = %(user_id)s AND r.arrived_at <= %(known)s
    ORDER BY r.memory_id, {_ORDER})"""

#: The joins every revision read needs (REVISION_COLUMNS reads r, m, c and e), on the hub's keys.
FROM = """
JOIN memories AS m ON m.user_id = r.user_id AND m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.user_id = r.user_id AND c.rev_id = r.rev_id
LEFT JOIN erasures AS e ON e.user_id = r.user_id AND e.memory_id = r.memory_id"""

#: Whether a row's memory is derived (the device's GET_FLAGGED term): the last column of the
#: reads that flag stale memories, so the staleness query runs only when one is.
DERIVED = ("EXISTS (SELECT 1 FROM derivations AS dv WHERE dv.user_id = r.user_id"
           " AND dv.memory_id = r.memory_id) AS derived")
#: :data:`DERIVED` for reads of many rows: the user's derived memories read once into a hash
#: (a hashed subplan) rather than a probe per row.
DERIVED_HASHED = ("r.memory_id IN (SELECT dv.memory_id FROM derivations AS dv"
                  " WHERE dv.user_id = %(user_id)s) AS derived")

_NAMED = re.compile(r":([a-z_]+)")


def pg_params(term: str) -> str:
    """An SQLite term's ``:name`` parameters in psycopg's ``%(name)s`` style."""
    return _NAMED.sub(r"%(\1)s", term)


def _conditions(current_only: bool, include_expired: bool, include_retracted: bool,
                started: bool) -> tuple[list[str], dict[str, object]]:
    """The device's read terms beyond the latest-revision rule (which LATEST applies)."""
    where, params = read_conditions("", 0, 0, current_only, include_expired, include_retracted, started)
    fixed = ["r.user_id = :user_id", "r.arrived_at <= :known", IS_LATEST, "e.memory_id IS NULL"]
    assert where[:4] == fixed, "localmem.core.sql.read_conditions changed its fixed terms"
    params.pop("user_id")
    params.pop("known")
    return ["e.memory_id IS NULL", *map(pg_params, where[4:])], params


def read_as_of(user_id: str, *, known: int, valid: int, current_only: bool = True,
               include_expired: bool = False, include_retracted: bool = False,
               kind: str | None = None, key: str | None = None) -> tuple[str, dict[str, object]]:
    """A user's memories as known at ``known`` (the device's :func:`localmem.core.sql.read_as_of`).

    The latest-revision rule as one walk of the user's revisions arrived by ``known``, joined
    to their memories and content, then ``DISTINCT ON (memory_id)`` in REVISION_ORDER; the
    device's terms apply to what that leaves (they are about the current revision, so they
    must come after it). Not one ``LIMIT 1`` probe per memory: the walk reads the user's few
    pages of revisions once, and the memories are one hash join (half the server's time of
    the probes at 1M). The joins come before the DISTINCT ON because PostgreSQL cannot
    estimate the terms on its output (no statistics there: it guesses one row), and a one-row
    guess makes every later join a probe per row. The content stays a probe per revision (the
    planner estimates any join of two users' id sets at one row); whether a memory is derived
    is one hashed subplan (:data:`DERIVED_HASHED`).
    """
    where, params = _conditions(current_only, include_expired, include_retracted, False)
    params.update({"user_id": user_id, "known": known, "valid": valid})
    inner = ["r.user_id = %(user_id)s", "r.arrived_at <= %(known)s", where.pop(0)]  # and not erased
    if kind is not None:
        inner.append("m.kind = %(kind)s")
        params["kind"] = kind
    if key is not None:
        inner.append("m.key = %(key)s")
        params["key"] = key
    outer = f"\nWHERE {' AND '.join(where)}" if where else ""
    sql = f"""SELECT * FROM (SELECT DISTINCT ON (r.memory_id) {REVISION_COLUMNS}, {DERIVED_HASHED}
FROM revisions AS r {FROM}
WHERE {" AND ".join(inner)}
ORDER BY r.memory_id, {_ORDER}) AS r{outer}
ORDER BY r.valid_from, r.recorded_at, r.seq"""
    return sql, params


#: A query's words as a tsquery matching any of them (the device's BM25 ranks any-word matches too).
TSQUERY = "replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ')::tsquery"


def search(user_id: str, query: str, *, known: int, valid: int, limit: int,
           current_only: bool = True) -> tuple[str, dict[str, object]]:
    """A user's memories as known at ``known`` whose text matches ``query``, best first.

    The memories searched are the device's (begun by ``valid`` and not superseded, unexpired,
    unretracted, unerased); ranked by ``ts_rank_cd`` (cover density) over the text, ties by the
    latest start. Rows: REVISION_COLUMNS, whether derived, then the rank.
    """
    where, params = _conditions(current_only, False, False, True)
    params.update({"user_id": user_id, "known": known, "valid": valid, "query": query, "limit": limit})
    sql = f"""WITH {LATEST}, q AS (SELECT {TSQUERY} AS q)
SELECT {REVISION_COLUMNS}, {DERIVED}, ts_rank_cd(to_tsvector('english', c.text), q.q) AS rank
FROM latest AS r {FROM} CROSS JOIN q
WHERE {" AND ".join(where)} AND to_tsvector('english', c.text) @@ q.q
ORDER BY rank DESC, r.valid_from DESC, r.memory_id
LIMIT %(limit)s"""
    return sql, params


def snapshot(user_id: str, known: int) -> tuple[str, dict[str, object]]:
    """Every revision of a user's memories the hub held at ``known``, in hub arrival order."""
    sql = f"""SELECT {REVISION_COLUMNS}, {DERIVED_HASHED} FROM revisions AS r {FROM}
WHERE r.user_id = %(user_id)s AND r.arrived_at <= %(known)s
ORDER BY r.arrived_at, r.seq"""
    return sql, {"user_id": user_id, "known": known}


def history(memory_id: str, known: int | None) -> tuple[str, dict[str, object]]:
    """Every revision of one memory, oldest first (up to ``known`` if given)."""
    cond = "" if known is None else " AND r.arrived_at <= %(known)s"
    order = ", ".join(f"r.{c}" for c in REVISION_ORDER)
    sql = f"""SELECT {REVISION_COLUMNS} FROM revisions AS r {FROM}
WHERE (r.user_id, r.memory_id) IN (SELECT user_id, memory_id FROM memories
                                   WHERE memory_id = %(memory_id)s){cond}
ORDER BY {order}"""
    return sql, {"memory_id": memory_id, "known": known}


def get_as_of(user_id: str, memory_id: str, known: int) -> tuple[str, dict[str, object]]:
    """One memory as known at ``known`` (the device's GET_AS_OF): one probe of revisions_asof."""
    sql = f"""SELECT {REVISION_COLUMNS}, {DERIVED} FROM revisions AS r {FROM}
WHERE r.user_id = %(user_id)s AND r.memory_id = %(memory_id)s AND r.arrived_at <= %(known)s
ORDER BY {_ORDER} LIMIT 1"""
    return sql, {"user_id": user_id, "memory_id": memory_id, "known": known}


#: Which of a user's derived memories are stale as known at %(known)s (the device's
#: :func:`localmem.core.sql.staleness`, as a set): a source revision has a later revision of its
#: memory that had arrived by then and corrects it, marks it superseded or retracts it, or the
#: source's memory was erased by then. Sources are the derived memory's user's (derive checks).
STALE = """SELECT DISTINCT d.memory_id FROM derivations AS d
JOIN revisions AS s ON s.user_id = d.user_id AND s.rev_id = d.source_rev
WHERE d.user_id = %(user_id)s AND (
    EXISTS (SELECT 1 FROM revisions AS later WHERE later.user_id = s.user_id
            AND later.memory_id = s.memory_id AND later.version > s.version
            AND later.arrived_at <= %(known)s AND later.op IN ('correct', 'superseded', 'retract'))
    OR EXISTS (SELECT 1 FROM erasures AS e WHERE e.user_id = s.user_id AND e.memory_id = s.memory_id
               AND e.erased_at <= %(known)s))"""

#: The zone a user last gave (the device's USER_ZONE): dates in a read's times are read in it.
USER_ZONE = ("SELECT tz FROM revisions WHERE user_id = %s AND version = 1"
             " ORDER BY arrived_at DESC, seq DESC LIMIT 1")
#: A memory's tombstone, in the order Erasure is built from. Parameter: memory_id.
ERASURE = ("SELECT memory_id, user_id, erased_at, erased_by, reason, tomb_id FROM erasures"
           " WHERE memory_id = %s")
