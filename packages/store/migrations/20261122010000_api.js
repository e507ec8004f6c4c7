'use strict';

/*
 * HTTP API: bearer tokens, and the indexes the API's scans and two-phase expunge need.
 *
 * Tokens are stored as SHA-256 of the token, never the token itself: a leaked table does not
 * grant access, and a 256-bit random token needs no slow hash (nothing to brute-force).
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE api_tokens (
      id bigserial PRIMARY KEY,
      user_id int NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      token_hash bytea NOT NULL UNIQUE,
      label text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`);
  await knex.raw('CREATE INDEX api_tokens_user_idx ON api_tokens (user_id)');
  // Keyset pagination in date order: the sort key is the Date header, falling back to
  // INTERNALDATE when a message has none, with uid as the tie-breaker.
  await knex.raw(
    'CREATE INDEX messages_sortdate_idx ON messages (user_id, mailbox_id, (coalesce(date, internal_date)), uid)',
  );
  // The background purge finds hidden (expunged) rows without scanning the mailbox; the
  // partial index stays tiny because rows leave it as soon as they are purged.
  await knex.raw(
    'CREATE INDEX messages_expunged_idx ON messages (user_id, mailbox_id, uid) WHERE expunged',
  );
};

exports.down = async function down(knex) {
  await knex.raw('DROP INDEX IF EXISTS messages_expunged_idx');
  await knex.raw('DROP INDEX IF EXISTS messages_sortdate_idx');
  await knex.raw('DROP TABLE IF EXISTS api_tokens');
};
