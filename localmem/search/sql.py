"""SQL builders for search: strings and parameters, no execution.

Each selects a bounded set of candidates among a user's memories as known at a time; the
as-of rule and the hiding a current-only read applies come from :mod:`localmem.core.sql`
(``read_conditions``), so a search sees exactly what a read would.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..core.sql import FROM, REVISION_COLUMNS, Query, read_conditions

__all__ = [
    "Scope",
    "LIGHT_COLUMNS",
    "FTS_TOKENIZER",
    "FTS_NEWEST",
    "FTS_OLDEST",
    "OTHER_OWNER",
    "CONTENT_NTH_NEWEST",
    "CONTENT_COUNT",
    "TOP_SEQ",
    "STORE_MARK",
    "FIRST_SEQ_FROM",
    "FTS_COUNT",
    "FTS_NTH_NEWEST",
    "near_in_time",
    "in_scope",
    "USES_BEFORE",
    "by_seq",
]


#: The full-text index's tokenizer and its arguments, as schema.sql declares content_fts (a test
#: checks they agree): search tokenizes a candidate's text with it, to count its length and
#: how often it holds each query word, as the index would.
FTS_TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])

@dataclass(frozen=True, slots=True)
class Scope:
    """Which memories a search looks among: one user's current knowledge as known at ``known``,
    valid at ``valid`` (see read_conditions), narrowed by a compiled filter if any."""

    user_id: str
    known: int
    valid: int
    current_only: bool
    include_expired: bool
    extra: tuple[str, dict[str, object]] | None  # a compiled filter: SQL and its parameters


#: What a search scores a candidate by, before it builds the few Revisions it returns: then
#: the message as said when the stored text is its rewrite with dates (valid time resolved).
#: The memory's creation (for its usage) is read by :data:`USES_BEFORE`, only for the
#: candidates that can still reach the hits.
LIGHT_COLUMNS = """
    r.seq, r.memory_id, c.text, r.valid_from, r.valid_to, r.precision, r.valid_source, r.observed_at, r.tz,
    CASE WHEN r.valid_source = 'resolved' THEN json_extract(c.source, '$.message') END"""

def _search_conditions(scope: Scope) -> tuple[list[str], dict[str, object]]:
    """A search's scope: the user's current knowledge as of ``known`` (see read_conditions), filtered."""
    where, params = read_conditions(
        scope.user_id, scope.known, scope.valid, scope.current_only, scope.include_expired, False,
        started=True,
    )
    if scope.extra is not None:
        where.append(f"({scope.extra[0]})")
        params.update(scope.extra[1])
    return where, params


#: The ``?4`` newest (``FTS_NEWEST``) or oldest (``FTS_OLDEST``) indexed revisions with
#: ``?2 <= seq <= ?3`` whose text matches the FTS5 query ``?1``: the bounded seek a search
#: gathers its candidates by, whatever the store's size. With ``?3`` the newest revision
#: arrived by known_at the answer does not change when more is written (revision numbers
#: follow local visibility order: arrived_at never goes backwards). Only FTS5's match is
#: used, never its statistics: those count every revision ever written, and a search read
#: as of a time must not see later ones. The seqs found are then kept by :func:`in_scope`.
FTS_NEWEST = (
    "SELECT rowid FROM content_fts WHERE content_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"
    " ORDER BY rowid DESC LIMIT ?4"
)
FTS_OLDEST = FTS_NEWEST.replace("DESC", "ASC")

#: Whether anyone but ?1 holds a revision (two probes of revisions_valid). When nobody does,
#: every indexed revision is ?1's and a search's MATCH needs no owner term.
OTHER_OWNER = (
    "SELECT 1 FROM revisions WHERE user_id < ?1 UNION ALL SELECT 1 FROM revisions WHERE user_id > ?1 LIMIT 1"
)


def _light_in_scope(found: str, where: list[str], filtered: bool) -> str:
    """The light rows of the revisions ``found`` selects (one column of seqs), kept by ``where``.

    MATERIALIZED + CROSS JOIN: the few found revisions drive the join; left to itself the
    planner walks all the user's revisions and probes the found ones for each. The memory's
    row is joined only for a filter (which may name its kind or key): every revision has one.
    """
    memories = "JOIN memories AS m ON m.memory_id = r.memory_id\n" if filtered else ""
    return f"""WITH found (seq) AS MATERIALIZED (
    {found}
)
SELECT {LIGHT_COLUMNS}
FROM found
CROSS JOIN revisions AS r ON r.seq = found.seq
{memories}LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id
WHERE {" AND ".join(where)}
ORDER BY r.seq"""


#: What the full-text counts a search keeps depend on (see :mod:`localmem.search.counts`): the
#: newest revision, content row and tombstone, each by its number and (revisions and
#: tombstones) its random id, so a row rolled back and another written in its place differs.
STORE_MARK = """SELECT
    (SELECT seq || ' ' || rev_id FROM revisions ORDER BY seq DESC LIMIT 1),
    (SELECT max(rev_seq) FROM content),
    (SELECT rowid || ' ' || tomb_id FROM erasures ORDER BY rowid DESC LIMIT 1)"""

#: The newest revision arrived at or before ?1 (one probe of revisions_arrived). Revision
#: numbers follow arrival order, so every revision up to it had arrived by then.
TOP_SEQ = "SELECT seq FROM revisions WHERE arrived_at <= ?1 ORDER BY arrived_at DESC, seq DESC LIMIT 1"

#: The first revision arrived at or after ?1.
FIRST_SEQ_FROM = "SELECT seq FROM revisions WHERE arrived_at >= ?1 ORDER BY arrived_at, seq LIMIT 1"

#: How many indexed revisions match the FTS5 query ?1 with ?2 <= seq <= ?3.
FTS_COUNT = "SELECT count(*) FROM content_fts WHERE content_fts MATCH ?1 AND rowid BETWEEN ?2 AND ?3"

#: The (?3 + 1)-th newest indexed revision matching ?1 with seq <= ?2.
FTS_NTH_NEWEST = (
    "SELECT rowid FROM content_fts WHERE content_fts MATCH ?1 AND rowid <= ?2"
    " ORDER BY rowid DESC LIMIT 1 OFFSET ?3"
)

#: FTS_NTH_NEWEST and FTS_COUNT of every indexed revision, when one user holds them all: the
#: index holds exactly the content rows (its triggers keep it so), and a walk of content's
#: rowids is cheaper than the owner term's doclist.
CONTENT_NTH_NEWEST = "SELECT rev_seq FROM content WHERE rev_seq <= ?1 ORDER BY rev_seq DESC LIMIT 1 OFFSET ?2"
CONTENT_COUNT = "SELECT count(*) FROM content WHERE rev_seq BETWEEN ?1 AND ?2"

_PLACED = """(
    (valid_source <> 'assumed' AND valid_to IS NOT NULL AND valid_to > :lo)
    OR (valid_source = 'assumed' AND observed_at >= :lo_day)
)"""


def near_in_time(
    scope: Scope,
    *,
    mid: int,
    lo: int,
    hi: int,
    reach: int,
    day: int,
    cap: int,
) -> Query:
    """The user's memories placed in time whose start is nearest ``mid``: ``cap`` on each side.

    Placed: a bounded valid time ending after ``lo``, or an assumed one observed from the
    day before ``lo``; starting before ``hi`` (a day later for assumed ones) and not more
    than ``reach`` before ``lo``. Both sides walk ``revisions_valid`` outwards from ``mid``
    and stop at ``cap``, so the work is bounded however many memories the window holds.
    """
    where, params = _search_conditions(scope)
    params.update(
        {"mid": mid, "lo": lo, "lo_day": lo - day, "hi_day": hi + day, "from": lo - reach, "cap": cap}
    )
    side = """SELECT seq FROM revisions
        WHERE user_id = :user_id AND valid_from {cmp} AND arrived_at <= :known AND {placed}
        ORDER BY valid_from {order} LIMIT :cap"""
    after = side.format(cmp=">= :mid AND valid_from < :hi_day", placed=_PLACED, order="ASC")
    before = side.format(cmp="< :mid AND valid_from >= :from", placed=_PLACED, order="DESC")
    found = f"SELECT seq FROM ({after})\n    UNION ALL\n    SELECT seq FROM ({before})"
    return Query(_light_in_scope(found, where, scope.extra is not None), params)


def in_scope(scope: Scope, seqs: list[int]) -> Query:
    """The light rows of these revisions that are in a search's scope: the user's memories as
    known at ``known`` (each memory's newest revision arrived by then), hidden as a read hides
    them, narrowed by the scope's filter."""
    where, params = _search_conditions(scope)
    params["seqs"] = json.dumps(seqs)
    found = "SELECT value FROM json_each(:seqs)"
    return Query(_light_in_scope(found, where, scope.extra is not None), params)


#: Each of the memories in the JSON array ?1: its creation, and each time it was retrieved
#: before ?2 (NULL if never: one row a memory, or one a use).
USES_BEFORE = """SELECT m.memory_id, m.created_at, u.used_at
FROM json_each(?1) AS j
JOIN memories AS m ON m.memory_id = j.value
LEFT JOIN usage AS u ON u.memory_id = m.memory_id AND u.used_at < ?2"""


def by_seq(seqs: list[int]) -> Query:
    """Full revision rows for these revision numbers (at most a few hundred)."""
    marks = ", ".join("?" * len(seqs))
    return Query(f"SELECT {REVISION_COLUMNS} {FROM}\nWHERE r.seq IN ({marks})", tuple(seqs))


