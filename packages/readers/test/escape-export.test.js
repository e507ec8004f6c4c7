'use strict';

const {
  escapeMessage,
  unescapeMessage,
  formatMboxEntry,
  makeFromLine,
  exportEntry,
  isFromLine,
} = require('../lib');
const { split } = require('./helpers');

const b = (s) => Buffer.from(s, 'latin1');

describe('escapeMessage / unescapeMessage', () => {
  const raw = b('From a\n>From b\n>>From c\nFrom\nx From d\n>From');
  test('mboxo/mboxcl quote only "From "', () => {
    for (const v of ['mboxo', 'mboxcl']) {
      expect(escapeMessage(raw, v).toString()).toBe(
        '>From a\n>From b\n>>From c\nFrom\nx From d\n>From',
      );
    }
  });
  test('mboxrd quotes every >*From level', () => {
    const esc = escapeMessage(raw, 'mboxrd');
    expect(esc.toString()).toBe('>From a\n>>From b\n>>>From c\nFrom\nx From d\n>From');
    expect(unescapeMessage(esc, 'mboxrd').equals(raw)).toBe(true);
  });
  test('mboxcl2 is identity', () => {
    expect(escapeMessage(raw, 'mboxcl2').equals(raw)).toBe(true);
    expect(unescapeMessage(raw, 'mboxcl2').equals(raw)).toBe(true);
  });
  test('unknown variant throws', () => {
    expect(() => escapeMessage(raw, 'auto')).toThrow(TypeError);
  });
});

describe('formatMboxEntry', () => {
  test('uses original when present, else escaped raw + trailer', () => {
    const fromLine = b('From x Sat Jan  3 01:05:34 1996\n');
    expect(
      formatMboxEntry({
        fromLine,
        raw: b('From y\n'),
        variant: 'mboxo',
        trailer: b('\n'),
      }).toString(),
    ).toBe('From x Sat Jan  3 01:05:34 1996\n>From y\n\n');
    expect(
      formatMboxEntry({
        fromLine,
        raw: b('From y\n'),
        variant: 'mboxo',
        trailer: b('\n'),
        original: b('From y\n\n'),
      }).toString(),
    ).toBe('From x Sat Jan  3 01:05:34 1996\nFrom y\n\n');
  });
});

describe('makeFromLine', () => {
  test('asctime format in UTC with blank-padded day', () => {
    expect(makeFromLine('a@b.c', new Date(Date.UTC(1996, 0, 3, 1, 5, 34))).toString()).toBe(
      'From a@b.c Wed Jan  3 01:05:34 1996\n',
    );
  });
  test('sanitises sender and date', () => {
    expect(makeFromLine('', 'garbage').toString()).toBe(
      'From MAILER-DAEMON Thu Jan  1 00:00:00 1970\n',
    );
    expect(makeFromLine('a b@c', 0).toString()).toMatch(/^From ab@c /);
  });
  test('output is recognised by the strict From_ check', () => {
    expect(isFromLine(makeFromLine('x@y', new Date()))).toBe(true);
  });
});

describe('exportEntry round trips through MboxSplitter', () => {
  const raws = [
    b('Subject: a\n\nFrom line\n\nFrom z@z Sat Jan  3 01:05:34 1996\n>From\n>>From q\n'),
    b('Subject: b\nContent-Length: 999\n\nno final newline'),
    b('Subject: c\r\n\r\nFrom crlf\r\n'),
    b('Subject: only headers\n'),
  ];
  test('mboxcl2 and mboxcl preserve raw (plus Content-Length), even without a final newline', async () => {
    const noCl = (s) => s.toString().replace(/^Content-Length: \d+\r?\n/im, '');
    for (const variant of ['mboxcl2', 'mboxcl']) {
      const file = Buffer.concat(raws.map((r) => exportEntry(r, variant)));
      const entries = await split(file, { variant });
      expect(entries.map((e) => noCl(e.raw))).toEqual(raws.map(noCl));
      expect(entries.filter((e) => /^Content-Length: /m.test(e.raw))).toHaveLength(3);
      expect(entries.every((e) => e.error === null)).toBe(true);
    }
  });
  test('mboxcl2 output carries a correct Content-Length (replacing a stale one)', () => {
    const out = exportEntry(raws[1], 'mboxcl2', 'From x Sat Jan  3 01:05:34 1996').toString();
    expect(out).toBe(
      'From x Sat Jan  3 01:05:34 1996\nSubject: b\nContent-Length: 16\n\nno final newline\n',
    );
  });
  test('mboxrd/mboxo add a final newline when missing, otherwise preserve raw', async () => {
    for (const variant of ['mboxrd', 'mboxo']) {
      const file = Buffer.concat(raws.map((r) => exportEntry(r, variant)));
      const entries = await split(file, { variant });
      const expected = raws.map((r) => (r.toString().endsWith('\n') ? r.toString() : r + '\n'));
      expect(entries.map((e) => e.raw.toString())).toEqual(expected);
    }
  });
  test('derives the From_ line from Return-Path / From and Date', () => {
    const raw = b('From: "A" <a@example.com>\nDate: Tue, 4 Mar 2003 07:08:09 +0000\n\nx\n');
    expect(exportEntry(raw, 'mboxrd').toString().split('\n')[0]).toBe(
      'From a@example.com Tue Mar  4 07:08:09 2003',
    );
    const rp = b('Return-Path: <bounce@x.org>\nFrom: a@example.com\n\nx\n');
    expect(exportEntry(rp, 'mboxrd').toString()).toMatch(/^From bounce@x\.org Thu Jan {2}1 /);
  });
});
