'use strict';
/*
 * mailgate's IMAP server (bench lib/imap-child.js of the tree TREE) with a timeline of every
 * command of a selected session, for first-fetch-timeline-2026-11-28.sh: monotonic µs
 * (process.hrtime, the same clock as the driving client's) of the socket data received, the
 * pg statement sent and its answer resolved (the prepared read), the backend's
 * getRawWithStatus, the store's sourcesWithMailbox, scanList, untagged, sync, and the last
 * socket write (releaseOutput after the tagged OK); process CPU (getrusage: every thread)
 * from receipt to that write and from it to the next receipt. SIGUSR2 writes the rows to
 * TL_OUT. The wrappers add a few µs of their own (async wrappers around four methods).
 */
const path = require('path');
const TREE = path.resolve(process.env.TREE || path.join(__dirname, '../../..'));
const req = (p) => require(path.join(TREE, p));
const { Session } = req('packages/imap/lib/session.js');
const { PgBackend } = req('packages/service/lib/pg-backend.js');
const { PgStore } = req('packages/store/lib/pg-store.js');
const pg = require(path.join(TREE, 'node_modules/pg'));
const now = () => Number(process.hrtime.bigint()) / 1e3;
const cpuNow = () => { const u = process.cpuUsage(); return u.user + u.system; };
const rows = [];
let cur = null;
const origReceive = Session.prototype.receive;
Session.prototype.receive = function (chunk) {
  if (this.state === 'selected') {
    const cpu = cpuNow();
    if (cur && cur.txCpu !== undefined) cur.postCpu = cpu - cur.txCpu;
    cur = { rx: now(), rxCpu: cpu };
    rows.push(cur);
  }
  return origReceive.call(this, chunk);
};
const origTagged = Session.prototype.tagged;
Session.prototype.tagged = function (...a) { const r = origTagged.apply(this, a); if (cur) cur.tagged = now(); return r; };
const origRelease = Session.prototype.releaseOutput;
Session.prototype.releaseOutput = function () {
  const r = origRelease.call(this);
  if (cur && cur.tagged && !cur.tx) { cur.tx = now(); cur.txCpu = cpuNow(); cur.cmdCpu = cur.txCpu - cur.rxCpu; }
  return r;
};
const origQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  if (config && config.name && cur && !cur.q0) {
    const c = cur; c.q0 = now();
    return origQuery.call(this, config, ...rest).then((r) => { c.q1 = now(); return r; });
  }
  return origQuery.call(this, config, ...rest);
};
const mark = (obj, name, k0, k1) => {
  const orig = obj[name];
  obj[name] = async function (...a) {
    const c = cur; if (c && !c[k0]) c[k0] = now();
    try { return await orig.apply(this, a); } finally { if (c && !c[k1]) c[k1] = now(); }
  };
};
mark(PgBackend.prototype, 'getRawWithStatus', 'be0', 'be1');
mark(PgBackend.prototype, 'scanList', 'sl0', 'sl1');
mark(PgStore.prototype, 'sourcesWithMailbox', 'st0', 'st1');
mark(Session.prototype, 'sync', 'sy0', 'sy1');
const origUnt = Session.prototype.untagged;
Session.prototype.untagged = function (p) { const c = cur; if (c && !c.un0) c.un0 = now(); const r = origUnt.call(this, p); if (c && !c.un1) c.un1 = now(); return r; };
process.on('SIGUSR2', () => { require('fs').writeFileSync(process.env.TL_OUT, JSON.stringify(rows)); });
req('packages/bench/lib/imap-child.js');
