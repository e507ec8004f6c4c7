'use strict';

/**
 * Entries an import kept in quarantine for a user (newest first): what `mailgate quarantine`
 * lists. The raw bytes stay in the store; this lists source, position, reason and size.
 * @param {{store: import('@mailgate/store').PgStore, user: string, source?: string, limit?: number}} opts
 * @returns {Promise<object[]>}
 */
async function listQuarantine(opts) {
  const user = await opts.store.getUser(opts.user);
  return opts.store.listQuarantine(user.id, { source: opts.source, limit: opts.limit });
}

/**
 * The exact bytes of one quarantine entry of a user (to fix and import again).
 * @param {{store: import('@mailgate/store').PgStore, user: string, id: number}} opts
 * @returns {Promise<Buffer>} QUARANTINE_NOT_FOUND
 */
async function quarantineRaw(opts) {
  const user = await opts.store.getUser(opts.user);
  return opts.store.quarantineRaw(user.id, opts.id);
}

module.exports = { listQuarantine, quarantineRaw };
