'use strict';

const { errors } = require('@mailgate/core');

/*
 * The per-user IMAP route (`users.route`, migrations/20261123171500_user_route.js): `store` or
 * `proxy`; and the delivery gate of proxied users (`users.delivery_hold`,
 * migrations/20261129330100_user_delivery_hold.js): a relay upstream runs under a shared
 * advisory lock of the user, the migration's hold takes it exclusively once, so no relay that
 * began before the hold is still running when the last import pass starts. The IMAP server asks it at login and, for users it relays, again while their
 * sessions live (so a cutover closes them); `mailgate migrate` sets it. Also the flag of
 * `mailgate migrate --on-login` (users.migrate_on_login), and the replacement of a user's
 * password hash (`mailgate user passwd`): the settings of an existing user row. Plain
 * functions taking the store first (PgStore's methods of the same names call them). Stores hashes only: the rule and the hashing are
 * @mailgate/core's (passwords.js), applied by the service.
 */

const ROUTES = Object.freeze(['store', 'proxy']);

// First key of the delivery gate's advisory lock (the second is the user id): apart from the
// import (30003), fleet (33001, 33100+) and thread locks.
const DELIVERY_GATE_SPACE = 33200;

/**
 * @param {import('./pg-store').PgStore} store
 * @param {string} name user name
 * @returns {Promise<'store'|'proxy'>} USER_NOT_FOUND
 */
async function getRoute(store, name) {
  const u = await store.knex('users').where({ name }).first('route');
  if (!u) throw new errors.USER_NOT_FOUND(name);
  return u.route;
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {string} name user name
 * @param {'store'|'proxy'} route
 * @returns {Promise<{route: string, previous: string}>} USER_NOT_FOUND
 */
async function setRoute(store, name, route) {
  if (!ROUTES.includes(route)) {
    throw new errors.USAGE(`invalid route "${route}": use ${ROUTES.join(' or ')}`);
  }
  return store.knex.transaction(async (trx) => {
    const u = await trx('users').where({ name }).forUpdate().first('id', 'route');
    if (!u) throw new errors.USER_NOT_FOUND(name);
    // A route switch ends a migration's delivery hold: mail is stored here (store) or relayed
    // (proxy) from now on.
    await trx('users').where({ id: u.id }).update({ route, delivery_hold: false });
    return { route, previous: u.route };
  });
}

/**
 * Holds a proxied user's deliveries (the migration's last pass is about to run): sets the hold,
 * then waits until every relay that started before it ended (the gate's exclusive lock, taken
 * and let go). Relays that start later see the hold and are refused (451, retried by the MTA).
 * @param {import('./pg-store').PgStore} store
 * @param {string} name user name
 * @returns {Promise<void>} USER_NOT_FOUND
 */
async function holdDeliveries(store, name) {
  const [u] = await store
    .knex('users')
    .where({ name })
    .update({ delivery_hold: true })
    .returning('id');
  if (!u) throw new errors.USER_NOT_FOUND(name);
  await store.knex.transaction((trx) =>
    trx.raw('SELECT pg_advisory_xact_lock(?, ?)::text', [DELIVERY_GATE_SPACE, u.id]),
  );
}

/**
 * Ends a delivery hold without a route switch (a migration that failed or stopped: the user
 * stays on `proxy` and their mail is relayed again).
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 */
async function releaseDeliveries(store, name) {
  await store.knex('users').where({ name }).update({ delivery_hold: false });
}

/**
 * Runs `fn` with the user's route and hold as they are now, under the user's shared delivery
 * gate, which stays held until `fn` settles: what a relay upstream runs in, so that a
 * migration's hold (holdDeliveries) waits for it. `fn` must not use the store (the gate holds
 * one pooled connection).
 * @template T
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {(u: {route: string, hold: boolean}) => Promise<T>} fn
 * @returns {Promise<T>} USER_NOT_FOUND
 */
async function withDeliveryGate(store, userId, fn) {
  return store.knex.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock_shared(?, ?)::text', [DELIVERY_GATE_SPACE, userId]);
    // A statement of its own, after the lock: it sees a hold committed while this waited.
    const u = await trx('users').where({ id: userId }).first('route', 'delivery_hold');
    if (!u) throw new errors.USER_NOT_FOUND(String(userId));
    return fn({ route: u.route, hold: u.delivery_hold });
  });
}

/**
 * Sets (or replaces) a user's password hash: users made by an import or by `user add`
 * without a password get one this way.
 * @param {import('./pg-store').PgStore} store
 * @param {string} name user name
 * @param {string} passwordHash encoded hash (@mailgate/core hashPassword)
 * Revokes the user's API tokens in the same step.
 * @returns {Promise<{id: number, name: string, replaced: boolean, revokedTokens: number}>}
 *   USER_NOT_FOUND; replaced: the user had a password before
 */
async function setPasswordHash(store, name, passwordHash) {
  return store.knex.transaction(async (trx) => {
    const u = await trx('users').where({ name }).forUpdate().first('id', 'name', 'password_hash');
    if (!u) throw new errors.USER_NOT_FOUND(name);
    await trx('users').where({ id: u.id }).update({ password_hash: passwordHash });
    // In the same transaction: no moment where the new password is set and a token made
    // with the old one still works (issue 29.7).
    const revoked = await store.revokeUserTokens(u.id, trx);
    return { id: u.id, name: u.name, replaced: u.password_hash != null, revokedTokens: revoked };
  });
}

/**
 * Which of the given users are routed to `proxy` (the IMAP server re-checks its relayed
 * sessions with one query).
 * @param {import('./pg-store').PgStore} store
 * @param {string[]} names
 * @returns {Promise<Set<string>>}
 */
async function proxiedUsers(store, names) {
  if (!names.length) return new Set();
  const rows = await store
    .knex('users')
    .whereIn('name', names)
    .andWhere({ route: 'proxy' })
    .pluck('name');
  return new Set(rows);
}

/**
 * Sets or clears "migrate at the next proxied login" (`mailgate migrate U --on-login`).
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @param {boolean} on
 */
async function setMigrateOnLogin(store, name, on) {
  const n = await store
    .knex('users')
    .where({ name })
    .update({ migrate_on_login: Boolean(on) });
  if (!n) throw new errors.USER_NOT_FOUND(name);
}

/**
 * Takes the "migrate at login" flag: true for exactly one caller while it is set (the IMAP
 * server process that then starts the migration).
 * @param {import('./pg-store').PgStore} store
 * @param {string} name
 * @returns {Promise<boolean>}
 */
async function claimMigrateOnLogin(store, name) {
  const r = await store.knex.raw(
    `UPDATE users SET migrate_on_login = false
      WHERE name = ? AND migrate_on_login RETURNING id`,
    [name],
  );
  return r.rows.length > 0;
}

module.exports = {
  getRoute,
  setRoute,
  holdDeliveries,
  releaseDeliveries,
  withDeliveryGate,
  setPasswordHash,
  proxiedUsers,
  setMigrateOnLogin,
  claimMigrateOnLogin,
  ROUTES,
};
