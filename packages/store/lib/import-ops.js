'use strict';

/*
 * Store queries of the import pipeline beyond batch writes (pg-store.js): what verify and the
 * `import imap` source ask about what an earlier import kept. Added to PgStore's prototype
 * (index.js). As everywhere in the store, every query filters on user_id and binds values.
 */

const importOps = {
  /**
   * Which of the given content hashes an import kept in quarantine for a mailbox, and whether
   * the kept bytes still hash to them (PostgreSQL re-hashes: a damaged copy is caught).
   * @param {number} userId
   * @param {string} mailbox mailbox name the entry was headed for
   * @param {Buffer[]} hashes sha256 of the source entries
   * @returns {Promise<Map<string, {intact: boolean}>>} keyed by hex hash
   */
  async quarantinedHashes(userId, mailbox, hashes) {
    const out = new Map();
    if (!hashes.length) return out;
    const r = await this.knex.raw(
      `SELECT q.content_hash, bool_or(sha256(q.raw) = q.content_hash) AS intact
         FROM quarantine q
        WHERE q.user_id = ? AND q.mailbox IS NOT DISTINCT FROM ?
          AND q.content_hash = ANY(?::bytea[])
        GROUP BY q.content_hash`,
      [userId, mailbox, hashes],
    );
    for (const row of r.rows) out.set(row.content_hash.toString('hex'), { intact: row.intact });
    return out;
  },
};

module.exports = { importOps };
