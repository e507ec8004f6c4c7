'use strict';

/*
 * Issue 28 item 11: a message stored with bare LF (as mbox and Maildir imports keep it) is
 * served with CRLF in every BODY[]/RFC822 section and partial fetch, with RFC822.SIZE and
 * BODYSTRUCTURE sizes of that CRLF form, through both FETCH paths (the stored bytes, and the
 * kept metadata that answers FLAGS RFC822.SIZE without reading them); the stored bytes stay
 * as they were (export is byte-exact). Values as Dovecot 2.3 answers for the same message.
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');
const { toCrlf, bareLfCount } = require('@mailgate/mime/crlf');

const PW = 'crlf pw 12';
const LF = Buffer.from(
  [
    'From: a@example.org',
    'Subject: stored with LF',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b"',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'line one',
    'line two',
    '--b--',
    '',
  ].join('\n'),
);
const SERVED = toCrlf(LF);

let env;
let c;

beforeAll(async () => {
  env = await startPgServer({ users: { lf: PW } });
  const be = await env.service.openBackend('pg', 'lf');
  await be.createMailbox('INBOX');
  await be.append('INBOX', LF, {});
  await be.close();
  c = await RawClient.connect(env.port);
  await c.cmd('l', `LOGIN lf "${PW}"`);
  await c.cmd('s', 'EXAMINE INBOX');
});

afterAll(async () => {
  c.close();
  await env.close();
});

test('toCrlf makes bare LF CRLF and leaves CRLF and other bytes alone', () => {
  expect(toCrlf(Buffer.from('a\nb\r\nc\n\nd')).toString()).toBe('a\r\nb\r\nc\r\n\r\nd');
  const crlf = Buffer.from('x\r\ny\r\n');
  expect(toCrlf(crlf)).toBe(crlf); // nothing to do: no copy
  expect(bareLfCount(Buffer.from('\n\r\n\n'))).toBe(2);
  expect(SERVED.length).toBe(LF.length + 11);
});

test('FETCH of the stored bytes: CRLF sections, partials and sizes', async () => {
  const r = await c.cmd(
    'f1',
    'FETCH 1 (RFC822.SIZE BODY.PEEK[] BODY.PEEK[1] BODY.PEEK[TEXT]<0.12> BODY.PEEK[1.MIME] BODYSTRUCTURE)',
  );
  expect(r).toContain(`RFC822.SIZE ${SERVED.length} `);
  expect(r).toContain(`BODY[] {${SERVED.length}}\r\n${SERVED.toString('latin1')}`);
  expect(r).toContain('BODY[1] {18}\r\nline one\r\nline two ');
  expect(r).toContain('BODY[TEXT]<0> {12}\r\n--b\r\nContent');
  expect(r).toContain('BODY[1.MIME] {28}\r\nContent-Type: text/plain\r\n\r\n');
  // Sizes and lines of the CRLF form, as Dovecot: 18 bytes, 1 line end in the part.
  expect(r).toContain('("text" "plain" ("charset" "us-ascii") NIL NIL "7bit" 18 1 ');
});

test('FLAGS RFC822.SIZE (kept metadata, no message read) is the CRLF size too', async () => {
  const a = await c.cmd('f2', 'FETCH 1:* (FLAGS RFC822.SIZE)');
  expect(a).toMatch(new RegExp(`RFC822\\.SIZE ${SERVED.length}\\)`));
  const b = await c.cmd('f3', 'FETCH 1 (ENVELOPE RFC822.SIZE)');
  expect(b).toMatch(new RegExp(`RFC822\\.SIZE ${SERVED.length}\\)`));
});

test('SEARCH LARGER/SMALLER compare RFC822.SIZE, the CRLF size', async () => {
  const hits = async (key) => {
    const r = await c.cmd('q', `SEARCH ${key}`);
    return /^\* SEARCH([ \d]*)\r$/m.exec(r)[1].trim();
  };
  expect(await hits(`LARGER ${LF.length}`)).toBe('1');
  expect(await hits(`LARGER ${SERVED.length - 1}`)).toBe('1');
  expect(await hits(`LARGER ${SERVED.length}`)).toBe('');
  expect(await hits(`SMALLER ${SERVED.length}`)).toBe('');
  expect(await hits(`SMALLER ${SERVED.length + 1}`)).toBe('1');
  expect(await hits(`NOT LARGER ${LF.length}`)).toBe('');
});

test('the stored bytes are untouched', async () => {
  const be = await env.service.openBackend('pg', 'lf');
  const rows = await be.scan('INBOX', {});
  const raw = await be.getRaw('INBOX', rows.rows[0].uid);
  await be.close();
  expect(Buffer.compare(raw, LF)).toBe(0);
  expect(Number(rows.rows[0].size)).toBe(LF.length);
});
