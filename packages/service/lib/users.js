'use strict';

const crypto = require('node:crypto');
const { hashPassword, verifyPassword, errors } = require('@mailgate/core');

/*
 * User management and authentication through the service (`service.users`): the edges never
 * reach the users or api_tokens tables themselves. Passwords are scrypt hashes
 * (@mailgate/core passwords), tokens SHA-256 at rest (@mailgate/store tokens). The password
 * rule (core checkPassword, INVALID_PASSWORD) is applied by the doors where a person picks a
 * password (`mailgate user add|passwd`, POST /users), not here: tests and the bench create
 * users with short made-up passwords through this interface.
 */

// A fixed hash to verify against when the user does not exist: the answer then takes as long
// as for a wrong password, so login timing does not reveal which user names exist.
let dummy = null;
const dummyHash = async () => (dummy ??= await hashPassword('mailgate-no-such-user'));

/**
 * @param {import('@mailgate/store').PgStore} store
 */
function createUsers(store) {
  return {
    /**
     * @param {string} name
     * @param {{password?: string}} [opts]
     * @returns {Promise<{id: number, name: string}>}
     */
    async create(name, opts = {}) {
      const passwordHash = opts.password ? await hashPassword(opts.password) : null;
      const u = await store.createUser(name, { passwordHash });
      return { id: u.id, name: u.name };
    },

    /**
     * Sets or replaces the password of an existing user (imports create users without one).
     * @param {string} name
     * @param {string} password
     * @returns {Promise<{id: number, name: string, replaced: boolean}>} USER_NOT_FOUND
     */
    async setPassword(name, password) {
      return store.setPasswordHash(name, await hashPassword(String(password)));
    },

    /**
     * Every user: password set or not, route, mailbox/message/live-token counts.
     * @returns {Promise<Array<{name: string, hasPassword: boolean, route: string, mailboxes: number, messages: number, tokens: number}>>}
     */
    async list() {
      return store.userSummaries();
    },

    /**
     * Deletes a user with all their mail, tokens and import jobs.
     * @param {string} name
     * @returns {Promise<{name: string, messages: number, mailboxes: number}>} USER_NOT_FOUND
     */
    async remove(name) {
      return store.deleteUser(name);
    },

    /**
     * Revokes every live API token of a user.
     * @param {string} name
     * @returns {Promise<number>} how many were live; USER_NOT_FOUND
     */
    async revokeAllTokens(name) {
      return store.revokeUserTokens((await store.getUser(name)).id);
    },

    /**
     * The failed-login counts every process on this database shares (issue 34.4): what the
     * LoginLimiter of @mailgate/core takes as `shared`, so a guesser spreading over several
     * `mailgate serve` processes is limited as on one.
     */
    loginFailures: {
      /** @param {string[]} keys @param {number} nowMs */
      counts: (keys, nowMs) => store.loginFailureCounts(keys, nowMs),
      /** @param {string[]} keys @param {number} nowMs @param {number} windowMs */
      add: (keys, nowMs, windowMs) => store.addLoginFailure(keys, nowMs, windowMs),
      /** @param {string[]} keys */
      clear: (keys) => store.clearLoginFailures(keys),
    },

    /**
     * The credential stamp of each named user now (absent: deleted): a session logged in under
     * another stamp than its user's present one must end (password changed).
     * @param {string[]} names
     * @returns {Promise<Map<string, string>>}
     */
    async credentialStamps(names) {
      return store.credentialStamps(names);
    },

    /** @param {string} name @returns {Promise<{id: number, name: string}>} USER_NOT_FOUND */
    async get(name) {
      const u = await store.getUser(name);
      return { id: u.id, name: u.name };
    },

    /** Creates the user (no password) when missing: imports create users. */
    async ensure(name) {
      const u = await store.ensureUser(name);
      return { id: u.id, name: u.name };
    },

    /**
     * Checks a password; INVALID_CREDENTIALS for an unknown user or a wrong password alike.
     * NO_PASSWORD for a user that has none (made by an import): no password can be right, so
     * saying so gives an attacker only the name's existence, and tells the owner the one step
     * to take (README "Security"). Every answer costs one scrypt verification, so timing
     * tells nothing more. `stamp`: the credential stamp of this login (credentialStamps).
     * @returns {Promise<{id: number, name: string, stamp: string}>}
     */
    async verifyLogin(name, password) {
      let u = null;
      try {
        u = await store.getUser(name);
      } catch (err) {
        if (err.code !== 'USER_NOT_FOUND') throw err;
      }
      const ok = await verifyPassword(
        String(password),
        (u && u.password_hash) || (await dummyHash()),
      );
      if (u && !u.password_hash) throw new errors.NO_PASSWORD(u.name);
      if (!u || !ok) throw new errors.INVALID_CREDENTIALS();
      return { id: u.id, name: u.name, stamp: stampOf(u.password_hash) };
    },

    /**
     * The user's IMAP route: `store` (served from PostgreSQL) or `proxy` (relayed to the
     * upstream account while it is being moved; see @mailgate/imap proxy).
     * @param {string} name
     * @returns {Promise<'store'|'proxy'>} USER_NOT_FOUND
     */
    async route(name) {
      return store.getRoute(name);
    },

    /**
     * @param {string} name
     * @param {'store'|'proxy'} route
     * @returns {Promise<{route: string, previous: string}>}
     */
    async setRoute(name, route) {
      return store.setRoute(name, route);
    },

    /**
     * Sets or clears "migrate in the background at the next proxied login".
     * @param {string} name
     * @param {boolean} on
     */
    async setMigrateOnLogin(name, on) {
      return store.setMigrateOnLogin(name, on);
    },

    /**
     * Takes that flag: true for exactly one caller while it is set.
     * @param {string} name
     * @returns {Promise<boolean>}
     */
    async claimMigrateOnLogin(name) {
      return store.claimMigrateOnLogin(name);
    },

    /**
     * Which of these users are routed to `proxy` now (one query for many sessions).
     * @param {string[]} names
     * @returns {Promise<Set<string>>}
     */
    async proxied(names) {
      return store.proxiedUsers(names);
    },

    /**
     * @param {string} name
     * @param {{ttlSeconds?: number, label?: string}} [opts]
     * @returns {Promise<{id: number, token: string, expiresAt: string}>}
     */
    async createToken(name, opts = {}) {
      return store.createToken((await store.getUser(name)).id, opts);
    },

    /** @returns {Promise<{tokenId: number, userId: number, user: string}|null>} */
    async findToken(token) {
      return store.findToken(token);
    },

    /** @returns {Promise<boolean>} false when there was no such live token */
    async revokeToken(name, tokenId) {
      return store.revokeToken((await store.getUser(name)).id, tokenId);
    },
  };
}

/** The digest credentialStamps computes in SQL (md5 of the stored hash text). */
function stampOf(passwordHash) {
  return crypto
    .createHash('md5')
    .update(passwordHash || '')
    .digest('hex');
}

module.exports = { createUsers };
