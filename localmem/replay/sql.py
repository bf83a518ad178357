"""SQL builders for replay and audit: strings and parameters, no execution.

Kept apart from the code that runs them, like :mod:`localmem.core.sql`, whose
revision columns they select so that :func:`~localmem.core.revision.revision_from_row`
builds every result. Every value is a bound parameter.
"""

from __future__ import annotations

from ..core.sql import FROM, NEWEST_SEQ, REVISION_COLUMNS, Query, latest_revision

__all__ = [
    "RUN",
    "RUN_EVENTS",
    "LAST_EVENT",
    "DECISION",
    "DECISION_SOURCES",
    "ARTIFACT",
    "WATERMARK",
    "SOURCES",
    "INSERT_DERIVATION",
    "INSERT_RUN",
    "INSERT_RUN_EVENT",
    "HAS_ARTIFACT",
    "INSERT_ARTIFACT",
    "INSERT_DECISION",
    "INSERT_DECISION_SOURCE",
    "RUN_IDS",
    "RUN_IDS_OF",
    "available_at",
    "derived_of_user",
    "decisions",
]


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
WATERMARK = NEWEST_SEQ
#: A derived memory's sources, in order. Parameter: memory_id.
SOURCES = "SELECT source_rev FROM derivations WHERE memory_id = ? ORDER BY position"
#: One provenance link. Parameters: memory_id, position, source_rev.
INSERT_DERIVATION = "INSERT INTO derivations (memory_id, position, source_rev) VALUES (?, ?, ?)"
#: A run's identity row. Parameters: run_id, user_id, started_at, origin.
INSERT_RUN = "INSERT INTO runs (run_id, user_id, started_at, origin) VALUES (?, ?, ?, ?)"
#: One run event. Parameters: run_id, position, kind, step, known_at, recorded_at.
INSERT_RUN_EVENT = ("INSERT INTO run_events (run_id, position, kind, step, known_at, recorded_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)")
#: Whether an artifact is stored. Parameter: sha256.
HAS_ARTIFACT = "SELECT 1 FROM artifacts WHERE sha256 = ?"
#: One artifact. Parameters: sha256, size, bytes, recorded_at.
INSERT_ARTIFACT = "INSERT INTO artifacts (sha256, size, bytes, recorded_at) VALUES (?, ?, ?, ?)"
#: One decision receipt, in the column order of the decisions table.
INSERT_DECISION = (
    "INSERT INTO decisions (decision_id, run_id, user_id, step, event_seq, known_at, valid_at,"
    " recorded_at, watermark, prompt, output, meta, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)")
#: One cited revision of a receipt. Parameters: decision_id, position, rev_id.
INSERT_DECISION_SOURCE = "INSERT INTO decision_sources (decision_id, position, rev_id) VALUES (?, ?, ?)"
#: Every run's id, oldest first; of one user with RUN_IDS_OF.
RUN_IDS = "SELECT run_id FROM runs ORDER BY started_at, run_id"
RUN_IDS_OF = "SELECT run_id FROM runs WHERE user_id = ? ORDER BY started_at, run_id"


def available_at(user_id: str, known: int, watermark: int) -> Query:
    """Each of a user's memories as known at ``known``, among revisions that had arrived by ``watermark``.

    Nothing else is filtered: retracted and expired memories are returned (flagged), and
    erased ones without their content.
    """
    sql = f"""SELECT {REVISION_COLUMNS} {FROM}
WHERE r.user_id = :user_id AND r.arrived_at <= :known AND r.seq <= :watermark
  AND r.seq = {latest_revision("r.memory_id", known=":known", extra=" AND r2.seq <= :watermark")}
ORDER BY r.valid_from, r.recorded_at, r.seq"""
    return Query(sql, {"user_id": user_id, "known": known, "watermark": watermark})


def derived_of_user(user_id: str, known: int) -> Query:
    """The user's derived memories that were recorded by ``known``."""
    sql = """SELECT DISTINCT d.memory_id FROM derivations AS d
JOIN memories AS m ON m.memory_id = d.memory_id
WHERE m.user_id = ?1 AND m.created_at <= ?2"""
    return Query(sql, (user_id, known))


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
