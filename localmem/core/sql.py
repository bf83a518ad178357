"""Every SQL rule of the as-of model, stated once: strings and parameters, no execution.

Kept apart from the code that runs them so that each can be read, printed and
tested on its own. Every value is a bound parameter; no identifier is dynamic.
The search and replay layers build their statements from the pieces here
(:mod:`localmem.search.sql`, :mod:`localmem.replay.sql`), and sync writes the
rows it imports with the same INSERTs the write core uses.

The bitemporal rule every builder applies: a memory *as known at K* is, among
its revisions that had arrived on this device by K (``arrived_at <= K``: its own
writes' recorded_at, a synced one's later of origin recorded_at and local arrival),
the one that comes first in :data:`REVISION_ORDER` (greatest hybrid logical clock;
ties: greater origin device, then greater rev_id), so the current view is a pure
function of the set of rows; it is *valid at V* when ``valid_from <= V < valid_to``
(open end = still true); it is *expired at V* when ``expires_at <= V``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "REVISION_ORDER",
    "revision_order",
    "latest_revision",
    "REVISION_FIELDS",
    "REVISION_COLUMNS",
    "FROM",
    "IS_LATEST",
    "Query",
    "GET_AS_OF",
    "GET_FLAGGED",
    "get_as_of",
    "read_conditions",
    "read_as_of",
    "KEY_HEAD",
    "KEY_HEAD_AFTER",
    "NTH_LATEST_START",
    "snapshot",
    "history",
    "read_page",
    "MEMORY_COLUMNS",
    "STORED_REVISION_COLUMNS",
    "CONTENT_COLUMNS",
    "TOMBSTONE_COLUMNS",
    "INSERT_MEMORY",
    "COPY_COLUMNS",
    "COPIED_KIND",
    "COPIED_KEY",
    "INSERT_REVISION",
    "Staged",
    "STAGED",
    "INSERT_CONTENT",
    "INSERT_ERASURE",
    "INSERT_USAGE",
    "MAX_HLC",
    "MAX_HLC_AND_PREV_HASH",
    "CHAIN_HEAD",
    "DERIVED_FROM",
    "NEWEST_RECORDED",
    "USER_ZONE",
    "MEMORY_ID_PREFIX",
    "MEMORY_EXISTS",
    "ERASURE",
    "USERS",
    "NEWEST_SEQ",
    "IS_DERIVED",
    "CURRENT_REV_ID",
    "revisions_by_id",
    "derived_among",
    "staleness",
]

#: Which of a memory's revisions is its current one: the columns, most significant first,
#: that :func:`revision_order` sorts by. The one place the rule is written (schema.sql's
#: ``memory_latest`` view, for people at the sqlite3 shell, repeats it in SQL).
REVISION_ORDER = ("hlc", "origin", "rev_id")


def revision_order(alias: str, *, newest_first: bool = True) -> str:
    """An ORDER BY list over :data:`REVISION_ORDER`: the current revision first, or history order."""
    way = " DESC" if newest_first else ""
    return ", ".join(f"{alias}.{column}{way}" for column in REVISION_ORDER)


def latest_revision(memory: str, *, known: str | None = None, extra: str = "") -> str:
    """A scalar subquery: the seq of the current revision of the memory ``memory`` names.

    Args:
        memory: an SQL expression for the memory id (``r.memory_id``, ``?1``).
        known: an SQL expression for known_at (only revisions arrived by then), or None for all.
        extra: more conditions on the revisions considered (``AND r2.seq <= :watermark``).
    """
    arrived = "" if known is None else f" AND r2.arrived_at <= {known}"
    return f"""(
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = {memory}{arrived}{extra}
    ORDER BY {revision_order("r2")}
    LIMIT 1)"""


#: What a revision read selects, field by field: (name, SQL expression). The order of
#: REVISION_COLUMNS and the row decoder (:func:`localmem.core.revision.revision_from_row`)
#: are both generated from this list.
REVISION_FIELDS: tuple[tuple[str, str], ...] = (
    ("seq", "r.seq"), ("rev_id", "r.rev_id"), ("memory_id", "r.memory_id"), ("user_id", "r.user_id"),
    ("kind", "m.kind"), ("key", "m.key"), ("version", "r.version"), ("op", "r.op"),
    ("text", "c.text"), ("value", "c.value"), ("attributes", "c.attributes"), ("source", "c.source"),
    ("reason", "c.reason"), ("valid_from", "r.valid_from"), ("valid_to", "r.valid_to"),
    ("precision", "r.precision"), ("valid_source", "r.valid_source"), ("observed_at", "r.observed_at"),
    ("recorded_at", "r.recorded_at"), ("tz", "r.tz"), ("expires_at", "r.expires_at"),
    ("retracted", "r.retracted"), ("corrected", "r.corrected"), ("prev_rev", "r.prev_rev"),
    ("supersedes", "r.supersedes"), ("superseded_by", "r.superseded_by"), ("origin", "r.origin"),
    ("erased_at", "e.erased_at"),
)

#: The columns every revision read selects, in the order of REVISION_FIELDS.
REVISION_COLUMNS = "\n    " + ", ".join(expr for _, expr in REVISION_FIELDS)


def _from(indexed_by: str | None = None) -> str:
    hint = "" if indexed_by is None else f" INDEXED BY {indexed_by}"
    return f"""
FROM revisions AS r{hint}
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id"""


#: The joins every revision read needs (REVISION_COLUMNS reads from r, m, c and e).
FROM = _from()

#: r is the current revision of its memory as known at :known.
IS_LATEST = f"r.seq = {latest_revision('r.memory_id', known=':known')}"


@dataclass(frozen=True, slots=True)
class Query:
    """A SQL string with its parameters (named in a dict, or positional)."""

    sql: str
    params: dict[str, object] | tuple[object, ...]


#: The memory's kind and key as a revision row holds them (schema 9's copies, ``memory_kind``
#: and ``memory_key``), or, in a row without them (written before schema 9, or by a writer that
#: left them out), the memory's own: a subquery SQLite runs only for such a row.
COPIED_KIND = "coalesce(r.memory_kind, (SELECT kind FROM memories WHERE memory_id = r.memory_id))"
COPIED_KEY = ("CASE WHEN r.memory_kind IS NULL THEN (SELECT key FROM memories WHERE memory_id = r.memory_id)"
              " ELSE r.memory_key END")


def _get(extra: str = "") -> str:
    # REVISION_FIELDS with kind and key read from the revision's copies, so the memories
    # table is not joined: a third of the get's SQL (two more B-tree descents) at 100k.
    columns = ", ".join(COPIED_KIND if e == "m.kind" else COPIED_KEY if e == "m.key" else e
                        for _, e in REVISION_FIELDS)
    return f"""SELECT
    {columns}{extra}
FROM revisions AS r
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id
WHERE r.memory_id = ?1 AND r.arrived_at <= ?2
ORDER BY {revision_order("r")}
LIMIT 1"""


#: One memory as known at a time: a single probe of ``revisions_asof``, then the row's content
#: (and, only for a row without the schema-9 copies, its memory). Positional parameters
#: (memory_id, known): the hottest read, kept lean.
GET_AS_OF = _get()
#: GET_AS_OF with one more column, last: whether the memory is derived (has provenance links),
#: so that ``get`` runs one statement, not two (the second probe cost a tenth of a get).
GET_FLAGGED = _get(",\n    EXISTS (SELECT 1 FROM derivations WHERE memory_id = ?1)")


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
  AND r.seq = {latest_revision("m.memory_id")}
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
KEY_HEAD_AFTER = f"""SELECT {REVISION_COLUMNS} {_from("revisions_valid")}
WHERE r.user_id = ?1 AND r.valid_from > ?3 AND m.key = ?2
  AND r.seq = {latest_revision("r.memory_id")}
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
ORDER BY {revision_order("r", newest_first=False)}"""
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


# -- the write core's statements ------------------------------------------------------------

#: A memory's identity row, in the order INSERT_MEMORY takes it.
MEMORY_COLUMNS = ("memory_id", "user_id", "kind", "key", "created_at")
#: The columns of a revision row as written, in the order INSERT_REVISION takes them
#: (seq is the local rowid; sync carries all but arrived_at, which is local too).
STORED_REVISION_COLUMNS = (
    "rev_id", "memory_id", "user_id", "version", "op", "valid_from", "valid_to", "precision",
    "valid_source", "observed_at", "recorded_at", "tz", "expires_at", "retracted", "corrected",
    "prev_rev", "supersedes", "superseded_by", "origin", "hlc", "arrived_at",
    "content_hash", "rev_hash", "chain",
)
#: What a revision says (destroyed by an erase), keyed by the revision's seq.
CONTENT_COLUMNS = ("text", "value", "attributes", "source", "reason")
#: A tombstone, as erasures (and sync's extra_tombstones) hold it.
TOMBSTONE_COLUMNS = ("tomb_id", "memory_id", "user_id", "erased_at", "erased_by", "reason", "origin")


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


INSERT_MEMORY = _insert("memories", MEMORY_COLUMNS)
#: The local copies of the memory's kind and key every revision the device writes carries
#: (schema 9): never synced, so not among STORED_REVISION_COLUMNS.
COPY_COLUMNS = ("memory_kind", "memory_key")
#: Parameters: STORED_REVISION_COLUMNS, then the memory's kind and key (COPY_COLUMNS).
INSERT_REVISION = _insert("revisions", (*STORED_REVISION_COLUMNS, *COPY_COLUMNS))
@dataclass(frozen=True, slots=True)
class Staged:
    """A bulk append's rows for one table, staged in a temporary table (untyped columns: values
    kept as bound) and copied into the table by one statement. Run row by row, each INSERT
    is a statement of its own: the full-text trigger on ``content`` then makes FTS5 flush its
    pending terms at every statement's savepoint (23 µs a row, measured; 10 µs in one
    statement), and every statement costs its own journal and trigger set-up."""

    columns: tuple[str, ...]  #: the table's columns the rows give, in their order
    create: str  #: CREATE TEMP TABLE IF NOT EXISTS (a no-op once made: a connection's temp schema)
    stage: str  #: INSERT one row into the temporary table (executemany)
    insert: str  #: INSERT INTO the table SELECT the staged rows, in staging order
    clear: str  #: DELETE the staged rows


def _staged(table: str, columns: tuple[str, ...]) -> Staged:
    cols = ", ".join(columns)
    insert = f"INSERT INTO {table} ({cols}) SELECT {cols} FROM temp.staged_{table} ORDER BY rowid"
    if table == "revisions":  # the memory's kind and key copied from its row, staged just before
        # (LEFT: a row whose memory is missing still fails its foreign key, as it did)
        insert = (f"INSERT INTO revisions ({cols}, {', '.join(COPY_COLUMNS)})"
                  f" SELECT {', '.join(f's.{c}' for c in columns)}, m.kind, m.key"
                  " FROM temp.staged_revisions AS s LEFT JOIN memories AS m ON m.memory_id = s.memory_id"
                  " ORDER BY s.rowid")
    return Staged(columns, f"CREATE TEMP TABLE IF NOT EXISTS staged_{table} ({cols})",
                  _insert(f"temp.staged_{table}", columns), insert, f"DELETE FROM temp.staged_{table}")


#: What a bulk append stages, in the order it is copied (foreign keys point backwards): the
#: columns of INSERT_MEMORY, of INSERT_REVISION with the local seq first (a bulk append numbers
#: its rows itself), and of INSERT_CONTENT.
STAGED = (
    _staged("memories", MEMORY_COLUMNS),
    _staged("revisions", ("seq", *STORED_REVISION_COLUMNS)),
    _staged("content", ("rev_seq", "memory_id", *CONTENT_COLUMNS)),
)
#: Parameters: rev_seq, memory_id, then CONTENT_COLUMNS.
INSERT_CONTENT = _insert("content", ("rev_seq", "memory_id", *CONTENT_COLUMNS))
INSERT_ERASURE = _insert("erasures", TOMBSTONE_COLUMNS)
#: One retrieval a search logged. Parameters: user_id, memory_id, used_at, run_id, rank.
INSERT_USAGE = _insert("usage", ("user_id", "memory_id", "used_at", "run_id", "rank"))

#: The greatest hybrid logical clock among a memory's revisions (one probe of revisions_asof).
MAX_HLC = "SELECT max(hlc) FROM revisions WHERE memory_id = ?"
#: MAX_HLC, and the hash of the revision a new one follows. Parameters: memory_id, prev_rev.
MAX_HLC_AND_PREV_HASH = (
    "SELECT max(hlc), (SELECT rev_hash FROM revisions WHERE rev_id = ?2) FROM revisions WHERE memory_id = ?1")
#: The local hash chain's head: the newest revision's ``chain`` (no row: an empty store).
CHAIN_HEAD = "SELECT chain FROM revisions ORDER BY seq DESC LIMIT 1"
#: The memories derived from any revision of a memory, not yet erased. Parameter: memory_id.
DERIVED_FROM = (
    "SELECT DISTINCT d.memory_id FROM derivations AS d JOIN revisions AS r ON r.rev_id = d.source_rev"
    " WHERE r.memory_id = ? AND d.memory_id NOT IN (SELECT memory_id FROM erasures) ORDER BY d.memory_id")
#: The newest time the file holds: its newest arrival or erasure (recorded time never goes
#: below it). Two-argument max() is NULL if either is; coalesce keeps the other.
NEWEST_RECORDED = (
    "SELECT max(coalesce((SELECT max(arrived_at) FROM revisions), -9e18),"
    " coalesce((SELECT max(erased_at) FROM erasures), -9e18))"
)
#: The zone a user last gave: only a memory's first revision is given one; later ones copy it.
USER_ZONE = (
    "SELECT tz FROM revisions WHERE user_id = ? AND version = 1 ORDER BY arrived_at DESC, seq DESC LIMIT 1"
)
#: Up to two memory ids in [?1, ?2): what an id prefix names.
MEMORY_ID_PREFIX = (
    "SELECT memory_id FROM memories WHERE memory_id >= ? AND memory_id < ? ORDER BY memory_id LIMIT 2"
)
#: Whether a memory id exists.
MEMORY_EXISTS = "SELECT 1 FROM memories WHERE memory_id = ?"
#: A memory's tombstone, in the order Erasure is built from.
ERASURE = "SELECT memory_id, user_id, erased_at, erased_by, reason, tomb_id FROM erasures WHERE memory_id = ?"
#: Every user id, by a loose index scan of revisions_user: one seek per user instead of reading every
#: memory (800 ms -> under 1 ms for 101 users of a 1M-revision store).
USERS = """WITH RECURSIVE u (id) AS (
    SELECT min(user_id) FROM revisions
    UNION ALL
    SELECT (SELECT min(user_id) FROM revisions WHERE user_id > u.id) FROM u WHERE u.id IS NOT NULL
)
SELECT id FROM u WHERE id IS NOT NULL"""
#: The newest local revision number (0 in an empty file): watermarks of receipts and exports.
NEWEST_SEQ = "SELECT coalesce(max(seq), 0) FROM revisions"


# -- staleness of derived memories ------------------------------------------------------------

#: Whether a memory is derived (has provenance links): one probe of the primary key.
IS_DERIVED = "SELECT 1 FROM derivations WHERE memory_id = ?1 LIMIT 1"

#: The rev_id of a memory's current revision as known at ?2. Parameters (memory_id, known).
CURRENT_REV_ID = f"""SELECT r.rev_id FROM revisions AS r
WHERE r.memory_id = ?1 AND r.arrived_at <= ?2
ORDER BY {revision_order("r")} LIMIT 1"""


def _marks(n: int) -> str:
    return ", ".join("?" * n)


def revisions_by_id(rev_ids: Sequence[str]) -> Query:
    """These exact revisions (not their memories' newest), in no particular order."""
    return Query(f"SELECT {REVISION_COLUMNS} {FROM}\nWHERE r.rev_id IN ({_marks(len(rev_ids))})",
                 tuple(rev_ids))


def derived_among(memory_ids: Sequence[str]) -> Query:
    """Which of these memories are derived (have provenance links)."""
    return Query(f"SELECT DISTINCT memory_id FROM derivations WHERE memory_id IN ({_marks(len(memory_ids))})",
                 tuple(memory_ids))


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
