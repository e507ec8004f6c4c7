'use strict';

const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const dovecot = require('@mailgate/dovecot');
const { createMailService } = require('@mailgate/service');
const { buildMailbox, listMessages, messageRoot } = require('./mailboxes');
const { RawImapClient } = require('./raw-imap');
const { machineFacts } = require('./machine');
const {
  lmtpDeliver,
  imapAppend,
  smtpSource,
  haveSmtpSource,
  cpuMs,
  quantile,
} = require('./deliver-clients');

/*
 * Receiving mail, measured (issue 32.6, `npm run bench:deliver`): mailgate's LMTP server and
 * IMAP APPEND beside Dovecot's LMTP (dovecot-lmtpd) and IMAP APPEND on Maildir and on mbox,
 * each into an INBOX that already holds `messages` messages (the first of the corpus; mailgate
 * by import, Dovecot from the built Maildir and mbox), in one run on one machine:
 *
 *   lmtp          Postfix's smtp-source -L -d: `deliveries` generated messages of `size` body
 *                 bytes over 1 and 10 sessions (messages/s)
 *   lmtp-latency  the bench's own LMTP client: the next `deliveries` corpus messages, each
 *                 timed from MAIL FROM to its 250 (p50/p99), over the same session counts
 *   imap-append   the raw IMAP client: the same corpus messages by APPEND (LITERAL+), one
 *                 connection, each timed to its tagged OK
 *
 * Phases run in that order and, within a phase, server after server (so a busy moment of the
 * machine falls on all of them); each phase adds its messages, so the INBOX grows through the
 * run the same way for every server. Before each timed phase every server gets a warm-up of the
 * same kind (`warmup` messages, default 300, untimed, CPU not counted: smtp-source's for `lmtp`,
 * the corpus messages after the timed ones for the others, over the same sessions): a server
 * that runs for weeks has its code compiled and its caches and connections made, and a fresh
 * `serve` spent ~30% more CPU a delivery in its first 300 than after 1,500
 * (bench/results/deliver-2026-11-28-cpu-split/warm.txt); Dovecot's processes and caches warm
 * up the same way. CPU per message: the server's processes (mailgate's one
 * `serve` process and every PostgreSQL process; Dovecot's master and all its children) from
 * /proc, before and after the phase. After each phase every server is asked over IMAP how many
 * messages it holds and which Message-IDs arrived: each delivered message exactly once.
 */

const SERVERS = ['mailgate', 'dovecot-maildir', 'dovecot-mbox'];
const { freePort } = dovecot;

/** Resolves when something accepts connections on the port (or rejects after `ms`). */
async function waitPort(port, ms, child) {
  const t0 = Date.now();
  for (;;) {
    const ok = await new Promise((resolve) => {
      const c = net.connect(port, '127.0.0.1');
      c.once('connect', () => (c.destroy(), resolve(true)));
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (child && child.exitCode !== null) throw new Error(`server exited (${child.exitCode})`);
    if (Date.now() - t0 > ms) throw new Error(`nothing listens on ${port} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Message-IDs of raw messages (lower-cased; those without one are left out). */
function messageIds(raws) {
  const out = [];
  for (const raw of raws) {
    const head = raw.subarray(0, Math.max(0, raw.indexOf('\n\n')) || raw.length);
    const m = /^Message-ID:[ \t]*(<[^>\r\n]*>)/im.exec(head.toString('latin1'));
    if (m) out.push(m[1].toLowerCase());
  }
  return out.sort();
}

/**
 * mailgate: the INBOX imported into a new user of the bench's embedded PostgreSQL, then one
 * `mailgate serve` process with LMTP and IMAP on loopback ports (ES mirror off, as Dovecot
 * runs without FTS here).
 */
async function startMailgate(o, box) {
  const home = path.join(o.work, 'deliver-pg');
  const env = { ...process.env, MAILGATE_HOME: home, LOG_LEVEL: 'warn' };
  delete env.ELASTICSEARCH_URL;
  delete env.DATABASE_URL;
  const service = await createMailService({ env, purge: false });
  const user = `dlv${Date.now().toString(36)}`;
  const password = crypto.randomBytes(12).toString('hex');
  await service.users.create(user, { password });
  o.log(`mailgate: importing ${box.count} messages into ${user}'s INBOX`);
  await service.transfer.importMail({
    kind: 'mbox',
    paths: [box.mbox],
    user,
    mailbox: 'INBOX',
    progress: false,
  });
  await service.vacuumUser(user);
  await service.close();
  const [lmtpPort, imapPort, httpPort] = [await freePort(), await freePort(), await freePort()];
  const cli = path.resolve(__dirname, '..', '..', 'cli', 'bin', 'mailgate.js');
  const child = spawn(process.execPath, [cli, 'serve'], {
    env: {
      ...env,
      LMTP_PORT: String(lmtpPort),
      LMTP_HOST: '127.0.0.1',
      IMAP_PORT: String(imapPort),
      IMAP_HOST: '127.0.0.1',
      PORT: String(httpPort),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitPort(lmtpPort, 120000, child);
  await waitPort(imapPort, 120000, child);
  const pgPid = Number(
    fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0],
  );
  return {
    name: 'mailgate',
    lmtpPort,
    imapPort,
    user,
    password,
    rcpt: `${user}@bench.test`,
    pids: [child.pid, pgPid],
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    },
  };
}

/** Dovecot on a copy of the built Maildir or mbox, with its LMTP server. */
async function startDovecot(format, box) {
  const lmtpPort = await freePort();
  const inst = await dovecot.start({
    format,
    mail: format === 'mbox' ? box.mbox : box.maildir,
    link: format === 'maildir',
    lmtpPort,
  });
  return {
    name: `dovecot-${format}`,
    lmtpPort,
    imapPort: inst.port,
    user: inst.user,
    password: inst.password,
    rcpt: `${inst.user}@bench.test`,
    pids: [inst.pid],
    async stop() {
      await dovecot.stop(inst.dir, { keep: false });
    },
  };
}

/** A logged-in raw IMAP session on a server. */
async function imapSession(server) {
  const c = new RawImapClient({ port: server.imapPort });
  await c.connect();
  await c.login(server.user, server.password);
  return c;
}

/** INBOX's message count and UIDNEXT. */
async function inboxStatus(server) {
  const c = await imapSession(server);
  try {
    const t = (await c.command('STATUS INBOX (MESSAGES UIDNEXT)')).text();
    return {
      messages: Number(/MESSAGES (\d+)/.exec(t)[1]),
      uidnext: Number(/UIDNEXT (\d+)/.exec(t)[1]),
    };
  } finally {
    await c.logout();
  }
}

/** Message-IDs (sorted, lower-cased) of the INBOX's messages from `uid` on. */
async function idsFrom(server, uid) {
  const c = await imapSession(server);
  try {
    await c.command('EXAMINE INBOX');
    const t = (
      await c.command(`UID FETCH ${uid}:* (BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)])`)
    ).text();
    const out = [];
    for (const m of t.matchAll(/^Message-ID:[ \t]*(<[^>\r\n]*>)/gim)) out.push(m[1].toLowerCase());
    return out.sort();
  } finally {
    await c.logout();
  }
}

const round = (x, d = 2) => (x == null ? null : Number(x.toFixed(d)));

/**
 * One phase on one server: the load, CPU before and after, then what arrived.
 * @returns {Promise<object>} a result row
 */
async function measure(server, phase, sessions, o, mail, warm = []) {
  if (warm.length) await load(server, phase, sessions, { ...o, deliveries: warm.length }, warm);
  const before = await inboxStatus(server);
  const cpu0 = cpuMs(server.pids);
  const { run, client, command } = await load(server, phase, sessions, o, mail);
  const cpu1 = cpuMs(server.pids);
  const count = phase === 'lmtp' ? o.deliveries : mail.length;
  const after = await inboxStatus(server);
  const ids = await idsFrom(server, before.uidnext);
  let exactlyOnce;
  if (phase === 'lmtp') {
    // smtp-source's Message-Ids are its own (<pid.session.message@host>): all distinct.
    exactlyOnce = ids.length === count && new Set(ids).size === count;
  } else {
    const want = messageIds(mail);
    exactlyOnce = JSON.stringify(ids) === JSON.stringify(want);
  }
  const ms = run.ms || [];
  return {
    server: server.name,
    phase,
    client,
    sessions,
    messages: count,
    mailboxBefore: before.messages,
    arrived: after.messages - before.messages,
    exactlyOnce: exactlyOnce && after.messages - before.messages === count,
    seconds: round(run.seconds, 3),
    perSecond: round(count / run.seconds, 1),
    p50: round(quantile(ms, 0.5)),
    p99: round(quantile(ms, 0.99)),
    cpuMsPerMessage: round((cpu1 - cpu0) / count),
    warmup: warm.length,
    command,
  };
}

/**
 * One phase's load on one server: `o.deliveries` generated messages by smtp-source (`lmtp`),
 * or `mail` by the bench's LMTP client or by APPEND.
 * @returns {Promise<{run: {seconds: number, ms?: number[]}, client: string, command: string|null}>}
 */
async function load(server, phase, sessions, o, mail) {
  if (phase === 'lmtp') {
    const run = await smtpSource({
      port: server.lmtpPort,
      rcpt: server.rcpt,
      sessions,
      count: o.deliveries,
      size: o.size,
    });
    return {
      run,
      client: 'smtp-source',
      command: run.command.replace(/127\.0\.0\.1:\d+$/, '127.0.0.1:PORT'),
    };
  }
  if (phase === 'lmtp-latency') {
    const run = await lmtpDeliver(
      { host: '127.0.0.1', port: server.lmtpPort, rcpt: server.rcpt, sessions },
      mail,
    );
    return { run, client: 'lmtp-client', command: null };
  }
  const c = await imapSession(server);
  try {
    return { run: await imapAppend(c, 'INBOX', mail), client: 'raw-imap', command: null };
  } finally {
    await c.logout();
  }
}

/**
 * The targets of issue 32 against the rows of one run.
 * @param {object[]} rows
 * @returns {Array<{target: string, value: number|null, bound: number|null, met: boolean|null}>}
 */
function targets(rows) {
  const get = (server, phase, sessions) =>
    rows.find((r) => r.server === server && r.phase === phase && r.sessions === sessions);
  const out = [];
  const ratio = (label, a, b, bound) => {
    const v = a && b ? a / b : null;
    out.push({ target: label, value: round(v), bound, met: v == null ? null : v >= bound });
  };
  const max = (label, v, bound) =>
    out.push({ target: label, value: v, bound, met: v == null ? null : v <= bound });
  const lm = (s, server = 'mailgate') => get(server, 'lmtp', s);
  const r1 = lm(1);
  ratio(
    'LMTP 1 session: mailgate ÷ Dovecot-Maildir messages/s ≥ 2',
    r1 && r1.perSecond,
    lm(1, 'dovecot-maildir') && lm(1, 'dovecot-maildir').perSecond,
    2,
  );
  ratio(
    'LMTP 1 session: mailgate ÷ Dovecot-mbox messages/s ≥ 1',
    r1 && r1.perSecond,
    lm(1, 'dovecot-mbox') && lm(1, 'dovecot-mbox').perSecond,
    1,
  );
  const r10 = lm(10);
  ratio(
    'LMTP 10 sessions: mailgate ÷ Dovecot-Maildir messages/s ≥ 2',
    r10 && r10.perSecond,
    lm(10, 'dovecot-maildir') && lm(10, 'dovecot-maildir').perSecond,
    2,
  );
  max(
    'LMTP CPU per delivery, mailgate + PostgreSQL (ms, 1 session) ≤ 3',
    r1 && r1.cpuMsPerMessage,
    3,
  );
  const lat = get('mailgate', 'lmtp-latency', 1);
  max('LMTP p99 latency, 1 session (ms) < 50', lat && lat.p99, 50);
  const ap = get('mailgate', 'imap-append', 1);
  const dap = get('dovecot-maildir', 'imap-append', 1);
  const apRatio = ap && dap && dap.p50 ? ap.p50 / dap.p50 : null;
  out.push({
    target: 'IMAP APPEND p50: mailgate ÷ Dovecot-Maildir ≤ 2',
    value: round(apRatio),
    bound: 2,
    met: apRatio == null ? null : apRatio <= 2,
  });
  max('IMAP APPEND CPU per message, mailgate + PostgreSQL (ms) ≤ 3', ap && ap.cpuMsPerMessage, 3);
  return out;
}

/**
 * Runs the delivery benchmark (see the file comment).
 * @param {{corpus: string, work: string, messages: number, deliveries: number,
 *   sessions: number[], servers?: string[], size?: number, append?: boolean, warmup?: number,
 *   log?: (s: string) => void}} o
 * @returns {Promise<object>} the result document (results.json shape of bench:deliver)
 */
async function runDeliverBench(o) {
  o = { servers: SERVERS, size: 4096, append: true, warmup: 300, log: () => {}, ...o };
  if (!haveSmtpSource()) throw new Error('smtp-source is missing (apt-get install postfix)');
  const load = { start: os.loadavg().map((x) => round(x)) };
  const started = new Date().toISOString();
  const box = buildMailbox({
    corpus: o.corpus,
    work: o.work,
    name: `deliver-${o.messages}`,
    count: o.messages,
    log: o.log,
  });
  const files = listMessages(messageRoot(o.corpus), o.messages + o.deliveries + o.warmup);
  const mail = files.slice(o.messages, o.messages + o.deliveries).map((f) => fs.readFileSync(f));
  // The warm-ups' corpus messages: the next ones, not delivered in any timed phase.
  const warm = files.slice(o.messages + o.deliveries).map((f) => fs.readFileSync(f));
  const servers = [];
  try {
    for (const name of o.servers) {
      o.log(`starting ${name}`);
      if (name === 'mailgate') servers.push(await startMailgate(o, box));
      else servers.push(await startDovecot(name.replace('dovecot-', ''), box));
    }
    const rows = [];
    const phases = [];
    for (const s of o.sessions) phases.push(['lmtp', s]);
    for (const s of o.sessions) phases.push(['lmtp-latency', s]);
    if (o.append) phases.push(['imap-append', 1]);
    for (const [phase, sessions] of phases) {
      for (const server of servers) {
        o.log(`${phase} × ${sessions} → ${server.name}`);
        const row = await measure(server, phase, sessions, o, mail, warm);
        o.log(
          `  ${row.perSecond}/s p50 ${row.p50} p99 ${row.p99} cpu ${row.cpuMsPerMessage} ms` +
            ` arrived ${row.arrived} exactly once ${row.exactlyOnce}`,
        );
        rows.push(row);
      }
    }
    load.end = os.loadavg().map((x) => round(x));
    return {
      kind: 'deliver',
      started,
      machine: { ...machineFacts({ work: o.work }), load },
      mailbox: { messages: o.messages, bytes: box.bytes },
      deliveries: o.deliveries,
      warmup: warm.length,
      size: o.size,
      results: rows,
      targets: targets(rows),
    };
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
  }
}

/** The Markdown report of a result document. */
function deliverMarkdown(doc, command) {
  const L = [];
  L.push(`# Receiving mail: LMTP and IMAP APPEND into a ${doc.mailbox.messages}-message INBOX`);
  L.push('');
  L.push(`Command: \`${command}\` — started ${doc.started}.`);
  const m = doc.machine;
  L.push(
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.ramGB} GB, ${m.disk}; ${m.postgres}; ${m.dovecot}; ` +
      `load average at start ${m.load.start.join(' / ')}, at end ${(m.load.end || []).join(' / ')}.`,
  );
  L.push('');
  L.push(
    `Each phase sends ${doc.deliveries} messages per server; the INBOX grows through the run ` +
      `(column "before"). \`lmtp\`: smtp-source, generated messages of ${doc.size} body bytes; ` +
      '`lmtp-latency` and `imap-append`: the next corpus messages, timed per message by the ' +
      "bench's own clients. CPU: the server's processes (mailgate: its `serve` process and all " +
      'PostgreSQL processes; Dovecot: all its processes), per message. Before each timed phase ' +
      `every server got ${doc.warmup ?? 0} messages of the same kind, untimed (warm-up; in "before").`,
  );
  L.push('');
  L.push(
    '| phase | sessions | server | before | msg/s | p50 ms | p99 ms | CPU ms/msg | exactly once |',
  );
  L.push('|---|---:|---|---:|---:|---:|---:|---:|---|');
  for (const r of doc.results) {
    L.push(
      `| ${r.phase} | ${r.sessions} | ${r.server} | ${r.mailboxBefore} | ${r.perSecond} | ` +
        `${r.p50 ?? '–'} | ${r.p99 ?? '–'} | ${r.cpuMsPerMessage} | ${r.exactlyOnce ? 'yes' : 'NO'} |`,
    );
  }
  L.push('');
  L.push('| target (issue 32) | value | met |');
  L.push('|---|---:|---|');
  for (const t of doc.targets) {
    L.push(`| ${t.target} | ${t.value ?? '–'} | ${t.met == null ? '–' : t.met ? 'yes' : 'no'} |`);
  }
  return L.join('\n') + '\n';
}

module.exports = { runDeliverBench, deliverMarkdown, targets, messageIds, SERVERS };
