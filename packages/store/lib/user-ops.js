'use strict';

const { errors } = require('@mailgate/core');
const { HealthProbe, PROBE_TIMEOUT_MS } = require('./health-probe');
const { perUserPartitions } = require('./citus');

/*
 * Users as a whole: the list (`mailgate user list`), deletion with all their mail (`mailgate
 * user delete`), and the credential stamps the IMAP server compares to close the sessions of a
 * user whose password changed or who was deleted. Plain functions taking the store first
 * (PgStore's methods of the same names call them).
 * Never sees a password: stamps are digests of the stored hash, computed by PostgreSQL.
 */

// A user's physical partitions (pg-store.js createPartitions): dropped with the user.
const PARTITIONED = [
  'messages',
  'message_words',
  'message_chunks',
  'message_sources',
  'quarantine',
];
// Tables keyed by user_id without a cascading foreign key to users.
const UNLINKED = ['expunged_uids', 'thread_keys'];

/**
 * Every user with what an operator needs to decide: password set, IMAP route, mailbox and
 * message counts (expunged messages not counted), live API tokens.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<Array<{name: string, hasPassword: boolean, route: string, mailboxes: number, messages: number, tokens: number}>>}
 */
async function userSummaries(store) {
  const r = await store.knex.raw(
    `SELECT u.name, u.password_hash IS NOT NULL AS has_password, u.route,
            (SELECT count(*) FROM mailboxes b WHERE b.user_id = u.id) AS mailboxes,
            (SELECT count(*) FROM messages m WHERE m.user_id = u.id AND NOT m.expunged)
              AS messages,
            (SELECT count(*) FROM api_tokens t
              WHERE t.user_id = u.id AND t.revoked_at IS NULL AND t.expires_at > now())
              AS tokens
       FROM users u ORDER BY u.name`,
  );
  return r.rows.map((x) => ({
    name: x.name,
    hasPassword: x.has_password,
    route: x.route,
    mailboxes: Number(x.mailboxes),
    messages: Number(x.messages),
    tokens: Number(x.tokens),
  }));
}

/**
 * Deletes a user and everything of theirs: partitions (mail, sources, quarantine), mailboxes,
 * tokens, import jobs, list snapshots, thread keys. With the Elasticsearch outbox on, each
 * stored message gets a `delete` row first, so the mirror forgets them too.
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @returns {Promise<{name: string, messages: number, mailboxes: number}>} USER_NOT_FOUND
 */
async function deleteUser(store, name) {
  return store.knex.transaction(async (trx) => {
    const u = await trx('users').where({ name }).forUpdate().first('id', 'name');
    if (!u) throw new errors.USER_NOT_FOUND(name);
    const id = Number(u.id);
    const counts = await trx.raw(
      `SELECT (SELECT count(*) FROM messages WHERE user_id = ? AND NOT expunged) AS messages,
              (SELECT count(*) FROM mailboxes WHERE user_id = ?) AS mailboxes`,
      [id, id],
    );
    if (store.outbox) {
      await trx.raw(
        `INSERT INTO es_outbox (user_id, mailbox_id, uid, modseq, op)
         SELECT user_id, mailbox_id, uid, modseq + 1, 'delete' FROM messages WHERE user_id = ?`,
        [id],
      );
    }
    // Identifiers cannot be bound parameters; the id is an integer the database generated.
    if (await perUserPartitions(store.knex)) {
      for (const table of PARTITIONED) await trx.raw(`DROP TABLE IF EXISTS ${table}_u${id}`);
    } else {
      // Citus (citus.js): the user's rows share the distributed tables' shards.
      for (const table of PARTITIONED) await trx(table).where({ user_id: id }).del();
    }
    for (const table of UNLINKED) await trx(table).where({ user_id: id }).del();
    await trx('users').where({ id }).del(); // mailboxes, tokens, jobs, snapshots cascade
    // The list caches keep rows by user and mailbox id; ids are never reused, so what they
    // hold of this user is never read again and ages out.
    return {
      name: u.name,
      messages: Number(counts.rows[0].messages),
      mailboxes: Number(counts.rows[0].mailboxes),
    };
  });
}

/**
 * A digest of each named user's password hash as it is now (absent: no such user any more).
 * The IMAP server keeps the stamp of a session's login and closes the session when it
 * changes (`user passwd`, `user delete`).
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} names
 * @returns {Promise<Map<string, string>>}
 */
async function credentialStamps(store, names) {
  if (!names.length) return new Map();
  // On a connection of its own, outside the pool (as the /health probe): the IMAP server
  // asks every IMAP_IDLE_POLL_MS, and that must neither wait for nor take a pooled
  // connection from user work.
  if (!store.credentialProbe) store.credentialProbe = new HealthProbe(store.knex);
  const probe = store.credentialProbe;
  const conn = await probe.connection();
  try {
    const r = await withTimeout(
      conn.query(
        `SELECT name, md5(coalesce(password_hash, '')) AS stamp FROM users WHERE name = ANY($1)`,
        [names],
      ),
      PROBE_TIMEOUT_MS,
    );
    return new Map(r.rows.map((x) => [x.name, x.stamp]));
  } catch (err) {
    probe.drop(conn); // a timed-out or broken connection is replaced at the next check
    throw new errors.DB_UNAVAILABLE(`credential check: ${err.message}`);
  }
}

/**
 * Closes the credential check's own connection (service close).
 * @param {import('./pg-store').PgStore} store
 */
async function closeCredentialProbe(store) {
  if (store.credentialProbe) await store.credentialProbe.close();
}

function withTimeout(promise, ms) {
  let timer;
  const timeout = new Promise((resolve, reject) => {
    timer = setTimeout(() => reject(new Error('timeout')), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

module.exports = { userSummaries, deleteUser, credentialStamps, closeCredentialProbe };
