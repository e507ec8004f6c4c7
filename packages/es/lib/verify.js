'use strict';

const { namesFor } = require('./mapping');
const { isNotFound, outdatedUsers } = require('./indices');
const { pending } = require('./sync');
const { storeOf } = require('./store-of');

/**
 * All (mailbox, uid, version) of a user's index, via search_after (no scroll context left
 * behind if we crash).
 */
async function esDocs(client, alias, userId) {
  const out = new Map();
  let after;
  for (;;) {
    let res;
    try {
      res = await client.search({
        index: alias,
        size: 10000,
        _source: false,
        version: true,
        query: { term: { user_id: userId } },
        sort: [{ mailbox_id: 'asc' }, { uid: 'asc' }],
        ...(after ? { search_after: after } : {}),
      });
    } catch (err) {
      if (isNotFound(err)) return out;
      throw err;
    }
    const hits = res.hits.hits;
    for (const h of hits)
      out.set(h._id, { mailboxId: h.sort[0], uid: h.sort[1], version: h._version });
    if (hits.length < 10000) return out;
    after = hits[hits.length - 1].sort;
  }
}

/**
 * `mailgate es verify`: per user and mailbox, PostgreSQL's live messages vs the ES documents:
 * counts, ids missing in ES, ids only in ES, and documents whose version is not the row's
 * modseq (a lost flag change). ok only when nothing differs.
 * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string}} ctx
 * @param {{user?: string}} [opts]
 */
async function verify(ctx, opts = {}) {
  const { client, prefix } = ctx;
  const store = storeOf(ctx);
  const users = await store.listUsers({ name: opts.user });
  const report = { ok: true, pending: await pending(store), users: [] };
  const outdated = await outdatedUsers(client, prefix);
  for (const u of users) {
    const alias = namesFor(prefix, u.id).alias;
    await client.indices
      .refresh({ index: alias, ignore_unavailable: true, allow_no_indices: true })
      .catch((err) => {
        if (!isNotFound(err)) throw err;
      });
    const es = await esDocs(client, alias, u.id);
    const rows = await store.messageVersions(u.id);
    const names = await store.mailboxNamesById(u.id);
    const per = new Map(
      [...names].map(([id, mailbox]) => [
        id,
        { mailbox, pg: 0, es: 0, missing: [], extra: [], stale: [] },
      ]),
    );
    const box = (id) => {
      if (!per.has(id))
        per.set(id, { mailbox: `#${id}`, pg: 0, es: 0, missing: [], extra: [], stale: [] });
      return per.get(id);
    };
    for (const d of es.values()) box(d.mailboxId).es++;
    for (const r of rows) {
      const b = box(r.mailboxId);
      b.pg++;
      const id = `${r.mailboxId}:${r.uid}`;
      const d = es.get(id);
      if (!d) b.missing.push(r.uid);
      else {
        if (Number(d.version) !== r.modseq) b.stale.push(r.uid);
        es.delete(id);
      }
    }
    for (const d of es.values()) box(d.mailboxId).extra.push(d.uid);
    const mailboxes = [...per.values()].map((b) => ({
      ...b,
      ok: b.pg === b.es && !b.missing.length && !b.extra.length && !b.stale.length,
      // Long lists are cut: the counts tell the size of the drift.
      missingCount: b.missing.length,
      extraCount: b.extra.length,
      staleCount: b.stale.length,
      missing: b.missing.slice(0, 20),
      extra: b.extra.slice(0, 20),
      stale: b.stale.slice(0, 20),
    }));
    // An index analysed by an older mapping answers word searches differently: drift too.
    const mappingOutdated = outdated.has(u.id);
    const ok = mailboxes.every((m) => m.ok) && !mappingOutdated;
    if (!ok) report.ok = false;
    report.users.push({ user: u.name, ok, mappingOutdated, mailboxes });
  }
  return report;
}

module.exports = { verify };
