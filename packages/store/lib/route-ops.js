'use strict';

const { errors } = require('@mailgate/core');

/*
 * The per-user IMAP route (`users.route`, migrations/20261123171500_user_route.js): `store` or
 * `proxy`. The IMAP server asks it at login and, for users it relays, again while their
 * sessions live (so a cutover closes them); `mailgate migrate` sets it. Also the flag of
 * `mailgate migrate --on-login` (users.migrate_on_login), and the replacement of a user's
 * password hash (`mailgate user passwd`): the settings of an existing user row. Plain
 * functions taking the store first (PgStore's methods of the same names call them). Stores hashes only: the rule and the hashing are
 * @mailgate/core's (passwords.js), applied by the service.
 */

const ROUTES = Object.freeze(['store', 'proxy']);

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
    await trx('users').where({ id: u.id }).update({ route });
    return { route, previous: u.route };
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
  setPasswordHash,
  proxiedUsers,
  setMigrateOnLogin,
  claimMigrateOnLogin,
  ROUTES,
};
