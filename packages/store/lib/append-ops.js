'use strict';

const crypto = require('node:crypto');
const { errors } = require('@mailgate/core');
const { encodeRaw, encodeRawAsync } = require('./raw-codec');
const { isName } = require('./mailbox-ref');
const { threadFresh, freshFirstRead, THREAD_LOCK } = require('./thread-ops');
const { notifyMailboxes, isCitus } = require('./citus');
const { writerOf, commitWith } = require('./append-writer');

/*
 * The one write of a new single message (issue 32.4): LMTP delivery, `mailgate deliver`, IMAP
 * APPEND and the HTTP append all end in appendMessage. It owns the append's statements and
 * the group commit of concurrent appends; it never parses a message (the caller derives the
 * row, as an import does) and never answers a protocol.
 *
 * Why it looks like this: an APPEND into a 20,000-message INBOX cost 13 statements in as many
 * round trips (thread lock, mailbox lock, UIDNEXT, duplicate index, message row, source row,
 * thread keys, thread lookups, root keys, thread id update, commit), and on a busy machine each
 * round trip costs a context switch on both sides. Now a transaction is: the thread lock, the
 * UIDs and the bytes' next occurrence index in one statement (allocate), the thread lookups
 * (one per step of link distance, the new message's own subject key read with the first: 1.15
 * on average on the Enron mail, where it was 2.2 plus a duplicate read), and one statement that inserts
 * the message rows with their thread ids, the source rows, the thread keys and the outbox rows
 * (data-modifying CTEs), then COMMIT. Nothing in it grows with the mailbox: no count, no
 * list snapshot, no rethreading beyond what the new messages touch.
 *
 * Group commit: appends to the same mailbox that arrive while one of its transactions is in
 * flight wait for it and then go together in the next one (at most MAX_BATCH), so ten LMTP
 * sessions pay one commit (one WAL flush) per batch instead of one each. A caller is answered
 * only after the commit of its batch; UIDs follow arrival order. A batch that fails is retried
 * one message at a time, so one bad message never fails its neighbours.
 */

const MAX_BATCH = 64;

/*
 * The GIN pending-list limit of an append's transaction (issue 32: CPU per delivery). A merge
 * of a pending list costs a fixed part plus a part per distinct key, so merging seldom is
 * cheap per message: on Enron mail in a 22,000-message INBOX the text pieces' trigram list
 * merged after 15, 60 and 200 messages cost 93, 195 and 291 ms (6.2, 3.2, 1.5 ms a message;
 * bench/results/deliver-2026-11-28-profile.md). The service's upkeep (index-upkeep.js) merges
 * the lists in the background; with PostgreSQL's default limit (4 MB) it had to merge at 60% of
 * it, or an insert would pass the limit and merge inline (the p99 tail). At 8 MB it merges at
 * about the old limit and no delivery merges. The limit stays a bound for writers without an
 * upkeep (`mailgate deliver` processes): they merge inline at 8 MB. SET LOCAL's effect without
 * a round trip of its own: set_config(..., true) in the allocating statement. On Citus the
 * statement's CTE runs on the coordinator, so the workers keep their default (citus.js point
 * 9): as before this change.
 */
const APPEND_PENDING_LIMIT = '8MB';

/**
 * Stores one new message (IMAP APPEND, LMTP/LDA delivery, the API's append): uid from
 * UIDNEXT and a new modseq under the mailbox row lock, columns derived by the caller
 * (@mailgate/importer deriveRow, as on import). Appending the same bytes twice keeps both
 * (the next occurrence index). Resolves after the commit. MAILBOX_MIGRATING while the user's
 * route is `proxy` (see allocate).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox id, or byName(name) (MAILBOX_NOT_FOUND when none)
 * @param {{raw: Buffer, row: object, flags?: string[], keywords?: string[], internalDate?: Date}} msg
 * @returns {Promise<{uid: number, uidvalidity: number, modseq: number}>}
 */
function appendMessage(store, userId, mailbox, msg) {
  const queues = (store.appendQueues ??= new Map());
  const key = `${userId}:${isName(mailbox) ? `n:${mailbox.name}` : `i:${mailbox}`}`;
  let q = queues.get(key);
  if (!q) {
    q = { waiting: [], running: false };
    queues.set(key, q);
  }
  return new Promise((resolve, reject) => {
    q.waiting.push({ msg, resolve, reject });
    if (!q.running) drain(store, queues, key, q, userId, mailbox);
  });
}

/**
 * Stores new messages in one mailbox in one transaction (what appendMessage's group commit
 * runs): uids in the given order.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number|{name: string}} mailbox
 * @param {Array<{raw: Buffer, row: object, flags?: string[], keywords?: string[], internalDate?: Date}>} msgs
 * @returns {Promise<Array<{uid: number, uidvalidity: number, modseq: number}>>}
 */
async function appendMessages(store, userId, mailbox, msgs) {
  const hashes = msgs.map((m) => crypto.createHash('sha256').update(m.raw).digest());
  // Compressed once, before the transaction: not under the mailbox's lock, and not again when
  // a conflict runs the transaction again (raw-codec.js, ~0.1 ms a message).
  const stored = await Promise.all(msgs.map((m) => encodeRawAsync(m.raw)));
  return retryConflict(() => store.appendTransaction(userId, mailbox, msgs, hashes, stored));
}

/**
 * appendMessages' one transaction (retried whole by retryConflict): on a single PostgreSQL by
 * the append's pipelined connections (append-writer.js: two round trips, named statements, no
 * knex), on Citus in a knex transaction (citus.js point 10). The same statements either way
 * (appendSteps).
 * @param {import('./pg-store').PgStore} store
 * @param {Array<{raw: Buffer, raw_codec: number}>} [stored] the messages' stored forms
 *   (encodeRaw), computed here when not given
 */
async function appendTransaction(store, userId, mailbox, msgs, hashes, stored) {
  if (await isCitus(store.knex)) {
    return store.knex.transaction((trx) =>
      appendSteps(store, trx, userId, mailbox, msgs, hashes, stored, {
        last: (sql, bindings) => trx.raw(sql, bindings),
      }),
    );
  }
  return writerOf(store).transaction((tx) =>
    appendSteps(store, tx, userId, mailbox, msgs, hashes, stored, {
      // BEGIN, the allocating statement and the first thread lookup leave in one write.
      first: (send) =>
        tx.together(() => {
          const out = send();
          const read = freshFirstRead(
            userId,
            msgs.map((m) => m.row),
          );
          if (read) tx.prefetch(read.sql, read.bindings);
          return out;
        }),
      last: (sql, bindings) => commitWith(tx, sql, bindings),
    }),
  );
}

/**
 * The statements of an append transaction on `db` (a knex transaction, or a pipelined one
 * with knex's raw(sql, bindings) shape): allocate, the thread lookups, then one statement that
 * inserts every row, which `how.last` runs (and, pipelined, COMMITs in the same write).
 * @param {{first?: (send: () => Promise<any>) => Promise<any>, last: (sql: string, bindings: any[]) => Promise<any>}} how
 */
async function appendSteps(store, db, userId, mailbox, msgs, hashes, stored, how) {
  const mb = await allocate(db, userId, mailbox, msgs.length, hashes, how.first);
  const first = Number(mb.first);
  const modseq = Number(mb.highestmodseq);
  // The row's IMAP metadata goes to message_imap(_lines) below, not into messages.
  const rows = msgs.map((m, i) => ({
    ...withoutImap(m.row),
    internal_date: (m.internalDate || new Date()).toISOString(),
    flags: m.flags || [],
    keywords: m.keywords || [],
    mailbox_id: mb.id,
    uid: first + i,
  }));
  // Thread ids before the rows exist, so that they are written with them (no update).
  const threads = await threadFresh(
    store,
    db,
    userId,
    rows.map((r) => ({ ...r })),
  );
  const next = mb.next;
  const seen = new Map();
  const messageRows = rows.map((row, i) => {
    const hex = hashes[i].toString('hex');
    const earlier = seen.get(hex) || 0;
    seen.set(hex, earlier + 1);
    return {
      ...row,
      user_id: userId,
      modseq,
      content_hash: hashes[i],
      // The next occurrence of these bytes in the mailbox, counting copies in this batch.
      dup_index: (next.get(hex) || 0) + earlier,
      thread_id: threads.ids.get(`${mb.id}/${row.uid}`) || null,
    };
  });
  const ins = insertSql('messages', messageRows);
  const src = insertSql(
    'message_sources',
    rows.map((r, i) => ({
      user_id: userId,
      mailbox_id: mb.id,
      uid: r.uid,
      ...(stored ? stored[i] : encodeRaw(msgs[i].raw)),
    })),
  );
  const parts = [`m AS (${ins.sql} RETURNING uid)`, `s AS (${src.sql})`];
  const bindings = [...ins.bindings, ...src.bindings];
  // The IMAP metadata the caller derived with the row (deriveRow), kept in the same
  // statement: a FETCH after the append reads it, never derives or writes it.
  const imap = msgs.map((m, i) => [m.row.imap, rows[i].uid]).filter(([x]) => x);
  if (imap.length) {
    parts.push(`i AS (INSERT INTO message_imap
        (user_id, mailbox_id, uid, size, envelope, body, bodystructure)
      SELECT ?, ?, v.u, v.sz, v.e, v.b, v.bs
        FROM unnest(?::bigint[], ?::int[], ?::text[], ?::text[], ?::text[])
             AS v(u, sz, e, b, bs))`);
    // The list-view lines in their own narrow table (migration 20261203210100).
    parts.push(`l AS (INSERT INTO message_imap_lines (user_id, mailbox_id, uid, size, fields)
      SELECT ?, ?, v.u, v.sz, v.f FROM unnest(?::bigint[], ?::int[], ?::text[]) AS v(u, sz, f))`);
    const uids = imap.map(([, uid]) => uid);
    const sizes = imap.map(([x]) => x.size);
    bindings.push(
      userId,
      mb.id,
      uids,
      sizes,
      ...['envelope', 'body', 'bodystructure'].map((k) => imap.map(([x]) => x[k])),
      userId,
      mb.id,
      uids,
      sizes,
      imap.map(([x]) => x.fields),
    );
  }
  const k = threads.keys;
  if (k.keys.length) {
    // The subject keys of touched old roots are usually there already: one probe each.
    parts.push(`k AS (INSERT INTO thread_keys (user_id, key, mailbox_id, uid)
      SELECT ?, v.k, v.b, v.u FROM unnest(?::bytea[], ?::int[], ?::bigint[]) AS v(k, b, u)
       WHERE NOT EXISTS (SELECT 1 FROM thread_keys t WHERE t.user_id = ? AND t.key = v.k
                           AND t.mailbox_id = v.b AND t.uid = v.u OFFSET 0))`);
    bindings.push(userId, k.keys, k.boxes, k.uids, userId);
  }
  if (store.outbox) {
    parts.push(`o AS (INSERT INTO es_outbox (user_id, mailbox_id, uid, modseq, op)
      SELECT ?, ?, u, ?, 'index' FROM unnest(?::bigint[]) AS u)`);
    bindings.push(
      userId,
      mb.id,
      modseq,
      rows.map((r) => r.uid),
    );
  }
  await how.last(`WITH ${parts.join(',\n')} SELECT count(*) FROM m`, bindings);
  return rows.map((r) => ({ uid: r.uid, uidvalidity: Number(mb.uidvalidity), modseq }));
}

/**
 * A multi-row INSERT of plain rows, with knex-style `?` placeholders (what knex's builder
 * made of the same rows, without building it per delivery): the columns of every row in the
 * order first seen, DEFAULT for a value a row leaves undefined, a plain object as JSON. The
 * text depends only on the columns and the number of rows, so it repeats and is prepared once
 * per connection (append-writer.js).
 * @param {string} table
 * @param {object[]} rows
 * @returns {{sql: string, bindings: any[]}}
 */
function insertSql(table, rows) {
  const columns = [];
  const have = new Set();
  for (const row of rows) {
    for (const c of Object.keys(row)) {
      if (!have.has(c)) {
        have.add(c);
        columns.push(c);
      }
    }
  }
  const bindings = [];
  const tuples = rows.map((row) => {
    const marks = columns.map((c) => {
      const v = row[c];
      if (v === undefined) return 'DEFAULT';
      bindings.push(isPlainObject(v) ? JSON.stringify(v) : v);
      return '?';
    });
    return `(${marks.join(', ')})`;
  });
  const names = columns.map((c) => `"${c.replace(/"/g, '""')}"`).join(', ');
  return { sql: `INSERT INTO "${table}" (${names}) VALUES ${tuples.join(', ')}`, bindings };
}

function isPlainObject(v) {
  if (v === null || typeof v !== 'object') return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** A derived row without its IMAP metadata (kept in message_imap, not in messages). */
function withoutImap(row) {
  if (!('imap' in row)) return row;
  const rest = { ...row };
  delete rest.imap;
  return rest;
}

/**
 * The thread lock, then the mailbox row's lock and `n` uids from its UIDNEXT with one new
 * modseq, and the next dup_index of each content hash in the mailbox, in one statement (the
 * lock order of every writer that threads: threads, then the mailbox). The UPDATE re-reads the
 * row after waiting for its lock, so UIDNEXT is the latest.
 * The same statement refuses a user whose route is `proxy` (their mail is still the upstream
 * server's while `mailgate migrate` imports it: a new message here would take a kept UID or
 * fail the migration's verification): the check the pg backend made with a read of its own
 * before every append, now without a round trip of its own and inside the transaction.
 *
 * The dup_index read was a statement of its own after the lock (one round trip of ~7 per
 * delivery). In this statement it reads the snapshot taken before the lock wait (READ
 * COMMITTED), so when another process appended the same bytes to the same mailbox while this
 * one waited, the read misses that row and the insert hits the unique key (user_id,
 * mailbox_id, content_hash, dup_index): retryConflict runs the transaction again (rolled back
 * whole, nothing stored), and the next statement snapshot sees the row. Within a process the
 * group commit queue already runs a mailbox's appends one transaction at a time.
 * @returns {Promise<{id: number, first: string, highestmodseq: string, uidvalidity: string,
 *   next: Map<string, number>}>} next: hash (hex) → next dup_index (absent: 0)
 */
async function allocate(trx, userId, mailbox, n, hashes, group = (send) => send()) {
  const named = isName(mailbox);
  const r = await group(() =>
    trx.raw(
      // ::text: on Citus the CTE becomes a subplan run on the coordinator (where every other
      // taker of the thread lock takes it) whose result is shipped to the worker, and a void
      // column cannot be shipped (citus.js, test/citus-router.test.js).
      // The dup read finds the mailbox by its key, not through the UPDATE's RETURNING (a
      // correlated read of a CTE's result is a join Citus cannot route); the second branch has
      // rows only when the first has one (the same mailbox row). Not a subquery in the INSERT's
      // VALUES: Citus refuses those (citus.js).
      `WITH l AS MATERIALIZED (SELECT pg_advisory_xact_lock(?, ?)::text AS x,
                                    set_config('gin_pending_list_limit', ?, true) AS g),
     b AS (UPDATE mailboxes b SET uidnext = b.uidnext + ?, highestmodseq = b.highestmodseq + 1
       FROM l WHERE ${named ? 'b.name = ?' : 'b.id = ?'} AND b.user_id = ?
        AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = ? AND u.route = 'proxy')
     RETURNING b.id, b.uidnext - ? AS first, b.highestmodseq, b.uidvalidity),
     d AS (SELECT m.content_hash, max(m.dup_index) + 1 AS next FROM messages m
       WHERE m.user_id = ? AND m.content_hash = ANY(?::bytea[]) AND m.mailbox_id =
         (SELECT x.id FROM mailboxes x WHERE x.user_id = ? AND ${named ? 'x.name = ?' : 'x.id = ?'})
       GROUP BY m.content_hash)
     SELECT b.id, b.first, b.highestmodseq, b.uidvalidity, NULL::bytea AS hash, NULL::int AS next
       FROM b
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, d.content_hash, d.next FROM d`,
      [
        THREAD_LOCK,
        userId,
        APPEND_PENDING_LIMIT,
        n,
        named ? mailbox.name : mailbox,
        userId,
        userId,
        n,
        userId,
        hashes,
        userId,
        named ? mailbox.name : mailbox,
      ],
    ),
  );
  const box = r.rows.find((x) => x.id != null);
  if (!box) {
    // Which of the two refused it: only on this path, a read of its own.
    const u = (await trx.raw('SELECT name, route FROM users WHERE id = ?', [userId])).rows[0];
    if (u && u.route === 'proxy') throw new errors.MAILBOX_MIGRATING(u.name);
    throw new errors.MAILBOX_NOT_FOUND(named ? mailbox.name : String(mailbox));
  }
  const next = new Map(
    r.rows.filter((x) => x.hash != null).map((x) => [x.hash.toString('hex'), Number(x.next)]),
  );
  // Citus: IDLE sessions are told by the store, not the dropped trigger (citus.js, point 6).
  await notifyMailboxes(trx, trx, userId, [box.id]);
  return { ...box, id: Number(box.id), next };
}

/**
 * Runs a transaction again (up to 3 times in all) when PostgreSQL cancelled it as a deadlock
 * victim (40P01), or when its insert met the row of another process's append of the same bytes
 * that its dup_index read could not see (23505 on the content_hash/dup_index key; allocate): it
 * rolled back whole, so running it again stores the messages once. On Citus a shard move of
 * the rebalancer (block_writes) can close a distributed deadlock with the append's steps, and
 * the cluster cancels the append (packages/store/test/citus-add-node.test.js); the sender must
 * not see that.
 * @template T
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function retryConflict(fn) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (!(err.code === '40P01' || isDupIndexConflict(err)) || attempt >= 3) throw err;
    }
  }
}

/** A unique violation of the (user_id, mailbox_id, content_hash, dup_index) key. */
function isDupIndexConflict(err) {
  return err.code === '23505' && /content_hash, dup_index\)/.test(err.detail || '');
}

/**
 * Runs a mailbox's waiting appends, a batch per transaction, until none is left.
 * @param {import('./pg-store').PgStore} store
 */
async function drain(store, queues, key, q, userId, mailbox) {
  q.running = true;
  try {
    while (q.waiting.length) {
      const batch = q.waiting.splice(0, MAX_BATCH);
      try {
        const out = await store.appendMessages(
          userId,
          mailbox,
          batch.map((b) => b.msg),
        );
        batch.forEach((b, i) => b.resolve(out[i]));
      } catch (err) {
        if (batch.length === 1) {
          batch[0].reject(err);
          continue;
        }
        // One at a time: a message that cannot be stored fails alone.
        for (const b of batch) {
          try {
            b.resolve((await store.appendMessages(userId, mailbox, [b.msg]))[0]);
          } catch (e) {
            b.reject(e);
          }
        }
      }
    }
  } finally {
    q.running = false;
    if (queues.get(key) === q && !q.waiting.length) queues.delete(key);
  }
}

module.exports = {
  appendMessage,
  appendMessages,
  appendTransaction,
  appendSteps,
  MAX_BATCH,
  APPEND_PENDING_LIMIT,
};
