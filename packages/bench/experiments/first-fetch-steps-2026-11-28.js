'use strict';

/*
 * Where the first fetch of a message goes, per step (issue 35.4): mailgate's IMAP server and the
 * bench's raw client in one process on the bench's database (MAILGATE_HOME, the newest bench
 * user, whose password this sets), `UID FETCH n (BODY.PEEK[])` of messages never fetched
 * before (every 40th uid, 2 x 300), the prepared read on and off alternating per message
 * (store.preparedReads). Per sample:
 *
 *   total     the raw client's time, command written → tagged OK read (as the bench times it)
 *   service   inside the backend's getRawWithStatus: the store, the driver, the round trip
 *             to PostgreSQL and its work
 *   rest      total − service: the IMAP server's own work (parse, dispatch, view lookup, CRLF,
 *             response, socket write) and loopback both ways, the client's framing
 *
 * The body cache is off (MAILGATE_IMAP_BODY_CACHE_MB=0 set here) so that no sample is served
 * from memory; each uid is fetched once.
 *
 *   MAILGATE_HOME=/tmp/fetch-work/pg-home flock -x /work/coord/cpu.lock nice \
 *     node packages/bench/experiments/first-fetch-steps-2026-11-28.js
 */

process.env.MAILGATE_IMAP_BODY_CACHE_MB = '0';
process.env.LOG_LEVEL = 'silent';
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
const { RawImapClient } = require('../lib/raw-imap');

const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length ? Number(s[s.length >> 1].toFixed(3)) : null;
};

(async () => {
  const service = await createMailService({ env: process.env, purge: false });
  const server = createImapServer({ service, limits: { idlePollMs: 2000 } });
  let raw;
  try {
    const users = await service.users.list();
    const name = users.map((u) => u.name || u).sort().pop();
    await service.users.setPassword(name, 'steps pw 123');
    const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
    // The service's time per getRawWithStatus, by wrapping the backend class's method.
    const probe = await service.openBackend('pg', name);
    const proto = Object.getPrototypeOf(probe);
    const orig = proto.getRawWithStatus;
    let inService = 0;
    proto.getRawWithStatus = async function timed(...a) {
      const t0 = process.hrtime.bigint();
      try {
        return await orig.apply(this, a);
      } finally {
        inService = Number(process.hrtime.bigint() - t0) / 1e6;
      }
    };
    raw = new RawImapClient({ host: '127.0.0.1', port });
    await raw.connect();
    await raw.login(name, 'steps pw 123');
    await raw.command('SELECT INBOX');
    const out = { user: name, on: { total: [], service: [], rest: [] }, off: {} };
    out.off = { total: [], service: [], rest: [] };
    const N = Number(process.env.STEPS_N || 600);
    for (let i = 0; i < N; i++) {
      const uid = 1 + i * 35;
      const mode = i % 2 ? 'off' : 'on';
      service.store.preparedReads = mode === 'on';
      inService = 0;
      const r = await raw.command(`UID FETCH ${uid} (BODY.PEEK[])`);
      if (i < 20) continue; // the first plans and connections of each mode
      out[mode].total.push(r.ms);
      out[mode].service.push(inService);
      out[mode].rest.push(r.ms - inService);
    }
    const summary = {};
    for (const mode of ['on', 'off']) {
      summary[mode] = {
        samples: out[mode].total.length,
        medianMs: {
          total: median(out[mode].total),
          service: median(out[mode].service),
          rest: median(out[mode].rest),
        },
      };
    }
    process.stdout.write(
      `${JSON.stringify({ when: new Date().toISOString(), loadavg: require('node:os').loadavg(), user: name, summary }, null, 2)}\n`,
    );
  } finally {
    if (raw) await raw.logout().catch(() => {});
    await server.close();
    await service.close();
  }
})().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(1);
});
