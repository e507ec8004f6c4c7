'use strict';

/*
 * The migrations moved from the repository's root `migrations/` into packages/store/migrations
 * (issue 31.1). knex_migrations rows hold file names, not paths: a database migrated from the
 * old folder must find every applied migration in the new one (knex refuses a database whose
 * applied names are missing: "corrupt"), apply only the ones it lacks, and then nothing more.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const Knex = require('knex');
const { openDatabase, MIGRATIONS_DIR } = require('@mailgate/store');

const adminUrl = process.env.MAILGATE_TEST_ADMIN_URL;
const files = fs
  .readdirSync(MIGRATIONS_DIR)
  .filter((f) => f.endsWith('.js'))
  .sort();

test('the migrations live in the store package', () => {
  expect(path.relative(path.resolve(__dirname, '..'), MIGRATIONS_DIR)).toBe('migrations');
  expect(files.length).toBeGreaterThan(20);
});

test('a database migrated from another folder (the old root one) upgrades cleanly', async () => {
  const name = `mgt_mig_${crypto.randomBytes(4).toString('hex')}`;
  const admin = Knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  const u = new URL(adminUrl);
  u.pathname = '/' + name;
  const url = u.toString();
  // The old place: a `migrations` folder elsewhere, holding the same files up to some point.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-old-root-'));
  const old = path.join(tmp, 'migrations');
  fs.mkdirSync(old);
  const applied = files.slice(0, files.length - 3);
  for (const f of applied) fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(old, f));
  // Some migrations require the store's own modules by a relative path (../lib/citus.js): the
  // old folder gets the store's lib beside it, as the files had it wherever they lived. Without
  // this the test broke as soon as such a migration fell among the copied ones.
  fs.symlinkSync(path.resolve(MIGRATIONS_DIR, '..', 'lib'), path.join(tmp, 'lib'), 'dir');
  await admin.raw(`CREATE DATABASE ${name}`);
  let db = null;
  try {
    const before = Knex({ client: 'pg', connection: url, migrations: { directory: old } });
    try {
      await before.migrate.latest();
    } finally {
      await before.destroy();
    }
    // What every mailgate process does on start: migrate to the latest from the store's folder.
    db = await openDatabase({ databaseUrl: url, home: tmp }, { pool: { min: 0, max: 2 } });
    const rows = await db.knex('knex_migrations').orderBy('id').pluck('name');
    expect(rows).toEqual(files);
    const [, pending] = await db.knex.migrate.list();
    expect(pending).toEqual([]);
    // The next start applies nothing.
    await db.close();
    db = await openDatabase({ databaseUrl: url, home: tmp }, { pool: { min: 0, max: 2 } });
    expect(await db.knex('knex_migrations').count({ n: '*' }).first()).toEqual({
      n: files.length,
    });
  } finally {
    if (db) await db.close();
    await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
