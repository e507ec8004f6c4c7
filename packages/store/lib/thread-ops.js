'use strict';

const crypto = require('node:crypto');
const { errors } = require('@mailgate/core');
const { HEADER_COLUMNS, headerRow } = require('./header-row');
const { lockMailbox, recordChange } = require('./mail-ops');

/*
 * Threads (webmail, issue 14): the thread id of every message, computed as it is stored (import
 * batch, APPEND, COPY without a Message-ID) by the linking of jwz's threading algorithm (https://www.jwz.org/doc/threading.html): a message
 * joins the messages its References / In-Reply-To name (also through ids no stored message
 * has: two replies to a missing parent share its thread), then root sets with the same base
 * subject merge when one of them is a reply ("Re: …"), jwz's subject step. Owns the
 * `thread_id` column and the `thread_keys` lookup table (migrations/20261123172305_thread_keys.js);
 * never touches flags, so its updates are rare (merges only). Thread ids are assigned when
 * messages arrive; an expunge leaves the others' ids as they are.
 */

const REPLY = /^((re|fwd?|aw|sv)(\[\d+\])?\s*:\s*)+/i;

/** Subject without reply/forward prefixes, lower-cased (RFC 5256 base subject, simplified). */
function baseSubject(subject) {
  return String(subject || '')
    .replace(REPLY, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

const normId = (id) => (id ? String(id).trim().replace(/^<|>$/g, '').toLowerCase() || null : null);

/**
 * Groups messages into threads (pure: the algorithm, tested without a database).
 * Deterministic: the answer depends on the set of messages, not on their order, so the thread
 * stage can recompute only the part of a user's mail that new messages touch (threadBatch)
 * and get what a computation over all of it would give. Copies of one message (the same
 * Message-ID in two folders, an IMAP COPY) share their thread.
 * @param {Array<{key: string, messageId?: string|null, inReplyTo?: string|null, refs?: string[],
 *   subject?: string|null, date?: string|Date|null}>} msgs `key` identifies a message
 * @returns {Map<string, string>} message key → thread id (16 hex digits, stable while the
 *   thread's root stays the same)
 */
function threadIds(msgs) {
  const { comps, union, find, time } = linkComponents(msgs);
  // jwz step 5: root sets with the same base subject merge when one is a reply; root sets are
  // taken oldest root first, so the first of a base subject is the same whatever the order.
  const bySubject = new Map();
  for (const c of comps) {
    const base = baseSubject(c.root.subject);
    if (!base) continue;
    const isReply = REPLY.test(String(c.root.subject || '').trim());
    const seen = bySubject.get(base);
    if (!seen) bySubject.set(base, { r: c.node, isReply });
    else if (isReply || seen.isReply) {
      union(seen.r, c.node);
      if (!isReply) seen.isReply = false;
    }
  }
  const members = new Map();
  for (const m of msgs) {
    const r = find(m.node);
    if (!members.has(r)) members.set(r, []);
    members.get(r).push(m);
  }
  const out = new Map();
  for (const list of members.values()) {
    const root = rootOf(list, time);
    const id = crypto.createHash('sha256').update(rootKey(root)).digest('hex').slice(0, 16);
    for (const m of list) out.set(m.key, id);
  }
  return out;
}

/** The thread id's seed: the root's Message-ID, or the message itself when it has none. */
function rootKey(m) {
  return normId(m.messageId) || `msg:${m.key}`;
}

const byTimeThenKey = (time) => (a, b) =>
  time(a) - time(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

function rootOf(list, time) {
  return list.reduce((a, b) => (byTimeThenKey(time)(b, a) < 0 ? b : a));
}

/**
 * jwz's linking step: messages joined through Message-ID, References and In-Reply-To (also
 * through ids no stored message has). Sets `m.node` on every message.
 * @returns {{comps: Array<{node: string, root: object, members: object[]}>, union: Function,
 *   find: Function, time: (m: object) => number}} comps oldest root first
 */
function linkComponents(msgs) {
  const parent = new Map();
  const find = (x) => {
    let r = x;
    while (parent.get(r) !== r) r = parent.get(r);
    let y = x;
    while (parent.get(y) !== r) {
      const n = parent.get(y);
      parent.set(y, r);
      y = n;
    }
    return r;
  };
  const add = (x) => {
    if (!parent.has(x)) parent.set(x, x);
  };
  const union = (a, b) => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent.set(rb, ra);
  };
  const times = new Map();
  for (const m of msgs) {
    const own = normId(m.messageId);
    m.node = own ? `id:${own}` : `msg:${m.key}`;
    add(m.node);
    const t = m.date ? new Date(m.date).getTime() : NaN;
    times.set(m, Number.isNaN(t) ? Infinity : t);
  }
  const time = (m) => times.get(m);
  for (const m of msgs) {
    for (const r of refIds(m)) {
      add(`id:${r}`);
      union(`id:${r}`, m.node);
    }
  }
  const groups = new Map();
  for (const m of msgs) {
    const r = find(m.node);
    if (!groups.has(r)) groups.set(r, []);
    groups.get(r).push(m);
  }
  const order = byTimeThenKey(time);
  const comps = [...groups].map(([node, members]) => ({
    node,
    members,
    root: rootOf(members, time),
  }));
  comps.sort((a, b) => order(a.root, b.root));
  return { comps, union, find, time };
}

/** The ids a message links through (its own, References, In-Reply-To), normalised. */
function linkIds(m) {
  return [...new Set([normId(m.messageId), ...refIds(m)].filter(Boolean))];
}

/** The ids a message refers to, normalised (memoised: the stage links the same rows often). */
function refIds(m) {
  if (!m.refIds) m.refIds = [...(m.refs || []), m.inReplyTo].map(normId).filter(Boolean);
  return m.refIds;
}

// thread_keys.key: 16 bytes of sha256 over a kind and a value, so any id or subject (a hostile
// 3.5 MB Subject included) fits a btree entry.
const keyOf = (kind, value) =>
  crypto
    .createHash('sha256')
    .update(kind + value)
    .digest()
    .subarray(0, 16);
/** A message's id keys (memoised on the message: the stage asks several times). */
function idKeys(m) {
  if (!m.idKeys) m.idKeys = linkIds(m).map((id) => keyOf('i:', id));
  return m.idKeys;
}

const THREAD_COLUMNS = `m.mailbox_id, m.uid, m.message_id, m.in_reply_to, m.refs, m.subject,
       coalesce(m.date, m.internal_date) AS d, m.thread_id`;

function threadMsg(x) {
  return {
    key: `${x.mailbox_id}/${x.uid}`,
    mailboxId: Number(x.mailbox_id),
    uid: Number(x.uid),
    messageId: x.message_id,
    inReplyTo: x.in_reply_to,
    refs: x.refs,
    subject: x.subject,
    date: x.d,
    old: x.thread_id,
  };
}

/** Thread messages by mailbox id, in the order they come. */
function byMailbox(msgs) {
  const out = new Map();
  for (const m of msgs) {
    if (!out.has(m.mailboxId)) out.set(m.mailboxId, []);
    out.get(m.mailboxId).push(m);
  }
  return out;
}

/**
 * Live messages holding any of the keys (a message holding several comes once per key).
 * The keys are looked up first and each message by its primary key, whatever the statistics
 * say: during an import the user's partition is not analyzed yet (the planner takes it for
 * one row), and a plain join was planned with messages outside and the key lookup repeated
 * per message (81 ms for 750 messages × 190 keys; the lateral subquery with OFFSET 0 is not
 * flattened, so it stays the inner side).
 */
async function messagesByKeys(db, userId, keys) {
  if (!keys.length) return [];
  return (await taggedByKeys(db, userId, keys)).map((x) => x.msg);
}

/** messagesByKeys with the key each message was found by (`via`, hex). */
const TAGGED_BY_KEYS = `SELECT k.key AS via, x.* FROM thread_keys k
      CROSS JOIN LATERAL (
        SELECT ${THREAD_COLUMNS} FROM messages m
         WHERE m.user_id = ? AND m.mailbox_id = k.mailbox_id AND m.uid = k.uid AND NOT m.expunged
        OFFSET 0) x
      WHERE k.user_id = ? AND k.key = ANY(?::bytea[])`;

async function taggedByKeys(db, userId, keys) {
  const r = await db.raw(TAGGED_BY_KEYS, [userId, userId, keys]);
  return r.rows.map((x) => ({ via: x.via.toString('hex'), msg: threadMsg(x) }));
}

/**
 * Adds to `known` every message linked (transitively, through ids) to the given keys: whole
 * link components, one query per step of distance.
 */
async function expandLinks(db, userId, keys, known, asked, prefetch) {
  let frontier = keys.filter((k) => !asked.has(k.toString('hex')));
  // Subject keys read with the first step (planThreads): their messages are kept apart, not
  // followed as links.
  let extra = prefetch ? prefetch.keys : [];
  while (frontier.length || extra.length) {
    for (const k of frontier) asked.add(k.toString('hex'));
    const next = new Map();
    const found = await taggedByKeys(db, userId, [...frontier, ...extra]);
    if (extra.length) {
      for (const k of extra) prefetch.found.set(k.toString('hex'), []);
      extra = [];
    }
    for (const { via, msg: m } of found) {
      const aside = prefetch && prefetch.found.get(via);
      if (aside) {
        aside.push(m);
        continue;
      }
      if (known.has(m.key)) continue;
      known.set(m.key, m);
      for (const k of idKeys(m)) {
        const hex = k.toString('hex');
        if (!asked.has(hex)) next.set(hex, k);
      }
    }
    frontier = [...next.values()];
  }
}

/** Serialises the thread stage of one user (imports, appends, copies): each sees the last. */
async function lockThreads(db, userId) {
  await db.raw('SELECT pg_advisory_xact_lock(?, ?)', [THREAD_LOCK, userId]);
}
// pg_advisory_xact_lock(int, int) namespace of the thread stage ('thrd').
const THREAD_LOCK = 0x74687264;

/**
 * Records the id keys of messages just written (same transaction); threadBatch adds the
 * subject keys of those that are roots.
 * @param {{raw: Function}} db knex transaction or an adapter with knex's raw(sql, bindings)
 * @param {number} userId
 * @param {Array<{mailbox_id: number, uid: number, message_id?: string, in_reply_to?: string,
 *   refs?: string[], subject?: string}>} rows
 */
async function writeThreadKeys(db, userId, rows) {
  const keys = [];
  const boxes = [];
  const uids = [];
  for (const row of rows) {
    for (const k of idKeys({
      messageId: row.message_id,
      inReplyTo: row.in_reply_to,
      refs: row.refs,
    })) {
      keys.push(k);
      boxes.push(row.mailbox_id);
      uids.push(row.uid);
    }
  }
  if (!keys.length) return;
  await db.raw(
    `INSERT INTO thread_keys (user_id, key, mailbox_id, uid)
     SELECT ?, k, b, u FROM unnest(?::bytea[], ?::int[], ?::bigint[]) AS t(k, b, u)`,
    [userId, keys, boxes, uids],
  );
}

/**
 * The incremental thread stage: thread ids for messages just written (their keys recorded,
 * same transaction, the thread lock held), recomputing only what they touch — their link
 * components (through keyed lookups of ids) and the root sets of every base subject whose
 * grouping they may change — so its memory and time follow the batch and the threads it
 * touches, never the whole mailbox. Gives the ids threadIds() gives over all the user's live
 * messages (packages/store/test/threads-incremental.test.js): messages outside that closure keep their
 * component and root, and no base subject of theirs changes its root sets.
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<{closure: number, assigned: number, merged: number}>}
 */
async function threadBatch(store, db, userId, rows) {
  if (!rows.length) return { closure: 0, assigned: 0, merged: 0 };
  const plan = await planThreads(db, userId, rows, { stored: true });
  await writeRootKeys(db, userId, plan.after, plan.before);
  await writeThreadIds(store, db, userId, plan.changed, plan.ids);
  return plan.counts;
}

/**
 * threadBatch for messages not written yet (the append path, store append-ops.js): the same
 * reads and the same answer, with the new messages taken from `rows` instead of the table, so
 * that their thread ids and keys go into the one statement that inserts them. Writes only what
 * concerns older messages (a merge's new ids, a root that lost its subject key: both rare).
 * @param {import('./pg-store').PgStore} store
 * @returns {Promise<{ids: Map<string, string>, keys: {keys: Buffer[], boxes: number[], uids: number[]}}>}
 *   ids: `mailbox_id/uid` → thread id of each new message; keys: the thread_keys rows to add
 *   (the new messages' id keys, every touched root's subject key; the insert skips those there)
 */
async function threadFresh(store, db, userId, rows) {
  const plan = await planThreads(db, userId, rows, { stored: false });
  const fresh = new Set(rows.map((r) => `${r.mailbox_id}/${r.uid}`));
  const gone = rootKeyRows(goneRoots(plan.after, plan.before));
  if (gone.keys.length) await deleteRootKeys(db, userId, gone);
  const older = plan.changed.filter((m) => !fresh.has(m.key));
  await writeThreadIds(store, db, userId, older, plan.ids);
  const keys = { keys: [], boxes: [], uids: [] };
  for (const row of rows) {
    for (const k of idKeys(row.thread)) {
      keys.keys.push(k);
      keys.boxes.push(row.mailbox_id);
      keys.uids.push(row.uid);
    }
  }
  const roots = rootKeyRows(plan.after.comps.map((c) => c.root));
  keys.keys.push(...roots.keys);
  keys.boxes.push(...roots.boxes);
  keys.uids.push(...roots.uids);
  const ids = new Map([...fresh].map((k) => [k, plan.ids.get(k)]));
  return { ids, keys };
}

/**
 * The first statement threadFresh sends for these rows (its first link step: their id keys and
 * their base subjects' keys), or null when it sends none. The append path sends it early, with
 * its allocating statement (append-ops.js: one round trip less a delivery); it needs only the
 * rows' header columns, not their uids. planThreads below reads exactly this first.
 * @param {number} userId
 * @param {Array<{message_id?: string, in_reply_to?: string, refs?: string[], subject?: string}>} rows
 * @returns {{sql: string, bindings: any[]}|null}
 */
function freshFirstRead(userId, rows) {
  const seeds = rows.flatMap((r) =>
    idKeys({ messageId: r.message_id, inReplyTo: r.in_reply_to, refs: r.refs }),
  );
  const subjects = [...new Set(rows.map((r) => baseSubject(r.subject)))]
    .filter(Boolean)
    .map((b) => keyOf('s:', b));
  const keys = [...seeds, ...subjects];
  return keys.length ? { sql: TAGGED_BY_KEYS, bindings: [userId, userId, keys] } : null;
}

/**
 * The thread stage's reads and its computation (see threadBatch): the closure of what the new
 * messages touch, its thread ids, and which messages' ids change. `stored`: the new messages
 * and their id keys are in the tables already (threadBatch); otherwise they are only in `rows`
 * (threadFresh), and are added to what the reads find.
 */
async function planThreads(db, userId, rows, { stored }) {
  const fresh = new Set(rows.map((r) => `${r.mailbox_id}/${r.uid}`));
  const known = new Map();
  const asked = new Set();
  const seeds = rows.flatMap((r) =>
    idKeys({ messageId: r.message_id, inReplyTo: r.in_reply_to, refs: r.refs }),
  );
  if (!stored) {
    // The new messages, as the reads below would have found them (no thread id yet).
    for (const r of rows) {
      const m = freshMsg(r);
      r.thread = m;
      known.set(m.key, m);
    }
  }
  // The new messages' own base subjects are the usual subject step's keys (a new message is
  // mostly its own component's root, or a reply with its root's base subject): read with the
  // first link step, they save the subject step its round trip (issue 32: a delivery's
  // statements). Only for appends (not stored): an import's batch has other roots.
  const prefetch = stored
    ? null
    : {
        keys: [...new Set(rows.map((r) => baseSubject(r.subject)))]
          .filter(Boolean)
          .map((b) => keyOf('s:', b)),
        found: new Map(),
      };
  await expandLinks(db, userId, seeds, known, asked, prefetch);
  // Messages without any id are found by their own row.
  const missing = rows.filter((r) => !known.has(`${r.mailbox_id}/${r.uid}`));
  if (missing.length) {
    const r = await db.raw(
      `SELECT ${THREAD_COLUMNS} FROM messages m
         JOIN unnest(?::int[], ?::bigint[]) AS v(b, u) ON m.mailbox_id = v.b AND m.uid = v.u
        WHERE m.user_id = ?`,
      [missing.map((x) => x.mailbox_id), missing.map((x) => x.uid), userId],
    );
    for (const m of r.rows.map(threadMsg)) known.set(m.key, m);
  }
  const touched = new Set(known.keys());
  // Base subjects whose root sets may change: the roots of the touched components after and
  // before the new messages joined them.
  const bases = new Set();
  for (const c of linkComponents([...known.values()]).comps) bases.add(baseSubject(c.root.subject));
  const before = [...known.values()].filter((m) => !fresh.has(m.key));
  for (const c of linkComponents(before).comps) bases.add(baseSubject(c.root.subject));
  bases.delete('');
  if (bases.size) {
    const subjectKeys = [...bases].map((b) => keyOf('s:', b));
    for (const k of subjectKeys) asked.add(k.toString('hex'));
    const read = prefetch ? prefetch.found : new Map();
    const unread = subjectKeys.filter((k) => !read.has(k.toString('hex')));
    const others = [
      ...subjectKeys.flatMap((k) => read.get(k.toString('hex')) || []),
      ...(await messagesByKeys(db, userId, unread)),
    ].filter((m) => !known.has(m.key));
    for (const m of others) known.set(m.key, m);
    await expandLinks(db, userId, others.flatMap(idKeys), known, asked);
  }
  const closure = linkComponents([...known.values()])
    .comps.filter(
      (c) => c.members.some((m) => touched.has(m.key)) || bases.has(baseSubject(c.root.subject)),
    )
    .flatMap((c) => c.members);
  const after = linkComponents([...touched].map((k) => known.get(k)));
  const ids = threadIds(closure);
  const changed = closure.filter((m) => m.old !== ids.get(m.key));
  return {
    after,
    before,
    ids,
    changed,
    counts: {
      closure: closure.length,
      assigned: changed.filter((m) => m.old == null).length,
      merged: changed.filter((m) => m.old != null).length,
    },
  };
}

/** A message about to be stored, in the shape the thread reads give (threadMsg). */
function freshMsg(r) {
  return {
    key: `${r.mailbox_id}/${r.uid}`,
    mailboxId: Number(r.mailbox_id),
    uid: Number(r.uid),
    messageId: r.message_id,
    inReplyTo: r.in_reply_to,
    refs: r.refs,
    subject: r.subject,
    date: r.date || r.internal_date,
    old: null,
  };
}

/**
 * Keeps the subject keys on roots: after the batch, every link component's root holds the key
 * of its base subject, so the subject step reads the root sets of a base subject, not every
 * reply that shares it. A new message that is a root gets one; an old root that is no longer
 * one loses it. (Keys on non-roots, as the migration wrote them, only make that read larger:
 * components are filtered by their root.) A root left by an expunge gets its key when a later
 * message touches its component.
 * @param {{comps: Array<{root: object}>}} after the touched components, new messages in
 * @param {object[]} before the touched old messages
 */
async function writeRootKeys(db, userId, after, before) {
  const del = rootKeyRows(goneRoots(after, before));
  if (del.keys.length) await deleteRootKeys(db, userId, del);
  // Every touched root, not only new messages: a root can also be a copy, or the next oldest
  // after an expunge; the insert skips keys already there.
  const add = rootKeyRows(after.comps.map((c) => c.root));
  if (add.keys.length) {
    // One index probe per key (OFFSET 0 keeps the subquery a subplan): as a join, a new
    // user's keys (not in thread_keys' statistics yet) were read whole into a hash per batch.
    await db.raw(
      `INSERT INTO thread_keys (user_id, key, mailbox_id, uid)
       SELECT ?, v.k, v.b, v.u FROM unnest(?::bytea[], ?::int[], ?::bigint[]) AS v(k, b, u)
        WHERE NOT EXISTS (SELECT 1 FROM thread_keys t WHERE t.user_id = ? AND t.key = v.k
                             AND t.mailbox_id = v.b AND t.uid = v.u OFFSET 0)`,
      [userId, add.keys, add.boxes, add.uids, userId],
    );
  }
}

/** Old roots that are no longer one after the batch. */
function goneRoots(after, before) {
  const roots = new Set(after.comps.map((c) => c.root));
  return linkComponents(before)
    .comps.map((c) => c.root)
    .filter((m) => !roots.has(m));
}

/** The subject-key rows of the given roots (roots without a base subject have none). */
function rootKeyRows(list) {
  const out = { keys: [], boxes: [], uids: [] };
  for (const m of list) {
    const base = baseSubject(m.subject);
    if (!base) continue;
    out.keys.push(keyOf('s:', base));
    out.boxes.push(m.mailboxId);
    out.uids.push(m.uid);
  }
  return out;
}

async function deleteRootKeys(db, userId, del) {
  await db.raw(
    `DELETE FROM thread_keys t USING unnest(?::bytea[], ?::int[], ?::bigint[]) AS v(k, b, u)
      WHERE t.user_id = ? AND t.key = v.k AND t.mailbox_id = v.b AND t.uid = v.u`,
    [del.keys, del.boxes, del.uids, userId],
  );
}

/**
 * Writes changed thread ids. A first thread id (new mail) is not a change of the message: no
 * modseq, no outbox row (the mirror holds no thread id). A merge changes an id clients may
 * have seen: it is stamped with a new modseq and queued, like every change, under the
 * mailbox row lock (mailboxes in id order).
 * @param {import('./pg-store').PgStore} store
 */
async function writeThreadIds(store, db, userId, changed, ids) {
  const first = changed.filter((m) => m.old == null);
  if (first.length) {
    await db.raw(
      `UPDATE messages m SET thread_id = v.t
         FROM unnest(?::int[], ?::bigint[], ?::text[]) AS v(b, u, t)
        WHERE m.user_id = ? AND m.mailbox_id = v.b AND m.uid = v.u`,
      [
        first.map((m) => m.mailboxId),
        first.map((m) => m.uid),
        first.map((m) => ids.get(m.key)),
        userId,
      ],
    );
  }
  const merged = byMailbox(changed.filter((x) => x.old != null));
  for (const mailboxId of [...merged.keys()].sort((a, b) => a - b)) {
    const list = merged.get(mailboxId);
    const uids = list.map((m) => m.uid);
    const mb = await lockMailbox(db, userId, mailboxId);
    const modseq = Number(mb.highestmodseq) + 1;
    await db.raw(
      `UPDATE messages m SET thread_id = v.t, modseq = ?
         FROM unnest(?::bigint[], ?::text[]) AS v(u, t)
        WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = v.u`,
      [modseq, uids, list.map((m) => ids.get(m.key)), userId, mailboxId],
    );
    await recordChange(store, db, userId, mailboxId, uids, modseq);
  }
}

/**
 * (Re)computes the thread id of all the user's messages; writes only the ones that changed.
 * A repair and the reference of the incremental stage: imports, appends and copies thread
 * their own messages as they store them (threadBatch), reading only what those touch. This
 * reads every live message of the user: memory grows with the user.
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @returns {Promise<{messages: number, updated: number}>}
 */
async function assignThreads(store, userId) {
  const r = await store.knex.raw(
    `SELECT ${THREAD_COLUMNS} FROM messages m WHERE m.user_id = ? AND NOT m.expunged`,
    [userId],
  );
  const msgs = r.rows.map(threadMsg);
  const ids = threadIds(msgs);
  const changed = msgs.filter((m) => m.old !== ids.get(m.key));
  for (const [mailboxId, list] of byMailbox(changed)) {
    for (let i = 0; i < list.length; i += 5000) {
      const part = list.slice(i, i + 5000);
      // A first thread id (new mail) is not a change of the message: no modseq, no outbox
      // row (the mirror holds no thread id). A merge changes an id clients may have seen: it
      // is stamped with a new modseq and queued, like every change. Either way the mailbox's
      // HIGHESTMODSEQ moves, so a reader keyed on it (the list cache) looks again.
      const mergedUids = part.filter((m) => m.old != null).map((m) => m.uid);
      await store.knex.transaction(async (trx) => {
        const mb = await lockMailbox(trx, userId, mailboxId);
        const modseq = Number(mb.highestmodseq) + 1;
        await trx.raw(
          `UPDATE messages m SET thread_id = v.t,
                  modseq = CASE WHEN v.merged THEN ? ELSE m.modseq END
             FROM unnest(?::bigint[], ?::text[], ?::boolean[]) AS v(uid, t, merged)
            WHERE m.user_id = ? AND m.mailbox_id = ? AND m.uid = v.uid`,
          [
            modseq,
            part.map((m) => m.uid),
            part.map((m) => ids.get(m.key)),
            part.map((m) => m.old != null),
            userId,
            mailboxId,
          ],
        );
        await recordChange(store, trx, userId, mailboxId, mergedUids, modseq);
      });
    }
  }
  return { messages: msgs.length, updated: changed.length };
}

/**
 * Threads of a user (optionally those with a message in one mailbox), newest activity
 * first, keyset-paged on (last date, thread id).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {{mailboxId?: number, limit?: number, after?: {d: string, t: string}}} [opts]
 * @returns {Promise<{threads: Array<{threadId: string, subject: string|null, messages: number,
 *   unseen: number, lastDate: string|null, from: string[]}>, next: {d: string, t: string}|null}>}
 */
async function listThreads(store, userId, opts = {}) {
  const limit = opts.limit || 50;
  const thread = "coalesce(m.thread_id, m.mailbox_id || '/' || m.uid)";
  const inMailbox =
    opts.mailboxId != null
      ? `AND ${thread} IN (SELECT coalesce(x.thread_id, x.mailbox_id || '/' || x.uid)
           FROM messages x WHERE x.user_id = ? AND x.mailbox_id = ? AND NOT x.expunged)`
      : '';
  const r = await store.knex.raw(
    `SELECT * FROM (
       SELECT ${thread} AS t,
              (array_agg(m.subject ORDER BY coalesce(m.date, m.internal_date), m.uid))[1] AS subject,
              count(*)::int AS n,
              (count(*) FILTER (WHERE NOT ('\\Seen' = ANY(m.flags))))::int AS unseen,
              max(coalesce(m.date, m.internal_date)) AS last,
              (array_agg(DISTINCT coalesce(nullif(m.from_name, ''), m.from_addr)))[1:5] AS senders
         FROM messages m
        WHERE m.user_id = ? AND NOT m.expunged ${inMailbox}
        GROUP BY 1) g
      WHERE ?::timestamptz IS NULL OR (g.last, g.t) < (?::timestamptz, ?::text)
      ORDER BY g.last DESC, g.t DESC
      LIMIT ?`,
    [
      userId,
      ...(opts.mailboxId != null ? [userId, opts.mailboxId] : []),
      opts.after ? opts.after.d : null,
      opts.after ? opts.after.d : null,
      opts.after ? opts.after.t : null,
      limit + 1,
    ],
  );
  const rows = r.rows.slice(0, limit);
  const threads = rows.map((x) => ({
    threadId: x.t,
    subject: x.subject,
    messages: x.n,
    unseen: x.unseen,
    lastDate: x.last ? new Date(x.last).toISOString() : null,
    from: (x.senders || []).filter(Boolean),
  }));
  const last = rows[rows.length - 1];
  const next =
    r.rows.length > limit && last ? { d: new Date(last.last).toISOString(), t: last.t } : null;
  return { threads, next };
}

/**
 * The messages of one of the user's threads, oldest first, as header rows with their
 * mailbox id; THREAD_NOT_FOUND when the user has no such thread (another user's included).
 * @param {import('./pg-store').PgStore} store
 * @param {number} userId
 * @param {string} threadId
 */
async function threadMessages(store, userId, threadId) {
  const own = /^(\d+)\/(\d+)$/.exec(threadId);
  const r = await store.knex.raw(
    `SELECT ${HEADER_COLUMNS} FROM messages m
      WHERE m.user_id = ? AND NOT m.expunged AND ${
        own ? 'm.thread_id IS NULL AND m.mailbox_id = ? AND m.uid = ?' : 'm.thread_id = ?'
      }
      ORDER BY coalesce(m.date, m.internal_date), m.mailbox_id, m.uid`,
    own ? [userId, Number(own[1]), Number(own[2])] : [userId, threadId],
  );
  if (!r.rows.length) throw new errors.THREAD_NOT_FOUND(threadId);
  return r.rows.map((row) => ({ ...headerRow(row), mailboxId: row.mailbox_id }));
}

module.exports = {
  assignThreads,
  listThreads,
  threadMessages,
  threadIds,
  baseSubject,
  threadBatch,
  threadFresh,
  freshFirstRead,
  writeThreadKeys,
  lockThreads,
  THREAD_LOCK,
  normId,
};
