// node packages/bench/experiments/import-small-2026-11-25.js (run then as /tmp/hp/imp.js) <repo> <n-imports>  : imports the small mbox N times as new users, prints seconds + stages
const repo = process.argv[2];
const N = Number(process.argv[3] || 3);
const path = require('node:path');
const req = (m) => require(require.resolve(m, { paths: [repo] }));
const { buildMailbox } = require(repo + '/packages/bench/lib/mailboxes');
const { runImport } = req('@mailgate/importer');
const { loadConfig } = req('@mailgate/core');
const qlog = [];
if (process.env.PT) {
  const to = require(repo + '/packages/store/lib/thread-ops.js');
  const orig = to.threadBatch;
  to.threadBatch = async (store, db, userId, rows) => {
    const wrap = { raw: async (sql, b) => { if (process.env.EXPL && /thread_keys k|unnest/.test(sql)) { const e = await db.raw('EXPLAIN (ANALYZE, BUFFERS, SUMMARY) ' + sql, b); console.log(e.rows.map((x) => x['QUERY PLAN']).join('\n')); } const t = process.hrtime.bigint(); const r = await db.raw(sql, b); qlog.push({ sql: sql.replace(/\s+/g, ' ').slice(0, 70), ms: Number(process.hrtime.bigint() - t) / 1e6, rows: r.rows ? r.rows.length : r.rowCount }); return r; } };
    const t = process.hrtime.bigint();
    const r = await orig(store, wrap, userId, rows);
    qlog.push({ sql: 'TOTAL threadBatch', ms: Number(process.hrtime.bigint() - t) / 1e6, rows: rows.length, r });
    return r;
  };
}
(async () => {
  const box = buildMailbox({ corpus: '/tmp/mailgate-corpus', work: '/tmp/hp/boxes', name: 'small', count: 1046 });
  const home = process.env.IMP_HOME || '/tmp/hp/imp-home-' + path.basename(repo);
  process.env.MAILGATE_HOME = home;
  const config = { ...loadConfig(), home, logLevel: 'warn' };
  const { openDatabase } = req('@mailgate/store');
  const { PgStore } = req('@mailgate/store');
  const db = await openDatabase(config);
  const store = new PgStore(db.knex, { outbox: false });
  const close = () => db.close();
  for (let i = 0; i < N; i++) {
    const user = `imp-${Date.now().toString(36)}-${i}`;
    const rep = await runImport({ store, kind: 'mbox', paths: [box.mbox], user, mailbox: 'INBOX', workers: config.importWorkers, batchSize: config.batchSize, progress: false });
    const st = Object.fromEntries(Object.entries(rep.stages || {}).map(([k, v]) => [k, Math.round(v)]));
    console.log(JSON.stringify({ ms: Math.round(rep.seconds * 1000), imported: rep.imported, stages: st }));
    if (process.env.PT) { const agg = {}; for (const q of qlog) { const a = (agg[q.sql] ||= { n: 0, ms: 0, rows: 0 }); a.n++; a.ms += q.ms; a.rows += q.rows || 0; } for (const [k, a] of Object.entries(agg)) console.log(a.n, a.ms.toFixed(1), a.rows, k); qlog.length = 0; }
    if (global.gc) global.gc();
  }
  await close();
})().catch((e) => { console.error(e); process.exit(1); });
