'use strict';

const { msg } = require('@mailgate/test-support/mail');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');
const { deriveMeta } = require('@mailgate/mime/imap-meta');
const { coveredItem, headerFields, MetaCache, FIELDS } = require('../lib/meta');
const { parseSection } = require('../lib/commands/fetch');

/*
 * Kept IMAP metadata (meta.js, store columns imap_*): answers derived once from a message's
 * bytes must be byte-identical to the answers read from the message, whether they come from
 * derivation, from memory or from PostgreSQL; a message with NUL bytes is answered but not kept.
 */
let env;
const PW = { meta: 'meta pw 1' };
const MULTI = Buffer.from(
  [
    'From: "Kay, M." <kay@example.org>',
    'To: a@example.org,',
    '  b@example.org',
    'Subject: =?ISO-8859-1?Q?r=E9sum=E9?=',
    'Date: Tue, 05 Mar 2002 10:00:00 +0000',
    'X-Custom: not kept',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=ISO-8859-1',
    '',
    'caf\xe9',
    '--b1',
    'Content-Type: message/rfc822',
    '',
    'From: inner@example.org',
    'Subject: inner',
    '',
    'inner body',
    '--b1--',
    '',
  ].join('\r\n'),
  'latin1',
);
const NUL = Buffer.from('Subject: nul\0here\r\nFrom: x@example.org\r\n\r\nbody\0\r\n', 'latin1');

beforeAll(async () => {
  env = await startPgServer({ users: PW });
  const be = await env.service.openBackend('pg', 'meta');
  await be.createMailbox('INBOX');
  for (let i = 1; i <= 30; i++) {
    await be.append('INBOX', msg({ subject: `m${i}`, from: `u${i}@example.org`, eol: '\r\n' }), {});
  }
  await be.append('INBOX', MULTI, {});
  await be.append('INBOX', NUL, {});
  await be.close();
});
afterAll(async () => {
  if (env) await env.close();
});

/** FETCH answers split per message: `* n FETCH …` up to the next one. */
function perMessage(text) {
  return text
    .replace(/^c (OK|NO|BAD)[^\r\n]*\r\n$/m, '')
    .split(/(?=^\* \d+ FETCH )/m)
    .filter((x) => x.startsWith('* '));
}

async function fetchAll(items) {
  const c = await RawClient.connect(env.port);
  await c.cmd('a', `LOGIN meta "${PW.meta}"`);
  await c.cmd('b', 'EXAMINE INBOX');
  const out = await c.cmd('c', `UID FETCH 1:* ${items}`);
  c.close();
  return out;
}

test('covered items are decided by name and section', () => {
  expect(coveredItem({ name: 'ENVELOPE' })).toBe(true);
  expect(coveredItem({ name: 'BODYSTRUCTURE' })).toBe(true);
  const sec = (t) => ({ name: 'BODY[]', section: parseSection(t) });
  expect(coveredItem(sec('HEADER.FIELDS (FROM TO SUBJECT DATE)'))).toBe(true);
  expect(coveredItem(sec('HEADER.FIELDS (FROM X-CUSTOM)'))).toBe(false);
  expect(coveredItem(sec('HEADER.FIELDS.NOT (FROM)'))).toBe(false);
  expect(coveredItem(sec('1.HEADER.FIELDS (FROM)'))).toBe(false);
  expect(coveredItem(sec('TEXT'))).toBe(false);
  expect(FIELDS.has('subject')).toBe(true);
});

test('header fields from the kept lines equal the section read from the message', () => {
  const m = deriveMeta(MULTI);
  const got = headerFields(m.fields, new Set(['to', 'subject']));
  expect(got.toString('latin1')).toBe(
    'To: a@example.org,\r\n  b@example.org\r\nSubject: =?ISO-8859-1?Q?r=E9sum=E9?=\r\n\r\n',
  );
  expect(m.fields).not.toContain('X-Custom');
});

test('the memory copy is bounded by bytes', () => {
  const c = new MetaCache(5000);
  const m = deriveMeta(MULTI);
  const [inbox, other, third] = ['INBOX', 'Other', 'Third'].map((b) => `u\0${b}\0` + 1);
  for (let i = 0; i < 50; i++) c.set(inbox, i, { ...m });
  expect(c.bytes).toBeLessThanOrEqual(5000);
  expect(c.count).toBeLessThan(50);
  expect(c.get(inbox, 49)).toEqual(m);
  expect(c.get(inbox, 0)).toBeUndefined();
  // The least recently used mailbox gives up its entries first.
  c.set(other, 1, { ...m });
  c.box(inbox);
  c.set(third, 1, { ...m });
  expect(c.get(other, 1)).toBeUndefined();
  expect(c.get(inbox, 49)).toEqual(m);
  expect(c.bytes).toBeLessThanOrEqual(5000);
});

test('ENVELOPE, BODYSTRUCTURE and list-view fields: kept answers equal answers from the bytes', async () => {
  const covered =
    'FLAGS INTERNALDATE RFC822.SIZE MODSEQ BODY.PEEK[HEADER.FIELDS (FROM TO SUBJECT DATE)] ENVELOPE BODYSTRUCTURE BODY BODY.PEEK[HEADER.FIELDS (SUBJECT)]<3.12>';
  // RFC822.HEADER makes the server read every message: the reference answer.
  const first = perMessage(await fetchAll(`(${covered})`));
  const fromBytes = perMessage(await fetchAll(`(${covered} RFC822.HEADER)`));
  expect(first).toHaveLength(32);
  const be = await env.service.openBackend('pg', 'meta');
  const uids = (await be.scan('INBOX', {})).rows.map((r) => r.uid);
  const kept = await be.getImapMeta('INBOX', uids);
  // Kept for every message but the one with NUL bytes (PostgreSQL text cannot hold NUL).
  expect(kept.size).toBe(31);
  expect(kept.has(uids[31])).toBe(false);
  await be.close();
  const again = perMessage(await fetchAll(`(${covered})`));
  for (let i = 0; i < 32; i++) {
    const strip = (t) => t.replace(/ RFC822\.HEADER \{\d+\}\r\n[\s\S]*?(?=\)\r\n$)/, '');
    expect(again[i]).toBe(first[i]);
    expect(strip(fromBytes[i])).toBe(first[i]);
  }
  expect(first[30]).toContain('Subject: =?ISO-8859-1?Q?r=E9sum=E9?=');
  expect(first[30]).toContain('("message" "rfc822"');
});
