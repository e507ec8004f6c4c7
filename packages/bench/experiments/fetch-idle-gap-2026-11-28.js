'use strict';
/*
 * The first fetch's statement (store hiddenSourcesPrepared's text, named, generic plan, on the
 * newest bench user's partition) through node-postgres on one connection, two ways alternating
 * 1,500 times: right after the previous call ("back to back") and after a 1 ms idle gap (a
 * setTimeout, both processes asleep meanwhile, as between an IMAP client's commands). Medians
 * in µs, the first 100 of each left out. The embedded server of MAILGATE_HOME (its pg.json).
 *
 *   MAILGATE_HOME=/tmp/fetch-work/pg-home flock -x /work/coord/cpu.lock nice \
 *     node packages/bench/experiments/fetch-idle-gap-2026-11-28.js > idle-gap.json
 */
const path = require('path');
const fs = require('fs');
const pg = require('pg');
const cfg = JSON.parse(fs.readFileSync(path.join(process.env.MAILGATE_HOME, 'pg.json'), 'utf8'));
(async () => {
  const c = new pg.Client({ host: '127.0.0.1', port: cfg.port, user: 'mailgate', password: cfg.password, database: 'mailgate', options: '-c plan_cache_mode=force_generic_plan' });
  await c.connect();
  try {
    const u = (await c.query("SELECT id FROM users WHERE name LIKE 'bimap-large%' ORDER BY id DESC LIMIT 1")).rows[0].id;
    const t = `message_sources_u${u}`;
    const text = `SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq, b.uidvalidity AS mb_uidvalidity, b.uidnext AS mb_uidnext, x.* FROM mailboxes b LEFT JOIN LATERAL (SELECT s.uid, s.raw, s.raw_codec FROM ${t} s WHERE s.user_id = $1 AND s.mailbox_id = b.id AND s.uid = ANY($2::bigint[]) ORDER BY s.uid) x ON true WHERE b.user_id = $1 AND b.name = $3`;
    const T = { backToBack: [], afterIdleGap: [] };
    const load0 = require('os').loadavg();
    for (let i = 0; i < 1500; i++) {
      const uid = 1 + ((i * 13) % 21000);
      let t0 = process.hrtime.bigint();
      await c.query({ name: 'q', text, values: [u, [uid], 'INBOX'] });
      T.backToBack.push(Number(process.hrtime.bigint() - t0) / 1e3);
      await new Promise((r) => setTimeout(r, 1));
      t0 = process.hrtime.bigint();
      await c.query({ name: 'q', text, values: [u, [uid + 1], 'INBOX'] });
      T.afterIdleGap.push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    const med = (a) => { const s = a.slice(100).sort((x, y) => x - y); return +s[s.length >> 1].toFixed(1); };
    process.stdout.write(`${JSON.stringify({ when: new Date().toISOString(), loadavg: [load0, require('os').loadavg()], user: u, calls: 1500, medianUs: { backToBack: med(T.backToBack), afterIdleGap: med(T.afterIdleGap) } }, null, 1)}\n`);
  } finally {
    await c.end();
  }
})();
