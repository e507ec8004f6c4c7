'use strict';

const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

// Seeded, bounded fuzzing of the command stream: random and mutated commands, broken
// literals, binary garbage. The server must stay up, answer every tagged command it could
// frame, never crash or hang, and never show one user another user's mail.
const SEED = Number(process.env.IMAP_FUZZ_SEED || 20261123);
const ROUNDS = 4;
const COMMANDS_PER_ROUND = 150;
const SECRET = 'bob-secret-marker-7f3a';

let env;

function rng(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    // xorshift32: deterministic for a given seed, so a failure can be replayed.
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x100000000;
  };
}

const VALID = [
  'NOOP',
  'CAPABILITY',
  'SELECT INBOX',
  'EXAMINE INBOX',
  'FETCH 1:* (FLAGS UID)',
  'UID FETCH 1:* (ENVELOPE BODYSTRUCTURE)',
  'FETCH 1 BODY.PEEK[HEADER.FIELDS (SUBJECT)]',
  'FETCH 1 (BODY[1.MIME] BODY[]<0.10>)',
  'SEARCH OR FROM a TO b',
  'UID SEARCH NOT SEEN LARGER 10',
  'SEARCH HEADER X-Foo bar',
  'STORE 1 +FLAGS (\\Seen)',
  'UID STORE 1:* -FLAGS.SILENT (\\Flagged)',
  'LIST "" "*"',
  'LSUB "" "%"',
  'STATUS INBOX (MESSAGES UNSEEN UIDNEXT)',
  'LIST "" "../*"',
  'SELECT "Bob\'s"',
  'STATUS "../bob/INBOX" (MESSAGES)',
  'COPY 1 INBOX',
  'UNSELECT',
  'CHECK',
  'ID NIL',
  'NAMESPACE',
];
const JUNK = [
  '(',
  ')',
  '{',
  '}',
  '"',
  '\\',
  '*',
  '%',
  '[',
  ']',
  '<',
  '>',
  '\x00',
  '\xff',
  ' ',
  '{5}',
  '{99999999999}',
  'NIL',
  '1:*',
  '0',
  '-1',
  '4294967296',
];

function mutate(r, text) {
  const chars = [...text];
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const at = Math.floor(r() * (chars.length + 1));
    const op = r();
    if (op < 0.4) chars.splice(at, 0, JUNK[Math.floor(r() * JUNK.length)]);
    else if (op < 0.7) chars.splice(at, 1);
    else chars.splice(at, 0, String.fromCharCode(Math.floor(r() * 256)));
  }
  return chars.join('').replace(/[\r\n]/g, ' ');
}

function command(r, i) {
  const p = r();
  const tag = `f${i}`;
  if (p < 0.35) return `${tag} ${VALID[Math.floor(r() * VALID.length)]}\r\n`;
  if (p < 0.75) return `${tag} ${mutate(r, VALID[Math.floor(r() * VALID.length)])}\r\n`;
  if (p < 0.85) {
    const len = Math.floor(r() * 40);
    return `${tag} APPEND INBOX {${len}+}\r\n${'x'.repeat(len)}\r\n`;
  }
  if (p < 0.95) {
    let s = '';
    const len = 1 + Math.floor(r() * 200);
    for (let k = 0; k < len; k++) s += String.fromCharCode(1 + Math.floor(r() * 254));
    return `${tag} ${s.replace(/[\r\n]/g, '')}\r\n`;
  }
  return `${tag} SEARCH ${'('.repeat(Math.floor(r() * 100))}ALL\r\n`;
}

beforeAll(async () => {
  env = await startPgServer({
    users: { alice: 'alice pw', bob: 'bob pw' },
    limits: { maxLine: 4096, maxLiteral: 100000 },
  });
  const a = await env.service.openBackend('pg', 'alice');
  await a.createMailbox('INBOX');
  await a.append('INBOX', msg({ subject: 'alice one' }), {});
  await a.close();
  const b = await env.service.openBackend('pg', 'bob');
  await b.createMailbox('INBOX');
  await b.createMailbox("Bob's");
  await b.append('INBOX', msg({ subject: SECRET, body: `${SECRET}\n` }), {});
  await b.close();
});

afterAll(async () => {
  await env.close();
});

test(`fuzzed command streams (seed ${SEED}): server stays up, answers, leaks nothing`, async () => {
  const r = rng(SEED);
  for (let round = 0; round < ROUNDS; round++) {
    const c = await RawClient.connect(env.port);
    expect(await c.cmd('l', 'LOGIN alice "alice pw"')).toMatch(/^l OK/m);
    let sent = '';
    for (let i = 0; i < COMMANDS_PER_ROUND; i++) sent += command(r, round * 1000 + i);
    c.write(Buffer.from(sent, 'latin1'));
    // A trailing marker command: when its answer arrives, everything before it was handled
    // (or the connection was closed with BYE for a fatal literal).
    c.write('zz NOOP\r\n');
    let out;
    try {
      out = await c.waitFor(/^zz (OK|NO|BAD)[^\r\n]*\r\n/m, 20000);
    } catch (err) {
      expect(c.closed).toBe(true); // only a BYE may end the stream early
      out = c.buf.toString('latin1');
      expect(out).toMatch(/\* BYE/);
    }
    expect(out).toMatch(/^f\d+ BAD/m); // the stream did exercise the error paths
    expect(out).not.toContain(SECRET);
    expect(out).not.toMatch(/Internal server error|SERVERBUG|TypeError|at \//);
    c.close();
  }
  // Still serving, and bob sees exactly his own mail.
  const b = await RawClient.connect(env.port);
  expect(await b.cmd('a', 'LOGIN bob "bob pw"')).toMatch(/^a OK/m);
  const sel = await b.cmd('b', 'SELECT INBOX');
  expect(sel).toMatch(/^\* 1 EXISTS/m);
  expect(await b.cmd('c', 'FETCH 1 BODY.PEEK[HEADER.FIELDS (SUBJECT)]')).toContain(SECRET);
  b.close();
});
