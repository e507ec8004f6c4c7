'use strict';

/*
 * An old server that starves the pool (issue 33/32, protocol abuse): a relay to a proxied
 * user's old server holds one pooled PostgreSQL connection (the user's delivery gate) until the
 * upstream answers. Here the "old server" is a real TCP LMTP listener that greets and takes
 * LHLO, MAIL, RCPT and DATA but never answers the final dot. With more relays than the pool
 * has connections, only MAILGATE_RELAY_CONCURRENCY (default a quarter of the pool) hold a
 * gate; the others are answered 451 4.3.2 at once, and an innocent local delivery beside them
 * is stored. When the old server drops its sockets the slots are free again. Real PostgreSQL,
 * real sockets; every socket and server is closed in `finally`/afterAll.
 */

const net = require('node:net');
const { addLegacyUser } = require('@mailgate/service');
const { RawLmtp } = require('./client');
const { startLmtp, stored } = require('./helpers');

// A guard against a hang only (the run must end and report): a generous wait, never a bound
// the fixed code is expected to meet quickly.
const GUARD_MS = 30000;

/** The value of `p`, or the string 'no answer' when it did not settle within `ms`. */
async function within(p, ms = GUARD_MS) {
  let timer;
  const late = new Promise((r) => (timer = setTimeout(() => r('no answer'), ms)));
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once `cond()` holds (polled), or with 'no answer' past the guard. */
function until(cond) {
  return within(
    (async () => {
      while (!cond()) await new Promise((r) => setTimeout(r, 20));
      return true;
    })(),
  );
}

/**
 * An LMTP "old server": `stall` mode takes the message and never answers its final dot;
 * `answer` mode says 250 per recipient.
 */
function startOldServer() {
  const sockets = new Set();
  const state = { mode: 'stall', stalled: 0, answered: 0, connections: 0 };
  const server = net.createServer((s) => {
    state.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.setEncoding('latin1');
    let buf = '';
    let data = false;
    let rcpts = [];
    s.write('220 old.test LMTP ready\r\n');
    s.on('data', (d) => {
      buf += d;
      for (;;) {
        if (data) {
          const end = buf.indexOf('\r\n.\r\n');
          if (end < 0) return;
          buf = buf.slice(end + 5);
          data = false;
          if (state.mode === 'stall') {
            state.stalled++;
            return; // never answers, never reads on
          }
          state.answered++;
          for (const r of rcpts) s.write(`250 2.0.0 ${r} Saved\r\n`);
          rcpts = [];
          continue;
        }
        const nl = buf.indexOf('\r\n');
        if (nl < 0) return;
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === 'LHLO') s.write('250-old.test\r\n250 PIPELINING\r\n');
        else if (verb === 'MAIL') s.write('250 2.1.0 Ok\r\n');
        else if (verb === 'RCPT') {
          rcpts.push(line.replace(/^RCPT TO:/i, '').trim());
          s.write('250 2.1.5 Ok\r\n');
        } else if (verb === 'DATA') {
          data = true;
          s.write('354 End data with <CR><LF>.<CR><LF>\r\n');
        } else if (verb === 'QUIT') s.end('221 2.0.0 Bye\r\n');
        else s.write('250 2.0.0 Ok\r\n');
      }
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({
        state,
        port: server.address().port,
        /** Drops every connection (the relays waiting on them fail over to 451 4.4.1). */
        dropAll() {
          for (const s of sockets) s.destroy();
        },
        close() {
          for (const s of sockets) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      }),
    );
  });
}

const msg = (id) =>
  `From: Ann <ann@example.org>\r\nSubject: ${id}\r\nMessage-ID: <${id}@example.org>\r\n\r\nbody\r\n`;

let t;
let old;
beforeAll(async () => {
  t = await startLmtp({ users: ['pat', 'alice'] });
  old = await startOldServer();
  addLegacyUser(t.service.config, 'pat', { relay: `lmtp://127.0.0.1:${old.port}` });
  await t.service.users.setRoute('pat', 'proxy');
}, 60000);

afterAll(async () => {
  if (old) await old.close();
  if (t) await t.close();
});

/** An LMTP session that sent one message to `rcpt`; its reply is read by the caller. */
async function sendOne(clients, rcpt, id) {
  const c = await RawLmtp.connect({ port: t.port });
  clients.push(c);
  expect((await c.reply()).code).toBe(220);
  expect((await c.cmd('LHLO mta.test')).code).toBe(250);
  expect((await c.cmd('MAIL FROM:<ann@example.org>')).code).toBe(250);
  expect((await c.cmd(`RCPT TO:<${rcpt}>`)).code).toBe(250);
  expect((await c.cmd('DATA')).code).toBe(354);
  c.write(msg(id) + '.\r\n');
  return c;
}

test('a stalling old server holds only the relay slots; the rest answer 451 4.3.2 and local mail is stored', async () => {
  const poolMax = t.service.store.knex.client.pool.max;
  const limit = Math.max(1, Math.floor(poolMax / 4));
  const n = poolMax + 1; // more relays than the pool has connections
  const clients = [];
  try {
    const sessions = await Promise.all(
      Array.from({ length: n }, (_, i) => sendOne(clients, 'pat@example.com', `stall${i}`)),
    );
    const replies = sessions.map((c) => c.reply());
    const settled = replies.map(() => null);
    replies.forEach((p, i) => p.then((r) => (settled[i] = r)));

    // The slots fill up: the old server got `limit` messages it does not answer.
    expect(await until(() => old.state.stalled >= limit)).toBe(true);

    // An innocent local delivery beside the stalled relays is stored.
    const innocent = await sendOne(clients, 'alice@example.com', 'innocent');
    const ok = await within(innocent.reply());
    expect(ok && ok.text).toMatch(/^250 2\.0\.0 <alice@example\.com> Saved/);
    expect(await stored(t.service, 'alice', 'INBOX')).toHaveLength(1);

    // Every relay past the slots is refused at once with a transient code, never queued.
    expect(await until(() => settled.filter(Boolean).length >= n - limit)).toBe(true);
    const busy = settled.filter(Boolean);
    expect(busy).toHaveLength(n - limit);
    for (const r of busy) expect(r.text).toMatch(/^451 4\.3\.2 <pat@example\.com> /);
    // The stalled ones are still waiting on the old server (nothing answered them yet).
    expect(old.state.stalled).toBe(limit);
    // A refused relay never reached the old server: the slot is taken before connecting.
    expect(old.state.connections).toBe(limit);

    // The old server drops its connections: the stalled relays end 451 4.4.1…
    old.state.mode = 'answer';
    old.dropAll();
    expect(await until(() => settled.every(Boolean))).toBe(true);
    const dropped = settled.filter((r) => !/^451 4\.3\.2 /.test(r.text));
    expect(dropped).toHaveLength(limit);
    for (const r of dropped) expect(r.text).toMatch(/^451 4\.4\.1 <pat@example\.com> /);

    // …and their slots are free again: a relay to the now answering server succeeds.
    const later = await sendOne(clients, 'pat@example.com', 'later');
    const r = await within(later.reply());
    expect(r && r.text).toMatch(/^250 2\.0\.0 <pat@example\.com> Relayed upstream: /);
    expect(old.state.answered).toBe(1);
    expect(old.state.connections).toBe(limit + 1);
  } finally {
    for (const c of clients) c.socket.destroy();
    if (old) old.dropAll();
  }
}, 120000);
