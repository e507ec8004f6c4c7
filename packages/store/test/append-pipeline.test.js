'use strict';

const net = require('node:net');
const Knex = require('knex');
const { deriveRow } = require('@mailgate/importer');
const { useTestDatabase } = require('@mailgate/test-support/db');
const { msg } = require('@mailgate/test-support/mail');
const { singlePostgresOnly } = require('@mailgate/test-support/skip');
const { PgStore } = require('../lib/pg-store');
const { appendSteps } = require('../lib/append-ops');

/*
 * The append's transaction on its pipelined connections (append-writer.js, issue 32: CPU per
 * delivery). Counted on the wire by a TCP relay between the store and PostgreSQL: a "turn" is
 * the client writing after the server answered, i.e. one round trip the process waits for and
 * one wake-up of each side. The knex transaction took five per append (BEGIN, the allocating
 * statement, the thread lookup, the insert, COMMIT); pipelined it is two. And the rows are
 * those the knex transaction writes for the same messages.
 */

/** A TCP relay to `target` that counts, per direction change, the client's turns. */
function turnRelay(target) {
  const sockets = new Set();
  const relay = { turns: 0, server: null, port: 0 };
  relay.server = net.createServer((client) => {
    const upstream = target.path ? net.connect(target.path) : net.connect(target.port, target.host);
    sockets.add(client);
    sockets.add(upstream);
    let last = 's';
    client.on('data', (d) => {
      if (last !== 'c') relay.turns++;
      last = 'c';
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      last = 's';
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  relay.close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => relay.server.close(r));
  };
  return relay;
}

// On Citus appends keep the knex transaction (store citus.js point 10): nothing to count.
const runOnCitus = singlePostgresOnly(
  __filename,
  'the pipelined append (Citus keeps the knex transaction)',
  'round trips',
);

describe('append transaction, pipelined', () => {
  const ctx = useTestDatabase();
  let relay = null;
  let knex = null;
  let store = null;
  let userId;

  beforeAll(async () => {
    const url = new URL(ctx.db.url);
    // The embedded server's URL names its unix socket's folder as the host (embedded-pg.js
    // url()): the relay then reaches PostgreSQL through that socket.
    const host = decodeURIComponent(url.hostname);
    relay = turnRelay(
      host.startsWith('/')
        ? { path: `${host}/.s.PGSQL.${url.port}` }
        : { host: url.hostname, port: Number(url.port) },
    );
    await new Promise((r) => relay.server.listen(0, '127.0.0.1', r));
    url.hostname = '127.0.0.1';
    url.port = String(relay.server.address().port);
    knex = Knex({ client: 'pg', connection: url.toString(), pool: { min: 0, max: 2 } });
    store = new PgStore(knex, { listCacheRows: 0 });
    userId = (await store.ensureUser('pip')).id;
    for (const name of ['INBOX', 'Knex']) await store.createMailbox(userId, name);
  });

  afterAll(async () => {
    try {
      if (store) await store.closeAppendWriter();
      if (knex) await knex.destroy();
    } finally {
      if (relay) await relay.close();
    }
  });

  const item = (raw, i) => {
    const d = deriveRow(raw);
    return {
      raw,
      row: d.row,
      flags: i % 2 ? ['\\Seen'] : [],
      keywords: i % 3 ? [] : ['$label1'],
      internalDate: new Date(Date.UTC(2026, 10, 1 + (i % 27), 8, i % 60)),
    };
  };
  // Threads: a root, replies naming it and each other, a message without any id, a copy.
  const mail = [
    msg({ subject: 'plans', headers: ['Message-ID: <r1@x>'] }),
    msg({ subject: 'Re: plans', headers: ['Message-ID: <r2@x>', 'In-Reply-To: <r1@x>'] }),
    msg({
      subject: 'Re: plans',
      headers: ['Message-ID: <r3@x>', 'References: <r1@x> <r2@x>', 'In-Reply-To: <r2@x>'],
      eol: '\r\n',
    }),
    msg({ subject: 'no ids at all', body: 'plain\n.\n..dots\n' }),
    msg({ subject: 'plans', headers: ['Message-ID: <r1@x>'] }),
    msg({
      subject: 'mixed',
      headers: [
        'Message-ID: <m1@x>',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b"',
      ],
      body: '--b\nContent-Type: text/plain\n\nhello\n--b\nContent-Type: application/pdf\nContent-Disposition: attachment; filename="a.pdf"\n\nJVBERi0=\n--b--\n',
    }),
  ];

  (runOnCitus ? test.skip : test)(
    'a delivery is two round trips: BEGIN with its first statements, the insert with COMMIT',
    async () => {
      // The connection is opened (startup, authentication) by a first append, not counted.
      await store.appendMessage(userId, { name: 'INBOX' }, item(msg({ subject: 'first' }), 0));
      // Messages whose thread is found in one lookup step: every id they link through is in
      // their own header (the copy of a root, whose replies are found in a second step, is not).
      const oneStep = mail.filter((_, i) => i !== 4);
      const turns = [];
      for (let i = 0; i < oneStep.length; i++) {
        const before = relay.turns;
        const r = await store.appendMessage(userId, { name: 'INBOX' }, item(oneStep[i], i));
        turns.push(relay.turns - before);
        expect(r.uid).toBe(i + 2);
      }
      expect(turns).toEqual(oneStep.map(() => 2));
    },
  );

  test('the rows are those the knex transaction writes for the same messages', async () => {
    const crypto = require('node:crypto');
    const { encodeRaw } = require('../lib/raw-codec');
    // Two users, each alone with their mail: one appends by the store's path (pipelined on a
    // single PostgreSQL), the other by the knex transaction Citus keeps, one message at a time.
    const a = (await store.ensureUser('pa')).id;
    const b = (await store.ensureUser('kb')).id;
    for (const u of [a, b]) await store.createMailbox(u, 'INBOX');
    for (let i = 0; i < mail.length; i++) {
      await store.appendMessage(a, { name: 'INBOX' }, item(mail[i], i));
      const m = item(mail[i], i);
      await knex.transaction((trx) =>
        appendSteps(
          store,
          trx,
          b,
          { name: 'INBOX' },
          [m],
          [crypto.createHash('sha256').update(m.raw).digest()],
          [encodeRaw(m.raw)],
          { last: (sql, bindings) => trx.raw(sql, bindings) },
        ),
      );
    }
    // Every column but the owner's ids; thread ids are checked against the full computation
    // (a message without any Message-ID is threaded by its own place, which differs).
    const rows = async (table, user) =>
      (await knex.raw(`SELECT * FROM ${table} WHERE user_id = ? ORDER BY uid`, [user])).rows.map(
        (r) => {
          const out = { ...r };
          for (const k of ['user_id', 'mailbox_id', 'id', 'thread_id', 'created_at']) delete out[k];
          return out;
        },
      );
    for (const table of ['messages', 'message_sources', 'message_imap', 'message_imap_lines']) {
      const mine = await rows(table, a);
      expect(mine.length).toBe(mail.length);
      expect(await rows(table, b)).toEqual(mine);
    }
    for (const u of [a, b]) expect((await store.assignThreads(u)).updated).toBe(0);
    const keys = async (user) =>
      (
        await knex.raw(
          `SELECT encode(key, 'hex') AS k, uid FROM thread_keys WHERE user_id = ? ORDER BY 1, 2`,
          [user],
        )
      ).rows;
    expect((await keys(a)).length).toBeGreaterThan(0);
    expect(await keys(b)).toEqual(await keys(a));
  });
});
