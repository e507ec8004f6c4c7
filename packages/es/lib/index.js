'use strict';

/**
 * @mailgate/es — the Elasticsearch mirror: mapping and per-user indexes, the transactional
 * outbox worker, search through ES, reindex and verify. See README.md.
 */

const { compileEs } = require('./compile');
const { MAPPINGS, MAPPING_VERSION, settings, prefixFrom, namesFor, docId } = require('./mapping');
const { createClient, unavailable, dropIndexes } = require('./indices');
const { drainOnce, syncAll, pending, EsWorker } = require('./sync');
const { reindex, reindexUser, upgradeIndexes } = require('./reindex');
const { verify } = require('./verify');
const { searchEs } = require('./search');
const { storeOf } = require('./store-of');

/**
 * The context every mirror operation takes. PostgreSQL is read through the store's mirror
 * methods only (@mailgate/store mirror-ops.js): this package writes no SQL.
 * @param {{elasticsearchUrl: string|null}} config
 * @param {import('@mailgate/store').PgStore} store
 * @param {{log?: object, env?: NodeJS.ProcessEnv}} [opts]
 * @returns {{store: import('@mailgate/store').PgStore, client: import('@elastic/elasticsearch').Client, prefix: string, log?: object, close: () => Promise<void>}}
 */
function openMirror(config, store, opts = {}) {
  storeOf(store); // a PgStore, not a knex
  const client = createClient(config.elasticsearchUrl);
  return {
    store,
    client,
    prefix: prefixFrom(opts.env),
    log: opts.log,
    close: () => client.close(),
  };
}

module.exports = {
  openMirror,
  compileEs,
  MAPPINGS,
  MAPPING_VERSION,
  settings,
  prefixFrom,
  namesFor,
  docId,
  createClient,
  unavailable,
  dropIndexes,
  drainOnce,
  syncAll,
  pending,
  EsWorker,
  reindex,
  reindexUser,
  upgradeIndexes,
  verify,
  searchEs,
};
