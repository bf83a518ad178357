"""SQL builders for replay and audit: strings and parameters, no execution.

Kept apart from the code that runs them, like :mod:`localmem.queries`, whose
revision columns they select so that :func:`~localmem.revision.revision_from_row`
builds every result. Every value is a bound parameter.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..core.sql import REVISION_COLUMNS, Query

__all__ = [
    "RUN",
    "RUN_EVENTS",
    "LAST_EVENT",
    "DECISION",
    "DECISION_SOURCES",
    "ARTIFACT",
    "WATERMARK",
    "revisions_by_id",
    "available_at",
    "staleness",
    "derived_among",
    "derived_of_user",
    "decisions",
]

_FROM = """
FROM revisions AS r
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id"""

#: A run's identity. Parameter: run_id.
RUN = "SELECT run_id, user_id, started_at FROM runs WHERE run_id = ?"
#: A run's events, oldest first. Parameter: run_id.
RUN_EVENTS = ("SELECT seq, position, kind, step, known_at, recorded_at FROM run_events"
              " WHERE run_id = ? ORDER BY position")
#: A run's newest event: its cutoff in force. Parameter: run_id.
LAST_EVENT = f"{RUN_EVENTS} DESC LIMIT 1"
#: One decision receipt. Parameter: decision_id.
DECISION = ("SELECT decision_id, run_id, user_id, step, known_at, valid_at, recorded_at, watermark,"
            " prompt, output, meta FROM decisions WHERE decision_id = ?")
#: The revision ids a decision cited, in order. Parameter: decision_id.
DECISION_SOURCES = "SELECT rev_id FROM decision_sources WHERE decision_id = ? ORDER BY position"
#: An artifact's bytes. Parameter: sha256.
ARTIFACT = "SELECT bytes FROM artifacts WHERE sha256 = ?"
#: The newest local revision number: what a decision's "available" is bounded by.
WATERMARK = "SELECT coalesce(max(seq), 0) FROM revisions"


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def revisions_by_id(rev_ids: Sequence[str]) -> Query:
    """These exact revisions (not their memories' newest), in no particular order."""
    return Query(f"SELECT {REVISION_COLUMNS} {_FROM}\nWHERE r.rev_id IN ({_marks(len(rev_ids))})",
                 tuple(rev_ids))


def available_at(user_id: str, known: int, watermark: int) -> Query:
    """Each of a user's memories as known at ``known``, among revisions that had arrived by ``watermark``.

    Nothing else is filtered: retracted and expired memories are returned (flagged), and
    erased ones without their content.
    """
    sql = f"""SELECT {REVISION_COLUMNS} {_FROM}
WHERE r.user_id = :user_id AND r.arrived_at <= :known AND r.seq <= :watermark
  AND r.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = r.memory_id AND r2.arrived_at <= :known AND r2.seq <= :watermark
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC
    LIMIT 1)
ORDER BY r.valid_from, r.recorded_at, r.seq"""
    return Query(sql, {"user_id": user_id, "known": known, "watermark": watermark})


def derived_among(memory_ids: Sequence[str]) -> Query:
    """Which of these memories are derived (have provenance links)."""
    return Query(f"SELECT DISTINCT memory_id FROM derivations WHERE memory_id IN ({_marks(len(memory_ids))})",
                 tuple(memory_ids))


def derived_of_user(user_id: str, known: int) -> Query:
    """The user's derived memories that were recorded by ``known``."""
    sql = """SELECT DISTINCT d.memory_id FROM derivations AS d
JOIN memories AS m ON m.memory_id = d.memory_id
WHERE m.user_id = ?1 AND m.created_at <= ?2"""
    return Query(sql, (user_id, known))


def staleness(memory_ids: Sequence[str], known: int) -> Query:
    """For each source of these derived memories, each change recorded after it and by ``known``
    that makes it stale: a correction, a supersession, a retraction (revisions of the source's
    memory with a later version), or an erasure (version NULL).

    Rows: derived memory, position, source rev, source memory, change op, change rev,
    its recorded_at, the replacing memory (supersession). Oldest change first per source.
    """
    marks = _marks(len(memory_ids))
    sql = f"""SELECT d.memory_id, d.position, d.source_rev, s.memory_id, later.op, later.rev_id,
       later.recorded_at, later.superseded_by
FROM derivations AS d
JOIN revisions AS s ON s.rev_id = d.source_rev
JOIN revisions AS later ON later.memory_id = s.memory_id AND later.version > s.version
WHERE d.memory_id IN ({marks}) AND later.arrived_at <= ?
  AND later.op IN ('correct', 'superseded', 'retract')
UNION ALL
SELECT d.memory_id, d.position, d.source_rev, s.memory_id, 'erase', NULL, e.erased_at, NULL
FROM derivations AS d
JOIN revisions AS s ON s.rev_id = d.source_rev
JOIN erasures AS e ON e.memory_id = s.memory_id
WHERE d.memory_id IN ({marks}) AND e.erased_at <= ?
ORDER BY 1, 2, 7"""
    return Query(sql, (*memory_ids, known, *memory_ids, known))


def decisions(run_id: str | None, citing: str | None) -> Query:
    """Decision ids, oldest first: of one run, and/or citing any revision of one memory."""
    where, params = [], []
    if run_id is not None:
        where.append("d.run_id = ?")
        params.append(run_id)
    if citing is not None:
        where.append("d.decision_id IN (SELECT ds.decision_id FROM decision_sources AS ds"
                     " JOIN revisions AS r ON r.rev_id = ds.rev_id WHERE r.memory_id = ?)")
        params.append(citing)
    cond = f" WHERE {' AND '.join(where)}" if where else ""
    return Query(f"SELECT d.decision_id FROM decisions AS d{cond} ORDER BY d.recorded_at, d.decision_id",
                 tuple(params))
