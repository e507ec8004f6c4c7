'use strict';

const crypto = require('node:crypto');

/*
 * Keyed lookups for the incremental thread stage (@mailgate/store thread-ops.js threadBatch):
 * one row per message and per id it links through (its Message-ID, References, In-Reply-To)
 * and per base subject, the key being 16 bytes of sha256 over 'i:'/'s:' and the normalised
 * value. The thread stage then reads only the messages a new batch touches, instead of every
 * message of the user after each import (memory grew with the user: 480 MB peak RSS on the
 * 44,755-message Enron set). A btree on its own narrow table, not an index on messages: an
 * index on a messages column the thread stage writes would make those writes non-HOT, and
 * every one of them would insert into the trigram and tsvector GINs. Rows of purged messages
 * are left behind and filtered by the join on live messages.
 *
 * Existing messages get their keys here. The key derivation is frozen in this file (a
 * migration must not change with the code); it matches threadKeysOf() in thread-ops.js.
 */

const REPLY = /^((re|fwd?|aw|sv)(\[\d+\])?\s*:\s*)+/i;
const normId = (id) => (id ? String(id).trim().replace(/^<|>$/g, '').toLowerCase() || null : null);
const baseSubject = (s) =>
  String(s || '')
    .replace(REPLY, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
const keyOf = (kind, value) =>
  crypto
    .createHash('sha256')
    .update(kind + value)
    .digest()
    .subarray(0, 16);

exports.up = async function up(knex) {
  await knex.raw(`
    CREATE TABLE thread_keys (
      user_id int NOT NULL,
      key bytea NOT NULL,
      mailbox_id int NOT NULL,
      uid bigint NOT NULL
    )`);
  await knex.raw('CREATE INDEX thread_keys_key_idx ON thread_keys (user_id, key)');
  let after = [0, 0, 0];
  for (;;) {
    const r = await knex.raw(
      `SELECT user_id, mailbox_id, uid, message_id, in_reply_to, refs, subject FROM messages
        WHERE (user_id, mailbox_id, uid) > (?, ?, ?)
        ORDER BY user_id, mailbox_id, uid LIMIT 5000`,
      after,
    );
    if (!r.rows.length) break;
    const cols = [[], [], [], []];
    for (const m of r.rows) {
      const ids = new Set([m.message_id, ...(m.refs || []), m.in_reply_to].map(normId));
      ids.delete(null);
      const keys = [...ids].map((id) => keyOf('i:', id));
      const base = baseSubject(m.subject);
      if (base) keys.push(keyOf('s:', base));
      for (const k of keys) {
        cols[0].push(m.user_id);
        cols[1].push(k);
        cols[2].push(m.mailbox_id);
        cols[3].push(m.uid);
      }
    }
    if (cols[0].length) {
      await knex.raw(
        `INSERT INTO thread_keys (user_id, key, mailbox_id, uid)
         SELECT * FROM unnest(?::int[], ?::bytea[], ?::int[], ?::bigint[])`,
        cols,
      );
    }
    const last = r.rows[r.rows.length - 1];
    after = [last.user_id, last.mailbox_id, last.uid];
  }
};

exports.down = async function down(knex) {
  await knex.raw('DROP TABLE IF EXISTS thread_keys');
};
