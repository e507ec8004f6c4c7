'use strict';

/*
 * The bytes of a FETCH of a message, exactly (issue 35, the first fetch's read path: the
 * decoder's output sized to the message, the CRLF form in an allocation of its own, the
 * literal written as its own Buffer, the body cache keeping that Buffer without a copy). Every
 * answer is compared, byte for byte and with its tagged OK, with one built here from the
 * appended bytes by an independent CRLF conversion: the first fetch (read from the store) and
 * the second (from the body cache), for plain, 8-bit, binary, CRLF-less, CRLF, mixed and
 * huge messages stored with each raw codec (store raw-codec.js: brotli, and as they are for
 * the incompressible and those over PACK_LIMIT), BODY.PEEK[] and BODY[] (which sets \Seen),
 * partial fetches and RFC822.SIZE. The store reads with a prepared statement on a single
 * PostgreSQL and with knex on Citus (prepared-reads.js): this file runs on both.
 */

const crypto = require('node:crypto');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

// store raw-codec.js: its codec numbers (never reused) and PACK_LIMIT (1 MiB), above which a
// message is stored as it is. Named here: this package does not depend on the store.
const CODEC = { PLAIN: 0, BROTLI: 1 };
const PACK_LIMIT = 1024 * 1024;

const PW = 'fetch bytes 35';

/** Reference CRLF form: every LF not preceded by CR made CRLF (RFC 3501 2.3.4). */
const served = (raw) => Buffer.from(raw.toString('latin1').replace(/(?<!\r)\n/g, '\r\n'), 'latin1');

const words = (n, seed) => {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648);
  let s = '';
  while (s.length < n) {
    let w = '';
    for (let k = 2 + (next() % 8); k > 0; k--) w += String.fromCharCode(97 + (next() % 26));
    s += w + (next() % 12 ? ' ' : '\n');
  }
  return s.slice(0, n);
};

const head = (subject) => `From: a@example.org\nTo: b@example.org\nSubject: ${subject}\n\n`;

const MESSAGES = {
  plainLf: Buffer.from(`${head('plain')}${words(3000, 1)}\n`),
  crlf: Buffer.from(`${head('crlf')}${words(2500, 2)}\n`.replace(/\n/g, '\r\n')),
  mixed: Buffer.from(`${head('mixed')}one\r\ntwo\nthree\r\n\nfour\n`),
  noFinalNewline: Buffer.from(`${head('no final newline')}${words(800, 3)}`),
  eightBit: Buffer.concat([
    Buffer.from(head('8-bit, no charset')),
    Buffer.from(Array.from({ length: 4000 }, (_, i) => (i % 50 === 49 ? 10 : 0x80 + (i % 127)))),
    Buffer.from('\n'),
  ]),
  binary: Buffer.concat([
    Buffer.from(`${head('binary')}`),
    crypto.randomBytes(30000),
    Buffer.from('\nend\n'),
  ]),
  // Over PACK_LIMIT: stored as it is (PostgreSQL compresses it), over the body cache's 1 MiB
  // entry cap: never cached.
  huge: Buffer.from(`${head('huge')}${words(PACK_LIMIT + 200000, 4)}\n`),
};

let env;
let c;
const uidOf = {};
const seqOf = {};

beforeAll(async () => {
  env = await startPgServer({ users: { bytes: PW } });
  const be = await env.service.openBackend('pg', 'bytes');
  await be.createMailbox('INBOX');
  for (const [name, raw] of Object.entries(MESSAGES)) {
    const r = await be.append('INBOX', raw, {});
    uidOf[name] = Number(r.uid);
  }
  const rows = (await be.scan('INBOX', { order: 'asc' })).rows;
  rows.forEach((r, i) => {
    for (const [name, uid] of Object.entries(uidOf)) if (Number(r.uid) === uid) seqOf[name] = i + 1;
  });
  await be.close();
  c = await RawClient.connect(env.port);
  await c.cmd('l', `LOGIN bytes "${PW}"`);
  await c.cmd('s', 'SELECT INBOX');
}, 120000);

afterAll(async () => {
  if (c) c.close();
  if (env) await env.close();
});

/** The exact answer to `tag UID FETCH uid (items)` with one message item. */
const answer = (tag, name, item, bytes, extra = '') =>
  `* ${seqOf[name]} FETCH (UID ${uidOf[name]}${extra} ${item} {${bytes.length}}\r\n` +
  `${bytes.toString('latin1')})\r\n${tag} OK UID FETCH completed\r\n`;

test('both raw codecs are among the stored messages', async () => {
  const user = await env.service.users.get('bytes');
  const r = await env.service.store.knex.raw(
    'SELECT uid, raw_codec FROM message_sources WHERE user_id = ? ORDER BY uid',
    [user.id],
  );
  const codec = new Map(r.rows.map((x) => [Number(x.uid), Number(x.raw_codec)]));
  expect(codec.get(uidOf.plainLf)).toBe(CODEC.BROTLI);
  expect(codec.get(uidOf.eightBit)).toBe(CODEC.BROTLI);
  expect(codec.get(uidOf.binary)).toBe(CODEC.PLAIN);
  expect(codec.get(uidOf.huge)).toBe(CODEC.PLAIN);
});

test('BODY.PEEK[]: the same bytes read from the store and from the body cache', async () => {
  for (const name of Object.keys(MESSAGES)) {
    const want = served(MESSAGES[name]);
    for (const round of ['first', 'cached']) {
      const tag = `p${round[0]}${uidOf[name]}`;
      const got = await c.cmd(tag, `UID FETCH ${uidOf[name]} (BODY.PEEK[])`, 60000);
      expect({ name, round, same: got === answer(tag, name, 'BODY[]', want) }).toEqual({
        name,
        round,
        same: true,
      });
    }
  }
  // What the cache holds is what was served; the huge message is over its entry cap.
  const bodies = env.server.bodyCache;
  expect(bodies.stats().entries).toBe(Object.keys(MESSAGES).length - 1);
});

test('partial fetches and RFC822.SIZE on the first read of a message and from the cache', async () => {
  const be = await env.service.openBackend('pg', 'bytes');
  const raw = Buffer.from(`${head('partial')}${words(5000, 5)}\n`);
  const uid = Number((await be.append('INBOX', raw, {})).uid);
  await be.close();
  await c.cmd('n', 'NOOP'); // the new message in the session's view
  const want = served(raw);
  const seq = Object.keys(MESSAGES).length + 1;
  for (const round of ['first', 'cached']) {
    const tag = `q${round[0]}`;
    const got = await c.cmd(tag, `UID FETCH ${uid} (RFC822.SIZE BODY.PEEK[]<100.2000>)`);
    const part = want.subarray(100, 2100);
    expect(got).toBe(
      `* ${seq} FETCH (UID ${uid} RFC822.SIZE ${want.length} BODY[]<100> {${part.length}}\r\n` +
        `${part.toString('latin1')})\r\n${tag} OK UID FETCH completed\r\n`,
    );
    if (round === 'first') {
      // Past the end: empty; across it: what is left.
      const end = await c.cmd('qe', `UID FETCH ${uid} (BODY.PEEK[]<${want.length - 5}.100>)`);
      expect(end).toContain(`BODY[]<${want.length - 5}> {5}\r\n${want.subarray(-5).toString()}`);
    }
  }
});

test('BODY[] sets \\Seen and sends the same bytes', async () => {
  const be = await env.service.openBackend('pg', 'bytes');
  const raw = Buffer.from(`${head('seen')}${words(1500, 6)}\n`);
  const uid = Number((await be.append('INBOX', raw, {})).uid);
  await be.close();
  await c.cmd('n2', 'NOOP');
  const want = served(raw);
  const seq = Object.keys(MESSAGES).length + 2;
  const got = await c.cmd('b1', `UID FETCH ${uid} (BODY[])`);
  expect(got).toBe(
    `* ${seq} FETCH (UID ${uid} BODY[] {${want.length}}\r\n${want.toString('latin1')} ` +
      `FLAGS (\\Seen \\Recent))\r\nb1 OK UID FETCH completed\r\n`, // new to this session
  );
  const flags = await c.cmd('b2', `UID FETCH ${uid} (FLAGS)`);
  expect(flags).toContain('FLAGS (\\Seen \\Recent)');
  // Again, now from the cache: the bytes, \Seen already set (no FLAGS sent again).
  const again = await c.cmd('b3', `UID FETCH ${uid} (BODY[])`);
  expect(again).toContain(`BODY[] {${want.length}}\r\n${want.toString('latin1')}`);
});
