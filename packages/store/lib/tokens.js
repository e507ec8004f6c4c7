'use strict';

const crypto = require('node:crypto');

/*
 * API bearer tokens. The token is 256 random bits shown once; the table keeps only its
 * SHA-256 (enough for a high-entropy secret: there is nothing to brute-force), so a database
 * dump grants no access. Tokens expire and can be revoked. Plain
 * functions taking the store first (PgStore's methods of the same names call them).
 */

const PREFIX = 'mg_';

/** @param {string} token */
function hashToken(token) {
  return crypto.createHash('sha256').update(String(token)).digest();
}

/**
 * Creates a token for a user.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{ttlSeconds?: number, label?: string}} [opts] default lifetime 30 days
 * @returns {Promise<{id: number, token: string, expiresAt: string}>}
 */
async function createToken(store, userId, opts = {}) {
  const token = PREFIX + crypto.randomBytes(32).toString('base64url');
  const ttl = opts.ttlSeconds || 30 * 24 * 3600;
  const r = await store.knex.raw(
    `INSERT INTO api_tokens (user_id, token_hash, label, expires_at)
     VALUES (?, ?, ?, now() + make_interval(secs => ?))
     RETURNING id, expires_at`,
    [userId, hashToken(token), opts.label || null, ttl],
  );
  return { id: Number(r.rows[0].id), token, expiresAt: r.rows[0].expires_at.toISOString() };
}

/**
 * The live (not revoked, not expired) token's owner, or null.
 * @param {import('./pg-store').PgStore} store
 * @param {string} token
 * @returns {Promise<{tokenId: number, userId: number, user: string, label: string|null}|null>}
 */
async function findToken(store, token) {
  if (typeof token !== 'string' || !token.startsWith(PREFIX) || token.length > 200) return null;
  const r = await store.knex.raw(
    `SELECT t.id, t.user_id, t.label, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id
      WHERE t.token_hash = ? AND t.revoked_at IS NULL AND t.expires_at > now()`,
    [hashToken(token)],
  );
  if (!r.rows.length) return null;
  const row = r.rows[0];
  return { tokenId: Number(row.id), userId: row.user_id, user: row.name, label: row.label };
}

/**
 * Revokes every live token of a user (`mailgate token revoke --user`, and a password
 * change: a token made with the old password must not outlive it).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {import('knex').Knex} [trx] the transaction of the change that revokes them
 * @returns {Promise<number>} how many were live
 */
async function revokeUserTokens(store, userId, trx = store.knex) {
  return trx('api_tokens')
    .where({ user_id: userId })
    .whereNull('revoked_at')
    .where('expires_at', '>', trx.fn.now())
    .update({ revoked_at: trx.fn.now() });
}

/**
 * Revokes one token of a user.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} tokenId
 * @returns {Promise<boolean>} false when there was no such live token
 */
async function revokeToken(store, userId, tokenId) {
  const n = await store
    .knex('api_tokens')
    .where({ user_id: userId, id: tokenId })
    .whereNull('revoked_at')
    .update({ revoked_at: store.knex.fn.now() });
  return n > 0;
}

module.exports = { createToken, findToken, revokeUserTokens, revokeToken, hashToken };
