'use strict';

const { errors } = require('@mailgate/core');
const { lockMailbox, writeOutbox, bumpModseq } = require('./mail-ops');
const { inMailbox, mustExist, isName, canonicalName, NEW_UIDVALIDITY } = require('./mailbox-ref');
const { lockThreads, threadBatch, normId } = require('./thread-ops');
const { MESSAGE_COLUMNS, SOURCE_COLUMNS } = require('./columns');
const { validateMailboxName, specialUseFor } = require('./names');
const { notifyMailboxes } = require('./citus');
const { textOf } = require('./chunks-sql');

/*
 * What an IMAP server and a webmail need beyond import and read: mailbox life cycle
 * (RFC 3501 6.3.3-6.3.5 CREATE/DELETE/RENAME), subscriptions (6.3.6/6.3.9), APPEND (6.3.11),
 * COPY/MOVE (6.4.7, RFC 6851) and CONDSTORE/QRESYNC change tracking (RFC 7162). Plain
 * functions taking the store first (PgStore's methods of the same names call them). Like every store write: under the mailbox row lock, a new
 * modseq stamped on what changed, an es_outbox row for every change when the mirror is on.
 * The hierarchy delimiter is '/', as in mailbox names everywhere in mailgate.
 */

const MESSAGE_COPY_COLUMNS = MESSAGE_COLUMNS.filter(
  (c) => !['user_id', 'mailbox_id', 'uid', 'modseq', 'dup_index'].includes(c),
);
const SOURCE_COPY_COLUMNS = SOURCE_COLUMNS.filter(
  (c) => !['user_id', 'mailbox_id', 'uid'].includes(c),
);

// A copied row's text is read back from the source message's pieces, where it is kept
// (migrations/20261130610200_text_in_pieces_only.js); the insert trigger cuts the copy's pieces
// and words from it and stores the row without it, as for any new message.
const TEXT_KIND = Object.freeze({ header_text: 0, body_text: 1 });
const copiedValue = (c) => (c in TEXT_KIND ? textOf('m', TEXT_KIND[c], '?') : `m.${c}`);

async function uidsOf(trx, userId, mailboxId) {
  const r = await trx.raw(
    'SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND NOT expunged',
    [userId, mailboxId],
  );
  return r.rows.map((x) => Number(x.uid));
}

// Unseen count per cached row list. A list of the list cache is never changed in place (a
// change makes a new list of frozen rows), so a count kept for it stays exact; it is
// collected with its list.
const unseenCounts = new WeakMap();

function unseenOf(list) {
  let n = unseenCounts.get(list);
  if (n === undefined) {
    n = 0;
    for (const r of list) if (!r.flags.includes('\\Seen')) n++;
    unseenCounts.set(list, n);
  }
  return n;
}

/**
 * Copies keep their thread: the copy has the original's Message-ID, and copies of a message
 * share its thread (thread-ops.js threadIds), so its thread id and keys are copied. A message
 * without a Message-ID is a thread node of its own: its copy is threaded like a new message.
 * @param {import('./pg-store').PgStore} store
 */
async function copyThreads(store, trx, userId, srcId, dstId, mapSql, mapArgs) {
  await trx.raw(
    `INSERT INTO thread_keys (user_id, key, mailbox_id, uid)
     SELECT t.user_id, t.key, ?, k.dst FROM thread_keys t JOIN ${mapSql} ON t.uid = k.src
      WHERE t.user_id = ? AND t.mailbox_id = ?`,
    [dstId, ...mapArgs, userId, srcId],
  );
  const r = await trx.raw(
    `SELECT m.mailbox_id, m.uid, m.message_id, m.in_reply_to, m.refs, m.subject
       FROM messages m JOIN ${mapSql} ON m.uid = k.dst
      WHERE m.user_id = ? AND m.mailbox_id = ?
        AND (m.message_id IS NULL OR length(btrim(m.message_id, ' <>')) = 0)`,
    [...mapArgs, userId, dstId],
  );
  const own = r.rows.filter((x) => !normId(x.message_id));
  if (own.length) await threadBatch(store, trx, userId, own);
}

/**
 * Creates a mailbox; MAILBOX_EXISTS when the name is taken.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 * @param {{subscribed?: boolean}} [opts]
 * @returns {Promise<object>} the mailbox row
 */
async function createMailbox(store, userId, name, opts = {}) {
  validateMailboxName(name);
  name = canonicalName(name);
  // UIDVALIDITY from the sequence that only grows (NEW_UIDVALIDITY): a name deleted and
  // created again, even within one second, never repeats one (RFC 3501 2.3.1.1).
  // Subscribed unless opts.subscribed is false (IMAP CREATE); a name still subscribed from
  // before (a deleted mailbox's, RFC 3501 6.3.6) stays subscribed either way.
  const r = await store.knex.raw(
    `WITH b AS (
       INSERT INTO mailboxes (user_id, name, uidvalidity, special_use)
       VALUES (?, ?, ${NEW_UIDVALIDITY}, ?) ON CONFLICT (user_id, name) DO NOTHING RETURNING *),
     s AS (
       INSERT INTO subscriptions (user_id, name) SELECT user_id, name FROM b WHERE ?
       ON CONFLICT DO NOTHING)
     SELECT * FROM b`,
    [userId, name, specialUseFor(name), opts.subscribed !== false],
  );
  if (!r.rows.length) throw new errors.MAILBOX_EXISTS(name);
  return r.rows[0];
}

/**
 * Renames a mailbox and its inferiors (`from/…` → `to/…`, RFC 3501 6.3.5). UIDs and
 * UIDVALIDITY stay; the mirror re-indexes the messages (their documents carry the name).
 * INBOX cannot be renamed here (IMAP's move-all-messages rename is not supported).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} from
 * @param {string} to
 */
async function renameMailbox(store, userId, from, to) {
  validateMailboxName(to);
  from = canonicalName(from);
  to = canonicalName(to);
  if (from === 'INBOX') throw new errors.INVALID_INPUT('INBOX cannot be renamed');
  return store.knex.transaction(async (trx) => {
    const src = await trx('mailboxes').where({ user_id: userId, name: from }).forUpdate();
    if (!src.length) throw new errors.MAILBOX_NOT_FOUND(from);
    const taken = await trx('mailboxes').where({ user_id: userId, name: to }).first();
    if (taken) throw new errors.MAILBOX_EXISTS(to);
    const r = await trx.raw(
      `UPDATE mailboxes SET name = ? || substr(name, ?)
        WHERE user_id = ? AND (name = ? OR starts_with(name, ?))
        RETURNING id, highestmodseq`,
      [to, from.length + 1, userId, from, `${from}/`],
    );
    // Subscriptions follow the renamed names (as Dovecot's do); a name under `to` that was
    // subscribed already stays so.
    await trx.raw(
      `WITH moved AS (
         DELETE FROM subscriptions
          WHERE user_id = ? AND (name = ? OR starts_with(name, ?)) RETURNING user_id, name)
       INSERT INTO subscriptions (user_id, name)
       SELECT user_id, ? || substr(name, ?) FROM moved ON CONFLICT DO NOTHING`,
      [userId, from, `${from}/`, to, from.length + 1],
    );
    if (store.outbox) {
      for (const mb of r.rows) {
        const modseq = Number(mb.highestmodseq) + 1;
        const uids = await uidsOf(trx, userId, mb.id);
        if (!uids.length) continue;
        // The documents carry the mailbox name: re-ship them under the same modseq rule as
        // any change (a new modseq, so ES's external versioning accepts the new document).
        await trx.raw(
          `UPDATE messages SET modseq = ? WHERE user_id = ? AND mailbox_id = ? AND NOT expunged`,
          [modseq, userId, mb.id],
        );
        await writeOutbox(trx, userId, mb.id, uids, modseq, 'index');
        await bumpModseq(trx, userId, mb.id, modseq);
      }
    }
    return { renamed: r.rows.length };
  });
}

/**
 * Deletes a mailbox with its messages (RFC 3501 6.3.4); its inferiors stay, and so does a
 * subscription of its name (6.3.6: never removed by the server). INBOX cannot be deleted.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 */
async function deleteMailbox(store, userId, name) {
  name = canonicalName(name);
  if (name === 'INBOX') throw new errors.INVALID_INPUT('INBOX cannot be deleted');
  return store.knex.transaction(async (trx) => {
    const mb = await trx('mailboxes').where({ user_id: userId, name }).forUpdate().first();
    if (!mb) throw new errors.MAILBOX_NOT_FOUND(name);
    if (store.outbox) {
      const uids = await uidsOf(trx, userId, mb.id);
      if (uids.length) {
        await writeOutbox(trx, userId, mb.id, uids, Number(mb.highestmodseq) + 1, 'delete');
      }
    }
    // Thread keys name (mailbox id, uid): none may outlive the mailbox (ids are never reused,
    // but a key left behind is dead weight in every thread lookup of the user).
    for (const table of [
      'message_sources',
      'message_imap',
      'message_imap_lines',
      'messages',
      'expunged_uids',
      'list_snapshots',
      'thread_keys',
    ]) {
      await trx(table).where({ user_id: userId, mailbox_id: mb.id }).del();
    }
    await trx('mailboxes').where({ user_id: userId, id: mb.id }).del();
    return { deleted: name };
  });
}

/**
 * Claims the mailbox's \Recent messages for one session (RFC 3501 2.3.2): every uid from
 * `recent_uid` (the first not claimed yet) up to UIDNEXT. The claim moves `recent_uid` to
 * UIDNEXT under the row's lock, so exactly one session, in any process, gets each message;
 * an append waits for that lock, so a uid below the returned `to` is committed. `peek` (a
 * read-only EXAMINE, RFC 3501 6.3.2) reads the range without claiming it.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 * @param {{peek?: boolean}} [opts]
 * @returns {Promise<{from: number, to: number}>} recent uids are from <= uid < to
 */
async function claimRecent(store, userId, name, opts = {}) {
  name = canonicalName(name);
  const sql = opts.peek
    ? `SELECT recent_uid AS "from", uidnext AS "to" FROM mailboxes WHERE user_id = ? AND name = ?`
    : `UPDATE mailboxes b SET recent_uid = b.uidnext
         FROM (SELECT id, recent_uid FROM mailboxes WHERE user_id = ? AND name = ? FOR UPDATE) o
        WHERE b.id = o.id
        RETURNING o.recent_uid AS "from", b.uidnext AS "to"`;
  const r = await store.knex.raw(sql, [userId, name]);
  if (!r.rows.length) throw new errors.MAILBOX_NOT_FOUND(name);
  return { from: Number(r.rows[0].from), to: Number(r.rows[0].to) };
}

/**
 * How many live messages of a mailbox are \Recent (not claimed by any session yet): STATUS
 * RECENT. Reads nothing when none can be (recent_uid at UIDNEXT, the usual case).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{id: number, recent_uid: number, uidnext: number}} mb the mailbox row
 * @returns {Promise<number>}
 */
async function countRecent(store, userId, mb) {
  if (Number(mb.recent_uid) >= Number(mb.uidnext)) return 0;
  const r = await store.knex.raw(
    `SELECT count(*)::int AS n FROM messages
      WHERE user_id = ? AND mailbox_id = ? AND uid >= ? AND NOT expunged`,
    [userId, mb.id, mb.recent_uid],
  );
  return r.rows[0].n;
}

/**
 * Subscribes to an existing mailbox, or unsubscribes from a name. Subscriptions are names
 * (table `subscriptions`), not a mark on the mailbox row: deleting a mailbox leaves its name
 * subscribed (RFC 3501 6.3.6). Unsubscribing from a name that is no mailbox (deleted since,
 * or never one) succeeds: nothing is subscribed there afterwards, which is what the client
 * asked (RFC 3501 6.3.7; Dovecot answers OK too).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 * @param {boolean} subscribed
 */
async function setSubscribed(store, userId, name, subscribed) {
  name = canonicalName(name);
  if (!subscribed) {
    await store.knex('subscriptions').where({ user_id: userId, name }).del();
    return;
  }
  // Only a mailbox that exists can be subscribed to (6.3.6 lets the server check it).
  const r = await store.knex.raw(
    `INSERT INTO subscriptions (user_id, name)
     SELECT user_id, name FROM mailboxes WHERE user_id = ? AND name = ?
     ON CONFLICT DO NOTHING RETURNING name`,
    [userId, name],
  );
  if (r.rows.length) return;
  const mb = await store.knex('mailboxes').where({ user_id: userId, name }).first('id');
  if (!mb) throw new errors.MAILBOX_NOT_FOUND(name);
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<string[]>} subscribed names, INBOX first; a name whose mailbox was
 *   deleted stays until it is unsubscribed
 */
async function listSubscriptions(store, userId) {
  const rows = await store
    .knex('subscriptions')
    .where({ user_id: userId })
    .select('name')
    .orderByRaw("(name = 'INBOX') DESC, name");
  return rows.map((r) => r.name);
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<Map<number, string>>} mailbox id → name
 */
async function mailboxNamesById(store, userId) {
  const rows = await store.knex('mailboxes').where({ user_id: userId }).select('id', 'name');
  return new Map(rows.map((b) => [b.id, b.name]));
}

/**
 * Live message count of a mailbox.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {{warm?: boolean}} [opts] warm false: a count by SQL does not load the mailbox's
 *   full header rows into the list cache in the background. A webmail's count comes before
 *   its message list (worth warming); an IMAP STATUS or IDLE poll reads no full rows after
 *   it, and the load would be a full read of the mailbox beside the session's next command.
 * @returns {Promise<{total: number, unseen: number}>}
 */
async function countMessages(store, userId, mailbox, opts = {}) {
  const { total, unseen } = await store.countIn(userId, mailbox, opts);
  return { total, unseen };
}

/**
 * @param {import('./pg-store').PgStore} store
 * @private countMessages, with the mailbox row its statement read when it went to SQL
 * ({id, highestmodseq}; absent when counted from the list cache).
 */
async function countIn(store, userId, mailbox, opts = {}) {
  const cache = store.listCache;
  const cached = cache ? cache.cachedId(userId, mailbox) : null;
  // Counted from a cache's rows (exact by modseq): no scan of the partition. The list view's
  // rows carry the flags too: a mailbox an IMAP session has open is counted from them.
  const from = [cache, store.listViewCache].find((c) => {
    const id = c ? c.cachedId(userId, mailbox) : null;
    return id != null && c.usable(userId, id);
  });
  if (from) {
    const list = await from.rowsOf(store.knex, userId, mailbox);
    mustExist(mailbox, list);
    return { total: list ? list.length : 0, unseen: list ? unseenOf(list) : 0 };
  }
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE NOT ('\\Seen' = ANY(m.flags)))::int AS unseen
       FROM messages m WHERE m.user_id = ? AND m.mailbox_id = b.id AND NOT m.expunged`,
    [userId],
    'total',
  );
  mustExist(mailbox, mb);
  if (!mb) return { total: 0, unseen: 0 };
  if (cache && isName(mailbox)) cache.noteName(userId, mailbox.name, mb.id);
  if (cache && cached == null && opts.warm !== false) cache.warm(store.knex, userId, mb.id);
  return { total: rows[0].total, unseen: rows[0].unseen, mailbox: mb };
}

/**
 * Copies messages to another mailbox (RFC 3501 6.4.7; RFC 4315 COPYUID's uid map), or moves
 * them (RFC 6851: the sources are expunged in the same transaction). Rows and bytes are
 * copied inside PostgreSQL; new uids follow the source uid order. A move within one mailbox
 * is a copy to new uids and an expunge of the old ones (RFC 6851 3.3, as Dovecot does): the
 * client is told COPYUID, EXPUNGE and EXISTS, and its view matches the mailbox.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} srcId
 * @param {number[]} uids
 * @param {number} dstId
 * @param {{move?: boolean}} [opts]
 * @returns {Promise<{uidvalidity: number, map: Array<[number, number]>}>}
 */
async function copyMessages(store, userId, srcId, uids, dstId, opts = {}) {
  const result = await store.copyInTransaction(userId, srcId, uids, dstId, opts);
  // After the commit and outside the mailbox locks, not awaited by the client's answer: a
  // bulk copy leaves the planner without the new rows (stats-ops.js, issue 35.4).
  await store.refreshStatsAfterBulk(userId, result.map.length);
  return result;
}

/**
 * copyMessages' transaction (see there).
 * @param {import('./pg-store').PgStore} store
 */
async function copyInTransaction(store, userId, srcId, uids, dstId, opts) {
  return store.knex.transaction(async (trx) => {
    await lockThreads(trx, userId);
    // Both mailbox rows, in id order, so two opposite moves cannot deadlock.
    for (const id of [...new Set([srcId, dstId])].sort((a, b) => a - b)) {
      await lockMailbox(trx, userId, id);
    }
    const found = (
      await trx.raw(
        `SELECT uid FROM messages WHERE user_id = ? AND mailbox_id = ? AND NOT expunged
            AND uid = ANY(?::bigint[]) ORDER BY uid`,
        [userId, srcId, uids],
      )
    ).rows.map((x) => Number(x.uid));
    const dst = (
      await trx.raw(
        `UPDATE mailboxes SET uidnext = uidnext + ?, highestmodseq = highestmodseq + 1
          WHERE id = ? AND user_id = ? RETURNING uidnext - ? AS first, highestmodseq, uidvalidity`,
        [found.length, dstId, userId, found.length],
      )
    ).rows[0];
    // Citus: IDLE sessions are told by the store, not the dropped trigger (citus.js, point 6).
    await notifyMailboxes(trx, trx, userId, [dstId]);
    if (!found.length) return { uidvalidity: Number(dst.uidvalidity), map: [] };
    const first = Number(dst.first);
    const modseq = Number(dst.highestmodseq);
    const map = found.map((u, i) => [u, first + i]);
    const copied = MESSAGE_COPY_COLUMNS;
    const cols = copied.join(', ');
    const mapSql = 'unnest(?::bigint[], ?::bigint[]) AS k(src, dst)';
    const mapArgs = [map.map((p) => p[0]), map.map((p) => p[1])];
    // dup_index continues after the target's existing copies of the same bytes, so the
    // idempotency key (mailbox, hash, occurrence) stays unique. The target's next index per
    // hash is one grouped read over the unique key, joined once: a correlated subquery per
    // copied row was planned on another index and scanned the whole target mailbox per row
    // (quadratic: UID COPY 1:* of 21,282 messages into a full mailbox took minutes).
    await trx.raw(
      `WITH k AS (SELECT * FROM ${mapSql}),
            src AS (SELECT m.* , k.dst FROM messages m JOIN k ON m.uid = k.src
                     WHERE m.user_id = ? AND m.mailbox_id = ?),
            base AS (SELECT d.content_hash, max(d.dup_index) + 1 AS next FROM messages d
                      WHERE d.user_id = ? AND d.mailbox_id = ?
                        AND d.content_hash IN (SELECT content_hash FROM src)
                      GROUP BY d.content_hash)
       INSERT INTO messages (user_id, mailbox_id, uid, modseq, dup_index, ${cols})
       SELECT m.user_id, ?, m.dst, ?,
              coalesce(b.next, 0)
              + (row_number() OVER (PARTITION BY m.content_hash ORDER BY m.dst) - 1),
              ${copied.map(copiedValue).join(', ')}
         FROM src m LEFT JOIN base b ON b.content_hash = m.content_hash`,
      // The user once more per text column, bound inside copiedValue's subqueries.
      [
        ...mapArgs,
        userId,
        srcId,
        userId,
        dstId,
        dstId,
        modseq,
        ...copied.filter((c) => c in TEXT_KIND).map(() => userId),
      ],
    );
    await trx.raw(
      `INSERT INTO message_sources (user_id, mailbox_id, uid, ${SOURCE_COPY_COLUMNS.join(', ')})
       SELECT s.user_id, ?, k.dst, ${SOURCE_COPY_COLUMNS.map((c) => `s.${c}`).join(', ')}
         FROM message_sources s JOIN ${mapSql} ON s.uid = k.src
        WHERE s.user_id = ? AND s.mailbox_id = ?`,
      [dstId, ...mapArgs, userId, srcId],
    );
    // The kept IMAP metadata is derived from the bytes alone: copied, not derived again.
    await trx.raw(
      `INSERT INTO message_imap (user_id, mailbox_id, uid, size, envelope, body, bodystructure)
       SELECT i.user_id, ?, k.dst, i.size, i.envelope, i.body, i.bodystructure
         FROM message_imap i JOIN ${mapSql} ON i.uid = k.src
        WHERE i.user_id = ? AND i.mailbox_id = ?`,
      [dstId, ...mapArgs, userId, srcId],
    );
    await trx.raw(
      `INSERT INTO message_imap_lines (user_id, mailbox_id, uid, size, fields)
       SELECT l.user_id, ?, k.dst, l.size, l.fields
         FROM message_imap_lines l JOIN ${mapSql} ON l.uid = k.src
        WHERE l.user_id = ? AND l.mailbox_id = ?`,
      [dstId, ...mapArgs, userId, srcId],
    );
    const added = map.map((p) => p[1]);
    if (store.outbox) await writeOutbox(trx, userId, dstId, added, modseq, 'index');
    if (opts.move) {
      const src = await lockMailbox(trx, userId, srcId);
      const srcModseq = Number(src.highestmodseq) + 1;
      const hidden = await trx.raw(
        `UPDATE messages SET expunged = true, modseq = ?
          WHERE user_id = ? AND mailbox_id = ? AND uid = ANY(?::bigint[]) AND NOT expunged`,
        [srcModseq, userId, srcId, found],
      );
      if (store.outbox) await writeOutbox(trx, userId, srcId, found, srcModseq, 'delete');
      await bumpModseq(trx, userId, srcId, srcModseq, hidden.rowCount);
    }
    // After a move's expunge: a moved message is threaded without its source.
    await copyThreads(store, trx, userId, srcId, dstId, mapSql, mapArgs);
    return { uidvalidity: Number(dst.uidvalidity), map };
  });
}

/**
 * What changed in a mailbox after `modseq` (RFC 7162 CONDSTORE CHANGEDSINCE and QRESYNC
 * VANISHED): live messages with a greater modseq, and uids expunged after it (hidden rows
 * not yet purged, then the purge's tombstones).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {number} modseq
 * @returns {Promise<{highestModseq: number, changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>, expunged: number[]}>}
 */
async function changesSince(store, userId, mailbox, modseq) {
  // The mailbox row and its changes in one statement (one snapshot).
  const { mailbox: mb, rows } = await inMailbox(
    store.knex,
    userId,
    mailbox,
    `SELECT * FROM (
       SELECT uid, flags, keywords, modseq, expunged FROM messages
        WHERE user_id = ? AND mailbox_id = b.id AND modseq > ?
       UNION ALL
       SELECT uid, NULL, NULL, modseq, true FROM expunged_uids
        WHERE user_id = ? AND mailbox_id = b.id AND modseq > ?) c
      ORDER BY uid`,
    [userId, modseq, userId, modseq],
  );
  if (!mb) {
    throw new errors.MAILBOX_NOT_FOUND(isName(mailbox) ? mailbox.name : String(mailbox));
  }
  const changed = [];
  const expunged = [];
  for (const x of rows) {
    if (x.expunged) expunged.push(Number(x.uid));
    else
      changed.push({
        uid: Number(x.uid),
        flags: x.flags,
        keywords: x.keywords,
        modseq: Number(x.modseq),
      });
  }
  return { highestModseq: Number(mb.highestmodseq), changed, expunged };
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 * @returns {Promise<object>} mailbox row
 */
async function ensureMailbox(store, userId, name) {
  validateMailboxName(name);
  name = canonicalName(name);
  const found = await store.knex('mailboxes').where({ user_id: userId, name }).first();
  if (found) return found;
  // UIDVALIDITY from the sequence that only grows (RFC 3501 2.3.1.1: never repeated for a
  // re-created mailbox name, even within the same second; mailbox-ref.js NEW_UIDVALIDITY).
  // A mailbox an import makes is subscribed, as the legacy server showed every folder
  // (a name subscribed already stays so; subscriptions are names, mailbox-ops.js).
  await store.knex.raw(
    `WITH b AS (
       INSERT INTO mailboxes (user_id, name, uidvalidity, special_use)
       VALUES (?, ?, ${NEW_UIDVALIDITY}, ?) ON CONFLICT (user_id, name) DO NOTHING
       RETURNING user_id, name)
     INSERT INTO subscriptions (user_id, name) SELECT user_id, name FROM b
     ON CONFLICT DO NOTHING`,
    [userId, name, specialUseFor(name)],
  );
  return store.knex('mailboxes').where({ user_id: userId, name }).first();
}

/**
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} name
 */
async function getMailbox(store, userId, name) {
  name = canonicalName(name);
  const mb = await store.knex('mailboxes').where({ user_id: userId, name }).first();
  if (!mb) throw new errors.MAILBOX_NOT_FOUND(name);
  return mb;
}

/**
 * Mailboxes with message counts.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<Array<{name: string, total: number, unseen: number, uidvalidity: number, uidnext: number, highestmodseq: number, specialUse: string|null}>>}
 */
async function listMailboxes(store, userId) {
  // The subquery names the user itself: correlated on b.user_id alone, Citus cannot prove
  // it stays in one shard and plans a task per shard (citus.js, the router-query test).
  const r = await store.knex.raw(
    `SELECT b.name, b.uidvalidity, b.uidnext, b.highestmodseq, b.special_use,
            EXISTS (SELECT 1 FROM subscriptions s
                     WHERE s.user_id = ? AND s.name = b.name) AS subscribed,
            count(m.uid)::int AS total,
            count(m.uid) FILTER (WHERE NOT ('\\Seen' = ANY(m.flags)))::int AS unseen
       FROM mailboxes b
       LEFT JOIN messages m
         ON m.user_id = b.user_id AND m.mailbox_id = b.id AND NOT m.expunged
      WHERE b.user_id = ?
      GROUP BY b.user_id, b.id
      ORDER BY (b.name = 'INBOX') DESC, b.name`,
    [userId, userId],
  );
  return r.rows.map((row) => ({
    name: row.name,
    total: row.total,
    unseen: row.unseen,
    uidvalidity: Number(row.uidvalidity),
    uidnext: Number(row.uidnext),
    highestmodseq: Number(row.highestmodseq),
    specialUse: row.special_use,
    subscribed: row.subscribed,
  }));
}

module.exports = {
  ensureMailbox,
  getMailbox,
  listMailboxes,
  createMailbox,
  renameMailbox,
  deleteMailbox,
  claimRecent,
  countRecent,
  setSubscribed,
  listSubscriptions,
  mailboxNamesById,
  countMessages,
  countIn,
  copyMessages,
  copyInTransaction,
  changesSince,
};
