'use strict';

/*
 * The accounts of a whole-server migration (issue 33, `mailgate migrate --accounts|--all`):
 * one row per mailgate user being moved from an upstream IMAP server, with where it comes from,
 * its state (queued → running → verified → cutover, or failed with a reason) and its figures
 * for `mailgate migrate --status|--report` and the web view. The jobs themselves live in
 * pg-boss's own schema (pgboss, created by pg-boss at the first worker or enqueue): this table
 * is what an operator reads, the queue is how workers share the work. The row never holds a
 * password, only where a worker finds it (`env:VAR` or `file:/path`). Citus: a reference-size
 * table keyed by user_id, distributable by it like `users`' other children.
 */

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE migration_accounts (
      user_id int PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      upstream_host text NOT NULL,
      upstream_port int NOT NULL,
      login text NOT NULL,
      password_source text NOT NULL,
      security text NOT NULL DEFAULT 'starttls',
      folders text[],
      state text NOT NULL DEFAULT 'queued'
        CHECK (state IN ('queued', 'running', 'verified', 'cutover', 'failed')),
      attempts int NOT NULL DEFAULT 0,
      error_code text,
      error_message text,
      messages bigint NOT NULL DEFAULT 0,
      bytes bigint NOT NULL DEFAULT 0,
      run_base_messages bigint NOT NULL DEFAULT 0,
      upstream_messages bigint,
      upstream_bytes bigint,
      worker text,
      registered_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`);
  // --status counts by state and lists the running ones on every refresh.
  await knex.raw('CREATE INDEX migration_accounts_state_idx ON migration_accounts (state)');
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE IF EXISTS migration_accounts');
};
