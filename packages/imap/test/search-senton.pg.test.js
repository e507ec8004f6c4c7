'use strict';

/*
 * SENTON / SENTBEFORE / SENTSINCE (issue 35 item 2) on the real store: the answer is the Date
 * header's day as written (its own zone, as Dovecot), and it is read from the kept ENVELOPE
 * (message_imap), not from the message bytes: a date search of the large Enron mailbox read
 * the header of every message within two days of the asked one (~1,000 messages) and parsed
 * it, and first read the list rows of the whole mailbox; it was 12× Dovecot's time. A date the
 * envelope keeps as a literal (8-bit bytes) is still decided from the bytes.
 */

const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');
const { statementsDuring } = require('@mailgate/test-support/db');

let env;
let c;
const PW = 'senton pw 1';

const mail = (lines) => Buffer.from(lines.join('\r\n'), 'latin1');
const message = (date, subject) =>
  mail(['From: a@example.org', `Subject: ${subject}`, ...date, '', `body of ${subject}`, '']);

// seq → Date header lines, and the day each is sent on as written.
const MESSAGES = [
  [['Date: Wed, 01 Aug 2018 23:30:00 -0700'], '2018-08-01'], // 1: UTC 2 Aug
  [['Date: Thu, 02 Aug 2018 00:30:00 +0200'], '2018-08-02'], // 2: UTC 1 Aug
  [['Date: 1 Aug 2018 12:00:00 +0000'], '2018-08-01'], // 3: no day of week
  [['Date: Wed,', ' 1 Aug 18 09:00:00 +0100'], '2018-08-01'], // 4: folded, 2-digit year
  [['Date: Wed, 01 Aug 2018 10:00:00 +0000 ("quoted" comment)'], '2018-08-01'], // 5: quotes
  [['Date: Thu, 02 Aug 2018 10:00:00 +0000 (caf\xe9)'], '2018-08-02'], // 6: 8-bit: a literal
  [
    ['Date: Wed, 01 Aug 2018 10:00:00 +0000', 'Date: Fri, 03 Aug 2018 10:00:00 +0000'],
    '2018-08-01',
  ], // 7: the first
  [['Date: someday soon'], '1970-01-01'], // 8: does not parse
  [[], '1970-01-01'], // 9: none
  [['Date: Tue, 31 Jul 2018 23:59:59 -1200'], '2018-07-31'], // 10: UTC 1 Aug
  [['Date: Fri, 10 Aug 2018 10:00:00 +0000'], '2018-08-10'], // 11
];

beforeAll(async () => {
  env = await startPgServer({ users: { sent: PW } });
  const be = await env.service.openBackend('pg', 'sent');
  await be.createMailbox('INBOX');
  for (const [i, [date]] of MESSAGES.entries()) {
    await be.append('INBOX', message(date, `m${i + 1}`), {
      internalDate: '2018-08-01T12:00:00Z',
    });
  }
  await be.close();
  c = await RawClient.connect(env.port);
  await c.cmd('l', `LOGIN sent "${PW}"`);
  await c.cmd('s', 'EXAMINE INBOX');
});

afterAll(async () => {
  if (c) c.close();
  if (env) await env.close();
});

async function search(text) {
  const r = await c.cmd('q', `SEARCH ${text}`);
  const m = /^\* SEARCH([ \d]*)\r$/m.exec(r);
  if (!m) throw new Error(`no SEARCH answer: ${r}`);
  return m[1].trim() ? m[1].trim().split(' ').map(Number) : [];
}

const IMAP_MONTHS = [
  'Jan',
  'Feb',
  'Mar',
  'Apr',
  'May',
  'Jun',
  'Jul',
  'Aug',
  'Sep',
  'Oct',
  'Nov',
  'Dec',
];
const imapDate = (iso) =>
  `${Number(iso.slice(8, 10))}-${IMAP_MONTHS[Number(iso.slice(5, 7)) - 1]}-${iso.slice(0, 4)}`;
// The expected answer, from the written days above.
const want = (pred) => MESSAGES.map(([, day], i) => (pred(day) ? i + 1 : 0)).filter((n) => n > 0);

test('SENT* answer the written day for every shape of Date header', async () => {
  for (const day of ['2018-07-31', '2018-08-01', '2018-08-02', '2018-08-03', '1970-01-01']) {
    expect({ day, on: await search(`SENTON ${imapDate(day)}`) }).toEqual({
      day,
      on: want((d) => d === day),
    });
    expect({ day, before: await search(`SENTBEFORE ${imapDate(day)}`) }).toEqual({
      day,
      before: want((d) => d < day),
    });
    expect({ day, since: await search(`SENTSINCE ${imapDate(day)}`) }).toEqual({
      day,
      since: want((d) => d >= day),
    });
  }
  // Mixed with other keys: NOT, OR with a substring, a sequence set, a flag.
  expect(await search('NOT SENTON 1-Aug-2018')).toEqual(want((d) => d !== '2018-08-01'));
  expect(await search('OR SENTON 2-Aug-2018 SUBJECT m11')).toEqual([2, 6, 11]);
  expect(await search('2:5 SENTON 1-Aug-2018')).toEqual([3, 4, 5]);
  expect(await search('UNSEEN SENTSINCE 2-Aug-2018')).toEqual([2, 6, 11]);
});

test('SENT* read the kept envelopes, not the message bytes', async () => {
  // 1-Aug's band (30 Jul - 3 Aug in UTC) holds messages 1-7 and 10; message 6's date is a
  // literal in its envelope and is read from its bytes: ask days whose band leaves it out.
  const during = async (text) => {
    const { result, sql } = await statementsDuring(env.db.knex, () => search(text));
    return { result, bytes: sql.filter((q) => /message_sources/.test(q)).length };
  };
  expect(await during('SENTON 10-Aug-2018')).toEqual({ result: [11], bytes: 0 });
  expect(await during('SENTBEFORE 9-Aug-2018 SENTSINCE 9-Aug-2018')).toEqual({
    result: [],
    bytes: 0,
  });
  // Message 6 within the band: its bytes decide it, and only then.
  expect((await during('SENTON 2-Aug-2018')).result).toEqual([2, 6]);
});
