'use strict';

const { errors } = require('@mailgate/core');

/*
 * The per-user IMAP route (`users.route`, migrations/20261123171500_user_route.js): `store` or
 * `proxy`. The IMAP server asks it at login and, for users it relays, again while their
 * sessions live (so a cutover closes them); `mailgate migrate` sets it. Also the flag of
 * `mailgate migrate --on-login` (users.migrate_on_login), and the replacement of a user's
 * password hash (`mailgate user passwd`): the settings of an existing user row. Added to
 * PgStore's prototype (index.js). Stores hashes only: the rule and the hashing are
 * @mailgate/core's (passwords.js), applied by the service.
 */

const ROUTES = Object.freeze(['store', 'proxy']);

const routeOps = {
  /**
   * @param {string} name user name
   * @returns {Promise<'store'|'proxy'>} USER_NOT_FOUND
   */
  async getRoute(name) {
    const u = await this.knex('users').where({ name }).first('route');
    if (!u) throw new errors.USER_NOT_FOUND(name);
    return u.route;
  },

  /**
   * @param {string} name user name
   * @param {'store'|'proxy'} route
   * @returns {Promise<{route: string, previous: string}>} USER_NOT_FOUND
   */
  async setRoute(name, route) {
    if (!ROUTES.includes(route)) {
      throw new errors.USAGE(`invalid route "${route}": use ${ROUTES.join(' or ')}`);
    }
    return this.knex.transaction(async (trx) => {
      const u = await trx('users').where({ name }).forUpdate().first('id', 'route');
      if (!u) throw new errors.USER_NOT_FOUND(name);
      await trx('users').where({ id: u.id }).update({ route });
      return { route, previous: u.route };
    });
  },

  /**
   * Sets (or replaces) a user's password hash: users made by an import or by `user add`
   * without a password get one this way.
   * @param {string} name user name
   * @param {string} passwordHash encoded hash (@mailgate/core hashPassword)
   * Revokes the user's API tokens in the same step.
   * @returns {Promise<{id: number, name: string, replaced: boolean, revokedTokens: number}>}
   *   USER_NOT_FOUND; replaced: the user had a password before
   */
  async setPasswordHash(name, passwordHash) {
    return this.knex.transaction(async (trx) => {
      const u = await trx('users').where({ name }).forUpdate().first('id', 'name', 'password_hash');
      if (!u) throw new errors.USER_NOT_FOUND(name);
      await trx('users').where({ id: u.id }).update({ password_hash: passwordHash });
      // In the same transaction: no moment where the new password is set and a token made
      // with the old one still works (issue 29.7).
      const revoked = await this.revokeUserTokens(u.id, trx);
      return { id: u.id, name: u.name, replaced: u.password_hash != null, revokedTokens: revoked };
    });
  },

  /**
   * Which of the given users are routed to `proxy` (the IMAP server re-checks its relayed
   * sessions with one query).
   * @param {string[]} names
   * @returns {Promise<Set<string>>}
   */
  async proxiedUsers(names) {
    if (!names.length) return new Set();
    const rows = await this.knex('users')
      .whereIn('name', names)
      .andWhere({ route: 'proxy' })
      .pluck('name');
    return new Set(rows);
  },

  /**
   * Sets or clears "migrate at the next proxied login" (`mailgate migrate U --on-login`).
   * @param {string} name
   * @param {boolean} on
   */
  async setMigrateOnLogin(name, on) {
    const n = await this.knex('users')
      .where({ name })
      .update({ migrate_on_login: Boolean(on) });
    if (!n) throw new errors.USER_NOT_FOUND(name);
  },

  /**
   * Takes the "migrate at login" flag: true for exactly one caller while it is set (the IMAP
   * server process that then starts the migration).
   * @param {string} name
   * @returns {Promise<boolean>}
   */
  async claimMigrateOnLogin(name) {
    const r = await this.knex.raw(
      `UPDATE users SET migrate_on_login = false
        WHERE name = ? AND migrate_on_login RETURNING id`,
      [name],
    );
    return r.rows.length > 0;
  },
};

module.exports = { routeOps, ROUTES };
