'use strict';

const crypto = require('node:crypto');
const { errors } = require('@mailgate/core');
const { HEADER_COLUMNS, headerRow } = require('./header-row');
const { lockMailbox, recordChange } = require('./mail-ops');

/*
 * Threads (webmail, issue 14): the thread id of every message, computed after each import by
 * the linking of jwz's threading algorithm (https://www.jwz.org/doc/threading.html): a message
 * joins the messages its References / In-Reply-To name (also through ids no stored message
 * has: two replies to a missing parent share its thread), then root sets with the same base
 * subject merge when one of them is a reply ("Re: …"), jwz's subject step. Owns the
 * `thread_id` column; never touches flags, so its updates are rare (merges only).
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
 * @param {Array<{key: string, messageId?: string|null, inReplyTo?: string|null, refs?: string[],
 *   subject?: string|null, date?: string|Date|null}>} msgs `key` identifies a message
 * @returns {Map<string, string>} message key → thread id (16 hex digits, stable while the
 *   thread's root stays the same)
 */
function threadIds(msgs) {
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
  const nodeOf = new Map();
  for (const m of msgs) {
    const own = normId(m.messageId);
    // A message without (or with a duplicate) Message-ID is its own node.
    const node = own && !nodeOf.has(`id:${own}`) ? `id:${own}` : `msg:${m.key}`;
    if (own && !nodeOf.has(`id:${own}`)) nodeOf.set(node, m);
    nodeOf.set(`msg:${m.key}`, m);
    m.node = node;
    add(node);
  }
  for (const m of msgs) {
    const refs = [...(m.refs || []), m.inReplyTo].map(normId).filter(Boolean);
    for (const r of refs) {
      add(`id:${r}`);
      union(`id:${r}`, m.node);
    }
  }
  // jwz step 5: root sets with the same base subject merge when one is a reply.
  const comps = new Map();
  for (const m of msgs) {
    const r = find(m.node);
    if (!comps.has(r)) comps.set(r, []);
    comps.get(r).push(m);
  }
  const times = new Map();
  for (const m of msgs) {
    const t = m.date ? new Date(m.date).getTime() : NaN;
    times.set(m, Number.isNaN(t) ? Infinity : t);
  }
  const time = (m) => times.get(m);
  const rootOf = (list) =>
    list.reduce((a, b) => (time(b) < time(a) || (time(b) === time(a) && b.key < a.key) ? b : a));
  const bySubject = new Map();
  for (const [r, list] of comps) {
    const root = rootOf(list);
    const base = baseSubject(root.subject);
    if (!base) continue;
    const isReply = REPLY.test(String(root.subject || '').trim());
    const seen = bySubject.get(base);
    if (!seen) bySubject.set(base, { r, isReply });
    else if (isReply || seen.isReply) {
      union(seen.r, r);
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
    const root = rootOf(list);
    // The root's node: its Message-ID, or the message itself when it has none (or a copy's).
    const key = root.node.startsWith('id:') ? root.node.slice(3) : root.node;
    const id = crypto.createHash('sha256').update(key).digest('hex').slice(0, 16);
    for (const m of list) out.set(m.key, id);
  }
  return out;
}

const threadOps = {
  /**
   * (Re)computes the thread id of the user's messages; writes only the ones that changed.
   * Run after an import (and after appends), over the whole user: replies may arrive before
   * the message they answer, and then whole threads merge.
   * @param {number} userId
   * @returns {Promise<{messages: number, updated: number}>}
   */
  async assignThreads(userId) {
    const r = await this.knex.raw(
      `SELECT mailbox_id, uid, message_id, in_reply_to, refs, subject,
              coalesce(date, internal_date) AS d, thread_id
         FROM messages WHERE user_id = ? AND NOT expunged`,
      [userId],
    );
    const msgs = r.rows.map((x) => ({
      key: `${x.mailbox_id}/${x.uid}`,
      mailboxId: x.mailbox_id,
      uid: Number(x.uid),
      messageId: x.message_id,
      inReplyTo: x.in_reply_to,
      refs: x.refs,
      subject: x.subject,
      date: x.d,
      old: x.thread_id,
    }));
    const ids = threadIds(msgs);
    const changed = msgs.filter((m) => m.old !== ids.get(m.key));
    const byMailbox = new Map();
    for (const m of changed) {
      if (!byMailbox.has(m.mailboxId)) byMailbox.set(m.mailboxId, []);
      byMailbox.get(m.mailboxId).push(m);
    }
    for (const [mailboxId, list] of byMailbox) {
      for (let i = 0; i < list.length; i += 5000) {
        const part = list.slice(i, i + 5000);
        // A first thread id (new mail) is not a change of the message: no modseq, no outbox
        // row (the mirror holds no thread id). A merge changes an id clients may have seen: it
        // is stamped with a new modseq and queued, like every change. Either way the mailbox's
        // HIGHESTMODSEQ moves, so a reader keyed on it (the list cache) looks again.
        const merged = part.filter((m) => m.old != null);
        await this.knex.transaction(async (trx) => {
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
          await recordChange(
            this,
            trx,
            userId,
            mailboxId,
            merged.map((m) => m.uid),
            modseq,
          );
        });
      }
    }
    return { messages: msgs.length, updated: changed.length };
  },

  /**
   * Threads of a user (optionally those with a message in one mailbox), newest activity
   * first, keyset-paged on (last date, thread id).
   * @param {number} userId
   * @param {{mailboxId?: number, limit?: number, after?: {d: string, t: string}}} [opts]
   * @returns {Promise<{threads: Array<{threadId: string, subject: string|null, messages: number,
   *   unseen: number, lastDate: string|null, from: string[]}>, next: {d: string, t: string}|null}>}
   */
  async listThreads(userId, opts = {}) {
    const limit = opts.limit || 50;
    const thread = "coalesce(m.thread_id, m.mailbox_id || '/' || m.uid)";
    const inMailbox =
      opts.mailboxId != null
        ? `AND ${thread} IN (SELECT coalesce(x.thread_id, x.mailbox_id || '/' || x.uid)
             FROM messages x WHERE x.user_id = ? AND x.mailbox_id = ? AND NOT x.expunged)`
        : '';
    const r = await this.knex.raw(
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
  },

  /**
   * The messages of one of the user's threads, oldest first, as header rows with their
   * mailbox id; THREAD_NOT_FOUND when the user has no such thread (another user's included).
   * @param {number} userId
   * @param {string} threadId
   */
  async threadMessages(userId, threadId) {
    const own = /^(\d+)\/(\d+)$/.exec(threadId);
    const r = await this.knex.raw(
      `SELECT ${HEADER_COLUMNS} FROM messages m
        WHERE m.user_id = ? AND NOT m.expunged AND ${
          own ? 'm.thread_id IS NULL AND m.mailbox_id = ? AND m.uid = ?' : 'm.thread_id = ?'
        }
        ORDER BY coalesce(m.date, m.internal_date), m.mailbox_id, m.uid`,
      own ? [userId, Number(own[1]), Number(own[2])] : [userId, threadId],
    );
    if (!r.rows.length) throw new errors.THREAD_NOT_FOUND(threadId);
    return r.rows.map((row) => ({ ...headerRow(row), mailboxId: row.mailbox_id }));
  },
};

module.exports = { threadOps, threadIds, baseSubject };
