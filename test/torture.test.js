'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('./support/db');
const { mboxOf } = require('./support/mail');
const { hostileMessages } = require('./support/hostile');
const { measureAll, worst, table } = require('../scripts/torture-report');
const { setup, req } = require('../packages/api/test/helpers');
const { closeRequestPool } = require('@mailgate/mime');

// Issue 15.3: generated hostile messages (seeded) through the import and display parsers,
// the importers (every message stored or quarantined, byte-exact either way) and the HTTP
// message view (4xx, never 5xx, never a hang). Prints the worst parse time and memory.
const SEED = 15;
const messages = hostileMessages(SEED);
const suite = useCliSuite('torture');

test('parse cost per message: none over 2 s or 256 MB, none crashes', () => {
  const rows = measureAll({ seed: SEED });
  console.log(`torture suite, seed ${SEED}\n${table(rows)}`);
  for (const r of rows) {
    for (const mode of ['parse', 'view']) {
      expect({ name: r.name, mode, outcome: r[mode].outcome }).not.toMatchObject({
        outcome: expect.stringMatching(/^crashed/),
      });
    }
  }
  const w = worst(rows);
  expect(w.time.ms).toBeLessThan(2000);
  expect(w.mem.mb).toBeLessThan(256);
});

test('import mh: every message stored or quarantined, byte-exact either way', () => {
  const dir = path.join(suite.tmp, 'mh');
  fs.mkdirSync(dir);
  messages.forEach((m, i) => fs.writeFileSync(path.join(dir, String(i + 1)), m.raw));
  const r = suite.cli(['import', 'mh', dir, '--user', 'torture', '--json']);
  expect(r.code).toBe(0);
  expect(r.json.messages).toBe(messages.length);
  expect(r.json.imported + r.json.quarantined).toBe(messages.length);
  const v = suite.cli(['verify', 'mh', dir, '--user', 'torture', '--json']);
  expect(v.json).toMatchObject({ ok: true, messages: messages.length, missing: 0, mismatched: 0 });
  expect(v.code).toBe(0);
});

test('import mbox: the same messages (with From lines in bodies) round-trip through verify', () => {
  const file = path.join(suite.tmp, 'hostile.mbox');
  fs.writeFileSync(file, mboxOf(messages.map((m) => m.raw)));
  const r = suite.cli(['import', 'mbox', file, '--user', 'tmbox', '--mailbox', 'h', '--json']);
  expect(r.code).toBe(0);
  expect(r.json.imported + r.json.quarantined).toBe(r.json.messages);
  const v = suite.cli(['verify', 'mbox', file, '--user', 'tmbox', '--mailbox', 'h', '--json']);
  expect(v.json).toMatchObject({ ok: true, missing: 0, mismatched: 0 });
});

describe('HTTP message view', () => {
  let ctx;
  let token;
  beforeAll(async () => {
    ctx = await setup();
    token = await ctx.user('tview');
    await ctx.mail(
      'tview',
      'INBOX',
      messages.map((m) => m.raw),
    );
  });
  afterAll(async () => {
    await closeRequestPool();
    await ctx.close();
  });

  test('every stored hostile message: 200 or a coded 4xx, never 5xx, never over 10 s', async () => {
    const list = await req(ctx.app, token, {
      method: 'GET',
      url: '/api/v1/mailboxes/INBOX/messages?limit=500',
    });
    expect(list.statusCode).toBe(200);
    const uids = list.json().messages.map((m) => m.uid);
    expect(uids.length).toBeGreaterThan(messages.length - 5); // the rest were quarantined
    for (const uid of uids) {
      for (const q of ['', '?images=remote']) {
        const t0 = Date.now();
        const r = await req(ctx.app, token, {
          method: 'GET',
          url: `/api/v1/mailboxes/INBOX/messages/${uid}${q}`,
        });
        expect({ uid, status: r.statusCode }).toEqual({ uid, status: expect.any(Number) });
        expect(r.statusCode).toBeLessThan(500);
        if (r.statusCode >= 400) expect(r.json().error.code).toMatch(/^[A-Z_]+$/);
        expect(Date.now() - t0).toBeLessThan(10000);
      }
    }
  });
});
