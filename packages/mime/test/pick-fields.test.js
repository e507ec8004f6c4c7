'use strict';

const { pickFields, fieldRanges } = require('../lib/imap-meta');

/*
 * pickFields (HEADER.FIELDS from kept lines, asked of every message of a list view) compares a
 * line's field name in place instead of making a lower-cased copy of it. Checked against the
 * plain definition (the name trimmed and lower-cased, looked up in the set) over names in every
 * case, blanks before the colon, folded lines, 8-bit bytes and lines without a colon.
 */

/** The plain definition, as pickFields was written before. */
function reference(fields, names) {
  let out = '';
  let keep = false;
  for (const line of fields.match(/[^\n]*\n|[^\n]+$/g) || []) {
    const c = line.charCodeAt(0);
    if (c === 0x20 || c === 0x09) {
      if (keep) out += line;
      continue;
    }
    const colon = line.indexOf(':');
    keep =
      colon > 0 && colon < line.length - 1 && names.has(line.slice(0, colon).trim().toLowerCase());
    if (keep) out += line;
  }
  return out + '\r\n';
}

const NAMES = [
  'From',
  'TO',
  'subject',
  'DaTe',
  'Cc',
  'Message-ID',
  'X-Priority',
  'Fr\xf6m',
  'Tox',
  'T',
];

test('the same lines as the plain definition, whatever the case and spacing of names', () => {
  let seed = 7;
  const rnd = (n) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
  const sets = [
    new Set(['from', 'to', 'subject', 'date']),
    new Set(['cc', 'message-id', 'x-priority']),
    new Set(['to']),
    new Set([]),
  ];
  for (let m = 0; m < 2000; m++) {
    let fields = '';
    const lines = 1 + rnd(8);
    for (let l = 0; l < lines; l++) {
      const name = NAMES[rnd(NAMES.length)];
      const blank = ['', ' ', '\t', '  '][rnd(4)];
      fields += `${name}${blank}: value \xe9 ${l}\r\n`;
      if (rnd(4) === 0) fields += ` folded ${l}\r\n`;
      if (rnd(20) === 0) fields += 'no colon here\r\n';
    }
    for (const names of sets) {
      expect(pickFields(fields, names)).toBe(reference(fields, names));
      expect(viaRanges(fields, names)).toBe(reference(fields, names));
    }
  }
});

/**
 * fieldRanges (the IMAP server's packed list view copies ranges of the kept lines of many
 * messages): the message's lines inside a larger text, with kept-looking lines around them and
 * the message's last line without its line end, give the same section as pickFields.
 */
function viaRanges(fields, names) {
  const before = 'Subject: before\r\nTo: x\r\n';
  const after = 'From: after\r\n\tfolded after\r\n';
  for (const body of [fields, fields.replace(/\r?\n$/, '')]) {
    const text = before + body + after;
    const out = [];
    const len = fieldRanges(text, before.length, before.length + body.length, names, out);
    let got = '';
    for (let k = 0; k < out.length; k += 2) got += text.slice(out[k], out[k + 1]);
    got += '\r\n';
    expect(len).toBe(got.length);
    expect(got).toBe(pickFields(body, names));
  }
  return pickFields(fields, names);
}

test('a kept block: fields in order, folding kept, then the blank line', () => {
  const fields = 'Date: d\r\nFROM: a\r\n  b\r\nSubject : s\r\nTo: t\r\n';
  expect(pickFields(fields, new Set(['from', 'subject']))).toBe(
    'FROM: a\r\n  b\r\nSubject : s\r\n\r\n',
  );
  expect(pickFields(fields, new Set(['cc']))).toBe('\r\n');
});
