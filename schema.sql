-- localmem schema: the one place the data model lives.
--
-- Two clocks on every memory: valid time [valid_from, valid_to) says when a
-- thing was true; recorded_at says when this store committed the revision
-- (transaction time); observed_at says when the fact reached the app.
--
-- All instants are INTEGER microseconds since the Unix epoch, UTC. STRICT
-- tables enforce that one format; the views below render ISO 8601 for people
-- using the sqlite3 shell.
--
-- Nothing is overwritten: every table below is append-only, enforced by
-- triggers. The only way content is destroyed is an erasure: inserting a
-- tombstone into `erasures` deletes that memory's rows from `content` (and
-- from the full-text index, and its vectors from `embeddings`); a DELETE on
-- `content` or `embeddings` without a tombstone fails.
--
-- PRAGMA user_version carries the schema version; localmem/_db.py sets it.

-- Facts about this store file: its device id and when it was created.
CREATE TABLE store_meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

-- A memory's identity: who it is about, what kind it is, its key (if any).
-- What it says, and when, lives in its revisions.
CREATE TABLE memories (
    memory_id   TEXT PRIMARY KEY CHECK (length(memory_id) = 26),
    user_id     TEXT NOT NULL CHECK (length(user_id) > 0),
    kind        TEXT NOT NULL CHECK (length(kind) > 0),
    key         TEXT CHECK (key IS NULL OR length(key) > 0),
    created_at  INTEGER NOT NULL
) STRICT;

CREATE INDEX memories_user_key ON memories (user_id, key) WHERE key IS NOT NULL;

-- One row per write. Each revision carries the memory's whole state after the
-- write, so "the memory as known at T" is the latest revision recorded at or
-- before T: one index probe. A revision's record-time end is never stored: it
-- is the recorded_at of the revision that follows it.
CREATE TABLE revisions (
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
    origin        TEXT NOT NULL,                           -- device id that wrote it
    CHECK ((version = 1) = (prev_rev IS NULL))
) STRICT;

-- As-of lookup of one memory: (memory_id, recorded_at <= T) newest first.
CREATE INDEX revisions_asof ON revisions (memory_id, recorded_at, seq);
-- A user's memories as of T, and the user's last zone.
CREATE INDEX revisions_user ON revisions (user_id, recorded_at);
-- The store's newest recorded_at (recorded time never goes backwards).
CREATE INDEX revisions_recorded ON revisions (recorded_at);

-- What a revision says. Kept apart from `revisions` so that an erasure can
-- destroy the words while the revision rows (the record that something was
-- written, and when) stay.
CREATE TABLE content (
    rev_seq     INTEGER PRIMARY KEY REFERENCES revisions (seq),
    memory_id   TEXT NOT NULL,
    text        TEXT NOT NULL CHECK (length(text) > 0),
    value       TEXT CHECK (value IS NULL OR json_valid(value)),
    attributes  TEXT CHECK (attributes IS NULL OR json_valid(attributes)),
    source      TEXT CHECK (source IS NULL OR json_valid(source)),
    reason      TEXT
) STRICT;

CREATE INDEX content_memory ON content (memory_id);

-- Privacy erasures: who erased which memory, when and why. Inserting one
-- destroys the memory's content; the tombstone itself stays (and syncs).
CREATE TABLE erasures (
    memory_id   TEXT PRIMARY KEY REFERENCES memories (memory_id),
    tomb_id     TEXT NOT NULL UNIQUE CHECK (length(tomb_id) = 26),
    user_id     TEXT NOT NULL,
    erased_at   INTEGER NOT NULL,
    erased_by   TEXT,
    reason      TEXT,
    origin      TEXT NOT NULL
) STRICT;

-- Every search's results, appended: which memory it returned, when (the store's
-- recorded time of the search) and for which run. Ranking reads it as of
-- known_at, so a replay sees exactly the usage that had happened by then. It
-- holds ids and times only, never the query.
CREATE TABLE usage (
    seq        INTEGER PRIMARY KEY,
    user_id    TEXT NOT NULL,
    memory_id  TEXT NOT NULL REFERENCES memories (memory_id),
    used_at    INTEGER NOT NULL,
    run_id     TEXT,
    rank       INTEGER NOT NULL CHECK (rank >= 1)
) STRICT;

CREATE INDEX usage_by_memory ON usage (memory_id, used_at);

-- The embedding models this file holds vectors of: a model's name (which names
-- its version too) and the length of its vectors. A name is registered once,
-- with its dimensions; an embedder that gives the same name another length is
-- refused (localmem raises EmbeddingMismatchError), and a new model is a new name.
CREATE TABLE embedding_models (
    model       TEXT PRIMARY KEY CHECK (length(model) > 0),
    dimensions  INTEGER NOT NULL CHECK (dimensions > 0)
) STRICT;

-- A vector per revision's content and model: float32 little-endian, derived
-- from the revision's text. Rows are per model, so a file can move to a new
-- model (its vectors are added beside the old ones, which stay: rows are never
-- deleted but by an erase). memory_id, user_id and recorded_at are the
-- revision's own (a trigger checks them). embedded_at is the store's recorded
-- time of the vector: the revision's own when it was embedded as it was
-- written, later for a backfill or a new model. A nearest-neighbour scan as of
-- a time reads one user's vectors with embedded_at by then, so a search replayed
-- as of an earlier time does not see vectors added since.
-- A plain table, not a sqlite-vec vec0 virtual table: opening, reading and
-- erasing must work in any client without the extension (localmem/embedding.py).
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

-- Full-text index over revision text. External content: the words live only in
-- `content`; the index holds tokens. Each entry also holds its owner, the user
-- id as one token ('u' || hex(user_id)), so a search matches within one user's
-- memories instead of every user's and joining back. An erase merges the whole
-- index afterwards (localmem runs FTS5 'optimize'), so no segment or page key
-- keeps an erased token; FTS5's secure-delete option is not used because it
-- would make the index unreadable to SQLite older than 3.44 (the sqlite3 shell,
-- Python's stdlib).
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

CREATE TRIGGER erasures_destroy_content AFTER INSERT ON erasures BEGIN
    DELETE FROM content WHERE memory_id = NEW.memory_id;
END;

-- The vectors are derived from the words: they go with them.
CREATE TRIGGER erasures_destroy_embeddings AFTER INSERT ON erasures BEGIN
    DELETE FROM embeddings WHERE memory_id = NEW.memory_id;
END;

-- A vector belongs to a revision that still has content (so none is stored for
-- an erased memory), carries that revision's memory, user and recorded time,
-- and has its model's registered length.
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

-- Immutability. RAISE(ABORT) undoes the statement, never the caller's
-- transaction; the message is what localmem maps to ImmutableError.
-- INSERT OR REPLACE deletes the row it collides with without firing delete
-- triggers (unless recursive_triggers is on, which other clients leave off), so
-- an insert that collides with an existing key is refused before it runs.
CREATE TRIGGER store_meta_no_replace BEFORE INSERT ON store_meta
WHEN EXISTS (SELECT 1 FROM store_meta WHERE name = NEW.name) BEGIN
    SELECT RAISE(ABORT, 'localmem: store_meta is immutable: an existing row cannot be replaced');
END;
CREATE TRIGGER memories_no_replace BEFORE INSERT ON memories
WHEN EXISTS (SELECT 1 FROM memories WHERE memory_id = NEW.memory_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: memories are immutable: an existing memory cannot be replaced');
END;
CREATE TRIGGER revisions_no_replace BEFORE INSERT ON revisions
WHEN EXISTS (SELECT 1 FROM revisions WHERE seq = NEW.seq OR rev_id = NEW.rev_id) BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: an existing revision cannot be replaced');
END;
CREATE TRIGGER content_no_replace BEFORE INSERT ON content
WHEN EXISTS (SELECT 1 FROM content WHERE rev_seq = NEW.rev_seq) BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: content cannot be replaced');
END;
CREATE TRIGGER erasures_no_replace BEFORE INSERT ON erasures
WHEN EXISTS (SELECT 1 FROM erasures WHERE memory_id = NEW.memory_id OR tomb_id = NEW.tomb_id)
BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: an existing tombstone cannot be replaced');
END;
CREATE TRIGGER usage_no_replace BEFORE INSERT ON usage
WHEN EXISTS (SELECT 1 FROM usage WHERE seq = NEW.seq) BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: an existing row cannot be replaced');
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
CREATE TRIGGER store_meta_no_update BEFORE UPDATE ON store_meta BEGIN
    SELECT RAISE(ABORT, 'localmem: store_meta is immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER store_meta_no_delete BEFORE DELETE ON store_meta BEGIN
    SELECT RAISE(ABORT, 'localmem: store_meta is immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER memories_no_update BEFORE UPDATE ON memories BEGIN
    SELECT RAISE(ABORT, 'localmem: memories are immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER memories_no_delete BEFORE DELETE ON memories BEGIN
    SELECT RAISE(ABORT, 'localmem: memories are immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: append a correction instead');
END;
CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: append a retraction or erase instead');
END;
CREATE TRIGGER content_no_update BEFORE UPDATE ON content BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: content is never updated');
END;
CREATE TRIGGER content_no_delete BEFORE DELETE ON content
WHEN NOT EXISTS (SELECT 1 FROM erasures WHERE erasures.memory_id = OLD.memory_id)
BEGIN
    SELECT RAISE(ABORT, 'localmem: revisions are immutable: content is destroyed only by erase');
END;
CREATE TRIGGER erasures_no_update BEFORE UPDATE ON erasures BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: revisions are never updated or deleted');
END;
CREATE TRIGGER erasures_no_delete BEFORE DELETE ON erasures BEGIN
    SELECT RAISE(ABORT, 'localmem: erasures are immutable: revisions are never updated or deleted');
END;

CREATE TRIGGER usage_no_update BEFORE UPDATE ON usage BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: it is only ever appended');
END;
CREATE TRIGGER usage_no_delete BEFORE DELETE ON usage BEGIN
    SELECT RAISE(ABORT, 'localmem: usage is immutable: it is only ever appended');
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

-- Readable views for the sqlite3 shell: ISO 8601 UTC times, text joined in.
CREATE VIEW revision_log AS
SELECT
    r.seq, r.rev_id, r.memory_id, r.user_id, m.kind, m.key, r.version, r.op,
    c.text, c.value,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.valid_from / 1e6, 'unixepoch') AS valid_from,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.valid_to / 1e6, 'unixepoch') AS valid_to,
    r.precision, r.valid_source,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.observed_at / 1e6, 'unixepoch') AS observed_at,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.recorded_at / 1e6, 'unixepoch') AS recorded_at,
    r.tz,
    strftime('%Y-%m-%dT%H:%M:%fZ', r.expires_at / 1e6, 'unixepoch') AS expires_at,
    r.retracted, r.corrected, r.prev_rev, r.supersedes, r.superseded_by,
    c.reason, c.source,
    (e.memory_id IS NOT NULL) AS erased
FROM revisions AS r
JOIN memories AS m ON m.memory_id = r.memory_id
LEFT JOIN content AS c ON c.rev_seq = r.seq
LEFT JOIN erasures AS e ON e.memory_id = r.memory_id;

-- Each memory as the store knows it now: its newest revision.
CREATE VIEW memory_latest AS
SELECT l.*
FROM revision_log AS l
WHERE l.seq = (
    SELECT r2.seq FROM revisions AS r2
    WHERE r2.memory_id = l.memory_id
    ORDER BY r2.recorded_at DESC, r2.seq DESC
    LIMIT 1
);
