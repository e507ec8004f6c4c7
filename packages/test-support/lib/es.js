'use strict';

const crypto = require('node:crypto');
const { Client } = require('@elastic/elasticsearch');
const { inCI } = require('./skip');

/*
 * Elasticsearch for tests: ELASTICSEARCH_URL must point at a node (`npm run es:start`). In CI a
 * missing or unreachable node fails the suite; elsewhere the file skips with a printed reason.
 * Each file gets its own index prefix (MAILGATE_ES_PREFIX) and deletes its indexes afterwards.
 */

const url = process.env.ELASTICSEARCH_URL || null;

/**
 * Checks the node once; returns null when usable, else the reason to skip.
 * @returns {Promise<string|null>}
 */
async function esUnavailableReason() {
  if (!url)
    return 'ELASTICSEARCH_URL is not set (npm run es:start; ELASTICSEARCH_URL=http://127.0.0.1:9200)';
  const c = new Client({ node: url, requestTimeout: 5000, maxRetries: 0 });
  try {
    await c.cluster.health({ wait_for_status: 'yellow', timeout: '5s' });
    return null;
  } catch (err) {
    return `Elasticsearch at ${url} is not reachable (${err.message})`;
  } finally {
    await c.close();
  }
}

/**
 * `describe` that runs only with a reachable node (fails in CI otherwise).
 * @param {string} file for the skip message
 * @param {string} name
 * @param {(env: {url: string, prefix: string, client: Client}) => void} fn
 */
function describeEs(file, name, fn) {
  const prefix = `mgt-${crypto.randomBytes(4).toString('hex')}`;
  const env = { url, prefix, client: url ? new Client({ node: url, maxRetries: 0 }) : null };
  describe(name, () => {
    let reason = null;
    beforeAll(async () => {
      reason = await esUnavailableReason();
      if (reason && inCI) throw new Error(`Elasticsearch needed in CI: ${reason}`);
      if (reason) console.log(`skipping ${file}: ${reason}`);
    });
    afterAll(async () => {
      if (!env.client) return;
      await env.client.indices
        .delete({ index: `${prefix}-*`, ignore_unavailable: true, allow_no_indices: true })
        .catch(() => {});
      await env.client.close();
    });
    env.skipped = () => reason !== null;
    fn(env);
  });
}

module.exports = { describeEs, esUnavailableReason, url };
