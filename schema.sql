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
-- write, so "the memory as known at T" is one index probe: among the revisions
-- that had arrived on this device by T, the one with the greatest hybrid
-- logical clock. A revision's record-time end is never stored.
--
-- Sync (schema 7) added two columns, appended by ALTER TABLE (hence their place
-- on the `origin` line, where SQLite writes them):
--   hlc         the hybrid logical clock that orders a memory's revisions on
--               every device alike: (physical microseconds << 10) + a counter,
--               greater than every revision of the memory the writer had seen.
--               Ties (concurrent writes on two devices) go to the greater
--               origin, then the greater rev_id: the current revision is a pure
--               function of the set of rows, whatever order they arrived in.
--   arrived_at  when the revision became visible on this device: recorded_at
--               for its own writes; for a synced one the later of its origin's
--               recorded_at and its local arrival (the `imports` log). It never
--               decreases as seq grows, so seq order is local visibility order.
-- recorded_at and origin stay the origin device's.
--
-- Tamper evidence (schema 8) appended three more, 32-byte SHA-256 digests
-- (localmem/core/chain.py; hex in sync files):
--   content_hash  SHA-256 of the revision's content; it outlives an erase.
--   rev_hash      SHA-256 of the revision's fields, its memory's kind and key,
--                 content_hash and the rev_hash of prev_rev: a chain per memory,
--                 the same on every device, travelling in sync files.
--   chain         SHA-256 of the previous row's (by seq) chain, rev_hash and
--                 arrived_at: this store's own chain, local like seq.
-- Rows from before schema 8 have NULLs there.
--
-- Schema 9 appended a copy of the memory's kind and key, so that a point get
-- reads one revision row and its content without the memories table:
--   memory_kind   the memory's kind (memories.kind), as the revision was written;
--   memory_key    the memory's key (memories.key, NULL for none).
-- Local, never synced (files carry kind and key on the memory): the device's
-- own INSERTs fill them from the memory. Rows from before schema 9, and rows a
-- writer left them NULL in, have memory_kind NULL: reads then take the
-- memory's (memories rows never change, so the two always agree).
--
-- Schema 10 wrote the CHECKs on op, precision and valid_source as chains of `=`
-- instead of `IN (...)` lists: the same rule, but SQLite builds an ephemeral
-- table for every IN list of three or more values at each execution of an
-- INSERT (~18,000 instructions, a third of a one-row insert). The migration
-- edits this statement in sqlite_schema (no stored row changes).
CREATE TABLE revisions (
    seq           INTEGER PRIMARY KEY,             -- local arrival order
    rev_id        TEXT NOT NULL UNIQUE CHECK (length(rev_id) = 26),
    memory_id     TEXT NOT NULL REFERENCES memories (memory_id),
    user_id       TEXT NOT NULL,
    version       INTEGER NOT NULL CHECK (version >= 1),
    op            TEXT NOT NULL CHECK (op = 'assert' OR op = 'correct' OR op = 'supersede'
                      OR op = 'superseded' OR op = 'expire' OR op = 'retract' OR op = 'derive'),
    valid_from    INTEGER NOT NULL,
    valid_to      INTEGER CHECK (valid_to IS NULL OR valid_to > valid_from),
    precision     TEXT NOT NULL CHECK (precision = 'instant' OR precision = 'minute'
                      OR precision = 'hour' OR precision = 'part_of_day' OR precision = 'day'
                      OR precision = 'weekend' OR precision = 'week' OR precision = 'month'
                      OR precision = 'season' OR precision = 'year' OR precision = 'decade'
                      OR precision = 'unknown'),
    valid_source  TEXT NOT NULL CHECK (valid_source = 'explicit' OR valid_source = 'resolved'
                      OR valid_source = 'assumed'),
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
) STRICT;

-- As-of lookup of one memory: its revisions by clock, newest first, arrived by T.
CREATE INDEX revisions_asof ON revisions (memory_id, hlc, origin, rev_id, arrived_at);
-- A user's memories as of T, and the user's last zone.
CREATE INDEX revisions_user ON revisions (user_id, arrived_at);
-- The store's newest arrival (local recorded time never goes backwards).
CREATE INDEX revisions_arrived ON revisions (arrived_at);
-- A search's memories found by time: a user's revisions walked outwards from a moment.
CREATE INDEX revisions_valid ON revisions (user_id, valid_from);

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
-- Python's stdlib). columnsize = 0 (schema 10): FTS5 keeps no table of each
-- row's token counts (`content_fts_docsize`), which only its own bm25() and
-- other auxiliary functions read; localmem's search scores with its own BM25
-- (localmem/search/ranking.py), so that table was one more B-tree every write
-- touched for nothing.
CREATE VIEW content_indexed AS
SELECT c.rev_seq AS rev_seq, c.text AS text, 'u' || hex(m.user_id) AS owner
FROM content AS c JOIN memories AS m ON m.memory_id = c.memory_id;

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

-- The memory's content rows are found through its revisions (revisions_asof):
-- an index of content by memory would be one more B-tree every write touches.
CREATE TRIGGER erasures_destroy_content AFTER INSERT ON erasures BEGIN
    DELETE FROM content WHERE rev_seq IN (
        SELECT seq FROM revisions WHERE memory_id = NEW.memory_id);
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
-- file_sha256 (schema 8) is the SHA-256 of the imported file's bytes: a file is
-- skipped as already imported only if its name's number and its bytes both match.
CREATE TABLE sync_peers (
    seq          INTEGER PRIMARY KEY,
    peer         TEXT NOT NULL CHECK (length(peer) > 0),
    mark         INTEGER NOT NULL CHECK (mark >= 0),
    recorded_at  INTEGER NOT NULL
, file_sha256 TEXT CHECK (file_sha256 IS NULL OR length(file_sha256) = 64)) STRICT;

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
