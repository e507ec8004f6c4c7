'use strict';

const { createImapServer } = require('@mailgate/imap');
const { startTestService } = require('@mailgate/test-support/db');
const { hostileMessages } = require('@mailgate/test-support/hostile');
const { warmUp, COMMANDS } = require('../lib/warm-up');
const { RawClient } = require('./raw-client');
const { within } = require('@mailgate/test-support/waits');

/*
 * Issue 35.3: a new server process warms its list-view and ENVELOPE paths before it listens
 * (lib/warm-up.js) over the service's synthetic in-memory mailbox, and readies pooled
 * connections with reads for user id 0. What is checked here is behaviour, never time: the
 * warm-up reads no user's rows and writes nothing, leaves nothing in the server's sessions or
 * caches, the answers a client gets after it are byte-identical to a server's without it
 * (hostile and 8-bit mail, several field sets, partials), and a failing warm-up is logged
 * while the server starts and serves all the same.
 */
const PW = 'warm up pw 1';
// Past the packed-read threshold (fetch.js PACKED_MIN 256), so the packed path answers.
const MESSAGES = 320;
const TEST_MS = 240000;
const LIST = 'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] FLAGS RFC822.SIZE)';
const ASKED = [
  LIST,
  'UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE)',
  'UID FETCH 1:* (UID RFC822.SIZE FLAGS BODY.PEEK[HEADER.FIELDS (From To Cc Subject Date Message-ID References Content-Type)])',
  'FETCH 20:* (FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT FROM)]<0.40> RFC822.SIZE)',
  'FETCH 1:* (BODY.PEEK[HEADER.FIELDS (NEWSGROUPS LIST-ID)])',
];
let base;
let userIds;

/** A message of the test mailbox: hostile MIME, 8-bit header bytes, folded and odd headers. */
function message(i, hostile) {
  if (i % 4 === 0 && hostile.length) return hostile[(i / 4) % hostile.length];
  const subject =
    i % 4 === 1
      ? `Subject: caf\xe9 cr\xe8me ${i}` // 8-bit without a charset
      : i % 4 === 2
        ? `Subject: =?UTF-8?B?${Buffer.from(`ünïcödé ${i}`).toString('base64')}?=`
        : `Subject: folded ${i}\r\n\tsecond line`;
  return Buffer.from(
    `From: Sender ${i} <s${i}@example.org>\r\nTo: r${i}@example.org,\r\n r${i + 1}@example.org\r\n` +
      `${subject}\r\nDate: Mon, ${1 + (i % 28)} Oct 2001 10:00:00 +0000\r\n` +
      `${i % 5 ? '' : 'Cc: cc@example.org\r\n'}Message-ID: <m${i}@example.org>\r\n\r\nbody ${i}\r\n`,
    'latin1',
  );
}

beforeAll(async () => {
  base = await startTestService('imap-warm-up');
  const { service } = base;
  await service.users.create('wu', { password: PW });
  await service.users.create('other', { password: PW });
  const hostile = hostileMessages()
    .filter((m) => m.raw.length < 1e6)
    .map((m) => m.raw);
  for (const u of ['wu', 'other']) {
    const be = await service.openBackend('pg', u);
    try {
      await be.createMailbox('INBOX');
      for (let i = 0; i < MESSAGES; i++) await be.append('INBOX', message(i, hostile), {});
      await be.setFlags('INBOX', [2, 3, 5, 8], ['\\Seen', '\\Flagged', 'Junk'], []);
    } finally {
      await be.close();
    }
  }
  userIds = [(await service.store.getUser('wu')).id, (await service.store.getUser('other')).id].map(
    Number,
  );
}, TEST_MS);

afterAll(async () => {
  if (base) await base.close();
});

/** The answers of ASKED in one session of a server on `port`. */
async function answers(port) {
  const c = await RawClient.connect(port);
  try {
    await c.cmd('a', `LOGIN wu "${PW}"`);
    await c.cmd('b', 'EXAMINE INBOX');
    const out = [];
    for (let i = 0; i < ASKED.length; i++) out.push(await c.cmd(`c${i}`, ASKED[i], TEST_MS));
    return out;
  } finally {
    c.close();
  }
}

/** A logger that keeps what the server logs (warn and above, and the warm-up's info). */
function keptLogger() {
  const lines = [];
  const log = {
    lines,
    child: () => log,
    trace() {},
    debug() {},
    info: (o, msg) => lines.push({ level: 'info', o, msg }),
    warn: (o, msg) => lines.push({ level: 'warn', o, msg }),
    error: (o, msg) => lines.push({ level: 'error', o, msg }),
    fatal: (o, msg) => lines.push({ level: 'fatal', o, msg }),
  };
  return log;
}

test(
  'the warm-up reads no user row and writes nothing, and leaves nothing in the server',
  async () => {
    const knex = base.service.store.knex;
    const server = createImapServer({ service: base.service, warmUp: false });
    const sent = [];
    const rows = [];
    const onQuery = (q) => sent.push({ sql: q.sql, bindings: q.bindings || [] });
    const onResponse = (res) => rows.push(res && res.rows ? res.rows.length : 0);
    knex.on('query', onQuery);
    knex.on('query-response', onResponse);
    let r;
    try {
      r = await warmUp(server);
    } finally {
      knex.removeListener('query', onQuery);
      knex.removeListener('query-response', onResponse);
    }
    // Its session ran the SELECT and every FETCH, all answered OK, over the synthetic mailbox.
    expect(r.ran).toBe(true);
    expect(r.answers.length).toBeGreaterThan(COMMANDS.length);
    for (const a of r.answers) expect(a).toMatch(/^w\d+ OK /);
    expect(r.bytes).toBeGreaterThan(100000);
    // The pooled connections' reads: SELECTs for user id 0 (no user has it), answering no row.
    expect(sent.length).toBeGreaterThan(0);
    expect(userIds).not.toContain(0);
    for (const q of sent) {
      expect(q.sql).toMatch(/^\s*SELECT /i);
      expect(q.sql).not.toMatch(/\b(INSERT|UPDATE|DELETE|TRUNCATE)\b/i);
      expect(q.bindings).toContain(0);
    }
    expect(rows).toHaveLength(sent.length);
    expect(rows.every((n) => n === 0)).toBe(true);
    // Nothing of it stays in the server: no session, nothing cached.
    expect(server.sessions.size).toBe(0);
    expect(server.listViewCache.stats().bytes).toBe(0);
    expect(server.listViewCache.holds('\0warm-up')).toBe(false);
    await server.close();
  },
  TEST_MS,
);

test(
  'after the warm-up a client gets the same bytes as from a server without it',
  async () => {
    const warmed = createImapServer({ service: base.service, warmUp: true });
    const plain = createImapServer({ service: base.service, warmUp: false });
    try {
      const a = await warmed.listen({ port: 0, host: '127.0.0.1' });
      expect(warmed.warmed).not.toBeNull();
      expect((await warmed.warmed).ran).toBe(true);
      const b = await plain.listen({ port: 0, host: '127.0.0.1' });
      expect(plain.warmed).toBeNull();
      const got = await answers(a.port);
      const want = await answers(b.port);
      expect(got).toHaveLength(ASKED.length);
      for (let i = 0; i < ASKED.length; i++) {
        expect(got[i]).toMatch(/\r\nc\d+ OK [^\r\n]*\r\n$/);
        // Every message answered (the last command asks for fields few messages have).
        expect((got[i].match(/^\* \d+ FETCH /gm) || []).length).toBeGreaterThanOrEqual(
          i === 3 ? MESSAGES - 19 : MESSAGES,
        );
        expect(got[i]).toBe(want[i]);
      }
    } finally {
      await warmed.close();
      await plain.close();
    }
  },
  TEST_MS,
);

test(
  'a failing warm-up is logged and the server starts and serves all the same',
  async () => {
    const log = keptLogger();
    // The real service, except that its warm-up mailbox and reads fail.
    const broken = Object.create(base.service, {
      warmUpBackend: {
        value: () => {
          const be = base.service.warmUpBackend();
          return {
            capabilities: be.capabilities,
            status: () => Promise.reject(new Error('synthetic mailbox broken')),
            close: () => {},
          };
        },
      },
      warmUpReads: { value: () => Promise.reject(new Error('warm reads broken')) },
    });
    const server = createImapServer({ service: broken, warmUp: true, logger: log });
    try {
      const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
      const r = await server.warmed;
      expect(r.ran).toBe(false);
      const warned = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
      expect(warned).toEqual(
        expect.arrayContaining([
          'imap: warm-up failed; serving without it',
          'imap: warm-up reads failed',
        ]),
      );
      // Nothing of the user's data or internal text in what was logged.
      for (const l of log.lines) expect(JSON.stringify(l)).not.toMatch(/example\.org/);
      const got = await answers(port);
      for (const a of got) expect(a).toMatch(/\r\nc\d+ OK [^\r\n]*\r\n$/);
      expect((got[0].match(/^\* \d+ FETCH /gm) || []).length).toBe(MESSAGES);
    } finally {
      await server.close();
    }
  },
  TEST_MS,
);

test(
  'pooled warm-up reads that never end (a lock, a stalled server) do not hold the start',
  async () => {
    const log = keptLogger();
    // The real service and its synthetic mailbox; its reads wait for good (review finding F3:
    // the start waited for them without a bound, so the server never listened).
    const stalled = Object.create(base.service, {
      warmUpReads: { value: () => new Promise(() => {}) },
    });
    const server = createImapServer({ service: stalled, warmUp: true, logger: log });
    try {
      const { port } = await within(
        server.listen({ port: 0, host: '127.0.0.1' }),
        'the server to listen although its warm-up reads never end',
      );
      expect((await server.warmed).ran).toBe(true);
      expect(log.lines.map((l) => l.msg)).toContain(
        'imap: warm-up reads still running; listening without them',
      );
      const got = await answers(port);
      expect((got[0].match(/^\* \d+ FETCH /gm) || []).length).toBe(MESSAGES);
    } finally {
      await server.close();
    }
  },
  TEST_MS,
);
