"""The numbered schema migrations: the SQL that takes a version N-1 file to version N.

Each step runs in one transaction with its ``PRAGMA user_version`` bump
(:func:`localmem.core.db.connect` applies them) and leaves the file exactly as
schema.sql makes it (tests/test_db.py builds a version-1 file and compares). A step
is frozen once released: it is the history of the data model, so a later change is a
new step, never an edit of an old one.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_EDITS"]

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
    # Tamper evidence (localmem/core/chain.py): each revision's content hash, its hash
    # chained to the revision it follows, and the store's local chain. Older rows keep
    # NULLs (rows are immutable); the chain starts at the first write after this step.
    # sync_peers learns which file (by its bytes' SHA-256) each mark came from.
    8: """
ALTER TABLE revisions ADD COLUMN content_hash BLOB CHECK (content_hash IS NULL OR length(content_hash) = 32);
ALTER TABLE revisions ADD COLUMN rev_hash BLOB CHECK (rev_hash IS NULL OR length(rev_hash) = 32);
ALTER TABLE revisions ADD COLUMN chain BLOB CHECK (chain IS NULL OR length(chain) = 32);
ALTER TABLE sync_peers ADD COLUMN file_sha256 TEXT CHECK (file_sha256 IS NULL OR length(file_sha256) = 64);
""",
    # A copy of the memory's kind and key on each revision (schema.sql says why): a get reads no
    # memories row. Older rows keep NULLs (rows are immutable): reads fall back to the memory's.
    9: """
ALTER TABLE revisions ADD COLUMN memory_kind TEXT CHECK (memory_kind IS NULL OR length(memory_kind) > 0);
ALTER TABLE revisions ADD COLUMN memory_key TEXT CHECK (memory_key IS NULL OR length(memory_key) > 0);
""",
    # 10: fewer B-trees per write, and no ephemeral table per revision INSERT (schema.sql says
    # why): content_memory goes, an erasure finding its content through revisions_asof; the
    # full-text index is rebuilt with columnsize = 0 (no docsize table); then the revisions'
    # CHECKs with IN lists become chains of `=` (SCHEMA_EDITS, run after this SQL).
    10: """
DROP INDEX content_memory;
DROP TRIGGER erasures_destroy_content;
CREATE TRIGGER erasures_destroy_content AFTER INSERT ON erasures BEGIN
    DELETE FROM content WHERE rev_seq IN (
        SELECT seq FROM revisions WHERE memory_id = NEW.memory_id);
END;
DROP TRIGGER content_fts_insert;
DROP TRIGGER content_fts_delete;
DROP TABLE content_fts;
CREATE VIRTUAL TABLE content_fts USING fts5 (
    text,
    owner,
    content = 'content_indexed',
    content_rowid = 'rev_seq',
    tokenize = 'porter unicode61 remove_diacritics 2',
    columnsize = 0
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
}

#: Step 10 rewrites the CREATE TABLE statement of revisions in sqlite_schema (see SCHEMA_EDITS):
#: the statement as schema 9 has it (whitespace aside), and as schema 10 writes it.
_REVISIONS_9 = """CREATE TABLE revisions (
    seq           INTEGER PRIMARY KEY,             -- local arrival order
    rev_id        TEXT NOT NULL UNIQUE CHECK (length(rev_id) = 26),
    memory_id     TEXT NOT NULL REFERENCES memories (memory_id),
    user_id       TEXT NOT NULL,
    version       INTEGER NOT NULL CHECK (version >= 1),
    op            TEXT NOT NULL CHECK (op IN (
                      'assert', 'correct', 'supersede', 'superseded',
                      'expire', 'retract', 'derive')),
    valid_from    INTEGER NOT NULL,
    valid_to      INTEGER CHECK (valid_to IS NULL OR valid_to > valid_from),
    precision     TEXT NOT NULL CHECK (precision IN (
                      'instant', 'minute', 'hour', 'part_of_day', 'day', 'weekend',
                      'week', 'month', 'season', 'year', 'decade', 'unknown')),
    valid_source  TEXT NOT NULL CHECK (valid_source IN ('explicit', 'resolved', 'assumed')),
    observed_at   INTEGER NOT NULL,
    recorded_at   INTEGER NOT NULL,
    tz            TEXT NOT NULL CHECK (length(tz) > 0),
    expires_at    INTEGER,
    retracted     INTEGER NOT NULL CHECK (retracted IN (0, 1)),
    corrected     INTEGER NOT NULL CHECK (corrected IN (0, 1)),
    prev_rev      TEXT REFERENCES revisions (rev_id),      -- the revision this one follows
    supersedes    TEXT REFERENCES memories (memory_id),    -- the memory this one replaced
    superseded_by TEXT REFERENCES memories (memory_id),    -- the memory that replaced this one
    origin        TEXT NOT NULL, hlc INTEGER NOT NULL DEFAULT 0, arrived_at INTEGER NOT NULL DEFAULT 0, content_hash BLOB CHECK (content_hash IS NULL OR length(content_hash) = 32), rev_hash BLOB CHECK (rev_hash IS NULL OR length(rev_hash) = 32), chain BLOB CHECK (chain IS NULL OR length(chain) = 32), memory_kind TEXT CHECK (memory_kind IS NULL OR length(memory_kind) > 0), memory_key TEXT CHECK (memory_key IS NULL OR length(memory_key) > 0),                           -- device id that wrote it
    CHECK ((version = 1) = (prev_rev IS NULL))
) STRICT"""  # noqa: E501 (the line ALTER TABLE wrote)


def _rewritten(sql: str, *edits: tuple[str, str]) -> str:
    """``sql`` with each (fragment, replacement) made, each fragment found exactly once."""
    for old, new in edits:
        if sql.count(old) != 1:
            raise AssertionError(f"{old!r} is not once in the statement")  # a broken edit table
        sql = sql.replace(old, new)
    return sql


# The three CHECKs with IN lists of 3 or more values, as chains of `=` (the rest unchanged).
_REVISIONS_10 = _rewritten(
    _REVISIONS_9,
    ("""CHECK (op IN (
                      'assert', 'correct', 'supersede', 'superseded',
                      'expire', 'retract', 'derive'))""",
     """CHECK (op = 'assert' OR op = 'correct' OR op = 'supersede'
                      OR op = 'superseded' OR op = 'expire' OR op = 'retract' OR op = 'derive')"""),
    ("""CHECK (precision IN (
                      'instant', 'minute', 'hour', 'part_of_day', 'day', 'weekend',
                      'week', 'month', 'season', 'year', 'decade', 'unknown'))""",
     """CHECK (precision = 'instant' OR precision = 'minute'
                      OR precision = 'hour' OR precision = 'part_of_day' OR precision = 'day'
                      OR precision = 'weekend' OR precision = 'week' OR precision = 'month'
                      OR precision = 'season' OR precision = 'year' OR precision = 'decade'
                      OR precision = 'unknown')"""),
    ("""CHECK (valid_source IN ('explicit', 'resolved', 'assumed'))""",
     """CHECK (valid_source = 'explicit' OR valid_source = 'resolved'
                      OR valid_source = 'assumed')"""),
)

#: Steps that rewrite a table's own CREATE statement in sqlite_schema, for a change no stored row
#: or page depends on (a CHECK written another way): step -> (table, its SQL before, after). This
#: is SQLite's documented way to make such a change ("Making Other Kinds Of Table Schema Changes"
#: in lang_altertable): in the step's transaction, under PRAGMA writable_schema, with the schema
#: cookie bumped, then PRAGMA quick_check of the table (which tests every row against the new
#: CHECKs) before it commits. A file whose statement is not the "before" one is refused.
SCHEMA_EDITS: dict[int, tuple[str, str, str]] = {
    # 10: CHECKs with IN lists as chains of `=` (schema.sql says why).
    10: ("revisions", _REVISIONS_9, _REVISIONS_10),
}
