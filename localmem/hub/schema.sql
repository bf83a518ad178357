-- The hub's schema: the device's data model (schema.sql at the repository root, which stays
-- THE data model) in PostgreSQL, for many devices' export files at once.
--
-- How it relates to the device's schema.sql:
--   * The tables that travel in sync files are mirrored column for column, with the same
--     names, types (instants are bigint microseconds UTC; hashes bytea of 32 bytes) and CHECKs:
--     memories, revisions, content, erasures, extra_tombstones, derivations.
--   * Every key starts with user_id, so each table distributes by it (Citus
--     create_distributed_table(..., 'user_id'), or PARTITION BY HASH (user_id)); see the
--     README's "The hub". content is keyed by (user_id, rev_id) where the device uses its
--     local rev_seq.
--   * What stays on a device stays there: usage, runs, receipts, artifacts, embeddings,
--     sync_peers, and the local hash chain (`chain`); the device's import log becomes
--     hub_files, one row per ingested file that added rows, with the hub's arrived_at.
--   * seq and arrived_at are the hub's own (as they are a device's own): seq is the hub's
--     arrival order (the watermark of `localmem hub export --since`), arrived_at is when the
--     row became visible on the hub, never before its file reached the hub.
--   * Ids are COLLATE "C", so ordering (the latest-revision rule's origin and rev_id ties)
--     is byte order, as SQLite's BINARY collation is, whatever the database's locale.
--   * Append-only as on the device, by PL/pgSQL triggers: no UPDATE, DELETE or TRUNCATE of
--     any table, except that inserting a tombstone deletes its memory's content (the
--     erasure path the device has), and content may be deleted only for an erased memory.
-- Rows are validated before they get here, by the device's own import code (localmem.hub.ingest).

CREATE TABLE hub_meta (
    name   text PRIMARY KEY,
    value  text NOT NULL
);

CREATE TABLE memories (
    user_id     text COLLATE "C" NOT NULL CHECK (length(user_id) > 0),
    memory_id   text COLLATE "C" NOT NULL CHECK (length(memory_id) = 26),
    kind        text NOT NULL CHECK (length(kind) > 0),
    key         text CHECK (key IS NULL OR length(key) > 0),
    created_at  bigint NOT NULL,
    PRIMARY KEY (user_id, memory_id)
);

-- Ids are global (ULIDs): an ingest looks each one up without trusting the user a file names,
-- so that a row claiming another user's id is refused as the device refuses it. Under Citus
-- these lookups go to every shard (see the README's "The hub").
CREATE INDEX memories_id ON memories (memory_id);

CREATE TABLE revisions (
    user_id       text COLLATE "C" NOT NULL,
    rev_id        text COLLATE "C" NOT NULL CHECK (length(rev_id) = 26),
    seq           bigint GENERATED ALWAYS AS IDENTITY,   -- the hub's arrival order
    memory_id     text COLLATE "C" NOT NULL,
    version       integer NOT NULL CHECK (version >= 1),
    op            text NOT NULL CHECK (op IN (
                      'assert', 'correct', 'supersede', 'superseded',
                      'expire', 'retract', 'derive')),
    valid_from    bigint NOT NULL,
    valid_to      bigint CHECK (valid_to IS NULL OR valid_to > valid_from),
    precision     text NOT NULL CHECK (precision IN (
                      'instant', 'minute', 'hour', 'part_of_day', 'day', 'weekend',
                      'week', 'month', 'season', 'year', 'decade', 'unknown')),
    valid_source  text NOT NULL CHECK (valid_source IN ('explicit', 'resolved', 'assumed')),
    observed_at   bigint NOT NULL,
    recorded_at   bigint NOT NULL,
    tz            text NOT NULL CHECK (length(tz) > 0),
    expires_at    bigint,
    retracted     smallint NOT NULL CHECK (retracted IN (0, 1)),
    corrected     smallint NOT NULL CHECK (corrected IN (0, 1)),
    prev_rev      text COLLATE "C",
    supersedes    text COLLATE "C",
    superseded_by text COLLATE "C",
    origin        text COLLATE "C" NOT NULL,
    hlc           bigint NOT NULL,
    arrived_at    bigint NOT NULL,                        -- when it became visible on the hub
    content_hash  bytea CHECK (content_hash IS NULL OR length(content_hash) = 32),
    rev_hash      bytea CHECK (rev_hash IS NULL OR length(rev_hash) = 32),
    file_id       bigint NOT NULL,                        -- the hub_files row that brought it
    PRIMARY KEY (user_id, rev_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, memory_id),
    CHECK ((version = 1) = (prev_rev IS NULL))
);

-- The latest-revision rule's walk: a user's memories, each one's revisions by clock, newest
-- first (DISTINCT ON takes the first arrived by known_at).
CREATE INDEX revisions_asof ON revisions
    (user_id, memory_id, hlc DESC, origin DESC, rev_id DESC) INCLUDE (arrived_at, seq);
CREATE INDEX revisions_seq ON revisions (seq);
CREATE INDEX revisions_id ON revisions (rev_id);
CREATE INDEX revisions_memory ON revisions (memory_id);
CREATE INDEX revisions_user_arrived ON revisions (user_id, arrived_at);

CREATE TABLE content (
    user_id     text COLLATE "C" NOT NULL,
    rev_id      text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL,
    text        text NOT NULL CHECK (length(text) > 0),
    value       text,       -- JSON as the device stored it (validated there; its bytes are hashed)
    attributes  text,
    source      text,
    reason      text,
    PRIMARY KEY (user_id, rev_id),
    FOREIGN KEY (user_id, rev_id) REFERENCES revisions (user_id, rev_id)
);

CREATE INDEX content_memory ON content (user_id, memory_id);
-- Search: PostgreSQL full-text search over the text (the 'english' configuration: stemming
-- and stop words, as the device's porter tokenizer stems).
CREATE INDEX content_fts ON content USING gin (to_tsvector('english', text));

CREATE TABLE erasures (
    user_id     text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL,
    tomb_id     text COLLATE "C" NOT NULL CHECK (length(tomb_id) = 26),
    erased_at   bigint NOT NULL,
    erased_by   text,
    reason      text,
    origin      text COLLATE "C" NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (user_id, memory_id),
    UNIQUE (user_id, tomb_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, memory_id)
);

CREATE INDEX erasures_tomb ON erasures (tomb_id);
CREATE INDEX erasures_memory ON erasures (memory_id);

CREATE TABLE extra_tombstones (
    user_id     text COLLATE "C" NOT NULL,
    tomb_id     text COLLATE "C" NOT NULL CHECK (length(tomb_id) = 26),
    memory_id   text COLLATE "C" NOT NULL,
    erased_at   bigint NOT NULL,
    erased_by   text,
    reason      text,
    origin      text COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, tomb_id),
    FOREIGN KEY (user_id, memory_id) REFERENCES erasures (user_id, memory_id)
);

CREATE INDEX extra_tombstones_tomb ON extra_tombstones (tomb_id);

CREATE TABLE derivations (
    user_id     text COLLATE "C" NOT NULL,
    memory_id   text COLLATE "C" NOT NULL,
    position    integer NOT NULL CHECK (position >= 1),
    source_rev  text COLLATE "C" NOT NULL,
    PRIMARY KEY (user_id, memory_id, position),
    FOREIGN KEY (user_id, memory_id) REFERENCES memories (user_id, memory_id)
);

CREATE INDEX derivations_source ON derivations (source_rev);
CREATE INDEX derivations_memory ON derivations (memory_id);

-- One row per ingested file that added rows: which file, from which device, when it reached
-- the hub (the injected clock's reading), what it added. Small: a reference table under Citus.
CREATE TABLE hub_files (
    file_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_sha256  text NOT NULL CHECK (length(file_sha256) = 64),
    origin       text NOT NULL,
    created_at   bigint NOT NULL,
    mark_from    bigint NOT NULL,
    mark_to      bigint NOT NULL,
    arrived_at   bigint NOT NULL,
    memories     integer NOT NULL CHECK (memories >= 0),
    revisions    integer NOT NULL CHECK (revisions >= 0),
    tombstones   integer NOT NULL CHECK (tombstones >= 0),
    derivations  integer NOT NULL CHECK (derivations >= 0)
);

-- Immutability. Each message is the device's (schema.sql), so both say the same thing.
CREATE FUNCTION localmem_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'restrict_violation';
END $$;

-- Content goes only by an erasure: a DELETE of a memory's content needs its tombstone.
CREATE FUNCTION localmem_content_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM erasures AS e
                   WHERE e.user_id = OLD.user_id AND e.memory_id = OLD.memory_id) THEN
        RAISE EXCEPTION 'localmem: revisions are immutable: content is destroyed only by erase'
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN OLD;
END $$;

-- A tombstone destroys its memory's content (the words, and with them their index entries).
CREATE FUNCTION localmem_erase_content() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM content AS c WHERE c.user_id = NEW.user_id AND c.memory_id = NEW.memory_id;
    RETURN NULL;
END $$;

CREATE TRIGGER erasures_destroy_content AFTER INSERT ON erasures
    FOR EACH ROW EXECUTE FUNCTION localmem_erase_content();
CREATE TRIGGER content_no_delete BEFORE DELETE ON content
    FOR EACH ROW EXECUTE FUNCTION localmem_content_delete();

CREATE TRIGGER hub_meta_no_update BEFORE UPDATE OR DELETE ON hub_meta FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: hub_meta is immutable: it is only ever appended');
CREATE TRIGGER memories_no_update BEFORE UPDATE OR DELETE ON memories FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: memories are immutable: revisions are never updated or deleted');
CREATE TRIGGER revisions_no_update BEFORE UPDATE ON revisions FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: revisions are immutable: append a correction instead');
CREATE TRIGGER revisions_no_delete BEFORE DELETE ON revisions FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: revisions are immutable: append a retraction or erase instead');
CREATE TRIGGER content_no_update BEFORE UPDATE ON content FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: revisions are immutable: content is never updated');
CREATE TRIGGER erasures_no_update BEFORE UPDATE OR DELETE ON erasures FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: erasures are immutable: revisions are never updated or deleted');
CREATE TRIGGER extra_tombstones_no_update BEFORE UPDATE OR DELETE ON extra_tombstones FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: erasures are immutable: revisions are never updated or deleted');
CREATE TRIGGER derivations_no_update BEFORE UPDATE OR DELETE ON derivations FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: derivations are immutable: derive a new memory instead');
CREATE TRIGGER hub_files_no_update BEFORE UPDATE OR DELETE ON hub_files FOR EACH ROW
    EXECUTE FUNCTION localmem_refuse('localmem: imports are immutable: the import log is only ever appended');

-- TRUNCATE fires no row trigger: refuse it per statement, on every table.
DO $$
DECLARE t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['hub_meta', 'memories', 'revisions', 'content', 'erasures', 'extra_tombstones', 'derivations', 'hub_files'] LOOP
        EXECUTE format('CREATE TRIGGER %I BEFORE TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION '
                       'localmem_refuse(%L)', t || '_no_truncate', t,
                       'localmem: the hub is append-only: tables are never truncated');
    END LOOP;
END $$;
