'use strict';

const { toDoc } = require('./docs');
const { docId, namesFor } = require('./mapping');
const { aliasMap, createIndex, outdatedUsers } = require('./indices');
const { storeOf } = require('./store-of');

/*
 * `mailgate es reindex`: rebuilds a user's index from PostgreSQL into a NEW index and switches
 * the alias atomically, while searches keep using the old index and writes keep flowing.
 *
 *   1. create index g<now> (refresh off) with the alias <prefix>-next-u<id>: from now on every
 *      outbox drain writes each change to the old AND the new index (writeTargets);
 *   2. barrier: take the drainer lock once. A drain step that started before step 1 (and so
 *      only knew the old index) holds that lock until it commits, so after the barrier every
 *      change is either already in PostgreSQL's committed state — which step 3 reads — or
 *      will be shipped to both indexes;
 *   3. copy the user's live rows page by page, with version = modseq (external): when a
 *      concurrent drain already wrote a newer version, ES keeps it (409), and a delete's
 *      tombstone (index.gc_deletes 10 min) stops a stale page from resurrecting a document;
 *   4. restore refresh, refresh, then one _aliases call: the user alias moves to the new
 *      index and the next alias goes; another barrier, then the old index is deleted.
 * No change written during the reindex is lost: it reaches the new index by step 3 or by the
 * dual write of step 1.
 */

const PAGE = 2000;

/**
 * Rebuilds one user's index.
 * @param {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string, log?: object}} ctx
 * @param {{id: number, name: string}} user
 * @returns {Promise<{user: string, index: string, documents: number, seconds: number}>}
 */
async function reindexUser(ctx, user) {
  const { client, prefix } = ctx;
  const store = storeOf(ctx);
  const t0 = Date.now();
  const n = namesFor(prefix, user.id);
  const index = n.index(Date.now());
  await createIndex(client, index, { building: true, aliases: { [n.next]: {} } });
  try {
    await store.outboxBarrier();
    let after = null;
    let documents = 0;
    for (;;) {
      const rows = await store.mirrorPage(user.id, after, PAGE);
      if (!rows.length) break;
      const ops = [];
      for (const row of rows) {
        const doc = toDoc(user.id, row);
        ops.push(
          {
            index: {
              _index: index,
              _id: docId(row.mailbox_id, row.uid),
              version: doc.modseq,
              version_type: 'external',
            },
          },
          doc,
        );
      }
      const res = await client.bulk({ operations: ops, refresh: false });
      for (const item of res.items) {
        const r = item.index;
        if (r.status >= 300 && r.status !== 409) {
          throw new Error(`reindex bulk item failed (${r.status}): ${r.error && r.error.reason}`);
        }
      }
      documents += rows.length;
      const last = rows[rows.length - 1];
      after = { mailboxId: last.mailbox_id, uid: Number(last.uid) };
      if (ctx.onProgress) ctx.onProgress({ user: user.name, documents });
    }
    await client.indices.putSettings({ index, settings: { index: { refresh_interval: '1s' } } });
    await client.indices.refresh({ index });
    const old = (await aliasMap(client, prefix)).get(n.alias) || [];
    await client.indices.updateAliases({
      actions: [
        ...old.map((i) => ({ remove: { index: i, alias: n.alias } })),
        { add: { index, alias: n.alias } },
        { remove: { index, alias: n.next } },
      ],
    });
    // A drain step that resolved the old index before the switch finishes before we drop it.
    await store.outboxBarrier();
    const stale = old.filter((i) => i !== index);
    if (stale.length) await client.indices.delete({ index: stale, ignore_unavailable: true });
    return { user: user.name, index, documents, seconds: (Date.now() - t0) / 1000 };
  } catch (err) {
    // The half-built index goes; the old one still serves and still receives writes.
    await client.indices.delete({ index, ignore_unavailable: true }).catch(() => {});
    throw err;
  }
}

/**
 * Rebuilds the index of one user (name) or of every user.
 * @param {object} ctx see reindexUser
 * @param {{user?: string}} [opts]
 */
async function reindex(ctx, opts = {}) {
  const users = await storeOf(ctx).listUsers({ name: opts.user });
  const results = [];
  for (const u of users) results.push(await reindexUser(ctx, u));
  return { users: results, documents: results.reduce((a, r) => a + r.documents, 0) };
}

/**
 * Rebuilds every user's index whose mapping version is older than this code's (see
 * mapping.js MAPPING_VERSION): run by the worker when `mailgate serve` starts, so an upgrade
 * that changes how documents are analysed needs no manual step. Searches keep using the old
 * index until its rebuild switches the alias.
 * @param {object} ctx see reindexUser
 * @returns {Promise<Array<{user: string, index: string, documents: number, seconds: number, from: number}>>}
 */
async function upgradeIndexes(ctx) {
  const outdated = await outdatedUsers(ctx.client, ctx.prefix);
  if (!outdated.size) return [];
  const users = await storeOf(ctx).listUsers({ ids: [...outdated.keys()] });
  const results = [];
  for (const u of users) {
    if (ctx.log) ctx.log.info({ user: u.name, from: outdated.get(u.id) }, 'es index outdated');
    results.push({ ...(await reindexUser(ctx, u)), from: outdated.get(u.id) });
  }
  return results;
}

module.exports = { reindex, reindexUser, upgradeIndexes };
