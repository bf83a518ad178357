"""SQL builders for the as-of reads: strings and parameters, no execution.

Kept apart from the code that runs them so that each can be read, printed and
tested on its own. Every value is a bound parameter; no identifier is dynamic.

The bitemporal rule every builder applies: a memory *as known at K* is its
newest revision with ``recorded_at <= K`` (ties broken by local arrival order);
it is *valid at V* when ``valid_from <= V < valid_to`` (open end = still true);
it is *expired at V* when ``expires_at <= V``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "REVISION_COLUMNS",
    "GET_AS_OF",
    "KEY_HEAD",
    "Query",
    "get_as_of",
    "read_as_of",
    "search_as_of",
    "count_as_of",
    "by_seq",
    "LIGHT_COLUMNS",
    "snapshot",
    "history",
]

#: The columns every revision read selects, in the order Revision is built from.
REVISION_COLUMNS = """
    r.seq, r.rev_id, r.memory_id, r.user_id, m.kind, m.key, r.version, r.op,
    c.text, c.value, c.attributes, c.source, c.reason,
    r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.recorded_at,
    r.tz, r.expires_at, r.retracted, r.corrected, r.prev_rev, r.supersedes, r.superseded_by,
    r.origin, e.erased_at"""

_FROM = """
FROM revisions AS r
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id"""

# The newest revision of r's memory recorded at or before :known.
_IS_LATEST = """
r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = r.memory_id AND r2.recorded_at <= :known
    ORDER BY r2.recorded_at DESC, r2.seq DESC
    LIMIT 1
)"""


@dataclass(frozen=True, slots=True)
class Query:
    """A SQL string with its parameters (named in a dict, or positional)."""

    sql: str
    params: dict[str, object] | tuple[object, ...]


#: What a search scores a candidate by, before it builds the few Revisions it returns.
LIGHT_COLUMNS = """
    r.seq, r.memory_id, c.text, r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.tz"""

#: One memory as known at a time: a single probe of ``revisions_asof``.
#: Positional parameters (memory_id, known): the hottest read, kept lean.
GET_AS_OF = f"""SELECT {REVISION_COLUMNS} {_FROM}
WHERE r.memory_id = ?1 AND r.recorded_at <= ?2
ORDER BY r.recorded_at DESC, r.seq DESC
LIMIT 1"""


def get_as_of(memory_id: str, known: int) -> Query:
    """One memory as known at ``known`` (:data:`GET_AS_OF` with its parameters)."""
    return Query(GET_AS_OF, (memory_id, known))


def _read_conditions(
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
    where = ["r.user_id = :user_id", "r.recorded_at <= :known", _IS_LATEST, "e.memory_id IS NULL"]
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


def _search_conditions(
    user_id: str,
    known: int,
    valid: int,
    current_only: bool,
    include_expired: bool,
    extra: tuple[str, dict[str, object]] | None,
) -> tuple[list[str], dict[str, object]]:
    """A search's scope: the user's current knowledge as of ``known`` (see _read_conditions), filtered."""
    where, params = _read_conditions(
        user_id, known, valid, current_only, include_expired, False, started=True
    )
    if extra is not None:
        where.append(f"({extra[0]})")
        params.update(extra[1])
    return where, params


def search_as_of(
    user_id: str,
    term: str,
    *,
    known: int,
    valid: int,
    current_only: bool,
    include_expired: bool,
    extra: tuple[str, dict[str, object]] | None,
) -> Query:
    """The user's memories, as known at ``known``, whose text then holds ``term`` (one FTS5 phrase).

    Only FTS5's match is used, never its statistics: those count every revision ever
    written, and a search read as of a time must not see later ones.
    """
    where, params = _search_conditions(user_id, known, valid, current_only, include_expired, extra)
    # The owner column holds 'u' || hex(user_id): matching it first keeps FTS5 within one user.
    params["term"] = f'owner : "u{user_id.encode("utf-8").hex()}" AND text : {term}'
    # MATERIALIZED: FTS5 runs once and drives the join; left to itself the planner walks the
    # user's revisions and runs the match again for each one.
    sql = f"""WITH matched (seq) AS MATERIALIZED (
    SELECT rowid FROM content_fts WHERE content_fts MATCH :term
)
SELECT {LIGHT_COLUMNS}
FROM matched
JOIN revisions AS r ON r.seq = matched.seq
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id
WHERE {" AND ".join(where)}
ORDER BY r.seq"""
    return Query(sql, params)


def count_as_of(user_id: str, known: int) -> Query:
    """How many memories the user had as known at ``known`` (BM25's N): first revisions recorded by then."""
    sql = "SELECT count(*) FROM revisions WHERE user_id = ?1 AND recorded_at <= ?2 AND version = 1"
    return Query(sql, (user_id, known))


def by_seq(seqs: list[int]) -> Query:
    """Full revision rows for these revision numbers (at most a few hundred)."""
    marks = ", ".join("?" * len(seqs))
    return Query(f"SELECT {REVISION_COLUMNS} {_FROM}\nWHERE r.seq IN ({marks})", tuple(seqs))


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
    light: bool = False,
) -> Query:
    """A user's memories as known at ``known``.

    ``current_only`` keeps those valid at ``valid``; expired (at ``valid``) and
    retracted ones are dropped unless asked for; erased ones never appear.
    ``extra`` is one more condition with its own named parameters (a compiled filter).
    """
    where, params = _read_conditions(
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
    sql = f"""SELECT {LIGHT_COLUMNS if light else REVISION_COLUMNS} {_FROM}
WHERE {" AND ".join(where)}
ORDER BY r.valid_from, r.recorded_at, r.seq"""
    return Query(sql, params)


#: The current value of a user's key: among the memories with that key, as
#: known now, those neither retracted, superseded nor erased; the latest start
#: wins (ties: latest recorded, then largest id). Parameters (user_id, key).
KEY_HEAD = f"""SELECT {REVISION_COLUMNS} {_FROM}
WHERE m.user_id = ?1 AND m.key = ?2
  AND r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = m.memory_id
    ORDER BY r2.recorded_at DESC, r2.seq DESC
    LIMIT 1)
  AND r.retracted = 0 AND r.superseded_by IS NULL AND e.memory_id IS NULL
ORDER BY r.valid_from DESC, r.recorded_at DESC, r.memory_id DESC
LIMIT 1"""


def snapshot(user_id: str, known: int) -> Query:
    """Every revision of a user's memories that the store held at ``known``."""
    sql = f"""SELECT {REVISION_COLUMNS} {_FROM}
WHERE r.user_id = :user_id AND r.recorded_at <= :known
ORDER BY r.recorded_at, r.seq"""
    return Query(sql, {"user_id": user_id, "known": known})


def history(memory_id: str, known: int | None) -> Query:
    """Every revision of one memory, oldest first (up to ``known`` if given)."""
    cond = "" if known is None else " AND r.recorded_at <= :known"
    sql = f"""SELECT {REVISION_COLUMNS} {_FROM}
WHERE r.memory_id = :memory_id{cond}
ORDER BY r.recorded_at, r.seq"""
    params: dict[str, object] = {"memory_id": memory_id}
    if known is not None:
        params["known"] = known
    return Query(sql, params)
