"""SQL builders for the as-of reads: strings and parameters, no execution.

Kept apart from the code that runs them so that each can be read, printed and
tested on its own. Every value is a bound parameter; no identifier is dynamic.

The bitemporal rule every builder applies: a memory *as known at K* is, among
its revisions that had arrived on this device by K (``arrived_at <= K``: its own
writes' recorded_at, a synced one's later of origin recorded_at and local arrival),
the one with the greatest hybrid logical clock (ties: greater origin device, then
greater rev_id), so the current view is a pure function of the set of rows;
it is *valid at V* when ``valid_from <= V < valid_to`` (open end = still true);
it is *expired at V* when ``expires_at <= V``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "REVISION_COLUMNS",
    "GET_AS_OF",
    "KEY_HEAD",
    "KEY_HEAD_AFTER",
    "NTH_LATEST_START",
    "Query",
    "get_as_of",
    "read_conditions",
    "FROM",
    "IS_LATEST",
    "read_as_of",
    "snapshot",
    "history",
    "read_page",
]

#: The columns every revision read selects, in the order Revision is built from.
REVISION_COLUMNS = """
    r.seq, r.rev_id, r.memory_id, r.user_id, m.kind, m.key, r.version, r.op,
    c.text, c.value, c.attributes, c.source, c.reason,
    r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.recorded_at,
    r.tz, r.expires_at, r.retracted, r.corrected, r.prev_rev, r.supersedes, r.superseded_by,
    r.origin, e.erased_at"""

FROM = """
FROM revisions AS r
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id"""

# The newest revision of r's memory recorded at or before :known.
IS_LATEST = """
r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = r.memory_id AND r2.arrived_at <= :known
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC
    LIMIT 1
)"""


@dataclass(frozen=True, slots=True)
class Query:
    """A SQL string with its parameters (named in a dict, or positional)."""

    sql: str
    params: dict[str, object] | tuple[object, ...]


#: One memory as known at a time: a single probe of ``revisions_asof``.
#: Positional parameters (memory_id, known): the hottest read, kept lean.
GET_AS_OF = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE r.memory_id = ?1 AND r.arrived_at <= ?2
ORDER BY r.hlc DESC, r.origin DESC, r.rev_id DESC
LIMIT 1"""


def get_as_of(memory_id: str, known: int) -> Query:
    """One memory as known at ``known`` (:data:`GET_AS_OF` with its parameters)."""
    return Query(GET_AS_OF, (memory_id, known))


def read_conditions(
    user_id: str,
    known: int,
    valid: int,
    current_only: bool,
    include_expired: bool,
    include_retracted: bool,
    started: bool = False,
) -> tuple[list[str], dict[str, object]]:
    """The WHERE terms shared by reads and searches: the user's memories as known at ``known``.

    ``current_only`` keeps memories valid at ``valid``; with ``started`` (searches) it keeps
    those begun by ``valid`` and not superseded, so a past event stays findable.
    """
    where = ["r.user_id = :user_id", "r.arrived_at <= :known", IS_LATEST, "e.memory_id IS NULL"]
    params: dict[str, object] = {"user_id": user_id, "known": known}
    if current_only and started:
        where.append("r.valid_from <= :valid AND r.superseded_by IS NULL")
        params["valid"] = valid
    elif current_only:
        where.append("r.valid_from <= :valid AND (r.valid_to IS NULL OR r.valid_to > :valid)")
        params["valid"] = valid
    if not include_expired:
        where.append("(r.expires_at IS NULL OR r.expires_at > :valid)")
        params["valid"] = valid
    if not include_retracted:
        where.append("r.retracted = 0")
    return where, params


def read_as_of(
    user_id: str,
    *,
    known: int,
    valid: int,
    current_only: bool,
    include_expired: bool,
    include_retracted: bool,
    kind: str | None = None,
    key: str | None = None,
    extra: tuple[str, dict[str, object]] | None = None,
    started: bool = False,
) -> Query:
    """A user's memories as known at ``known``.

    ``current_only`` keeps those valid at ``valid``; expired (at ``valid``) and
    retracted ones are dropped unless asked for; erased ones never appear.
    ``extra`` is one more condition with its own named parameters (a compiled filter).
    """
    where, params = read_conditions(
        user_id, known, valid, current_only, include_expired, include_retracted, started=started
    )
    if kind is not None:
        where.append("m.kind = :kind")
        params["kind"] = kind
    if key is not None:
        where.append("m.key = :key")
        params["key"] = key
    if extra is not None:
        where.append(f"({extra[0]})")
        params.update(extra[1])
    sql = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE {" AND ".join(where)}
ORDER BY r.valid_from, r.recorded_at, r.seq"""
    return Query(sql, params)


#: The current value of a user's key: among the memories with that key, as
#: known now, those neither retracted, superseded nor erased; the latest start
#: wins (ties: latest recorded, then largest id). Parameters (user_id, key).
KEY_HEAD = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE m.user_id = ?1 AND m.key = ?2
  AND r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = m.memory_id
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC
    LIMIT 1)
  AND r.retracted = 0 AND r.superseded_by IS NULL AND e.memory_id IS NULL
ORDER BY r.valid_from DESC, r.recorded_at DESC, r.memory_id DESC
LIMIT 1"""


#: The valid_from of a user's (?2)-th latest-starting revision (index walk of revisions_valid).
NTH_LATEST_START = (
    "SELECT valid_from FROM revisions WHERE user_id = ?1 ORDER BY valid_from DESC LIMIT 1 OFFSET ?2 - 1"
)

#: KEY_HEAD among the memories whose current revision starts after ?3: it walks the user's
#: revisions from the latest start down (revisions_valid) and stops at the first live value
#: of the key, so its work does not grow with the key's history. Parameters (user_id, key,
#: after). Exact when it finds one: any live value it did not walk starts at or before ?3.
KEY_HEAD_AFTER = f"""SELECT {REVISION_COLUMNS}
FROM revisions AS r INDEXED BY revisions_valid
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id
WHERE r.user_id = ?1 AND r.valid_from > ?3 AND m.key = ?2
  AND r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = r.memory_id
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC
    LIMIT 1)
  AND r.retracted = 0 AND r.superseded_by IS NULL AND e.memory_id IS NULL
ORDER BY r.valid_from DESC, r.recorded_at DESC, r.memory_id DESC
LIMIT 1"""


def snapshot(user_id: str, known: int) -> Query:
    """Every revision of a user's memories that the store held at ``known``."""
    sql = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE r.user_id = :user_id AND r.arrived_at <= :known
ORDER BY r.arrived_at, r.seq"""
    return Query(sql, {"user_id": user_id, "known": known})


def history(memory_id: str, known: int | None) -> Query:
    """Every revision of one memory, oldest first (up to ``known`` if given)."""
    cond = "" if known is None else " AND r.arrived_at <= :known"
    sql = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE r.memory_id = :memory_id{cond}
ORDER BY r.hlc, r.origin, r.rev_id"""
    params: dict[str, object] = {"memory_id": memory_id}
    if known is not None:
        params["known"] = known
    return Query(sql, params)


def read_page(
    user_id: str,
    *,
    known: int,
    valid: int,
    current_only: bool,
    include_expired: bool,
    include_retracted: bool,
    only_expired: bool,
    kind: str | None,
    key: str | None,
    after: tuple[int, int] | None,
    limit: int,
) -> Query:
    """One page of :func:`read_as_of`, newest arrived first, after the cursor ``(arrived_at, seq)``.

    Rows are REVISION_COLUMNS then ``r.arrived_at`` (the next cursor). The order is the one
    ``revisions_user`` (user_id, arrived_at, seq) holds, so a page
    walks the index from the cursor and stops after ``limit`` rows that pass the
    conditions: its work does not grow with the user's total number of revisions.
    ``only_expired`` keeps the memories expired at ``valid``.
    """
    where, params = read_conditions(
        user_id, known, valid, current_only, include_expired or only_expired, include_retracted
    )
    if only_expired:
        where.append("r.expires_at <= :valid")
        params["valid"] = valid
    if kind is not None:
        where.append("m.kind = :kind")
        params["kind"] = kind
    if key is not None:
        where.append("m.key = :key")
        params["key"] = key
    if after is not None:
        where.append("(r.arrived_at, r.seq) < (:after_at, :after_seq)")
        params.update({"after_at": after[0], "after_seq": after[1]})
    params["limit"] = limit
    sql = f"""SELECT {REVISION_COLUMNS}, r.arrived_at {FROM}
WHERE {" AND ".join(where)}
ORDER BY r.arrived_at DESC, r.seq DESC
LIMIT :limit"""
    return Query(sql, params)
