'use strict';

const { errors } = require('@mailgate/core');
const { HealthProbe } = require('./health-probe');
const { perUserPartitions } = require('./citus');
const { validateUserName } = require('./names');
const { preparedOf } = require('./prepared-reads');

/*
 * Users as a whole: the list (`mailgate user list`), deletion with all their mail (`mailgate
 * user delete`), and the credential stamps the IMAP server compares to close the sessions of a
 * user whose password changed or who was deleted. Plain functions taking the store first
 * (PgStore's methods of the same names call them).
 * Never sees a password: stamps are digests of the stored hash, computed by PostgreSQL.
 */

// A user's physical partitions (createPartitions below): dropped with the user.
const PARTITIONED = [
  'messages',
  'message_words',
  'message_vocab',
  'message_chunks',
  'message_sources',
  'message_imap',
  'message_imap_lines',
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
  // Counts per user grouped first, then joined to the users: on Citus the grouped counts run on
  // every shard (bounded: one row per user) and the join on the coordinator; a count correlated
  // on u.id per user was refused there ("complex joins are only supported …", citus.js).
  const r = await store.knex.raw(
    `SELECT u.name, u.password_hash IS NOT NULL AS has_password, u.route,
            COALESCE(b.n, 0) AS mailboxes, COALESCE(m.n, 0) AS messages, COALESCE(t.n, 0) AS tokens
       FROM users u
       LEFT JOIN (SELECT user_id, count(*) AS n FROM mailboxes GROUP BY user_id) b
         ON b.user_id = u.id
       LEFT JOIN (SELECT user_id, count(*) AS n FROM messages WHERE NOT expunged
                   GROUP BY user_id) m ON m.user_id = u.id
       LEFT JOIN (SELECT user_id, count(*) AS n FROM api_tokens
                   WHERE revoked_at IS NULL AND expires_at > now() GROUP BY user_id) t
         ON t.user_id = u.id
      ORDER BY u.name`,
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
  const citus = !(await perUserPartitions(store.knex));
  return store.knex.transaction(async (trx) => {
    // Citus: the outbox rows' INSERT … SELECT and the deletes below touch every shard, in
    // parallel by default, after which Citus refuses the DELETE of the reference table `users`
    // in the same transaction ("cannot modify table users because there was a parallel
    // operation on a distributed table": review finding F7, `user delete` and an import that
    // found no mail ended INTERNAL). One connection per worker, as the migrations do.
    if (citus) await trx.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
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
    if (!citus) {
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
  // probe.query: one statement at a time on that connection, whoever asks (several IMAP
  // servers of a process share the store), bounded by the probe's timeout; a failed or
  // timed-out statement replaces the connection.
  try {
    const r = await store.credentialProbe.query(
      `SELECT name, md5(coalesce(password_hash, '')) AS stamp FROM users WHERE name = ANY($1)`,
      [names],
    );
    return new Map(r.rows.map((x) => [x.name, x.stamp]));
  } catch (err) {
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

/**
 * Creates a user and their physical partitions.
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @param {{passwordHash?: string|null}} [opts]
 * @returns {Promise<{id: number, name: string}>}
 */
async function createUser(store, name, opts = {}) {
  validateUserName(name);
  return store.knex.transaction(async (trx) => {
    const existing = await trx('users').where({ name }).first();
    if (existing) throw new errors.USER_EXISTS(name);
    const [user] = await trx('users')
      .insert({ name, password_hash: opts.passwordHash || null })
      .returning(['id', 'name']);
    if (await perUserPartitions(store.knex)) await createPartitions(trx, user.id);
    return user;
  });
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @returns {Promise<{id: number, name: string, password_hash: string|null}>}
 */
async function getUser(store, name) {
  const user = await store.knex('users').where({ name }).first();
  if (!user) throw new errors.USER_NOT_FOUND(name);
  return user;
}

// The recipient's row at every LMTP RCPT (findUser): one named statement, planned once per
// connection of the prepared reads' pool (prepared-reads.js).
const USER_BY_NAME = 'SELECT * FROM users WHERE name = $1';

/**
 * The user of a name, or null when there is none: getUser for a hot path that asks it once per
 * message (an LMTP recipient, issue 32). Read fresh each time, never cached, so a user deleted,
 * renamed or routed elsewhere a moment ago is seen at once. Sent as a named statement on the
 * prepared reads' pool: on a warm server that is ~25 µs of Node CPU and ~30 µs of PostgreSQL's
 * less than knex's builder and an unnamed statement (bench/results/deliver-2026-11-28-s8serve).
 * Through knex on Citus (citus.js point 8), with prepared reads off, and on a store bound to a
 * transaction (whose own uncommitted rows another connection would not see).
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @returns {Promise<object|null>} the users row
 */
async function findUser(store, name) {
  if (
    store.preparedReads === false ||
    store.knex.isTransaction ||
    !(await perUserPartitions(store.knex))
  ) {
    return (await store.knex('users').where({ name }).first()) || null;
  }
  const rows = await preparedOf(store).rows('mg_user_by_name', USER_BY_NAME, [name]);
  return rows[0] || null;
}

/**
 * Returns the user, creating it (without password) when missing: imports create users.
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 */
async function ensureUser(store, name) {
  const user = await store.knex('users').where({ name }).first();
  if (user) return user;
  try {
    return await store.createUser(name);
  } catch (err) {
    if (err.code === 'USER_EXISTS' || err.code === '23505') return store.getUser(name);
    throw err;
  }
}

async function createPartitions(trx, userId) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // Identifiers cannot be bound parameters; the id is an integer we generated.
  // fillfactor 50 on messages: room for HOT row versions, so flag changes and expunges
  // touch no index (migrations/20261122030000_hot_updates.js, 20261123000000_fillfactor_50.js).
  // autovacuum_analyze_scale_factor 4: flag changes and expunges do not start an ANALYZE,
  // whose snapshot would stop the pruning those HOT updates need (imports analyze at their
  // end; migrations/20261125140000_analyze_after_inserts.js).
  // toast_tuple_target 512 on messages: long search text goes out of line, rows stay small, and
  // the new version of a changed row fits its page (migrations/20261122040000_search_text_lower.js).
  // 128 on message_words: the tsvector out of line, the rows a word search visits tiny
  // (migrations/20261125190000_message_words.js). 128 on message_chunks too: pieces of text
  // over ~2 KB are compressed in place, STORAGE MAIN keeps them inline
  // (migrations/20261130610100_compressed_pieces.js).
  const options = {
    messages:
      ' WITH (fillfactor = 50, toast_tuple_target = 512, autovacuum_analyze_scale_factor = 4)',
    message_words: ' WITH (toast_tuple_target = 128)',
    message_chunks: ' WITH (toast_tuple_target = 128)',
  };
  for (const table of PARTITIONED) {
    const opts = options[table] || '';
    await trx.raw(
      `CREATE TABLE ${table}_u${id} PARTITION OF ${table} FOR VALUES IN (${id})${opts}`,
    );
  }
}

module.exports = {
  createUser,
  getUser,
  findUser,
  ensureUser,
  userSummaries,
  deleteUser,
  credentialStamps,
  closeCredentialProbe,
};
