'use strict';

/*
 * Issue 30.11: the header scan and search default to date order, newest first (the Date
 * header, else the received/internal date; ties by uid), on pg and on the file backends;
 * uid order (import order) stays available as `order=uid`. Keyset pages in date order give
 * every row once, also when rows with the same date straddle a page boundary.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { addLegacyUser } = require('@mailgate/legacy');
const { msg, legacyMailOf } = require('@mailgate/test-support/mail');

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-date-order-'));
process.env.MAILGATE_HOME = home;
const { useApi, req } = require('./helpers');

// Import order is not date order (as in the Enron set: uid 2 is dated decades later).
const inbox = [
  ['Wed, 28 Nov 2001 10:00:00 +0000', 'first imported'],
  ['Thu, 28 Dec 2043 10:00:00 +0000', 'dated in the future'],
  ['Mon, 01 Jan 1990 10:00:00 +0000', 'old'],
  ['Wed, 28 Nov 2001 10:00:00 +0000', 'same date as uid 1'],
  ['Sat, 01 Jun 2002 10:00:00 +0000', 'newest real'],
].map(([date, subject]) => msg({ date, subject: `okapi ${subject}` }));
// Newest first; uids 4 and 1 share a date: the higher uid first when descending.
const NEWEST_FIRST = [2, 5, 4, 1, 3];

const t = useApi();
let olga;
beforeAll(async () => {
  [olga] = await t.users('olga');
  await t.mail('olga', 'INBOX', inbox);
  // No Date header: its received date (the mbox From_ line, 2002-03-02) orders it.
  await t.mail('olga', 'Undated', [
    msg({ date: 'Fri, 01 Feb 2002 10:00:00 +0000', subject: 'february' }),
    msg({ date: null, subject: 'received in march' }),
    msg({ date: 'Mon, 01 Apr 2002 10:00:00 +0000', subject: 'april' }),
  ]);
  addLegacyUser(home, 'olga', legacyMailOf(home, inbox));
});
afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

const get = async (url, headers) => {
  const r = await req(t.app, olga, { url: `/api/v1${url}`, headers });
  expect(r.statusCode).toBe(200);
  return r;
};
const uids = async (url) => (await get(url)).json().messages.map((m) => m.uid);

/** Every page of a keyset-paged scan, following nextCursor. */
async function allPages(url, limit) {
  const seen = [];
  let cursor = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const r = (
      await get(
        `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      )
    ).json();
    seen.push(...r.messages.map((m) => m.uid));
    cursor = r.nextCursor;
  } while (cursor);
  return seen;
}

test('the header scan is newest first by date by default; uid order on request', async () => {
  expect(await uids('/mailboxes/INBOX/messages')).toEqual(NEWEST_FIRST);
  expect(await uids('/mailboxes/INBOX/messages?order=-date')).toEqual(NEWEST_FIRST);
  expect(await uids('/mailboxes/INBOX/messages?order=date')).toEqual([...NEWEST_FIRST].reverse());
  expect(await uids('/mailboxes/INBOX/messages?order=uid')).toEqual([1, 2, 3, 4, 5]);
  expect(await uids('/mailboxes/INBOX/messages?order=-uid')).toEqual([5, 4, 3, 2, 1]);
});

test('keyset pages in date order give every row once, ties split across pages', async () => {
  for (const limit of [1, 2, 3, 4]) {
    expect(await allPages('/mailboxes/INBOX/messages', limit)).toEqual(NEWEST_FIRST);
    expect(await allPages('/mailboxes/INBOX/messages?order=date', limit)).toEqual(
      [...NEWEST_FIRST].reverse(),
    );
  }
});

test('a message without a Date header is ordered by its received date', async () => {
  const rows = (await get('/mailboxes/Undated/messages')).json().messages;
  expect(rows.map((m) => m.subject)).toEqual(['april', 'received in march', 'february']);
});

test('the NDJSON feed of the whole mailbox stays in uid order; date order on request', async () => {
  const nd = async (qs) => {
    const r = await get(`/mailboxes/INBOX/messages${qs}`, { accept: 'application/x-ndjson' });
    return r.body
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).uid);
  };
  expect(await nd('')).toEqual([1, 2, 3, 4, 5]);
  expect(await nd('?order=-date')).toEqual(NEWEST_FIRST);
});

test('search rows are newest first by default; the matching set stays by uid', async () => {
  const r = (await get('/search?q=okapi&mailbox=INBOX')).json();
  expect(r.messages.map((m) => m.uid)).toEqual(NEWEST_FIRST);
  expect(r.mailboxes).toEqual([{ mailbox: 'INBOX', uids: [1, 2, 3, 4, 5] }]);
  expect(await allPages('/search?q=okapi&mailbox=INBOX', 2)).toEqual(NEWEST_FIRST);
  expect(await uids('/search?q=okapi&mailbox=INBOX&order=uid')).toEqual([1, 2, 3, 4, 5]);
  // Across mailboxes too, by the same date (the undated message by its received date).
  const all = (await get('/search?q=')).json().messages.map((m) => m.subject);
  expect(all.slice(0, 4)).toEqual([
    'okapi dated in the future',
    'okapi newest real',
    'april',
    'received in march',
  ]);
});

test.each(['mbox', 'maildir'])(
  'backend=%s answers the same default order as pg, scan and search',
  async (b) => {
    expect(await uids(`/mailboxes/INBOX/messages?backend=${b}`)).toEqual(NEWEST_FIRST);
    expect(await allPages(`/mailboxes/INBOX/messages?backend=${b}`, 2)).toEqual(NEWEST_FIRST);
    const s = (await get(`/search?q=text:okapi&backend=${b}`)).json();
    expect(s.messages.map((m) => m.uid)).toEqual(NEWEST_FIRST);
    expect(s.mailboxes).toEqual([{ mailbox: 'INBOX', uids: [1, 2, 3, 4, 5] }]);
    expect(await uids(`/search?q=text:okapi&backend=${b}&order=date`)).toEqual(
      [...NEWEST_FIRST].reverse(),
    );
  },
);
