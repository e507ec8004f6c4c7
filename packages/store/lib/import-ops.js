'use strict';

const crypto = require('node:crypto');
const { errors } = require('@mailgate/core');
const { lockMailbox, recordChange } = require('./mail-ops');
const threads = require('./thread-ops');
const { Readable } = require('node:stream');
const { copyRows } = require('./copy');
const { encodeRaw, decodeRaw } = require('./raw-codec');
const { cursorBatches } = require('./cursor');
const { planKeptUids } = require('./kept-uids');
const {
  MESSAGE_COLUMNS,
  SOURCE_COLUMNS,
  QUARANTINE_COLUMNS,
  IMAP_COLUMNS,
  IMAP_LINES_COLUMNS,
} = require('./columns');
const { perUserPartitions, notifyMailboxes } = require('./citus');

// Messages read per cursor round trip by streamSources (export, legacy checks): the only ones
// held at a time, as messages can be megabytes each (knex's stream held 64).
const SOURCE_BATCH = 16;

// First key of the import jobs' advisory locks (the second is the job id): a namespace of its
// own so no other advisory lock of the store collides with them.
const IMPORT_LOCK_SPACE = 30003;

/*
 * Store queries of the import pipeline: jobs and their locks, batch writes, the index
 * upkeep after a bulk load, quarantine, the sources an export reads; what verify and the
 * `import imap` source ask about what an earlier import kept, and the refresh of flags from
 * an upstream server. Plain functions taking the store first
 * (PgStore's methods of the same names call them). As everywhere in the store,
 * every query filters on user_id and binds values; a flag change takes the mailbox row lock,
 * stamps a new modseq (RFC 7162) and queues es_outbox rows, like setFlags.
 */

/**
 * Which of the given content hashes an import kept in quarantine for a mailbox, and whether
 * the kept bytes still hash to them (PostgreSQL re-hashes: a damaged copy is caught).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} mailbox mailbox name the entry was headed for
 * @param {Buffer[]} hashes sha256 of the source entries
 * @returns {Promise<Map<string, {intact: boolean}>>} keyed by hex hash
 */
async function quarantinedHashes(store, userId, mailbox, hashes) {
  const out = new Map();
  if (!hashes.length) return out;
  const r = await store.knex.raw(
    `SELECT q.content_hash, bool_or(sha256(q.raw) = q.content_hash) AS intact
       FROM quarantine q
      WHERE q.user_id = ? AND q.mailbox IS NOT DISTINCT FROM ?
        AND q.content_hash = ANY(?::bytea[])
      GROUP BY q.content_hash`,
    [userId, mailbox, hashes],
  );
  for (const row of r.rows) out.set(row.content_hash.toString('hex'), { intact: row.intact });
  return out;
}

/**
 * Messages an `import imap` stored from one upstream folder, by upstream UID (kept in
 * message_sources.source_meta: {imapUid, imapUidValidity, folder}).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {string} folder upstream folder path
 * @param {string} uidValidity upstream UIDVALIDITY (other values: another folder generation)
 * @returns {Promise<Map<number, number>>} upstream UID → local uid (expunged but not yet
 *   purged ones included: they are not fetched again)
 */
async function importedImapUids(store, userId, mailboxId, folder, uidValidity) {
  const r = await store.knex.raw(
    `SELECT (s.source_meta->>'imapUid')::bigint AS imap_uid, s.uid
       FROM message_sources s
      WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
        AND s.source_meta->>'imapUidValidity' = ?`,
    [userId, mailboxId, folder, String(uidValidity)],
  );
  return new Map(r.rows.map((row) => [Number(row.imap_uid), Number(row.uid)]));
}

/**
 * Sizes of the live (not expunged) messages an `import imap` stored from one upstream
 * folder generation, by upstream UID: what `mailgate migrate` verifies against the upstream
 * RFC822.SIZEs.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {string} folder upstream folder path
 * @param {string} uidValidity upstream UIDVALIDITY
 * @returns {Promise<Map<number, {uid: number, size: number}>>}
 */
async function importedImapSizes(store, userId, mailboxId, folder, uidValidity) {
  const r = await store.knex.raw(
    `SELECT (s.source_meta->>'imapUid')::bigint AS imap_uid, m.uid, m.size
       FROM message_sources s
       JOIN messages m ON m.user_id = s.user_id AND m.mailbox_id = s.mailbox_id AND m.uid = s.uid
      WHERE s.user_id = ? AND s.mailbox_id = ? AND s.source_meta->>'folder' = ?
        AND s.source_meta->>'imapUidValidity' = ? AND NOT m.expunged`,
    [userId, mailboxId, folder, String(uidValidity)],
  );
  return new Map(
    r.rows.map((row) => [Number(row.imap_uid), { uid: Number(row.uid), size: row.size }]),
  );
}

/**
 * Raises a mailbox's UIDNEXT to the source's, when the mailbox still carries the source's
 * UIDVALIDITY (kept-uids.js): a uid the source already handed out (to a message since
 * expunged there) is never handed out again here (RFC 3501 2.3.1.1).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {number} uidValidity the source's
 * @param {number} uidNext the source's (0: none)
 * @param {string|number|null} [highestModseq] the source's HIGHESTMODSEQ (RFC 7162), when it
 *   has one: HIGHESTMODSEQ is raised to it too, so that a client which synced the source and
 *   resynchronises here with that modseq (CONDSTORE CHANGEDSINCE, QRESYNC) after the
 *   cutover is told about every later change (their modseqs are above it)
 * @returns {Promise<boolean>} whether the mailbox is numbered as the source
 */
async function raiseKeptUidNext(
  store,
  userId,
  mailboxId,
  uidValidity,
  uidNext,
  highestModseq = null,
) {
  // An empty source folder gives no batch to adopt its UIDVALIDITY (kept-uids.js): a mailbox
  // that never allocated a uid (no client can have seen a message of it) takes it here, so a
  // client that knew the empty folder upstream sees no UIDVALIDITY change after a migration.
  await store.knex.raw(
    `UPDATE mailboxes SET uidvalidity = ?
      WHERE id = ? AND user_id = ? AND uidnext = 1 AND uidvalidity <> ?`,
    [uidValidity, mailboxId, userId, uidValidity],
  );
  const r = await store.knex.raw(
    `UPDATE mailboxes SET uidnext = GREATEST(uidnext, ?),
            highestmodseq = GREATEST(highestmodseq, COALESCE(?::bigint, 0))
      WHERE id = ? AND user_id = ? AND uidvalidity = ? RETURNING id`,
    [uidNext, highestModseq == null ? null : String(highestModseq), mailboxId, userId, uidValidity],
  );
  // Citus: IDLE sessions are told by the store, not the dropped trigger (citus.js, point 6).
  if (r.rows.length) await notifyMailboxes(store.knex, store.knex, userId, [mailboxId]);
  return r.rows.length > 0;
}

/**
 * Sets messages' flags and keywords to the given lists (IMAP `STORE FLAGS`, not +FLAGS):
 * `import imap` refreshing flags changed upstream. Only messages whose flags differ change;
 * they get one new modseq and an es_outbox row, in one transaction under the mailbox lock.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Array<{uid: number, flags: string[], keywords: string[]}>} wanted
 * @returns {Promise<{changed: Array<{uid: number, flags: string[], keywords: string[], modseq: number}>, highestModseq: number|null}>}
 *   highestModseq: null when nothing was asked
 */
async function replaceFlags(store, userId, mailboxId, wanted) {
  if (!wanted.length) return { changed: [], highestModseq: null };
  const rows = wanted.map((w) => ({
    uid: Number(w.uid),
    flags: [...new Set(w.flags)].sort(),
    keywords: [...new Set(w.keywords)].sort(),
  }));
  return store.knex.transaction(async (trx) => {
    const mb = await lockMailbox(trx, userId, mailboxId);
    const modseq = Number(mb.highestmodseq) + 1;
    const r = await trx.raw(
      `UPDATE messages m SET flags = w.flags, keywords = w.keywords, modseq = ?
         FROM jsonb_to_recordset(?::jsonb) AS w(uid bigint, flags text[], keywords text[])
        WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = w.uid AND NOT m.expunged
          AND NOT (m.flags @> w.flags AND w.flags @> m.flags
                   AND m.keywords @> w.keywords AND w.keywords @> m.keywords)
        RETURNING m.uid, m.flags, m.keywords, m.modseq`,
      [modseq, JSON.stringify(rows), userId, mailboxId],
    );
    const changed = r.rows
      .map((c) => ({ uid: Number(c.uid), flags: c.flags, keywords: c.keywords, modseq }))
      .sort((a, b) => a.uid - b.uid);
    if (!changed.length) return { changed, highestModseq: Number(mb.highestmodseq) };
    const uids = changed.map((c) => c.uid);
    await recordChange(store, trx, userId, mailboxId, uids, modseq);
    return { changed, highestModseq: modseq };
  });
}

/**
 * Streams a mailbox's messages with raw bytes and mbox envelope data, in uid order.
 * Memory stays bounded: rows come from a server-side cursor.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @returns {NodeJS.ReadableStream} object stream of rows
 */
function streamSources(store, userId, mailboxId) {
  const sql = `SELECT m.uid, m.flags, m.keywords, m.internal_date, m.from_addr, m.source_name,
              m.content_hash, m.dup_index,
              s.raw, s.raw_codec, s.mbox_from_line, s.mbox_variant, s.mbox_trailer,
              s.mbox_original, s.source_meta
         FROM messages m
         JOIN message_sources s
           ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid
        WHERE m.user_id = $1 AND m.mailbox_id = $2 AND NOT m.expunged
        ORDER BY m.uid`;
  // A server-side cursor (cursor.js), not knex's .stream(): a connection lost mid-export
  // fails the stream and frees its pool slot instead of hanging the export for good.
  // SOURCE_BATCH rows per read are all that is held: messages can be megabytes each.
  async function* rows() {
    for await (const batch of cursorBatches(store.knex, sql, [Number(userId), Number(mailboxId)], {
      batch: SOURCE_BATCH,
    })) {
      // Callers get the message's bytes, never the stored form.
      for (const row of batch) {
        const { raw_codec: codec, ...rest } = row;
        yield { ...rest, raw: decodeRaw(row.raw, codec) };
      }
    }
  }
  // An early end of the reader (destroy, break) returns the generator: the cursor closes.
  return Readable.from(rows(), { objectMode: true, highWaterMark: 1 });
}

/**
 * Whether a packed row's bytes (raw-codec.js) still hash to its key: decoded here, the
 * stored form is not the message. A stream that no longer decodes is not intact.
 * @param {{packed: Buffer, raw_codec: number, content_hash: Buffer}} row
 * @returns {boolean}
 */
function packedIntact(row) {
  try {
    const raw = decodeRaw(row.packed, row.raw_codec);
    return crypto.createHash('sha256').update(raw).digest().equals(row.content_hash);
  } catch {
    return false;
  }
}

/**
 * Looks up which (hash, dup_index) keys of a mailbox exist, and whether the stored bytes
 * still hash to the key (verify's byte-identity check, computed by PostgreSQL).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @param {Array<{hash: Buffer, dup: number}>} keys
 * @returns {Promise<Map<string, {uid: number, intact: boolean}>>} keyed by `hex:dup`
 */
async function lookupKeys(store, userId, mailboxId, keys, { checkBytes = false } = {}) {
  const out = new Map();
  if (!keys.length) return out;
  const r = await store.knex.raw(
    `SELECT m.content_hash, m.dup_index, m.uid
            ${checkBytes ? ', s.raw_codec, CASE WHEN s.raw_codec = 0 THEN sha256(s.raw) = m.content_hash END AS intact, CASE WHEN s.raw_codec <> 0 THEN s.raw END AS packed' : ''}
       FROM messages m
       ${checkBytes ? 'JOIN message_sources s ON s.user_id = m.user_id AND s.mailbox_id = m.mailbox_id AND s.uid = m.uid' : ''}
       JOIN unnest(?::bytea[], ?::int[]) AS k(hash, dup)
         ON m.content_hash = k.hash AND m.dup_index = k.dup
      WHERE m.user_id = ? AND m.mailbox_id = ? AND NOT m.expunged`,
    [keys.map((k) => k.hash), keys.map((k) => k.dup), userId, mailboxId],
  );
  for (const row of r.rows) {
    out.set(`${row.content_hash.toString('hex')}:${row.dup_index}`, {
      uid: Number(row.uid),
      intact: checkBytes ? (row.intact ?? packedIntact(row)) : true,
    });
  }
  return out;
}

/**
 * Starts or resumes an import job; the checkpoint tells where a killed run stopped.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<{id: number, checkpoint: object|null, state: string}>}
 */
async function startJob(store, userId, kind, source, mailbox = '') {
  await store
    .knex('import_jobs')
    .insert({ user_id: userId, kind, source, mailbox })
    .onConflict(['user_id', 'kind', 'source', 'mailbox'])
    .ignore();
  const job = await store
    .knex('import_jobs')
    .where({ user_id: userId, kind, source, mailbox })
    .first();
  await store
    .knex('import_jobs')
    .where({ user_id: userId, id: job.id })
    .update({ state: 'running', updated_at: store.knex.fn.now() });
  return job;
}

/**
 * Holds an import job's lock until the returned release is called, so two runs of the same
 * import (user, kind, source, mailbox) take turns instead of writing the same batches at once
 * (issue 30.3: one of them used to fail on the idempotency key, its allocated uids lost). A
 * session-level advisory lock on a connection of its own: PostgreSQL lets it go if the
 * process dies, so a killed run never blocks the next one.
 * @param {import('./pg-store').PgStore} store
 * @param {number} jobId
 * @param {() => void} [onWait] called once, before waiting, when another run holds it
 * @returns {Promise<() => Promise<void>>} release
 */
async function lockImportJob(store, jobId, onWait) {
  const client = await store.knex.client.acquireConnection();
  const key = [IMPORT_LOCK_SPACE, Number(jobId)];
  try {
    const r = await client.query('SELECT pg_try_advisory_lock($1, $2) AS ok', key);
    if (!r.rows[0].ok) {
      if (onWait) onWait();
      await client.query('SELECT pg_advisory_lock($1, $2)', key);
    }
  } catch (err) {
    await store.knex.client.releaseConnection(client);
    throw err;
  }
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    try {
      await client.query('SELECT pg_advisory_unlock($1, $2)', key);
    } finally {
      await store.knex.client.releaseConnection(client);
    }
  };
}

/**
 * Every import_jobs statement names the user too: on Citus the job lives in its user's shard
 * (citus.js), and by id alone the statement would visit every shard.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} jobId
 * @returns {Promise<object|null>} the job's checkpoint now (after waiting for its lock)
 */
async function jobCheckpoint(store, userId, jobId) {
  const job = await store
    .knex('import_jobs')
    .where({ user_id: userId, id: jobId })
    .first('checkpoint');
  return (job && job.checkpoint) || null;
}

/**
 * Marks a job finished and clears its checkpoint (a later run re-checks everything).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} jobId
 * @param {object} stats
 */
async function finishJob(store, userId, jobId, stats) {
  await store
    .knex('import_jobs')
    .where({ user_id: userId, id: jobId })
    .update({
      state: 'done',
      checkpoint: null,
      stats: JSON.stringify(stats),
      updated_at: store.knex.fn.now(),
    });
}

/**
 * Writes one import batch in one transaction: new messages (uids allocated per mailbox),
 * quarantined entries, and the job checkpoint — so a crash at any point leaves either the
 * whole batch with its checkpoint, or neither.
 *
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{messages: Array<object>, quarantined: Array<object>, jobId?: number, checkpoint?: object}} batch
 *   messages: {mailboxId, hash, dup, row (derived columns), source (message_sources columns)}
 *   and optionally the source's numbering: {uidValidity, uid, uidNext} (kept-uids.js)
 * @returns {Promise<{imported: number, duplicates: number, quarantined: number, perMailbox: Map<number, number>, uidsNotKept: number[]}>}
 *   uidsNotKept: mailboxes whose source uids could not be kept (their UIDVALIDITY is not the source's)
 */
async function importBatch(store, userId, batch) {
  const plan = await store.prepareBatch(userId, batch);
  return store.commitBatch(userId, plan, batch);
}

/**
 * Phase 1 of a batch write, short and outside the batch transaction: finds which messages
 * are already stored and allocates uids (and a modseq) for the rest, in one atomic UPDATE
 * per mailbox. Allocating outside the long transaction lets the next batch load while store
 * one commits; a batch that then fails leaves a gap in the uids, which IMAP allows
 * (RFC 3501 2.3.1.1: strictly ascending, not contiguous).
 *
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{messages: Array<object>}} batch
 * @returns {Promise<{msgRows: object[], srcRows: object[], imapRows: object[], imported: number, duplicates: number, perMailbox: Map<number, number>}>}
 */
async function prepareBatch(store, userId, batch) {
  const plan = {
    msgRows: [],
    srcRows: [],
    imapRows: [],
    imported: 0,
    duplicates: 0,
    perMailbox: new Map(),
    uidFloors: new Map(),
    uidsNotKept: [],
  };
  for (const [mailboxId, items] of groupBy(batch.messages, (m) => m.mailboxId)) {
    const exists = await lookupIn(store.knex, userId, mailboxId, items);
    const fresh = [];
    for (const it of items) {
      const key = `${it.hash.toString('hex')}:${it.dup}`;
      if (exists.has(key)) plan.duplicates++;
      else {
        exists.add(key);
        fresh.push(it);
      }
    }
    if (!fresh.length) continue;
    // Caller-given uids (kept-uids.js): those messages keep theirs, the rest are allocated
    // at or above the source's UIDNEXT; UIDNEXT passes them in commitBatch's transaction.
    const kept = await planKeptUids(store.knex, userId, mailboxId, fresh);
    if (kept && !kept.keep) plan.uidsNotKept.push(mailboxId);
    const keep = Boolean(kept && kept.keep);
    const nAlloc = keep ? fresh.filter((it) => it.uid == null).length : fresh.length;
    const alloc = (
      await store.knex.raw(
        `UPDATE mailboxes SET uidnext = GREATEST(uidnext, ?) + ?, highestmodseq = highestmodseq + 1
          WHERE id = ? AND user_id = ? RETURNING uidnext - ? AS first, highestmodseq`,
        [keep && nAlloc ? kept.allocFrom : 0, nAlloc, mailboxId, userId, nAlloc],
      )
    ).rows[0];
    if (keep && kept.next) plan.uidFloors.set(mailboxId, kept.next);
    let next = Number(alloc.first);
    const modseq = Number(alloc.highestmodseq);
    for (const it of fresh) {
      const uid = keep && it.uid != null ? Number(it.uid) : next++;
      plan.msgRows.push({
        ...it.row,
        user_id: userId,
        mailbox_id: mailboxId,
        uid,
        modseq,
        content_hash: it.hash,
        dup_index: it.dup,
      });
      plan.srcRows.push({
        ...it.source,
        ...encodeRaw(it.source.raw),
        user_id: userId,
        mailbox_id: mailboxId,
        uid,
      });
      // The IMAP metadata the parse worker derived (none when it holds NUL: served derived).
      if (it.row.imap) {
        plan.imapRows.push({ ...it.row.imap, user_id: userId, mailbox_id: mailboxId, uid });
      }
    }
    plan.imported += fresh.length;
    plan.perMailbox.set(mailboxId, fresh.length);
  }
  return plan;
}

/**
 * Phase 2: one transaction with the new rows (COPY), quarantined entries and the job
 * checkpoint, so a crash leaves either the whole batch with its checkpoint or neither.
 * `opts.after` (the previous batch's commit) is awaited just before COMMIT: batches load
 * concurrently but commit in source order, and a failed predecessor rolls store one back,
 * so a checkpoint never claims more than is stored. The thread stage runs then too, in the
 * same transaction (thread-ops.js threadBatch): the batch's messages commit with their
 * thread ids, and only the threads they touch are read. `timings` (ms) and `threaded` tell
 * where the batch's time went (the import report's `stages`).
 *
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {Awaited<ReturnType<import('./pg-store').PgStore['prepareBatch']>>} plan
 * @param {{quarantined: Array<object>, jobId?: number, checkpoint?: object}} batch
 * @param {{after?: Promise<unknown>}} [opts]
 */
async function commitBatch(store, userId, plan, batch, opts = {}) {
  const client = await store.knex.client.acquireConnection();
  try {
    await client.query('BEGIN');
    // Bulk loads append GIN entries to the indexes' pending lists instead of merging them
    // row by row; the importer merges them with cleanGinPending() every 2 MB of mail and at
    // the end (a merge an insert set off would not hand its freed pages back for reuse).
    await client.query("SET LOCAL gin_pending_list_limit = '1GB'");
    // An OS crash may lose the last few batches, never part of one: the checkpoint commits
    // with its rows, so a resumed import redoes exactly what was lost. Saves an fsync wait
    // per batch.
    await client.query('SET LOCAL synchronous_commit = off');
    const timings = {
      copyMs: 0,
      sourcesMs: 0,
      outboxMs: 0,
      waitMs: 0,
      statsMs: 0,
      threadMs: 0,
      commitMs: 0,
    };
    let t = process.hrtime.bigint();
    const lap = (name) => {
      const now = process.hrtime.bigint();
      timings[name] += Number(now - t) / 1e6;
      t = now;
    };
    await copyRows(client, 'messages', MESSAGE_COLUMNS, plan.msgRows);
    lap('copyMs');
    await copyRows(client, 'message_sources', SOURCE_COLUMNS, plan.srcRows);
    await copyRows(client, 'message_imap', IMAP_COLUMNS, plan.imapRows || []);
    await copyRows(client, 'message_imap_lines', IMAP_LINES_COLUMNS, plan.imapRows || []);
    const db = knexLike(client);
    await threads.writeThreadKeys(db, userId, plan.msgRows);
    lap('sourcesMs');
    if (store.outbox && plan.msgRows.length) {
      // The ES mirror's outbox rows commit with the messages (packages/es/README.md).
      await client.query(
        `INSERT INTO es_outbox (user_id, mailbox_id, uid, modseq, op)
         SELECT $1, b, u, s, 'index' FROM unnest($2::int[], $3::bigint[], $4::bigint[]) AS t(b, u, s)`,
        [userId, ...['mailbox_id', 'uid', 'modseq'].map((c) => plan.msgRows.map((r) => r[c]))],
      );
    }
    for (const q of batch.quarantined) {
      // Not COPY: a re-run meets the same bad entries again, and ON CONFLICT needs INSERT.
      const row = { ...q, user_id: userId };
      await client.query(
        `INSERT INTO quarantine (${QUARANTINE_COLUMNS.join(', ')})
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (user_id, source, position, content_hash) DO NOTHING`,
        QUARANTINE_COLUMNS.map((c) => row[c]),
      );
    }
    lap('outboxMs');
    if (opts.after) await opts.after;
    lap('waitMs');
    if (await perUserPartitions(store.knex)) await statsForNewPartition(client, userId);
    lap('statsMs');
    // Thread stage, incremental: after the previous batch committed (its messages are the
    // likeliest parents), under the user's thread lock (appends and copies take it too).
    await threads.lockThreads(db, userId);
    const threaded = await threads.threadBatch(store, db, userId, plan.msgRows);
    lap('threadMs');
    for (const [mailboxId, next] of plan.uidFloors || []) {
      // Kept uids: UIDNEXT passes them with the rows, so a failed batch leaves it where it
      // was and a resumed import can still keep them (kept-uids.js). Last, after the previous
      // batch committed: the mailbox row lock is not held while waiting for it (whose thread
      // stage may need that row).
      await client.query(
        'UPDATE mailboxes SET uidnext = GREATEST(uidnext, $1) WHERE id = $2 AND user_id = $3',
        [next, mailboxId, userId],
      );
    }
    if (batch.jobId) {
      await client.query(
        'UPDATE import_jobs SET checkpoint = $1, updated_at = now() WHERE user_id = $2 AND id = $3',
        [JSON.stringify(batch.checkpoint), userId, batch.jobId],
      );
    }
    // The batch's uids and modseq were allocated by prepareBatch in a transaction of its own,
    // which moved UIDNEXT and HIGHESTMODSEQ (and NOTIFYd, by the mailboxes trigger) before
    // these rows existed: an IDLE session that looked then saw nothing new, and a list cache
    // that read the mailbox then holds it as exact at that HIGHESTMODSEQ. HIGHESTMODSEQ moves
    // again here, last (the row lock is held only to the commit), so the stamp changes when
    // the rows become visible: the trigger NOTIFYs at this commit, and a cache read in between
    // sees a new stamp (its row count then tells it to reload).
    const touched = [...new Set(plan.msgRows.map((r) => r.mailbox_id))];
    if (touched.length) {
      await client.query(
        `UPDATE mailboxes SET highestmodseq = highestmodseq + 1
          WHERE user_id = $1 AND id = ANY($2::int[])`,
        [userId, touched],
      );
    }
    // Citus: IDLE sessions are told by the store, not the dropped trigger (citus.js, point 6),
    // when the batch's messages become visible.
    await notifyMailboxes(store.knex, client, userId, touched);
    await client.query('COMMIT');
    lap('commitMs');
    return {
      timings,
      threaded,
      imported: plan.imported,
      duplicates: plan.duplicates,
      quarantined: batch.quarantined.length,
      perMailbox: plan.perMailbox,
      uidsNotKept: plan.uidsNotKept || [],
    };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    // Another writer (an import of another source holding the same mail, outside store job's
    // lock) stored one of these messages between prepareBatch and here: a coded answer, not
    // the constraint's text; a re-run finds those messages present.
    if (err.code === '23505' && /^messages_/.test(err.constraint || '')) {
      throw new errors.IMPORT_CONFLICT(await store.mailboxNamesOf(userId, plan));
    }
    throw err;
  } finally {
    await store.knex.client.releaseConnection(client);
  }
}

/**
 * @param {import('./pg-store').PgStore} store
 */
async function mailboxNamesOf(store, userId, plan) {
  const ids = [...new Set(plan.msgRows.map((r) => r.mailbox_id))];
  const rows = await store
    .knex('mailboxes')
    .where({ user_id: userId })
    .whereIn('id', ids)
    .select('name')
    .catch(() => []);
  return rows.map((r) => r.name).join(', ') || 'a mailbox';
}

/**
 * Merges the pending lists of a user's GIN indexes (after a bulk import), two indexes at a
 * time so both cores work. Searches are fast again afterwards. `workers: 1`: one index after
 * the other, on one connection; `tables`: only the indexes of these tables' partitions
 * (`messages`, `message_words`, `message_chunks`): the service's background upkeep after new
 * mail, beside live deliveries.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{workers?: number, tables?: string[]}} [opts]
 * @returns {Promise<number>} pending-list pages merged
 */
async function cleanGinPending(store, userId, opts = {}) {
  const only = opts.tables ? new RegExp(`^(${opts.tables.join('|')})_u\\d+$`) : null;
  const queue = (await store.ginIndexes(userId))
    .filter((x) => !only || only.test(x.tbl))
    .map((x) => x.name);
  let pages = 0;
  const worker = async () => {
    while (queue.length) {
      const name = queue.shift();
      const r = await store.knex.raw('SELECT gin_clean_pending_list(?::regclass) AS n', [name]);
      pages += Number(r.rows[0].n);
    }
  };
  await Promise.all(Array.from({ length: opts.workers || 2 }, worker));
  return pages;
}

/**
 * Rebuilds a user's GIN indexes, each in one pass over its table (REINDEX CONCURRENTLY:
 * searches and writes go on meanwhile). After a bulk import into an empty partition (the
 * importer's call): an index grown by merging pending lists batch after batch is 2-8 times the
 * size of one built in one pass (issue 30.6: the Enron set's trigram index 236 MB merged every
 * 2 MB of mail, 128 MB built). Two tables at a time, so both cores work; the indexes of one
 * table one after the other (a REINDEX CONCURRENTLY locks its table against another).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 */
async function rebuildGinIndexes(store, userId) {
  const byTable = new Map();
  for (const x of await store.ginIndexes(userId)) {
    if (!byTable.has(x.tbl)) byTable.set(x.tbl, []);
    byTable.get(x.tbl).push(x.name);
  }
  const queue = [...byTable.values()];
  const worker = async () => {
    while (queue.length) {
      // Catalog names as regclass prints them (quoted where needed): no user input here.
      for (const name of queue.shift()) await store.knex.raw(`REINDEX INDEX CONCURRENTLY ${name}`);
    }
  };
  await Promise.all([worker(), worker()]);
}

/**
 * @param {import('./pg-store').PgStore} store
 */
async function ginIndexes(store, userId) {
  // Citus (citus.js): no per-user partitions; the shards' indexes are the workers' to keep.
  if (!(await perUserPartitions(store.knex))) return [];
  const r = await store.knex.raw(
    `SELECT c.oid::regclass::text AS name, x.indrelid::regclass::text AS tbl
       FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_index x ON x.indexrelid = c.oid
       JOIN pg_am a ON a.oid = c.relam
      WHERE a.amname = 'gin' AND c.relname LIKE ANY(?::text[])
      ORDER BY pg_relation_size(c.oid) DESC`,
    [
      [
        `messages\\_u${Number(userId)}\\_%`,
        `message\\_words\\_u${Number(userId)}\\_%`,
        `message\\_vocab\\_u${Number(userId)}\\_%`,
        `message\\_chunks\\_u${Number(userId)}\\_%`,
      ],
    ],
  );
  return r.rows;
}

/**
 * Whether a user has no message rows at all (the importer's test for a bulk import).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<boolean>}
 */
async function userHasNoMail(store, userId) {
  const r = await store.knex.raw('SELECT 1 FROM messages WHERE user_id = ? LIMIT 1', [userId]);
  return r.rows.length === 0;
}

/**
 * Writes the list view's snapshot of a mailbox now (list-cache.js writeSnapshot): the
 * importer's last step, so that the first open after an import reads one row. No-op without
 * a list view cache, or for a mailbox over its budget.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} mailboxId
 * @returns {Promise<boolean>} whether a snapshot was written
 */
async function writeListSnapshot(store, userId, mailboxId) {
  if (!store.listViewCache) return false;
  return store.listViewCache.writeSnapshot(store.knex, userId, mailboxId);
}

/**
 * Quarantined entries of a user (newest first).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{source?: string, limit?: number}} [opts]
 */
async function listQuarantine(store, userId, opts = {}) {
  const q = store
    .knex('quarantine')
    .select('id', 'mailbox', 'source', 'position', 'reason', 'detail', 'created_at')
    .select(store.knex.raw('length(raw) AS size'))
    .where({ user_id: userId })
    .orderBy('id', 'desc')
    .limit(opts.limit || 1000);
  if (opts.source) q.andWhere({ source: opts.source });
  return q;
}

/**
 * The exact bytes an import kept in quarantine (one of listQuarantine's ids, of store user).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {number} id
 * @returns {Promise<Buffer>} QUARANTINE_NOT_FOUND when the user has no such entry
 */
async function quarantineRaw(store, userId, id) {
  const row = await store.knex('quarantine').select('raw').where({ user_id: userId, id }).first();
  if (!row) throw new errors.QUARANTINE_NOT_FOUND(String(id));
  return row.raw;
}

/**
 * Every quarantine entry of a user, oldest first, without the bytes: what an export reports
 * as not written (and fetches one by one with quarantineRaw when it writes them).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<Array<{id: number, mailbox: string|null, position: string, createdAt: Date}>>}
 */
async function quarantineEntries(store, userId) {
  const rows = await store
    .knex('quarantine')
    .select('id', 'mailbox', 'position', 'created_at')
    .where({ user_id: userId })
    .orderBy('id');
  return rows.map((r) => ({
    id: Number(r.id),
    mailbox: r.mailbox,
    position: r.position,
    createdAt: r.created_at,
  }));
}

/**
 * The sources (absolute paths, or imap:// for IMAP) every import job of every user read:
 * what an export must never write over or into.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<string[]>}
 */
async function importSources(store) {
  const rows = await store.knex('import_jobs').distinct('source');
  return rows.map((r) => r.source);
}

function knexLike(client) {
  return {
    raw(sql, bindings = []) {
      let n = 0;
      return client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        bindings,
      );
    },
  };
}

async function lookupIn(knex, userId, mailboxId, items) {
  const r = await knex.raw(
    `SELECT m.content_hash, m.dup_index FROM messages m
       JOIN unnest(?::bytea[], ?::int[]) AS k(hash, dup)
         ON m.content_hash = k.hash AND m.dup_index = k.dup
      WHERE m.user_id = ? AND m.mailbox_id = ?`,
    [items.map((i) => i.hash), items.map((i) => i.dup), userId, mailboxId],
  );
  return new Set(r.rows.map((x) => `${x.content_hash.toString('hex')}:${x.dup_index}`));
}

/**
 * Gives a user's message partition planner statistics when it has none (never analyzed: a
 * new user's first import batch). Without them PostgreSQL takes the partition for a few rows
 * whatever it holds and plans the thread stage's lookups by (mailbox, uid) as scans of the
 * whole mailbox, per batch or per looked-up message. Only the key columns: a few ms. Runs in
 * the batch's transaction after the previous batch committed (its rows count, and no two
 * batches analyze at once).
 * @param {{query: Function}} client
 * @param {number} userId
 */
async function statsForNewPartition(client, userId) {
  const id = Number(userId);
  if (!Number.isInteger(id) || id <= 0) throw new Error('invalid user id');
  // Statistics rows, not pg_class.reltuples: ANALYZE in a transaction that rolls back (a
  // failed or killed first batch) keeps its reltuples but loses its pg_statistic rows, and
  // the partition would then never get statistics before the end of the import.
  const r = await client.query(
    // pg_stats, not pg_statistic: readable by a DATABASE_URL role that is not a superuser.
    `SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_stats s ON s.schemaname = n.nspname AND s.tablename = c.relname
      WHERE c.oid = $1::regclass LIMIT 1`,
    [`messages_u${id}`],
  );
  if (!r.rows.length) {
    await client.query(`ANALYZE messages_u${id} (user_id, mailbox_id, uid)`);
  }
}

function groupBy(items, fn) {
  const m = new Map();
  for (const it of items) {
    const k = fn(it);
    if (!m.has(k)) m.set(k, []);
    m.get(k).push(it);
  }
  return m;
}

module.exports = {
  streamSources,
  lookupKeys,
  startJob,
  lockImportJob,
  jobCheckpoint,
  finishJob,
  importBatch,
  prepareBatch,
  commitBatch,
  mailboxNamesOf,
  cleanGinPending,
  rebuildGinIndexes,
  ginIndexes,
  userHasNoMail,
  writeListSnapshot,
  listQuarantine,
  quarantineRaw,
  quarantineEntries,
  importSources,
  quarantinedHashes,
  importedImapUids,
  importedImapSizes,
  raiseKeptUidNext,
  replaceFlags,
};
