'use strict';

const os = require('node:os');
const path = require('node:path');
const fs = require('node:fs');
const Knex = require('knex');
const { EmbeddedPostgres, MIGRATIONS_DIR } = require('@mailgate/store');

/*
 * One real PostgreSQL for the whole run: DATABASE_URL when given, else the embedded server
 * in a scratch MAILGATE_HOME. Migrations are applied once to a template database; each test
 * file clones it (CREATE DATABASE … TEMPLATE), so files never see each other's rows.
 */
module.exports = async function globalSetup() {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const home =
      process.env.MAILGATE_TEST_HOME || path.join(os.tmpdir(), `mailgate-test-${process.pid}`);
    fs.mkdirSync(home, { recursive: true });
    const pg = new EmbeddedPostgres(home);
    adminUrl = await pg.acquire({ persistent: true });
    globalThis.__MAILGATE_TEST_PG__ = pg;
    process.env.MAILGATE_TEST_HOME = home;
  }
  const url = new URL(adminUrl);
  if (await onCitus(adminUrl)) {
    // A Citus coordinator (the CI variant, scripts/citus): the template is made on every node
    // (migrated and distributed through the coordinator), and each file's database is a copy
    // of it on every node (citus.js). Named per run: another run may share the cluster.
    const { createCitusTemplate } = require('./citus');
    const template = `mgt_citus_tpl_${process.pid}`;
    globalThis.__MAILGATE_TEST_CITUS_TEMPLATE__ = await createCitusTemplate(template, adminUrl);
    process.env.MAILGATE_TEST_CITUS_BASE = adminUrl;
    process.env.MAILGATE_TEST_CITUS_TEMPLATE = template;
    process.env.MAILGATE_TEST_ADMIN_URL = withDb(url, 'postgres');
    return;
  }
  const template = 'mailgate_test_template';
  const admin = Knex({ client: 'pg', connection: withDb(url, 'postgres') });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.raw(`CREATE DATABASE ${template}`);
  } finally {
    await admin.destroy();
  }
  const tpl = Knex({
    client: 'pg',
    connection: withDb(url, template),
    migrations: { directory: MIGRATIONS_DIR },
  });
  try {
    await tpl.migrate.latest();
  } finally {
    await tpl.destroy();
  }
  process.env.MAILGATE_TEST_ADMIN_URL = withDb(url, 'postgres');
  process.env.MAILGATE_TEST_TEMPLATE = template;
};

/** Whether DATABASE_URL's database is a Citus coordinator's (the citus extension is in it). */
async function onCitus(adminUrl) {
  const k = Knex({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  try {
    const r = await k.raw("SELECT 1 FROM pg_extension WHERE extname = 'citus'");
    return r.rows.length > 0;
  } finally {
    await k.destroy();
  }
}

function withDb(url, db) {
  const u = new URL(url.toString());
  u.pathname = '/' + db;
  return u.toString();
}

module.exports.withDb = withDb;
