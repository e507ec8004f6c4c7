'use strict';

/*
 * Initial schema.
 *
 * Per-user physical tables: `messages`, `message_sources` and `quarantine` are PostgreSQL
 * LIST partitions on user_id; each user gets their own partitions (created with the user,
 * see @mailgate/store createUser). Every query carries `user_id = $n`, so the planner prunes
 * to that user's partition at plan or execution time: a user's scan, search or expunge
 * touches only that user's heap and indexes (the 2003 study's per-user tables), while the
 * schema stays one set of DDL and one set of indexes defined once on the parent. The same
 * user_id key is the distribution column on Citus (see README "Scaling out").
 *
 * Raw bytes live in `message_sources`, apart from the header columns, so header scans read
 * narrow rows and never drag message bodies through the buffer cache.
 *
 * IMAP state is designed in now: per-mailbox UIDVALIDITY and UIDNEXT (uids strictly
 * ascending, never reused), and a per-mailbox HIGHESTMODSEQ; each message row carries the
 * modseq of its last change (RFC 7162 CONDSTORE).
 */

exports.up = async function up(knex) {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');

  await knex.raw(`
    CREATE TABLE users (
      id serial PRIMARY KEY,
      name text NOT NULL UNIQUE,
      password_hash text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);

  await knex.raw(`
    CREATE TABLE mailboxes (
      id serial PRIMARY KEY,
      user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      special_use text,
      uidvalidity bigint NOT NULL,
      uidnext bigint NOT NULL DEFAULT 1,
      highestmodseq bigint NOT NULL DEFAULT 1,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, name)
    )`);

  // Partitioned by user. Defaults keep derived columns rebuildable from raw bytes.
  await knex.raw(`
    CREATE TABLE messages (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      modseq bigint NOT NULL,
      content_hash bytea NOT NULL,
      dup_index int NOT NULL DEFAULT 0,
      internal_date timestamptz NOT NULL,
      date timestamptz,
      from_name text,
      from_addr text,
      from_text text NOT NULL DEFAULT '',
      to_addrs jsonb NOT NULL DEFAULT '[]',
      to_text text NOT NULL DEFAULT '',
      cc_addrs jsonb NOT NULL DEFAULT '[]',
      cc_text text NOT NULL DEFAULT '',
      subject text,
      message_id text,
      in_reply_to text,
      refs text[] NOT NULL DEFAULT '{}',
      size int NOT NULL,
      flags text[] NOT NULL DEFAULT '{}',
      keywords text[] NOT NULL DEFAULT '{}',
      has_attachments boolean NOT NULL DEFAULT false,
      header_text text NOT NULL DEFAULT '',
      body_text text NOT NULL DEFAULT '',
      -- 'simple' config: lower-cased tokens, no stemming, no stop words (word search as a
      -- search box user expects). Body capped: a tsvector is limited to 1 MB.
      tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', coalesce(subject, '')), 'A') ||
        setweight(to_tsvector('simple', from_text || ' ' || to_text || ' ' || cc_text), 'B') ||
        to_tsvector('simple', left(body_text, 200000))
      ) STORED,
      source_name text,
      expunged boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, mailbox_id, uid),
      UNIQUE (user_id, mailbox_id, content_hash, dup_index)
    ) PARTITION BY LIST (user_id)`);

  // Search text is read by ILIKE scans and re-read by GIN rechecks: keeping it uncompressed
  // costs disk but saves pglz work on every import and every substring search.
  await knex.raw(
    'ALTER TABLE messages ALTER COLUMN header_text SET STORAGE EXTERNAL, ALTER COLUMN body_text SET STORAGE EXTERNAL',
  );
  await knex.raw('CREATE INDEX messages_date_idx ON messages (user_id, mailbox_id, date)');
  await knex.raw('CREATE INDEX messages_modseq_idx ON messages (user_id, mailbox_id, modseq)');
  await knex.raw('CREATE INDEX messages_msgid_idx ON messages (user_id, message_id)');
  await knex.raw('CREATE INDEX messages_tsv_idx ON messages USING gin (tsv)');
  // Trigram indexes answer IMAP-style case-insensitive substring search (ILIKE '%x%').
  for (const col of ['from_text', 'to_text', 'cc_text', 'subject', 'header_text', 'body_text']) {
    await knex.raw(`CREATE INDEX messages_${col}_trgm ON messages USING gin (${col} gin_trgm_ops)`);
  }

  await knex.raw(`
    CREATE TABLE message_sources (
      user_id int NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL,
      raw bytea NOT NULL,
      mbox_from_line bytea,
      mbox_variant text,
      mbox_trailer bytea,
      mbox_original bytea,
      source_meta jsonb,
      PRIMARY KEY (user_id, mailbox_id, uid)
    ) PARTITION BY LIST (user_id)`);
  // Raw mail rarely compresses well enough to matter and must come back byte-exact fast:
  // store out of line without pglz.
  await knex.raw('ALTER TABLE message_sources ALTER COLUMN raw SET STORAGE EXTERNAL');

  await knex.raw(`
    CREATE TABLE quarantine (
      id bigserial,
      user_id int NOT NULL,
      mailbox text,
      source text NOT NULL,
      position text NOT NULL,
      reason text NOT NULL,
      detail text,
      raw bytea NOT NULL,
      content_hash bytea NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, id),
      UNIQUE (user_id, source, position, content_hash)
    ) PARTITION BY LIST (user_id)`);

  await knex.raw(`
    CREATE TABLE import_jobs (
      id serial PRIMARY KEY,
      user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      kind text NOT NULL,
      source text NOT NULL,
      mailbox text NOT NULL DEFAULT '',
      state text NOT NULL DEFAULT 'running',
      checkpoint jsonb,
      stats jsonb,
      started_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, kind, source, mailbox)
    )`);
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE IF EXISTS import_jobs, quarantine, message_sources, messages');
  await knex.raw('DROP TABLE IF EXISTS mailboxes, users');
};
