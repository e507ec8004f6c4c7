'use strict';

/*
 * The service's diskUsage on Citus (citus.js point 7): the coordinator's copy of a distributed
 * table is an empty shell, so sizes read there said 0 bytes for every message table however
 * much mail the workers held. They are the sums over the shards now, index names without the
 * shard suffix, and the database's bytes those of every node. Needs the project's cluster
 * (scripts/citus/citus.sh); skipped with the reason printed without it.
 */

const os = require('node:os');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { createMailService } = require('@mailgate/service');
const { msg, importMessages } = require('@mailgate/test-support/mail');
const { describeCitus, createMigratedCitusDatabase } = require('@mailgate/test-support/citus');

const run = describeCitus(__filename);

run('Citus: diskUsage counts the shards, not the coordinator shells', () => {
  const name = `mgt_citus_disk_${crypto.randomBytes(4).toString('hex')}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-citus-disk-'));
  let cluster;
  let knex;
  let service;

  beforeAll(async () => {
    ({ cluster, knex } = await createMigratedCitusDatabase(name, { pool: { min: 0, max: 4 } }));
    service = await createMailService({
      knex,
      env: { MAILGATE_HOME: tmp, LOG_LEVEL: 'silent' },
      purge: false,
    });
    // 200 messages of ~8 KB: well over a page per table on any shard layout.
    const messages = Array.from({ length: 200 }, (_, i) =>
      msg({ subject: `disk ${i}`, body: `${'word'.repeat(2000)} ${i}\n` }),
    );
    await importMessages(service.store, path.join(tmp, 'd.mbox'), {
      messages,
      user: 'dora',
      mailbox: 'INBOX',
    });
  }, 120000);

  afterAll(async () => {
    if (service) await service.close();
    if (knex) await knex.destroy();
    if (cluster) await cluster.drop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("message tables have their shards' bytes; index names as on a single PostgreSQL", async () => {
    const usage = await service.diskUsage();
    const msgs = usage.tables.filter((t) => /^messages(_|$)/.test(t.table));
    expect(msgs.length).toBeGreaterThan(0);
    const bytes = (t) => t.heap + t.toast + t.indexes.reduce((a, i) => a + i.bytes, 0);
    // The shells held 0 bytes; the workers hold the 200 messages' rows.
    expect(msgs.reduce((a, t) => a + t.heap, 0)).toBeGreaterThan(0);
    expect(msgs.reduce((a, t) => a + bytes(t), 0)).toBeGreaterThan(200 * 1000);
    const { rows } = await knex.raw(
      `SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
        JOIN pg_class t ON t.oid = x.indrelid WHERE t.relname = ?`,
      [msgs[0].table],
    );
    expect(msgs[0].indexes.map((i) => i.name).sort()).toEqual(rows.map((r) => r.relname).sort());
    // Every node's database, not the coordinator's alone.
    const own = await knex.raw('SELECT pg_database_size(current_database())::bigint AS b');
    expect(usage.databaseBytes).toBeGreaterThan(Number(own.rows[0].b));
  });
});
