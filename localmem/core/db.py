"""The connection: opening a file, its pragmas, its schema, its transactions.

One factory applies the pragmas every connection needs; one ``transaction()``
is the only way writes happen (BEGIN IMMEDIATE at the top, SAVEPOINT when
nested); one function maps SQLite's errors to localmem's.

Opening never writes to a current file: a reader opens, and reads, while
another process holds the write lock (SQLite's WAL lets readers go on beside
one writer). Only a file that needs creating, converting to WAL or migrating
is written at open. A connection waits up to its busy timeout for the write
lock, then raises :class:`~localmem.errors.BusyError`.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import apsw
import apsw.bestpractice
import platformdirs

from ..errors import (
    BusyError,
    CorruptDatabaseError,
    ImmutableError,
    IntegrityError,
    InvalidInputError,
    LocalmemError,
    SchemaVersionError,
    StorageError,
    shown,
)

__all__ = [
    "SCHEMA_VERSION",
    "APPLICATION_ID",
    "MIGRATIONS",
    "default_path",
    "schema_sql",
    "DEFAULT_BUSY_TIMEOUT",
    "connect",
    "optimize",
    "transaction",
    "map_errors",
]

#: The schema version this code writes; PRAGMA user_version of a current file.
SCHEMA_VERSION = 7
#: PRAGMA application_id of a localmem file ("LMEM"), so a stranger's SQLite
#: file is refused rather than written into.
APPLICATION_ID = 0x4C4D454D

#: Numbered steps from version N-1 to N, each run in one transaction with its
#: user_version bump. Each step leaves the file exactly as schema.sql makes it
#: (tests/test_db.py builds a version-1 file and compares).
MIGRATIONS: dict[int, str] = {
    # 2: the full-text index carries each entry's owner, so a search matches within one user.
    2: """
DROP TRIGGER content_fts_insert;
DROP TRIGGER content_fts_delete;
DROP TABLE content_fts;
CREATE VIEW content_indexed AS
SELECT c.rev_seq AS rev_seq, c.text AS text, 'u' || hex(m.user_id) AS owner
FROM content AS c JOIN memories AS m ON m.memory_id = c.memory_id;
CREATE VIRTUAL TABLE content_fts USING fts5 (
    text,
    owner,
    content = 'content_indexed',
    content_rowid = 'rev_seq',
    tokenize = 'porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER content_fts_insert AFTER INSERT ON content BEGIN
    INSERT INTO content_fts (rowid, text, owner) VALUES (
        NEW.rev_seq, NEW.text,
        (SELECT 'u' || hex(user_id) FROM memories WHERE memory_id = NEW.memory_id));
END;
CREATE TRIGGER content_fts_delete AFTER DELETE ON content BEGIN
    INSERT INTO content_fts (content_fts, rowid, text, owner) VALUES (
        'delete', OLD.rev_seq, OLD.text,
        (SELECT 'u' || hex(user_id) FROM memories WHERE memory_id = OLD.memory_id));
END;
INSERT INTO content_fts (content_fts) VALUES ('rebuild');
""",
    # 3: the usage log that search ranking reads as of a time.
    3: """
CREATE TABLE usage (
    seq        INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    memory_id  TEXT NOT NULL REFERENCES memories (memory_id),
    used_at    INTEGER NOT NULL,
    run_id     TEXT,
    rank       INTEGER NOT NULL CHECK (rank >= 1)
) STRICT;
CREATE INDEX usage_by_memory ON usage (memory_id, used_at);
CREATE TRIGGER usage_no_replace BEFORE INSERT ON usage
WHEN EXISTS (SELECT 1 FROM usage WHERE seq = NEW.seq) BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: an existing row cannot be replaced');
END;
CREATE TRIGGER usage_no_update BEFORE UPDATE ON usage BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: it is only ever appended');
END;
CREATE TRIGGER usage_no_delete BEFORE DELETE ON usage BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: it is only ever appended');
END;
""",
    # 4: vectors of each revision's text, per embedding model, for the semantic half of
    # search (localmem/embedding.py); erased with the words they are derived from.
    4: """
CREATE TABLE embedding_models (
    model       TEXT PRIMARY KEY CHECK (length(model) > 0),
    dimensions  INTEGER NOT NULL CHECK (dimensions > 0)
) STRICT;
CREATE TABLE embeddings (
    seq          INTEGER PRIMARY KEY,
    rev_seq      INTEGER NOT NULL REFERENCES revisions (seq),
    model        TEXT NOT NULL REFERENCES embedding_models (model),
    memory_id    TEXT NOT NULL,
    user_id      TEXT NOT NULL,
    recorded_at  INTEGER NOT NULL,
    embedded_at  INTEGER NOT NULL CHECK (embedded_at >= recorded_at),
    vector       BLOB NOT NULL CHECK (length(vector) > 0 AND length(vector) % 4 = 0),
    UNIQUE (rev_seq, model)
) STRICT;
CREATE INDEX embeddings_scan ON embeddings (model, user_id, embedded_at);
CREATE INDEX embeddings_memory ON embeddings (memory_id);
CREATE TRIGGER erasures_destroy_embeddings AFTER INSERT ON erasures BEGIN
    DELETE FROM embeddings WHERE memory_id = NEW.memory_id;
END;
CREATE TRIGGER embeddings_match_revision BEFORE INSERT ON embeddings
WHEN NOT EXISTS (
    SELECT 1 FROM content AS c JOIN revisions AS r ON r.seq = c.rev_seq
    WHERE c.rev_seq = NEW.rev_seq AND r.memory_id IS NEW.memory_id
      AND r.user_id IS NEW.user_id AND r.recorded_at IS NEW.recorded_at)
BEGIN
    SELECT RAISE(ABORT,
        'localmem: an embedding must match a revision with content (its memory, user and recorded_at)');
END;
CREATE TRIGGER embeddings_match_model BEFORE INSERT ON embeddings
WHEN NOT EXISTS (
    SELECT 1 FROM embedding_models AS em
    WHERE em.model = NEW.model AND em.dimensions * 4 = length(NEW.vector))
BEGIN
    SELECT RAISE(ABORT,
        'localmem: an embedding must have its registered model''s dimensions (4 bytes each)');
END;
CREATE TRIGGER embedding_models_no_replace BEFORE INSERT ON embedding_models
WHEN EXISTS (SELECT 1 FROM embedding_models WHERE model = NEW.model) BEGIN
    SELECT RAISE(ABORT, 'localmem: embedding_models are immutable: a model is registered once');
END;
CREATE TRIGGER embeddings_no_replace BEFORE INSERT ON embeddings
WHEN EXISTS (SELECT 1 FROM embeddings
             WHERE seq = NEW.seq OR (rev_seq = NEW.rev_seq AND model = NEW.model)) BEGIN
    SELECT RAISE(ABORT, 'localmem: embeddings are immutable: an existing vector cannot be replaced');
END;
CREATE TRIGGER embedding_models_no_update BEFORE UPDATE ON embedding_models BEGIN
    SELECT RAISE(ABORT, 'localmem: embedding_models are immutable: a new model is a new name');
END;
CREATE TRIGGER embedding_models_no_delete BEFORE DELETE ON embedding_models BEGIN
    SELECT RAISE(ABORT, 'localmem: embedding_models are immutable: a new model is a new name');
END;
CREATE TRIGGER embeddings_no_update BEFORE UPDATE ON embeddings BEGIN
    SELECT RAISE(ABORT, 'localmem: embeddings are immutable: a vector is never updated');
END;
CREATE TRIGGER embeddings_no_delete BEFORE DELETE ON embeddings
WHEN NOT EXISTS (SELECT 1 FROM erasures WHERE erasures.memory_id = OLD.memory_id)
BEGIN
    SELECT RAISE(ABORT, 'localmem: embeddings are immutable: vectors are destroyed only by erase');
END;
""",
    # 5: replay and audit: runs and their events, decision receipts with content-addressed
    # artifacts, and the provenance of derived memories.
    5: """
-- Runs: an agent session or an evaluation replay, pinned to a knowledge cutoff.
-- A run's state is its events: the cutoff in force is the known_at of its
-- newest event; only an 'advance' moves it, and never backwards.
CREATE TABLE runs (
    run_id      TEXT PRIMARY KEY CHECK (length(run_id) > 0),
    user_id     TEXT NOT NULL CHECK (length(user_id) > 0),
    started_at  INTEGER NOT NULL,
    origin      TEXT NOT NULL
) STRICT;

-- What happened to a run, in order: its start, each step it marked, each
-- advance of its cutoff. known_at is the cutoff in force after the event; it is
-- never after the event's own recorded_at (a cutoff in the future would let
-- facts recorded later leak in).
CREATE TABLE run_events (
    seq          INTEGER PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES runs (run_id),
    position     INTEGER NOT NULL CHECK (position >= 1),
    kind         TEXT NOT NULL CHECK (kind IN ('start', 'step', 'advance')),
    step         TEXT CHECK (step IS NULL OR length(step) > 0),
    known_at     INTEGER NOT NULL,
    recorded_at  INTEGER NOT NULL,
    UNIQUE (run_id, position),
    CHECK ((kind = 'start') = (position = 1)),
    CHECK (kind = 'start' OR step IS NOT NULL),
    CHECK (known_at <= recorded_at)
) STRICT;

-- Exact bytes a decision handed a model (or got back), stored once per content:
-- the key is the SHA-256 of the bytes, in lower-case hex.
CREATE TABLE artifacts (
    sha256       TEXT PRIMARY KEY CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
    size         INTEGER NOT NULL,
    bytes        BLOB NOT NULL,
    recorded_at  INTEGER NOT NULL,
    CHECK (size = length(bytes))
) STRICT;

-- Decision receipts: which run and step, the cutoffs it was made under, the
-- newest local revision seq then (so later arrivals never join what was
-- available), the prompt's bytes and optional output, and free JSON meta.
CREATE TABLE decisions (
    decision_id  TEXT PRIMARY KEY CHECK (length(decision_id) = 26),
    run_id       TEXT NOT NULL REFERENCES runs (run_id),
    user_id      TEXT NOT NULL,
    step         TEXT NOT NULL CHECK (length(step) > 0),
    event_seq    INTEGER NOT NULL REFERENCES run_events (seq),
    known_at     INTEGER NOT NULL,
    valid_at     INTEGER NOT NULL,
    recorded_at  INTEGER NOT NULL,
    watermark    INTEGER NOT NULL,
    prompt       TEXT NOT NULL REFERENCES artifacts (sha256),
    output       TEXT REFERENCES artifacts (sha256),
    meta         TEXT CHECK (meta IS NULL OR json_valid(meta)),
    origin       TEXT NOT NULL,
    CHECK (known_at <= recorded_at)
) STRICT;

CREATE INDEX decisions_run ON decisions (run_id, recorded_at);

-- The revisions a decision retrieved and used, in the order given. Ids only:
-- an erasure of a cited memory destroys its words, never these links.
CREATE TABLE decision_sources (
    decision_id  TEXT NOT NULL REFERENCES decisions (decision_id),
    position     INTEGER NOT NULL CHECK (position >= 1),
    rev_id       TEXT NOT NULL REFERENCES revisions (rev_id),
    PRIMARY KEY (decision_id, position)
) STRICT;

CREATE INDEX decision_sources_rev ON decision_sources (rev_id);

-- Provenance of derived memories (summaries): the revisions each was computed from.
CREATE TABLE derivations (
    memory_id   TEXT NOT NULL REFERENCES memories (memory_id),
    position    INTEGER NOT NULL CHECK (position >= 1),
    source_rev  TEXT NOT NULL REFERENCES revisions (rev_id),
    PRIMARY KEY (memory_id, position)
) STRICT;

CREATE INDEX derivations_source ON derivations (source_rev);

-- A run's cutoff moves only by an advance, and never backwards.
CREATE TRIGGER run_events_cutoff BEFORE INSERT ON run_events
WHEN NEW.kind != 'start' AND (
    SELECT CASE WHEN NEW.kind = 'advance' THEN NEW.known_at < p.known_at
                ELSE NEW.known_at != p.known_at END
    FROM run_events AS p WHERE p.run_id = NEW.run_id ORDER BY p.position DESC LIMIT 1)
BEGIN
    SELECT RAISE(ABORT, 'localmem: a run''s cutoff moves only forwards, and only by an advance');
END;

CREATE TRIGGER runs_no_replace BEFORE INSERT ON runs
WHEN EXISTS (SELECT 1 FROM runs WHERE run_id = NEW.run_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: runs are immutable: an existing run cannot be replaced');
END;
CREATE TRIGGER run_events_no_replace BEFORE INSERT ON run_events
WHEN EXISTS (SELECT 1 FROM run_events WHERE seq = NEW.seq
             OR (run_id = NEW.run_id AND position = NEW.position)) BEGIN
    SELECT RAISE(ABORT, 'localmem: run events are immutable: an existing event cannot be replaced');
END;
CREATE TRIGGER artifacts_no_replace BEFORE INSERT ON artifacts
WHEN EXISTS (SELECT 1 FROM artifacts WHERE sha256 = NEW.sha256) BEGIN
    SELECT RAISE(ABORT, 'localmem: artifacts are immutable: an existing artifact cannot be replaced');
END;
CREATE TRIGGER decisions_no_replace BEFORE INSERT ON decisions
WHEN EXISTS (SELECT 1 FROM decisions WHERE decision_id = NEW.decision_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: an existing receipt cannot be replaced');
END;
CREATE TRIGGER decision_sources_no_replace BEFORE INSERT ON decision_sources
WHEN EXISTS (SELECT 1 FROM decision_sources
             WHERE decision_id = NEW.decision_id AND position = NEW.position) BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: an existing source cannot be replaced');
END;
CREATE TRIGGER derivations_no_replace BEFORE INSERT ON derivations
WHEN EXISTS (SELECT 1 FROM derivations WHERE memory_id = NEW.memory_id AND position = NEW.position)
BEGIN
    SELECT RAISE(ABORT, 'localmem: derivations are immutable: an existing link cannot be replaced');
END;
CREATE TRIGGER runs_no_update BEFORE UPDATE ON runs BEGIN
    SELECT RAISE(ABORT, 'localmem: runs are immutable: advance the run instead');
END;
CREATE TRIGGER runs_no_delete BEFORE DELETE ON runs BEGIN
    SELECT RAISE(ABORT, 'localmem: runs are immutable: they are only ever appended');
END;
CREATE TRIGGER run_events_no_update BEFORE UPDATE ON run_events BEGIN
    SELECT RAISE(ABORT, 'localmem: run events are immutable: advance the run instead');
END;
CREATE TRIGGER run_events_no_delete BEFORE DELETE ON run_events BEGIN
    SELECT RAISE(ABORT, 'localmem: run events are immutable: they are only ever appended');
END;
CREATE TRIGGER artifacts_no_update BEFORE UPDATE ON artifacts BEGIN
    SELECT RAISE(ABORT, 'localmem: artifacts are immutable: their bytes never change');
END;
CREATE TRIGGER artifacts_no_delete BEFORE DELETE ON artifacts BEGIN
    SELECT RAISE(ABORT, 'localmem: artifacts are immutable: their bytes never change');
END;
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: a receipt never changes');
END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: a receipt never changes');
END;
CREATE TRIGGER decision_sources_no_update BEFORE UPDATE ON decision_sources BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: a receipt never changes');
END;
CREATE TRIGGER decision_sources_no_delete BEFORE DELETE ON decision_sources BEGIN
    SELECT RAISE(ABORT, 'localmem: decisions are immutable: a receipt never changes');
END;
CREATE TRIGGER derivations_no_update BEFORE UPDATE ON derivations BEGIN
    SELECT RAISE(ABORT, 'localmem: derivations are immutable: derive a new memory instead');
END;
CREATE TRIGGER derivations_no_delete BEFORE DELETE ON derivations BEGIN
    SELECT RAISE(ABORT, 'localmem: derivations are immutable: derive a new memory instead');
END;
""",
    # 6: a search finds the memories near a time phrase by walking valid_from outwards.
    6: """
CREATE INDEX revisions_valid ON revisions (user_id, valid_from);
""",
    # 7: offline sync. Each revision gets a hybrid logical clock (hlc) that orders a memory's
    # revisions alike on every device, and the time it became visible here (arrived_at); the
    # as-of indexes move onto them. Existing rows: arrived_at = recorded_at, and an hlc from
    # recorded_at with a counter in seq order. Plus the import log, extra tombstones, peers.
    7: """
ALTER TABLE revisions ADD COLUMN hlc INTEGER NOT NULL DEFAULT 0;
ALTER TABLE revisions ADD COLUMN arrived_at INTEGER NOT NULL DEFAULT 0;
DROP TRIGGER revisions_no_update;
UPDATE revisions SET arrived_at = recorded_at, hlc = (recorded_at << 10) + o.n
FROM (SELECT seq, row_number() OVER (PARTITION BY memory_id, recorded_at ORDER BY seq) - 1 AS n
      FROM revisions) AS o
WHERE o.seq = revisions.seq;
CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: append a correction instead');
END;
DROP INDEX revisions_asof;
DROP INDEX revisions_user;
DROP INDEX revisions_recorded;
CREATE INDEX revisions_asof ON revisions (memory_id, hlc, origin, rev_id, arrived_at);
CREATE INDEX revisions_user ON revisions (user_id, arrived_at);
CREATE INDEX revisions_arrived ON revisions (arrived_at);
DROP VIEW memory_latest;
CREATE VIEW memory_latest AS
SELECT l.*
FROM revision_log AS l
WHERE l.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = l.memory_id
    ORDER BY r2.hlc DESC, r2.origin DESC, r2.rev_id DESC
    LIMIT 1
);

-- Sync (schema 7). The import log: one row per import that changed something:
-- the file (its sha256, origin device, creation time and the exporter's
-- watermark range), when it arrived here, what it added, and the contiguous
-- range of local revision numbers it added, so each synced revision's local
-- arrival is the import whose range holds its seq.
CREATE TABLE imports (
    import_id    TEXT PRIMARY KEY CHECK (length(import_id) = 26),
    file_sha256  TEXT NOT NULL CHECK (length(file_sha256) = 64),
    origin       TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    mark_from    INTEGER NOT NULL,
    mark_to      INTEGER NOT NULL,
    arrived_at   INTEGER NOT NULL,
    first_seq    INTEGER,
    last_seq     INTEGER,
    memories     INTEGER NOT NULL CHECK (memories >= 0),
    revisions    INTEGER NOT NULL CHECK (revisions >= 0),
    tombstones   INTEGER NOT NULL CHECK (tombstones >= 0),
    derivations  INTEGER NOT NULL CHECK (derivations >= 0),
    CHECK ((first_seq IS NULL) = (last_seq IS NULL))
) STRICT;

-- A memory's tombstones beyond the one in `erasures`: two devices that erased
-- the same memory while apart each made one, and every replica keeps both.
CREATE TABLE extra_tombstones (
    tomb_id     TEXT PRIMARY KEY CHECK (length(tomb_id) = 26),
    memory_id   TEXT NOT NULL REFERENCES erasures (memory_id),
    user_id     TEXT NOT NULL,
    erased_at   INTEGER NOT NULL,
    erased_by   TEXT,
    reason      TEXT,
    origin      TEXT NOT NULL
) STRICT;

-- `localmem sync DIR`: how far each peer's export files in a folder have been
-- imported here (the newest row per peer counts).
CREATE TABLE sync_peers (
    seq          INTEGER PRIMARY KEY,
    peer         TEXT NOT NULL CHECK (length(peer) > 0),
    mark         INTEGER NOT NULL CHECK (mark >= 0),
    recorded_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX sync_peers_peer ON sync_peers (peer, mark);

CREATE TRIGGER imports_no_replace BEFORE INSERT ON imports
WHEN EXISTS (SELECT 1 FROM imports WHERE import_id = NEW.import_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: imports are immutable: an existing import cannot be replaced');
END;
CREATE TRIGGER extra_tombstones_no_replace BEFORE INSERT ON extra_tombstones
WHEN EXISTS (SELECT 1 FROM extra_tombstones WHERE tomb_id = NEW.tomb_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: an existing tombstone cannot be replaced');
END;
CREATE TRIGGER sync_peers_no_replace BEFORE INSERT ON sync_peers
WHEN EXISTS (SELECT 1 FROM sync_peers WHERE seq = NEW.seq) BEGIN
    SELECT RAISE(ABORT, 'localmem: sync_peers is immutable: an existing row cannot be replaced');
END;
CREATE TRIGGER imports_no_update BEFORE UPDATE ON imports BEGIN
    SELECT RAISE(ABORT, 'localmem: imports are immutable: the import log is only ever appended');
END;
CREATE TRIGGER imports_no_delete BEFORE DELETE ON imports BEGIN
    SELECT RAISE(ABORT, 'localmem: imports are immutable: the import log is only ever appended');
END;
CREATE TRIGGER extra_tombstones_no_update BEFORE UPDATE ON extra_tombstones BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER extra_tombstones_no_delete BEFORE DELETE ON extra_tombstones BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER sync_peers_no_update BEFORE UPDATE ON sync_peers BEGIN
    SELECT RAISE(ABORT, 'localmem: sync_peers is immutable: it is only ever appended');
END;
CREATE TRIGGER sync_peers_no_delete BEFORE DELETE ON sync_peers BEGIN
    SELECT RAISE(ABORT, 'localmem: sync_peers is immutable: it is only ever appended');
END;
""",
}

#: Seconds a connection waits for another one to release the write lock before
#: a write raises BusyError (``connect(busy_timeout=...)`` changes it).
DEFAULT_BUSY_TIMEOUT = 5.0


def default_path() -> Path:
    """The default database file: ``localmem.db`` in the user data dir."""
    return platformdirs.user_data_path("localmem", appauthor=False) / "localmem.db"


def schema_sql() -> str:
    """The text of schema.sql.

    In a wheel it is packaged as ``localmem/schema.sql``; in a source checkout
    (an editable install) it is the file at the repository root.
    """
    packaged = resources.files("localmem").joinpath("schema.sql")
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    root = Path(__file__).resolve().parents[2] / "schema.sql"
    if root.is_file():
        return root.read_text(encoding="utf-8")
    raise LocalmemError(f"schema.sql not found in the package or at {root}: the install is broken")


def _code_name(exc: apsw.Error) -> str:
    """SQLite's name for an exception's result code, e.g. SQLITE_IOERR_FSYNC."""
    ext = getattr(exc, "extendedresult", None)
    res = getattr(exc, "result", None)
    name = apsw.mapping_extended_result_codes.get(ext) if isinstance(ext, int) else None
    if not name and isinstance(res, int):
        name = apsw.mapping_result_codes.get(res)
    return str(name or type(exc).__name__)


def _describe(exc: apsw.Error) -> str:
    detail = str(exc).strip()
    return f"{_code_name(exc)}: {detail}" if detail else _code_name(exc)


@contextlib.contextmanager
def map_errors(*, committing: bool = False) -> Iterator[None]:
    """Turn SQLite's exceptions into localmem's hierarchy (the one place that does).

    ``committing`` words storage errors for a failed COMMIT, after which the
    write may or may not be on disk (the WAL can hold a whole commit whose sync
    failed, and recovery after a crash would keep it).
    """
    try:
        yield
    except LocalmemError:
        raise
    except apsw.ConstraintError as exc:
        msg = str(exc)
        if "immutable" in msg:
            raise ImmutableError(msg.split("localmem: ", 1)[-1]) from exc
        raise IntegrityError(f"the write broke a schema constraint: {msg}") from exc
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise CorruptDatabaseError(
            f"the database file is not a valid SQLite database ({_describe(exc)})") from exc
    except apsw.BusyError as exc:
        # SQLITE_BUSY: another connection (usually another process) holds the
        # write lock and kept it past this connection's busy timeout.
        raise BusyError(
            f"the database is busy ({_describe(exc)}): another connection held its write lock "
            "past the busy timeout; nothing was changed: retry, or open with a longer busy_timeout"
        ) from exc
    except UnicodeEncodeError as exc:
        # apsw binds str as UTF-8; a lone surrogate that no input check caught lands here.
        raise InvalidInputError(
            f"a text argument has a lone surrogate {shown(exc.object[exc.start:exc.end])} "
            f"(in {shown(exc.object)}): SQLite stores text as UTF-8, which cannot encode it"
        ) from exc
    except (apsw.IOError, apsw.FullError, apsw.CantOpenError, apsw.ReadOnlyError) as exc:
        if committing:
            raise StorageError(
                f"the storage failed while committing ({_describe(exc)}): the write may not "
                "have been saved; read it back before relying on it"
            ) from exc
        raise StorageError(
            f"the storage failed ({_describe(exc)}); nothing was committed") from exc


def _create_private(path: Path) -> None:
    """Create ``path`` with mode 0600 if it does not exist (memories are private).

    Raises:
        StorageError: the directory cannot be made, or the file cannot be
            created there (a parent is a regular file, no permission, read-only
            file system), naming the path.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if isinstance(exc, (FileExistsError, NotADirectoryError)):  # a parent is a regular file
            raise StorageError(
                f"cannot create database {str(path)!r}: {str(path.parent)!r} (or a parent of it) "
                "is a file, not a directory: expected a path in a writable directory"
            ) from exc
        raise StorageError(
            f"cannot create database {str(path)!r}: its directory {str(path.parent)!r} cannot be "
            f"made ({exc.strerror or exc}): expected a path in a writable directory"
        ) from exc
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        if path.is_dir():
            raise StorageError(
                f"cannot open database {str(path)!r}: it is a directory, expected a file") from None
        return
    except OSError as exc:
        raise StorageError(
            f"cannot create database {str(path)!r}: {exc.strerror or exc}: "
            f"expected a path in a writable directory"
        ) from exc
    os.close(fd)


def _check_busy_timeout(busy_timeout: object) -> int:
    """Milliseconds for SQLite from a timeout in seconds."""
    if (isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float))
            or not math.isfinite(busy_timeout) or not 0 <= busy_timeout <= 86_400):
        raise InvalidInputError(
            f"busy_timeout={shown(busy_timeout)}: expected seconds to wait for the write lock, "
            "a number from 0 to 86400"
        )
    return round(busy_timeout * 1000)


def connect(
    path: str | os.PathLike[str] | None,
    *,
    vfs: str | None = None,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
) -> apsw.Connection:
    """Open (creating and migrating if needed) a localmem database.

    A file that is refused (not SQLite, someone else's, too new) is left
    exactly as it was: the checks run before any pragma that writes. A
    current file is not written at all, so opening works while another
    process holds the write lock.

    Args:
        path: a file path, ``":memory:"``, or None for :func:`default_path`.
        vfs: an apsw VFS name (tests use one that injects I/O faults).
        busy_timeout: seconds to wait for another connection's write lock
            before raising BusyError (default :data:`DEFAULT_BUSY_TIMEOUT`).

    Raises:
        CorruptDatabaseError: the file is not SQLite, or is someone else's database.
        SchemaVersionError: the file was written by a newer localmem, or no
            migration path leads from its version to this one, or a step
            failed on a file whose tables do not match its version.
        StorageError: the file cannot be created or opened (the path names it).
        BusyError: the file needed writing at open (creating, migrating) and
            another connection held the write lock past ``busy_timeout``.
        InvalidInputError: ``busy_timeout`` is not a number of seconds.
    """
    timeout_ms = _check_busy_timeout(busy_timeout)
    target = default_path() if path is None else path
    name = os.fspath(target)
    if name != ":memory:":
        _create_private(Path(name))
    with map_errors():
        try:
            conn = apsw.Connection(name, vfs=vfs) if vfs else apsw.Connection(name)
        except apsw.CantOpenError as exc:
            raise StorageError(f"cannot open database {name!r}: {exc}") from exc
        try:
            conn.setbusytimeout(timeout_ms)
            fresh = _check_ownership(conn, name)
            _configure(conn)
            if fresh:
                _create_schema(conn)
            else:
                _migrate(conn)
        except BaseException:
            conn.close()
            raise
    return conn


def _check_ownership(conn: apsw.Connection, name: str) -> bool:
    """Refuse files localmem must not write into; True for a new, empty file."""
    try:
        tables = conn.execute("SELECT count(*) FROM sqlite_schema").get
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise CorruptDatabaseError(f"{name!r} is not a SQLite database ({_describe(exc)})") from exc
    version = conn.pragma("user_version")
    app_id = conn.pragma("application_id")
    if version == 0 and tables == 0 and app_id == 0:
        return True
    if app_id != APPLICATION_ID:
        raise CorruptDatabaseError(
            f"{name!r} is a SQLite database but not a localmem one "
            f"(application_id {app_id:#x}, expected {APPLICATION_ID:#x}); refusing to write into it"
        )
    if version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{name!r} has schema version {version}, newer than this localmem's "
            f"{SCHEMA_VERSION}: upgrade localmem to open it"
        )
    missing = [step for step in range(version + 1, SCHEMA_VERSION + 1) if step not in MIGRATIONS]
    if missing:
        raise SchemaVersionError(
            f"{name!r} has schema version {version} and no migration to version {missing[0]} "
            f"exists (this localmem writes version {SCHEMA_VERSION})"
        )
    return False


def _configure(conn: apsw.Connection) -> None:
    apsw.bestpractice.connection_enable_foreign_keys(conn)
    apsw.bestpractice.connection_dqs(conn)
    apsw.bestpractice.connection_recursive_triggers(conn)
    # Not apsw.bestpractice.connection_optimize: its PRAGMA optimize may ANALYZE,
    # which writes, and open must not write (it would wait on, then fail beside,
    # another process's write lock). Statistics are refreshed by optimize() at close.
    if conn.pragma("journal_mode") != "wal":
        # Only a new (or foreign-converted) file; asking an existing WAL file again is a no-op.
        apsw.bestpractice.connection_wal(conn)
    # Query planner stability: without it, once ANALYZE has written STAT4 rows
    # (PRAGMA optimize does), every as-of lookup with `recorded_at <= ?` is
    # re-planned at each bind, which costs more than the lookup itself.
    conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, 1)
    # Freed pages are zeroed, so erased words do not linger in the file.
    conn.pragma("secure_delete", True)
    # Statement journals and sorts stay in memory: each is bounded by one
    # write or one read, and a temporary file per statement costs ~8% of a write.
    conn.pragma("temp_store", "memory")


def _create_schema(conn: apsw.Connection) -> None:
    with transaction(conn):
        conn.execute(schema_sql())
        conn.pragma("application_id", APPLICATION_ID)
        conn.execute(
            "INSERT INTO store_meta (name, value) VALUES ('device_id', ?), ('schema_created', ?)",
            (secrets.token_hex(8), str(SCHEMA_VERSION)),
        )
        conn.pragma("user_version", SCHEMA_VERSION)


def _migrate(conn: apsw.Connection) -> None:
    """Run the numbered steps from the file's version to ours, one transaction each.

    Raises:
        SchemaVersionError: a step failed because the file's tables are not
            what its user_version says (e.g. a current file whose user_version
            was set back); that step is rolled back, so the file is unchanged.
    """
    version = conn.pragma("user_version")
    steps = range(version + 1, SCHEMA_VERSION + 1)
    for step in steps:
        try:
            with transaction(conn):
                conn.execute(MIGRATIONS[step])
                conn.pragma("user_version", step)
        except (apsw.SQLError, apsw.ConstraintError, IntegrityError, ImmutableError) as exc:
            raise SchemaVersionError(
                f"{conn.filename!r} says schema version {version}, but migration step {step} "
                f"does not apply to its tables ({exc}): the file's user_version does not match "
                "its schema; it was left unchanged (run `localmem doctor` on a copy)"
            ) from exc
    analyzed = conn.execute("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat1'").fetchone()
    if steps and analyzed:
        # A step's new index has no statistics beside the others' and the planner would
        # guess it selective (the user's zone lookup took 88 ms instead of 0.1 at 100k
        # revisions, until PRAGMA optimize at close). A sampled ANALYZE takes well under
        # a second even at a million rows.
        conn.pragma("analysis_limit", 1000)
        conn.execute("ANALYZE")


def optimize(conn: apsw.Connection) -> None:
    """Refresh the planner's statistics if that can be done now, else skip it.

    ``PRAGMA optimize`` may ANALYZE, which needs the write lock; while another
    process holds it this returns at once rather than waiting the busy timeout
    (statistics are an optimisation, and the next close tries again).
    """
    timeout = conn.pragma("busy_timeout")
    conn.setbusytimeout(0)
    try:
        with contextlib.suppress(apsw.BusyError, apsw.ReadOnlyError, apsw.LockedError):
            conn.pragma("optimize")
    finally:
        conn.setbusytimeout(int(timeout))


@contextlib.contextmanager
def transaction(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """One atomic unit of work: all of it commits or none of it does.

    The outermost level takes the write lock up front (BEGIN IMMEDIATE), so a
    write never fails half way for want of a lock; nested levels are savepoints.
    Some errors (a failed write to disk, a full disk) make SQLite roll back the
    whole transaction by itself; every level notices and raises StorageError
    rather than carrying on outside a transaction.
    """
    with map_errors():
        if not conn.getautocommit():
            # One constant name: SQLite nests same-named savepoints (RELEASE and
            # ROLLBACK TO act on the innermost), and the statements stay cached.
            name = "localmem"
            conn.execute(f"SAVEPOINT {name}")
            try:
                yield conn
            except BaseException:
                if not conn.getautocommit():
                    conn.execute(f"ROLLBACK TO {name}")
                    conn.execute(f"RELEASE {name}")
                raise
            _still_open(conn)
            conn.execute(f"RELEASE {name}")
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise
        _still_open(conn)
    with map_errors(committing=True):
        try:
            conn.execute("COMMIT")
        except BaseException:
            if not conn.getautocommit():
                conn.execute("ROLLBACK")
            raise


def _still_open(conn: apsw.Connection) -> None:
    if conn.getautocommit():
        raise StorageError(
            "SQLite rolled the transaction back after an earlier storage error; "
            "nothing of it was committed"
        )
