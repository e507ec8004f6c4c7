'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

/*
 * `mailgate ls --mailbox` and `mailgate search` list rows newest first by date (the Date
 * header, else the received date) unless --order says otherwise (issue 30.11); `search
 * --json` lists the matching uids as a set (mailbox, then uid), the same on every backend.
 */
const ctx = useCliSuite('clidate');

// Import order is not date order: uid 2 is dated decades later, uids 1 and 4 share a date.
const DATES = [
  'Wed, 28 Nov 2001 10:00:00 +0000',
  'Thu, 28 Dec 2043 10:00:00 +0000',
  'Mon, 01 Jan 1990 10:00:00 +0000',
  'Wed, 28 Nov 2001 10:00:00 +0000',
  'Sat, 01 Jun 2002 10:00:00 +0000',
];
const NEWEST_FIRST = [2, 5, 4, 1, 3];

beforeAll(() => {
  const file = path.join(ctx.tmp, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf(DATES.map((date, i) => msg({ date, subject: `okapi ${i + 1}` }))));
  const r = ctx.cli(['import', 'mbox', file, '--user', 'cd', '--json']);
  expect(r.code).toBe(0);
});

test('ls --mailbox: newest first by date; --order uid is import order', () => {
  const json = (args) => {
    const r = ctx.cli(['ls', '--user', 'cd', '--mailbox', 'INBOX', '--json', ...args]);
    expect(r.code).toBe(0);
    return r.json.messages.map((m) => m.uid);
  };
  expect(json([])).toEqual(NEWEST_FIRST);
  expect(json(['--order', 'uid'])).toEqual([1, 2, 3, 4, 5]);
  expect(json(['--order', 'date'])).toEqual([...NEWEST_FIRST].reverse());
  expect(json(['--order=-uid', '--limit', '2'])).toEqual([5, 4]);
  const table = ctx.cli(['ls', '--user', 'cd', '--mailbox', 'INBOX']);
  expect(table.code).toBe(0);
  const dates = table.stdout.match(/\d{4}-\d\d-\d\d/g);
  expect(dates.slice(0, 3)).toEqual(['2043-12-28', '2002-06-01', '2001-11-28']);
  const bad = ctx.cli(['ls', '--user', 'cd', '--mailbox', 'INBOX', '--order', 'size']);
  expect(bad.code).toBe(2);
});

test('search: rows newest first; --json uids are the set by uid', () => {
  const r = ctx.cli(['search', 'okapi', '--user', 'cd']);
  expect(r.code).toBe(0);
  const shown = [...r.stdout.matchAll(/okapi (\d)/g)].map((m) => Number(m[1]));
  expect(shown).toEqual(NEWEST_FIRST);
  const byUid = ctx.cli(['search', 'okapi', '--user', 'cd', '--order', 'uid']);
  expect([...byUid.stdout.matchAll(/okapi (\d)/g)].map((m) => Number(m[1]))).toEqual([
    1, 2, 3, 4, 5,
  ]);
  const json = ctx.cli(['search', 'okapi', '--user', 'cd', '--json']);
  expect(json.code).toBe(0);
  expect(json.json).toMatchObject({ total: 5, uids: [1, 2, 3, 4, 5] });
});
