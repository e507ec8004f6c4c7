'use strict';

const { createMailService } = require('@mailgate/service');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { describeEs } = require('@mailgate/test-support/es');
const { msg } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');

/*
 * What the bench's es, legacy and disk commands asked below the service until issue 31.3
 * (ANALYZE and the outbox count by SQL, relation sizes from the catalogue over a pg client,
 * the mirror's indexes deleted by wildcard): service operations now, on a real PostgreSQL
 * (and Elasticsearch where it is needed).
 */
// A user's own partitions, named messages_u<id>: on Citus there are none (the sizes are the
// workers' shards', not the coordinator's catalogue; not done there).
const perUser = (part) =>
  singlePostgresOnly(__filename, "a user's own partitions in the catalogue", part)
    ? test.skip
    : test;

describe('service: the operations the bench needs below it', () => {
  const ctx = useServiceSuite('bench-ops');
  let service;
  let writer; // the same database with es_outbox rows written (as with ELASTICSEARCH_URL)
  const ids = {};
  const sql = (text, bindings) => ctx.db.knex.raw(text, bindings).then((r) => r.rows);

  beforeAll(async () => {
    ({ service } = ctx);
    writer = await createMailService({
      knex: ctx.db.knex,
      env: { MAILGATE_HOME: ctx.tmp, LOG_LEVEL: 'silent' },
      outbox: true,
      purge: false,
    });
    for (const [name, n] of [
      ['ann', 3],
      ['bob', 1],
    ]) {
      await service.users.create(name, { password: `pw-${name}-1` });
      ids[name] = (await service.users.get(name)).id;
      const be = await writer.openBackend('pg', name);
      await be.createMailbox('INBOX');
      for (let i = 0; i < n; i++) await be.append('INBOX', msg({ subject: `m${i}` }), {});
    }
  });
  afterAll(async () => {
    if (writer) await writer.close();
  });

  perUser('diskUsage')(
    'diskUsage: every table with its heap, TOAST and index bytes after a checkpoint',
    async () => {
      const all = await service.diskUsage();
      const names = all.tables.map((t) => t.table);
      expect(names).toEqual(expect.arrayContaining(['users', 'mailboxes', 'es_outbox']));
      for (const id of Object.values(ids))
        expect(names).toEqual(expect.arrayContaining([`messages_u${id}`, `message_words_u${id}`]));
      const m = all.tables.find((t) => t.table === `messages_u${ids.ann}`);
      expect(m.heap).toBeGreaterThan(0);
      expect(m.indexes.length).toBeGreaterThan(0);
      for (const t of all.tables) {
        expect(Number.isInteger(t.heap) && Number.isInteger(t.toast)).toBe(true);
        for (const i of t.indexes) expect(Number.isInteger(i.bytes)).toBe(true);
      }
      expect(all.databaseBytes).toBeGreaterThan(m.heap);
    },
  );

  perUser('diskUsage of one user')(
    "diskUsage of one user: that user's partitions beside the shared tables, no other user's",
    async () => {
      const mine = (await service.diskUsage({ user: 'ann' })).tables.map((t) => t.table);
      expect(mine).toEqual(expect.arrayContaining([`messages_u${ids.ann}`, 'users', 'mailboxes']));
      expect(mine.filter((n) => n.endsWith(`_u${ids.bob}`))).toEqual([]);
      await expect(service.diskUsage({ user: 'nobody' })).rejects.toMatchObject({
        code: 'USER_NOT_FOUND',
      });
    },
  );

  test('mirrorBacklog: the queued changes of one user, or of all', async () => {
    const ann = await service.mirrorBacklog({ user: 'ann' });
    const bob = await service.mirrorBacklog({ user: 'bob' });
    const [{ n }] = await sql('SELECT count(*)::int AS n FROM es_outbox WHERE user_id = ?', [
      ids.ann,
    ]);
    expect(ann).toBe(n);
    expect(ann).toBeGreaterThanOrEqual(3); // one row per appended message at least
    expect(bob).toBeGreaterThanOrEqual(1);
    expect(await service.mirrorBacklog()).toBe(ann + bob);
  });

  perUser('analyzeUser and vacuumUser')(
    "analyzeUser and vacuumUser refresh the user's partitions now",
    async () => {
      const rel = `messages_u${ids.ann}`;
      const before = await sql('SELECT reltuples FROM pg_class WHERE relname = ?', [rel]);
      expect(Number(before[0].reltuples)).toBe(-1); // never analyzed: 3 rows start no autovacuum
      await service.analyzeUser('ann');
      const after = await sql('SELECT reltuples FROM pg_class WHERE relname = ?', [rel]);
      expect(Number(after[0].reltuples)).toBe(3);
      await service.vacuumUser('ann');
      const v = await sql('SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = ?', [rel]);
      expect(v[0].last_vacuum).not.toBeNull();
    },
  );

  test('awaitingPurge: the rows an expunge hid that no purge has removed yet', async () => {
    const be = await writer.openBackend('pg', 'bob'); // purge: false, as the bench's own service
    const [uid] = (await be.scan('INBOX', {})).rows.map((r) => r.uid);
    expect(await service.awaitingPurge('bob', 'INBOX')).toBe(0);
    await be.expunge('INBOX', [uid], { force: true });
    expect(await service.awaitingPurge('bob', 'INBOX')).toBe(1);
    expect(await service.awaitingPurge({ id: ids.bob, name: 'bob' }, 'INBOX')).toBe(1);
    await be.restoreExpunged('INBOX', [uid]);
    expect(await service.awaitingPurge('bob', 'INBOX')).toBe(0);
    await expect(service.awaitingPurge('bob', 'Nowhere')).rejects.toMatchObject({
      code: 'MAILBOX_NOT_FOUND',
    });
  });

  test('dropMirrorIndexes refuses the default prefix, a real installation’s mirror', async () => {
    const s = await createMailService({
      knex: ctx.db.knex,
      // Nothing listens there: the refusal comes before any request.
      env: { MAILGATE_HOME: ctx.tmp, LOG_LEVEL: 'silent', ELASTICSEARCH_URL: 'http://127.0.0.1:9' },
      purge: false,
    });
    try {
      await expect(s.dropMirrorIndexes()).rejects.toMatchObject({ code: 'USAGE' });
    } finally {
      await s.close();
    }
  });

  describeEs('bench-ops.test.js', 'with Elasticsearch', (es) => {
    let mirrored;
    beforeAll(async () => {
      if (es.skipped()) return;
      mirrored = await createMailService({
        knex: ctx.db.knex,
        env: {
          MAILGATE_HOME: ctx.tmp,
          LOG_LEVEL: 'silent',
          ELASTICSEARCH_URL: es.url,
          MAILGATE_ES_PREFIX: es.prefix,
        },
        outbox: true,
        purge: false,
      });
    });
    afterAll(async () => {
      if (mirrored) await mirrored.close();
    });

    test("mirrorCluster names the cluster; dropMirrorIndexes deletes this prefix's indexes only", async () => {
      if (es.skipped()) return;
      const health = await es.client.cluster.health();
      expect((await mirrored.mirrorCluster()).name).toBe(health.cluster_name);
      await mirrored.syncMirror(); // the users' indexes under the prefix
      const other = `${es.prefix}x-kept`; // another prefix that starts the same way
      await es.client.indices.create({ index: other });
      try {
        const mine = Object.keys(await es.client.indices.get({ index: `${es.prefix}-*` }));
        expect(mine.length).toBeGreaterThan(0);
        expect((await mirrored.dropMirrorIndexes()).sort()).toEqual(mine.sort());
        const left = await es.client.indices.get({
          index: `${es.prefix}-*`,
          allow_no_indices: true,
          ignore_unavailable: true,
        });
        expect(Object.keys(left)).toEqual([]);
        expect(await es.client.indices.exists({ index: other })).toBe(true);
      } finally {
        await es.client.indices.delete({ index: other }).catch(() => {});
      }
    });
  });
});
