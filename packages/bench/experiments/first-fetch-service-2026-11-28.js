'use strict';

/*
 * The first fetch's read of message bytes outside the IMAP server (issue 35.4), on the bench's
 * database (MAILGATE_HOME, the newest bench user), one process, 1,200 reads of messages read once
 * each, three ways in turn: through the service's backend (getRawWithStatus, the user gate
 * included), the store's sourcesWithMailbox (`hidden`: the prepared read), and the prepared
 * statement alone on the prepared reads' pool (no decoding); plus the brotli decoding of each
 * stored value (message_sources.raw_codec 1, issue 30.6) timed apart. Medians in ms, the first
 * 30 of each left out.
 *
 *   MAILGATE_HOME=/tmp/fetch-work/pg-home flock -x /work/coord/cpu.lock nice \
 *     node packages/bench/experiments/first-fetch-service-2026-11-28.js
 */
process.env.LOG_LEVEL = 'silent';
const { createMailService } = require('@mailgate/service');
const zlib = require('node:zlib');
(async () => {
  const service = await createMailService({ env: process.env, purge: false });
  try {
    const name = (await service.users.list()).map((u) => u.name || u).sort().pop();
    const user = await service.users.get(name);
    const be = await service.openBackend('pg', name);
    const store = service.store;
    const { byName } = require('@mailgate/store');
    const prep = require('../../store/lib/prepared-reads');
    const t = { backend: [], store: [], rowsOnly: [], decode: [] };
    const codec = await store.knex.raw('select raw_codec, count(*) from message_sources where user_id = ? group by 1', [user.id]);
    const out = { when: new Date().toISOString(), loadavg: require('node:os').loadavg(), user: name, codecs: codec.rows, medianMs: {} };
    const table = `message_sources_u${user.id}`;
    const text = `SELECT b.id AS mb_id, b.highestmodseq AS mb_modseq, b.uidvalidity AS mb_uidvalidity, b.uidnext AS mb_uidnext, x.* FROM mailboxes b LEFT JOIN LATERAL (SELECT s.uid, s.raw, s.raw_codec FROM ${table} s WHERE s.user_id = $1 AND s.mailbox_id = b.id AND s.uid = ANY($2::bigint[]) ORDER BY s.uid) x ON true WHERE b.user_id = $1 AND b.name = $3`;
    for (let i = 0; i < 1200; i++) {
      const uid = 2 + i * 17;
      const k = ['backend', 'store', 'rowsOnly'][i % 3];
      const t0 = process.hrtime.bigint();
      let rows;
      if (k === 'backend') await be.getRawWithStatus('INBOX', [uid]);
      else if (k === 'store') await store.sourcesWithMailbox(user.id, byName('INBOX'), [uid], { hidden: true });
      else rows = await prep.preparedOf(store).rows('x', text, [user.id, [uid], 'INBOX']);
      t[k].push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (rows && rows[0].raw_codec) {
        const t1 = process.hrtime.bigint();
        zlib.brotliDecompressSync(rows[0].raw);
        t.decode.push(Number(process.hrtime.bigint() - t1) / 1e6);
      }
    }
    const med = (a) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[s.length >> 1].toFixed(3) : null; };
    for (const k of Object.keys(t)) out.medianMs[k] = Number(med(t[k].slice(30)));
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } finally { await service.close(); }
})();
