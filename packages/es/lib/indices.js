'use strict';

const { Client } = require('@elastic/elasticsearch');
const { errors } = require('@mailgate/core');
const { MAPPINGS, MAPPING_VERSION, settings, namesFor } = require('./mapping');

/**
 * An ES client for ELASTICSEARCH_URL. Retries are done by the outbox worker (with backoff and
 * without losing order), so the client itself does not retry writes.
 * @param {string} url
 * @param {{requestTimeout?: number}} [opts]
 * @returns {Client}
 */
function createClient(url, opts = {}) {
  if (!url) throw new errors.ES_NOT_CONFIGURED();
  return new Client({
    node: url,
    requestTimeout: opts.requestTimeout || 60000,
    maxRetries: 0,
    compression: false,
  });
}

/** True for "index/alias does not exist" answers. */
function isNotFound(err) {
  return Boolean(err && err.meta && err.meta.statusCode === 404);
}

/**
 * Turns transport errors (connection refused, timeouts, 5xx) into the catalogue's
 * ES_UNAVAILABLE; other errors pass through.
 * @param {unknown} err
 */
function unavailable(err) {
  if (err && err.code && String(err.code).startsWith('ES_')) return err;
  const name = err && err.name;
  if (
    name === 'ConnectionError' ||
    name === 'TimeoutError' ||
    name === 'NoLivingConnectionsError' ||
    (err && err.meta && err.meta.statusCode >= 500)
  ) {
    return new errors.ES_UNAVAILABLE(err.message);
  }
  return err;
}

/**
 * Current aliases under the prefix: alias name → concrete index names.
 * @param {Client} client
 * @param {string} prefix
 * @returns {Promise<Map<string, string[]>>}
 */
async function aliasMap(client, prefix) {
  let res;
  try {
    res = await client.indices.getAlias({ name: `${prefix}-*`, index: `${prefix}-*` });
  } catch (err) {
    if (isNotFound(err)) return new Map();
    throw err;
  }
  const out = new Map();
  for (const [index, v] of Object.entries(res)) {
    for (const alias of Object.keys(v.aliases || {})) {
      if (!out.has(alias)) out.set(alias, []);
      out.get(alias).push(index);
    }
  }
  return out;
}

/**
 * Creates an index with the mirror's mapping (and optional aliases); an index that already
 * exists is fine (two processes may race to create a user's first index).
 * @param {Client} client
 * @param {string} index
 * @param {{aliases?: object, building?: boolean}} [opts]
 */
async function createIndex(client, index, opts = {}) {
  try {
    await client.indices.create({
      index,
      settings: settings({ building: opts.building }),
      mappings: MAPPINGS,
      aliases: opts.aliases || {},
      wait_for_active_shards: '1',
    });
  } catch (err) {
    const type =
      err && err.meta && err.meta.body && err.meta.body.error && err.meta.body.error.type;
    if (type !== 'resource_already_exists_exception') throw err;
  }
}

/**
 * The concrete indexes that writes for each user must go to: the user's current index and,
 * while `es reindex` runs, the index being built. A user seen for the first time gets an
 * index and alias here.
 * @param {Client} client
 * @param {string} prefix
 * @param {number[]} userIds
 * @returns {Promise<Map<number, string[]>>}
 */
async function writeTargets(client, prefix, userIds) {
  let aliases = await aliasMap(client, prefix);
  let created = false;
  for (const id of userIds) {
    const n = namesFor(prefix, id);
    if (!aliases.has(n.alias)) {
      await createIndex(client, n.index(1), { aliases: { [n.alias]: {} } });
      created = true;
    }
  }
  if (created) aliases = await aliasMap(client, prefix);
  const out = new Map();
  for (const id of userIds) {
    const n = namesFor(prefix, id);
    out.set(id, [...new Set([...(aliases.get(n.alias) || []), ...(aliases.get(n.next) || [])])]);
  }
  return out;
}

/**
 * Users whose searched index (the alias `<prefix>-u<id>`) was built with an older mapping
 * version (MAPPING_VERSION, stored in the mapping's `_meta`): their documents were analysed
 * differently and must be rebuilt (`es reindex`, or the worker at start-up).
 * @param {Client} client
 * @param {string} prefix
 * @returns {Promise<Map<number, number>>} user id → the index's version (0 when unversioned)
 */
async function outdatedUsers(client, prefix) {
  const aliases = await aliasMap(client, prefix);
  const out = new Map();
  if (!aliases.size) return out;
  const mappings = await client.indices.getMapping({ index: `${prefix}-u*` });
  const re = new RegExp(`^${prefix}-u(\\d+)$`);
  for (const [alias, indexes] of aliases) {
    const m = re.exec(alias);
    if (!m) continue;
    for (const index of indexes) {
      const meta = (mappings[index] && mappings[index].mappings._meta) || {};
      const version = Number(meta.mailgate_mapping_version) || 0;
      if (version < MAPPING_VERSION) out.set(Number(m[1]), version);
    }
  }
  return out;
}

/**
 * Sets refresh_interval on all indexes of the prefix (`null` restores the default 1 s).
 * @param {Client} client
 * @param {string} prefix
 * @param {string|null} value
 */
async function setRefresh(client, prefix, value) {
  await client.indices.putSettings({
    index: `${prefix}-u*`,
    allow_no_indices: true,
    ignore_unavailable: true,
    settings: { index: { refresh_interval: value } },
  });
}

/**
 * Deletes every index under a prefix, by name (ES 8 refuses a wildcard delete:
 * action.destructive_requires_name): a scratch prefix's cleanup (the bench, tests).
 * @param {Client} client
 * @param {string} prefix
 * @returns {Promise<string[]>} the indexes deleted
 */
async function dropIndexes(client, prefix) {
  const found = await client.indices.get({
    index: `${prefix}-*`,
    allow_no_indices: true,
    ignore_unavailable: true,
  });
  const names = Object.keys(found);
  if (names.length) await client.indices.delete({ index: names });
  return names;
}

module.exports = {
  createClient,
  dropIndexes,
  isNotFound,
  unavailable,
  aliasMap,
  createIndex,
  writeTargets,
  setRefresh,
  outdatedUsers,
};
