'use strict';

const { shardSizes } = require('./citus');

/*
 * Bytes on disk of the store's relations (the bench's disk figure, issue 30.6; through the
 * service since issue 31.3): the only place that reads relation sizes from the catalogue. Reads
 * only; must never change a row. Plain functions taking the store first (PgStore's methods of
 * the same names call them).
 */

/**
 * Bytes of every table of the public schema after a CHECKPOINT (so that what the last writes
 * left in shared buffers is on disk): heap (main fork, with its free space and visibility
 * maps), TOAST (with its index) and each index. Per-user partitions keep their own names
 * (`messages_u7`); with `userId`, only that user's partitions and the shared tables. On Citus
 * the coordinator's copies are empty shells: a distributed or reference table's sizes are the
 * sums over its shards and the database's over every node (citus.js shardSizes; there are no
 * per-user partitions there, so `userId` leaves nothing out).
 * CHECKPOINT needs a superuser or pg_checkpoint (the embedded server's user is one).
 * @param {import('./pg-store').PgStore} store
 * @param {{userId?: number}} [opts]
 * @returns {Promise<{tables: Array<{table: string, heap: number, toast: number,
 *   indexes: Array<{name: string, bytes: number}>}>, databaseBytes: number}>}
 */
async function relationSizes(store, opts = {}) {
  const user = opts.userId == null ? null : Number(opts.userId);
  if (user !== null && (!Number.isInteger(user) || user <= 0)) throw new Error('invalid user id');
  await store.knex.raw('CHECKPOINT');
  // A partition's name ends in _u<id> (user-ops.js createPartitions); a user's own are kept
  // and every other user's left out.
  const r = await store.knex.raw(
    `SELECT c.relname AS table,
           pg_relation_size(c.oid, 'main') AS heap,
           pg_relation_size(c.oid, 'fsm') + pg_relation_size(c.oid, 'vm') AS maps,
           COALESCE(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS toast,
           COALESCE((SELECT json_agg(json_build_object('name', ic.relname,
                       'bytes', pg_relation_size(ic.oid)) ORDER BY ic.relname)
                       FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
                      WHERE x.indrelid = c.oid), '[]') AS indexes
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'm')
       AND (?::int IS NULL OR c.relname !~ '_u[0-9]+$' OR c.relname ~ ('_u' || ? || '$'))
     ORDER BY c.relname`,
    [user, user],
  );
  const db = await store.knex.raw('SELECT pg_database_size(current_database()) AS bytes');
  const shards = await shardSizes(
    store.knex,
    new Map(r.rows.map((t) => [t.table, t.indexes.map((i) => i.name)])),
  );
  return {
    tables: r.rows.map((t) => {
      const onShards = shards && shards.tables.get(t.table);
      if (onShards) return { table: t.table, ...onShards };
      return {
        table: t.table,
        heap: Number(t.heap) + Number(t.maps),
        toast: Number(t.toast),
        indexes: t.indexes.map((i) => ({ name: i.name, bytes: Number(i.bytes) })),
      };
    }),
    databaseBytes: Number(db.rows[0].bytes) + (shards ? shards.workerDatabaseBytes : 0),
  };
}

module.exports = { relationSizes };
