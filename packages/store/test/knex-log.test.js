'use strict';

const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { createTestDatabase } = require('@mailgate/test-support/db');

/*
 * knex's default logger prints with console.log: a knex warning in a CLI command (a pool
 * error while it exits) would land on stdout, inside its `--json` answer. openDatabase gives
 * knex a logger that writes to stderr; a quiet database says nothing at all.
 */
describe('knex speaks on stderr, never on stdout', () => {
  let db;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    if (db) await db.drop();
  });

  const probe = (quiet) =>
    spawnSync(
      process.execPath,
      [
        '-e',
        `const { loadConfig } = require('@mailgate/core');
         const { openDatabase } = require('@mailgate/store');
        (async () => {
          const db = await openDatabase(loadConfig(), { migrate: false, quiet: ${quiet} });
          db.knex.client.logger.warn('probe warning');
          db.knex.client.logger.error(new Error('probe error'));
          process.stdout.write(JSON.stringify({ ok: true }) + '\\n');
          await db.close();
        })();`,
      ],
      {
        cwd: path.resolve(__dirname, '..'),
        env: { ...process.env, DATABASE_URL: db.url },
        encoding: 'utf8',
      },
    );

  test('a warning and an error go to stderr; stdout holds only the answer', () => {
    const r = probe(false);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true });
    expect(r.stderr).toMatch(/^knex warning: probe warning$/m);
    expect(r.stderr).toMatch(/^knex error: Error: probe error$/m);
  });

  test('quiet: nothing from knex on either stream', () => {
    const r = probe(true);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ok: true });
    expect(r.stderr).not.toMatch(/probe/);
  });
});
