'use strict';

/*
 * SEARCH semantics of issue 28 items 7 and 8 on the real store: SENT* compare the Date
 * header's day as written (its own zone), a message without a Date is 1-Jan-1970 (as Dovecot);
 * BODY/TEXT are substrings of every text part, decoded, text attachments included; FROM/TO/CC
 * read addresses without comments and both lines of a repeated Cc. Answers are Dovecot 2.3's
 * for the same messages (packages/imap/test/imap-search-dovecot.test.js runs both servers side by side).
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

let env;
let c;
const PW = 'search pw 1';

const mail = (lines) => Buffer.from(lines.join('\r\n'));

const MESSAGES = [
  // 1: on 1-Aug as written, 2-Aug in UTC
  mail([
    'From: a@example.org',
    'Cc: group:;, group2: (foo) ;',
    'Cc: second@example.org',
    'Subject: late evening',
    'Date: Wed, 01 Aug 2018 23:30:00 -0700',
    '',
    'body one',
    '',
  ]),
  // 2: on 2-Aug as written, 1-Aug in UTC
  mail([
    'From: <user-from (comment)@ (comment) domain.org>',
    'Subject: early morning',
    'Date: Thu, 02 Aug 2018 00:30:00 +0200',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('see bcache.h and DCACHE\n').toString('base64'),
    '--b1',
    'Content-Type: text/x-patch; name="fix.diff"',
    'Content-Disposition: attachment; filename="fix.diff"',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    'R4000 =3D cachefl=',
    'ush',
    '--b1--',
    '',
  ]),
  // 3: no Date header
  mail(['From: nodate@example.org', 'Subject: undated', '', 'no date here', '']),
  // 4: 31-Jul as written, 1-Aug in UTC
  mail([
    'From: y@example.org',
    'Subject: far west',
    'Date: 31 Jul 2018 23:59:59 -1200',
    '',
    'plain',
    '',
  ]),
];

beforeAll(async () => {
  env = await startPgServer({ users: { sem: PW } });
  const be = await env.service.openBackend('pg', 'sem');
  await be.createMailbox('INBOX');
  for (const m of MESSAGES) await be.append('INBOX', m, { internalDate: '2018-08-01T12:00:00Z' });
  await be.close();
  c = await RawClient.connect(env.port);
  await c.cmd('l', `LOGIN sem "${PW}"`);
  await c.cmd('s', 'EXAMINE INBOX');
});

afterAll(async () => {
  c.close();
  await env.close();
});

async function search(text) {
  const r = await c.cmd('q', `SEARCH ${text}`);
  const m = /^\* SEARCH([ \d]*)\r$/m.exec(r);
  if (!m) throw new Error(`no SEARCH answer: ${r}`);
  return m[1].trim() ? m[1].trim().split(' ').map(Number) : [];
}

test('SENTON/SENTBEFORE/SENTSINCE compare the day as written, disregarding the zone', async () => {
  expect(await search('SENTON 1-Aug-2018')).toEqual([1]);
  expect(await search('SENTON 2-Aug-2018')).toEqual([2]);
  expect(await search('SENTON 31-Jul-2018')).toEqual([4]);
  expect(await search('SENTBEFORE 1-Aug-2018')).toEqual([3, 4]);
  expect(await search('SENTSINCE 2-Aug-2018')).toEqual([2]);
  expect(await search('NOT SENTON 1-Aug-2018')).toEqual([2, 3, 4]);
  expect(await search('OR SENTON 2-Aug-2018 FROM nodate')).toEqual([2, 3]);
});

test('a message without a Date header is sent on 1-Jan-1970', async () => {
  expect(await search('SENTON 1-Jan-1970')).toEqual([3]);
  expect(await search('SENTBEFORE 2-Jan-1970')).toEqual([3]);
});

test('BODY and TEXT are substrings of every decoded text part, attachments included', async () => {
  expect(await search('BODY cache')).toEqual([2]);
  expect(await search('BODY R4000')).toEqual([2]);
  expect(await search('BODY "r4000 = cacheflush"')).toEqual([2]);
  expect(await search('TEXT "text/x-patch"')).toEqual([2]);
  expect(await search('BODY "text/x-patch"')).toEqual([]);
});

test('FROM/CC read addresses without comments, and every Cc line', async () => {
  expect(await search('FROM user-from@domain.org')).toEqual([2]);
  expect(await search('FROM comment')).toEqual([]);
  expect(await search('CC second')).toEqual([1]);
  expect(await search('CC foo')).toEqual([]);
  expect(await search('CC "group:;, group2:;"')).toEqual([1]);
});
