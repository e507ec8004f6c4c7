'use strict';

/*
 * Databases on the project's Citus cluster (scripts/citus/citus.sh) for tests. Citus 12.1 does
 * not propagate CREATE DATABASE: a database of the cluster exists on the coordinator and on every
 * worker, each with the citus extension, and the coordinator's copy registers the workers.
 * MAILGATE_CITUS_URL is the coordinator's URL (`citus.sh url`); its database lists the workers.
 */

const fs = require('node:fs');
const path = require('node:path');
const Knex = require('knex');

// The Citus source beside the repository (../shared/citus from the repo root).
const SOURCE = path.resolve(__dirname, '..', '..', '..', '..', 'shared', 'citus');

/**
 * Why a test needing the Citus cluster cannot run: `{absent}` when the Citus source is not
 * beside the repository (the cluster cannot be built here: skipped even in CI, as .ci/run skips
 * the cluster), `{reason}` when it is but no cluster was started; null when MAILGATE_CITUS_URL
 * is set.
 * @returns {{absent?: string, reason?: string}|null}
 */
function citusMissing() {
  if (process.env.MAILGATE_CITUS_URL) return null;
  if (!fs.existsSync(SOURCE)) {
    return { absent: `the Citus source is not present (${SOURCE}); see docs/scaling-out.md` };
  }
  return {
    reason:
      'no Citus cluster: bash scripts/citus/citus.sh start, then MAILGATE_CITUS_URL=$(bash scripts/citus/citus.sh url)',
  };
}

function withDb(url, db) {
  const u = new URL(url);
  u.pathname = '/' + db;
  return u.toString();
}

/** The cluster's nodes as URLs of database `db`: [coordinator, ...workers]. */
async function nodeUrls(baseUrl, db) {
  const k = Knex({ client: 'pg', connection: baseUrl, pool: { min: 0, max: 1 } });
  try {
    const r = await k.raw(
      'SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 ORDER BY nodeport',
    );
    const base = new URL(baseUrl);
    const workers = r.rows.map((n) => {
      const u = new URL(baseUrl);
      u.hostname = n.nodename;
      u.port = String(n.nodeport);
      return withDb(u.toString(), db);
    });
    return { coordinator: withDb(base.toString(), db), workers, rows: r.rows };
  } finally {
    await k.destroy();
  }
}

async function onDb(url, fn) {
  const k = Knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
  try {
    return await fn(k);
  } finally {
    await k.destroy();
  }
}

/**
 * Drops database `name` on every node (urls: [coordinator, ...workers]). Connections are
 * refused first (Citus's recovery daemons connect again at once), then DROP … WITH (FORCE),
 * again while it answers "being accessed by other users" (55006): a session it ended may take
 * longer than the 5 s it waits to go on a loaded machine, and the drop failed the test file.
 */
async function dropEverywhere(name, urls) {
  for (const url of urls) {
    await onDb(withDb(url, 'postgres'), async (k) => {
      const r = await k.raw('SELECT 1 FROM pg_database WHERE datname = ?', [name]);
      if (!r.rows.length) return;
      await k.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      for (let attempt = 1; ; attempt++) {
        try {
          await k.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
          return;
        } catch (err) {
          if (err.code !== '55006' || attempt >= 6) throw err;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    });
  }
}

/**
 * Creates database `name` on every node of the cluster with citus and pg_trgm, and registers
 * the workers on the coordinator's copy. Not migrated.
 * @param {string} name
 * @param {string} [baseUrl] MAILGATE_CITUS_URL
 * @returns {Promise<{url: string, drop: () => Promise<void>}>}
 */
async function createCitusDatabase(name, baseUrl = process.env.MAILGATE_CITUS_URL) {
  const nodes = await nodeUrls(baseUrl, name);
  const all = [nodes.coordinator, ...nodes.workers];
  for (const url of all) {
    await onDb(withDb(url, 'postgres'), (k) => k.raw(`CREATE DATABASE ${name}`));
    await onDb(url, async (k) => {
      await k.raw('CREATE EXTENSION citus');
      await k.raw('CREATE EXTENSION pg_trgm');
    });
  }
  const coord = new URL(baseUrl);
  await onDb(nodes.coordinator, async (k) => {
    await k.raw('SELECT citus_set_coordinator_host(?, ?)', [coord.hostname, Number(coord.port)]);
    for (const n of nodes.rows)
      await k.raw('SELECT citus_add_node(?, ?)', [n.nodename, n.nodeport]);
  });
  return {
    url: nodes.coordinator,
    workers: nodes.workers,
    drop: () => dropEverywhere(name, all),
  };
}

/**
 * createCitusDatabase, then migrated (the migrations distribute the tables). A failed migration
 * drops the database again.
 * @param {string} name
 * @param {{baseUrl?: string, pool?: object}} [opts] MAILGATE_CITUS_URL by default; Knex pool
 * @returns {Promise<{cluster: Awaited<ReturnType<typeof createCitusDatabase>>, knex: import('knex').Knex}>}
 */
async function createMigratedCitusDatabase(name, { baseUrl, pool } = {}) {
  const { MIGRATIONS_DIR } = require('@mailgate/store');
  const cluster = await createCitusDatabase(name, baseUrl);
  const knex = Knex({
    client: 'pg',
    connection: cluster.url,
    migrations: { directory: MIGRATIONS_DIR },
    ...(pool ? { pool } : {}),
  });
  try {
    await knex.migrate.latest();
  } catch (err) {
    await knex.destroy();
    await cluster.drop();
    throw err;
  }
  return { cluster, knex };
}

/**
 * Makes `name` a template of the cluster: migrated (createMigratedCitusDatabase), then closed
 * to connections on every node (the Citus maintenance daemon of each node holds one, and
 * PostgreSQL copies a template only while nobody is connected), so that each test file's
 * database is a copy of it (cloneCitusDatabase) instead of a migration of its own.
 * @param {string} name
 * @param {string} [baseUrl] MAILGATE_CITUS_URL
 * @returns {Promise<{drop: () => Promise<void>}>}
 */
async function createCitusTemplate(name, baseUrl = process.env.MAILGATE_CITUS_URL) {
  const { cluster, knex } = await createMigratedCitusDatabase(name, { baseUrl });
  await knex.destroy();
  for (const url of [cluster.url, ...cluster.workers]) {
    await onDb(withDb(url, 'postgres'), async (k) => {
      await k.raw(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await k.raw('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ?', [
        name,
      ]);
    });
  }
  return { drop: cluster.drop };
}

/**
 * A database of the cluster copied from a template of createCitusTemplate on every node: the
 * coordinator's copy holds the same metadata (nodes, shards, placements), and each worker's copy
 * the same shards, under the new name, which is the database Citus connects to on the workers.
 * @param {string} name
 * @param {string} template
 * @param {string} [baseUrl] MAILGATE_CITUS_URL
 * @returns {Promise<{url: string, workers: string[], drop: () => Promise<void>}>}
 */
async function cloneCitusDatabase(name, template, baseUrl = process.env.MAILGATE_CITUS_URL) {
  const nodes = await nodeUrls(baseUrl, name);
  const all = [nodes.coordinator, ...nodes.workers];
  const drop = () => dropEverywhere(name, all);
  try {
    for (const url of all) {
      await onDb(withDb(url, 'postgres'), (k) =>
        k.raw(`CREATE DATABASE ${name} TEMPLATE ${template}`),
      );
    }
  } catch (err) {
    await drop();
    throw err;
  }
  return { url: nodes.coordinator, workers: nodes.workers, drop };
}

/**
 * `describe` for a test file that needs the cluster, else `describe.skip` with the reason
 * printed: skipped anywhere when the Citus source is absent, outside CI when no cluster runs.
 * @param {string} filename the test file (__filename)
 */
function describeCitus(filename) {
  const { skipNotice, skipOutsideCI } = require('./skip');
  const missing = citusMissing();
  if (missing && missing.absent) skipNotice(filename, missing.absent);
  const skip = missing && (missing.absent || skipOutsideCI(filename, missing.reason));
  return skip ? describe.skip : describe;
}

module.exports = {
  citusMissing,
  cloneCitusDatabase,
  createCitusDatabase,
  createCitusTemplate,
  createMigratedCitusDatabase,
  describeCitus,
  nodeUrls,
  withDb,
};
