'use strict';

/*
 * The store's Citus differences, all named here (docs/scaling-out.md). The store has one code
 * path; on a Citus coordinator (the `citus` extension installed in the database) only these
 * differ:
 *
 *   1. The schema is distributed by `user_id` (distributeSchema, run by migration
 *      20261128340000_citus_distribute.js): every table holding a user's rows is a hash-
 *      distributed table co-located with `mailboxes`, so all of one user's rows sit in the same
 *      shard group on one worker and every per-user statement (they all carry `user_id = $n`)
 *      is a single-task router query. `users` and `api_tokens` are reference tables (small,
 *      looked up by name or token hash without a user id, copied to every node).
 *      Tables made by later migrations (message_imap) distribute themselves the same way
 *      (distributeTable).
 *   2. No per-user LIST partitions (perUserPartitions): thousands of users times 32 shards
 *      would be hundreds of thousands of tables. Each partitioned parent gets one DEFAULT
 *      partition, distributed; the hash shard plays the per-user table's part (a user's rows
 *      are in one shard, whose indexes all lead with user_id) and Citus prunes to that shard
 *      before PostgreSQL prunes partitions. Per-user partition maintenance (analyze of
 *      `messages_u<id>`, drop with the user) has nothing to do there.
 *   3. Keys: Citus refuses a PRIMARY KEY or UNIQUE constraint without the distribution column,
 *      and a foreign key between distributed tables that does not include it. `mailboxes`,
 *      `import_jobs` and `es_outbox` get `(user_id, id)` keys (ids still come from their
 *      sequences, through the coordinator), `list_snapshots` references `mailboxes (user_id,
 *      id)`. On a single PostgreSQL the schema keeps its `id` keys (nothing there needs more).
 *   4. Triggers on distributed tables (the words/chunks side tables, the mailbox NOTIFY) run on
 *      the shards; Citus requires `citus.enable_unsafe_triggers = on` (set per database by
 *      distributeSchema, and in the nodes' configuration by scripts/citus/citus.sh). The side
 *      tables are co-located, so a trigger's write lands on the same worker.
 *   5. The message_chunks triggers fire per row, not per statement (rowLevelChunkTriggers).
 *      (Since migration 20261130610200_text_in_pieces_only.js the insert side is one BEFORE
 *      INSERT row trigger on both, which replaces the AFTER INSERT trigger made here.)
 *   6. No mailbox NOTIFY trigger (migration 20261127200200_mailbox_notify.js): on a shard it
 *      would notify the worker's database, where no mailgate process listens, and a
 *      transaction that NOTIFYs cannot be PREPAREd, which Citus's two-phase commit needs.
 *      Instead the store's writers call notifyMailboxes in their transaction, after they move
 *      a mailbox's UIDNEXT or HIGHESTMODSEQ: a `pg_notify` with no table in it runs on the
 *      coordinator, in the session's own transaction (the one Citus commits last, never
 *      PREPAREd), so it is delivered at commit and dropped at rollback, to the coordinator's
 *      LISTEN connections (change-feed.js) — what the trigger does on a single PostgreSQL.
 *   7. Sizes on disk (disk-ops.js relationSizes): the coordinator's copy of a distributed or
 *      reference table is an empty shell; its bytes are those of its shards on the workers
 *      (shardSizes), and the database's those of every node.
 *   8. No prepared reads (prepared-reads.js): they name the user's own partition, which Citus
 *      does not have, and with `plan_cache_mode = force_generic_plan` the coordinator cannot
 *      plan the join of two distributed tables on a parameter ("could not create distributed
 *      plan"). IMAP FETCH's read of message bytes keeps the unprepared statement there.
 *   9. An append's GIN pending-list limit (append-ops.js APPEND_PENDING_LIMIT) is set with
 *      set_config in its allocating statement, whose CTE runs on the coordinator: the workers
 *      keep their own gin_pending_list_limit, so an insert there merges its lists at that
 *      limit, as every insert did before.
 *  10. An append's transaction (append-ops.js appendTransaction) runs in a knex transaction,
 *      not on the append's pipelined connections (append-writer.js): the same statements,
 *      one round trip each, plus the store's pg_notify (point 6). The pipelined path's named
 *      statements and its settings (plan_cache_mode) are for a single PostgreSQL, as the
 *      prepared reads are (point 8).
 *
 * Must never: hold SQL that is not about these differences, or be a second store.
 */

/** Tables copied to every node. */
const REFERENCE_TABLES = ['users', 'api_tokens'];

/**
 * Tables distributed by user_id, co-located with the first one, in creation order.
 * Partitioned parents are marked: they get one DEFAULT partition instead of per-user ones.
 */
const DISTRIBUTED_TABLES = [
  { name: 'mailboxes' },
  { name: 'messages', partitioned: true },
  { name: 'message_sources', partitioned: true },
  { name: 'message_words', partitioned: true },
  { name: 'message_chunks', partitioned: true },
  { name: 'quarantine', partitioned: true },
  { name: 'import_jobs' },
  { name: 'expunged_uids' },
  { name: 'list_snapshots' },
  { name: 'thread_keys' },
  { name: 'subscriptions' },
  { name: 'es_outbox' },
];

/**
 * Storage options of the DEFAULT partitions, as createPartitions gives per-user ones (user-ops.js).
 */
const PARTITION_OPTIONS = {
  messages:
    ' WITH (fillfactor = 50, toast_tuple_target = 512, autovacuum_analyze_scale_factor = 4)',
  message_words: ' WITH (toast_tuple_target = 128)',
  message_chunks: ' WITH (toast_tuple_target = 128)',
};

const { CHANNEL } = require('./change-feed');

const known = new WeakMap();

/**
 * Whether the database behind knex is a Citus coordinator (the extension is installed). Cached
 * per knex instance (its configuration, which its transactions share): an extension does not
 * come or go under a running store.
 * @param {import('knex').Knex} knex a knex instance or one of its transactions
 * @returns {Promise<boolean>}
 */
async function isCitus(knex) {
  const key = (knex.client && knex.client.config) || knex.client || knex;
  if (known.has(key)) return known.get(key);
  const r = await knex.raw("SELECT 1 FROM pg_extension WHERE extname = 'citus'");
  const yes = r.rows.length > 0;
  known.set(key, yes);
  return yes;
}

/**
 * Whether a new user gets their own LIST partitions (single PostgreSQL) or shares the DEFAULT
 * partition of a distributed table (Citus, point 2 above).
 * @param {import('knex').Knex} knex
 * @returns {Promise<boolean>}
 */
async function perUserPartitions(knex) {
  return !(await isCitus(knex));
}

async function constraintName(knex, table, type) {
  const r = await knex.raw(
    `SELECT conname FROM pg_constraint WHERE conrelid = ?::regclass AND contype = ?`,
    [table, type],
  );
  return r.rows.map((x) => x.conname);
}

async function hasPartitions(knex, table) {
  const r = await knex.raw('SELECT 1 FROM pg_inherits WHERE inhparent = ?::regclass LIMIT 1', [
    table,
  ]);
  return r.rows.length > 0;
}

/**
 * Distributes the schema over the Citus cluster (points 1-4 above). A no-op on a single
 * PostgreSQL. Runs on an empty or a populated store: create_distributed_table moves existing
 * rows into the shards.
 * @param {import('knex').Knex} knex a connection (or transaction) on the coordinator
 */
async function distributeSchema(knex) {
  if (!(await isCitus(knex))) return;
  // Triggers on distributed tables (point 4); DDL on shards one after another inside the
  // migration's transaction (parallel shard DDL after writes in one transaction is refused).
  await knex.raw('SET LOCAL citus.enable_unsafe_triggers = on');
  await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  const db = (await knex.raw('SELECT current_database() AS db')).rows[0].db;
  // Later sessions (the store's own) fire the shards' triggers too.
  await knex.raw(
    `ALTER DATABASE "${db.replace(/"/g, '""')}" SET citus.enable_unsafe_triggers = on`,
  );

  for (const t of REFERENCE_TABLES) {
    await knex.raw('SELECT create_reference_table(?)', [t]);
  }

  // Keys with the distribution column (point 3).
  for (const fk of await constraintName(knex, 'list_snapshots', 'f')) {
    await knex.raw(`ALTER TABLE list_snapshots DROP CONSTRAINT "${fk}"`);
  }
  for (const t of ['mailboxes', 'import_jobs', 'es_outbox']) {
    for (const pk of await constraintName(knex, t, 'p')) {
      await knex.raw(`ALTER TABLE ${t} DROP CONSTRAINT "${pk}"`);
    }
    await knex.raw(`ALTER TABLE ${t} ADD PRIMARY KEY (user_id, id)`);
  }
  // The outbox drain reads in id order across users.
  await knex.raw('CREATE INDEX IF NOT EXISTS es_outbox_id_idx ON es_outbox (id)');

  await rowLevelChunkTriggers(knex);
  // Point 6: no NOTIFY trigger on the distributed mailboxes.
  await knex.raw('DROP TRIGGER IF EXISTS mailboxes_notify ON mailboxes');

  for (const { name, partitioned } of DISTRIBUTED_TABLES) {
    // One DEFAULT partition instead of per-user ones (point 2).
    if (partitioned && !(await hasPartitions(knex, name))) {
      await knex.raw(
        `CREATE TABLE ${name}_all PARTITION OF ${name} DEFAULT${PARTITION_OPTIONS[name] || ''}`,
      );
    }
    await knex.raw(
      name === 'mailboxes'
        ? "SELECT create_distributed_table('mailboxes', 'user_id')"
        : "SELECT create_distributed_table(?, 'user_id', colocate_with => 'mailboxes')",
      name === 'mailboxes' ? [] : [name],
    );
  }
  await knex.raw(`ALTER TABLE list_snapshots ADD FOREIGN KEY (user_id, mailbox_id)
    REFERENCES mailboxes (user_id, id) ON DELETE CASCADE`);
  await knex.raw(`ALTER TABLE list_snapshots ADD FOREIGN KEY (user_id)
    REFERENCES users (id) ON DELETE CASCADE`);
}

/**
 * Distributes one partitioned user table created after distributeSchema ran (a later
 * migration's, e.g. message_imap): one DEFAULT partition, distributed by user_id and
 * co-located with mailboxes, as distributeSchema does for the tables it knows (points 1-2).
 * Call only on a Citus coordinator (isCitus).
 * @param {import('knex').Knex} knex a connection (or transaction) on the coordinator
 * @param {string} name a table partitioned by LIST (user_id), without partitions
 */
async function distributeTable(knex, name) {
  // DDL on shards one after another inside the migration's transaction (as distributeSchema).
  await knex.raw("SET LOCAL citus.multi_shard_modify_mode = 'sequential'");
  await knex.raw(
    `CREATE TABLE ${name}_all PARTITION OF ${name} DEFAULT${PARTITION_OPTIONS[name] || ''}`,
  );
  await knex.raw("SELECT create_distributed_table(?, 'user_id', colocate_with => 'mailboxes')", [
    name,
  ]);
}

/**
 * Point 5: the message_chunks triggers per row instead of per statement. On a single PostgreSQL
 * they run once per statement over its transition table (an import batch is one statement,
 * migration 20261125220000_message_chunks.js); on a shard, the trigger's INSERT into the
 * distributed message_chunks is planned by Citus, which cannot read a transition table
 * ("could not find named tuplestore"). Per row, each write names one message: a router write to
 * the co-located shard on the same worker (local execution).
 * @param {import('knex').Knex} knex
 */
async function rowLevelChunkTriggers(knex) {
  await knex.raw('DROP TRIGGER IF EXISTS message_chunks_added ON messages');
  await knex.raw('DROP TRIGGER IF EXISTS message_chunks_gone ON messages');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_chunks_added_row() RETURNS trigger
      LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO message_chunks (user_id, mailbox_id, uid, kind, seq, t)
        SELECT NEW.user_id, NEW.mailbox_id, NEW.uid, k.kind, p.seq, p.piece
          FROM (VALUES (0::smallint, NEW.header_text), (1::smallint, NEW.body_text)) AS k(kind, t),
               LATERAL mailgate_text_pieces(k.t) AS p
         WHERE k.t <> '';
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE OR REPLACE FUNCTION mailgate_message_chunks_gone_row() RETURNS trigger
      LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM message_chunks
       WHERE user_id = OLD.user_id AND mailbox_id = OLD.mailbox_id AND uid = OLD.uid;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER message_chunks_added AFTER INSERT ON messages
      FOR EACH ROW EXECUTE FUNCTION mailgate_message_chunks_added_row()`);
  await knex.raw(`CREATE TRIGGER message_chunks_gone AFTER DELETE ON messages
      FOR EACH ROW EXECUTE FUNCTION mailgate_message_chunks_gone_row()`);
}

/**
 * Point 6: tells every process's LISTEN (change-feed.js) that these mailboxes changed, at the
 * commit of the writer's transaction, on Citus, where the mailboxes trigger that does it on a
 * single PostgreSQL is dropped; a no-op there. Called by each store write that moves a
 * mailbox's UIDNEXT or HIGHESTMODSEQ (the trigger's condition), in its transaction.
 * @param {import('knex').Knex} knex the store's knex (whose Citus-ness is cached)
 * @param {{raw?: Function, query?: Function}} db where the write runs: a knex transaction (or
 *   knex itself, autocommit), or a raw pg client inside BEGIN … COMMIT
 * @param {number} userId
 * @param {number[]} mailboxIds
 */
async function notifyMailboxes(knex, db, userId, mailboxIds) {
  if (!mailboxIds.length || !(await isCitus(knex))) return;
  const ids = [...new Set(mailboxIds.map(Number))];
  const sql = `SELECT pg_notify('${CHANNEL}', $1::text || ':' || b) FROM unnest($2::int[]) AS b`;
  if (typeof db.raw === 'function')
    await db.raw(sql.replace('$1', '?').replace('$2', '?'), [userId, ids]);
  else await db.query(sql, [userId, ids]);
}

/**
 * Point 2: vacuumUser on Citus. A user has no partitions of their own: the DEFAULT partitions
 * their rows share are vacuumed and analyzed whole, every shard (Citus sends VACUUM to each
 * placement). Cross-user, so for what vacuumUser is for — a benchmark's load settled before it
 * times requests, as on a single PostgreSQL — and not for a request path.
 * @param {import('knex').Knex} knex
 */
async function vacuumSharedPartitions(knex) {
  // Every DEFAULT partition of a partitioned user table, read from the catalog: the list of
  // distributeSchema misses the tables later migrations distribute (distributeTable:
  // message_imap, message_imap_lines, message_vocab), whose statistics were then left to the
  // workers' autovacuum. thread_keys is shared as on a single PostgreSQL (statsTables).
  const r = await knex.raw(
    `SELECT c.relname FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       JOIN pg_partitioned_table p ON p.partrelid = i.inhparent
       JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relname LIKE '%\\_all' AND c.relname <> 'quarantine_all'
      ORDER BY 1`,
  );
  // Catalog names of our own tables (no user input); quoted all the same.
  const parts = r.rows.map((x) => `"${x.relname}"`);
  await knex.raw(`VACUUM (ANALYZE) ${[...parts, 'thread_keys'].join(', ')}`);
}

// One shard's sizes, run by run_command_on_shards on the shard's node (`%1$s`: its name).
const SHARD_SIZES = `SELECT json_build_object(
    'heap', pg_relation_size('%1$s', 'main') + pg_relation_size('%1$s', 'fsm')
            + pg_relation_size('%1$s', 'vm'),
    'toast', COALESCE(pg_total_relation_size(NULLIF(
               (SELECT reltoastrelid FROM pg_class WHERE oid = '%1$s'::regclass), 0)), 0),
    'indexes', COALESCE((SELECT json_agg(json_build_object('name', ic.relname,
                 'bytes', pg_relation_size(ic.oid)))
                 FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
                WHERE x.indrelid = '%1$s'::regclass), '[]'))`;

/**
 * The coordinator's name of a shard's index: Citus appends `_<shardid>` to the index's name,
 * and a name that would pass PostgreSQL's 63 bytes is cut and given an 8-hex-digit hash
 * before the suffix (`…_content_hash_du_41543ea9_102008`): the one coordinator index whose
 * name starts with the cut part.
 * @param {string} shardIndex
 * @param {string|number} shardId
 * @param {string[]} names the table's index names on the coordinator
 * @returns {string} the coordinator's name, or the shard's without its suffix
 */
function indexOf(shardIndex, shardId, names) {
  const bare = shardIndex.replace(new RegExp(`_${shardId}$`), '');
  if (names.includes(bare)) return bare;
  const cut = /^(.*)_[0-9a-f]{8}$/.exec(bare);
  const found = cut ? names.filter((n) => n.startsWith(cut[1])) : [];
  return found.length === 1 ? found[0] : bare;
}

/**
 * Point 7: the bytes of the Citus tables among `tables` summed over their shards (a reference
 * table's one shard counted once), after a CHECKPOINT on every worker, and the bytes of the
 * database on every node; null on a single PostgreSQL (nothing to add there).
 * @param {import('knex').Knex} knex
 * @param {Map<string, string[]>} tables relation names of the public schema, each with its
 *   index names on the coordinator (a shard's index is named after one of them)
 * @returns {Promise<{tables: Map<string, {heap: number, toast: number,
 *   indexes: Array<{name: string, bytes: number}>}>, workerDatabaseBytes: number}|null>}
 */
async function shardSizes(knex, tables) {
  if (!(await isCitus(knex))) return null;
  await knex.raw(`SELECT run_command_on_workers('CHECKPOINT')`);
  const citusTables = await knex.raw(
    `SELECT c.relname FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
      WHERE c.relname = ANY(?::text[]) AND c.relkind = 'r'`,
    [[...tables.keys()]],
  );
  const out = new Map();
  for (const { relname } of citusTables.rows) {
    const r = await knex.raw(
      `SELECT shardid, success, result FROM run_command_on_shards(?::regclass, ?)`,
      [`public.${relname}`, SHARD_SIZES],
    );
    const sum = { heap: 0, toast: 0, indexes: new Map() };
    for (const row of r.rows) {
      if (!row.success) throw new Error(`shard ${row.shardid} of ${relname}: ${row.result}`);
      const one = JSON.parse(row.result);
      sum.heap += Number(one.heap);
      sum.toast += Number(one.toast);
      for (const i of one.indexes) {
        const name = indexOf(i.name, row.shardid, tables.get(relname) || []);
        sum.indexes.set(name, (sum.indexes.get(name) || 0) + Number(i.bytes));
      }
    }
    out.set(relname, {
      heap: sum.heap,
      toast: sum.toast,
      indexes: [...sum.indexes]
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([name, bytes]) => ({ name, bytes })),
    });
  }
  const db = await knex.raw(
    `SELECT COALESCE(sum(result::bigint), 0) AS bytes
       FROM run_command_on_workers('SELECT pg_database_size(current_database())')
      WHERE success`,
  );
  return { tables: out, workerDatabaseBytes: Number(db.rows[0].bytes) };
}

module.exports = {
  isCitus,
  shardSizes,
  vacuumSharedPartitions,
  notifyMailboxes,
  perUserPartitions,
  distributeSchema,
  distributeTable,
  REFERENCE_TABLES,
  DISTRIBUTED_TABLES,
};
