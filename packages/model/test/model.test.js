'use strict';

// The message model without a database: a parsed message through every row it becomes.
const { parseMessage } = require('@mailgate/mime');
const {
  columnRow,
  headerRow,
  headerRowFromParsed,
  listRowOf,
  packListRow,
  unpackListRow,
  listRow,
  previewOf,
  PREVIEW_CHARS,
} = require('@mailgate/model');

const RAW = Buffer.from(
  [
    'From: Ann Example <Ann@Example.org>',
    'To: Ben <ben@example.net>, carl@example.com',
    'Cc: dee@example.com',
    'Subject: Quarterly figures',
    'Date: Wed, 01 Aug 2018 23:30:00 -0700',
    'Message-ID: <q1@example.org>',
    '',
    'On Tue, Ben wrote:',
    '> the old text',
    'Here are the NUMBERS you asked for.',
    '-- ',
    'Ann',
    '',
  ].join('\r\n'),
);

describe('parsed message → column row → header row → list row', () => {
  const p = parseMessage(RAW);
  const row = columnRow(p, RAW.length);

  test('the column row holds the header fields, lower-cased search texts and the preview', () => {
    expect(row).toMatchObject({
      date: '2018-08-02T06:30:00.000Z',
      from_name: 'Ann Example',
      subject: 'Quarterly figures',
      message_id: 'q1@example.org',
      size: RAW.length,
      has_attachments: false,
      preview: 'Here are the NUMBERS you asked for.',
    });
    expect(row.from_addr.toLowerCase()).toBe('ann@example.org');
    expect(JSON.parse(row.to_addrs).map((a) => a.address)).toEqual([
      'ben@example.net',
      'carl@example.com',
    ]);
    expect(row.body_text).toContain('here are the numbers');
    expect(row.body_text).toBe(row.body_text.toLowerCase());
    expect(row.header_text).toContain('subject: quarterly figures');
  });

  test('the header row of the column row is the one a legacy backend builds from the parse', () => {
    const meta = { uid: 7, internalDate: new Date('2018-08-03T00:00:00Z'), size: RAW.length };
    const fromColumns = headerRow({
      ...row,
      uid: 7,
      internal_date: meta.internalDate,
      flags: [],
      keywords: [],
    });
    const fromParse = headerRowFromParsed(p, meta);
    expect(fromColumns).toEqual({ ...fromParse, threadId: null });
    expect(fromColumns.from).toEqual({ name: 'Ann Example', address: row.from_addr });
  });

  test('the list row is a projection of the header row, and packs and unpacks unchanged', () => {
    const h = headerRow({ ...row, uid: 3, flags: ['\\Seen'], keywords: ['work'], modseq: 9 });
    const l = listRowOf(h);
    // The projection drops exactly what makes a full row heavy: recipients, ids, preview, thread.
    const dropped = ['to', 'cc', 'messageId', 'preview', 'threadId'];
    expect(Object.keys(l)).toEqual(Object.keys(h).filter((k) => !dropped.includes(k)));
    for (const k of Object.keys(l)) expect(l[k]).toEqual(h[k]);
    expect(unpackListRow(packListRow(l))).toEqual(l);
    expect(unpackListRow(['not', 'a', 'row'])).toBeNull();
  });

  test('a list row read as PostgreSQL text equals the projection of the header row', () => {
    const h = headerRow({ ...row, uid: 3, flags: ['\\Seen'], keywords: [], modseq: 2 });
    const text = listRow({
      uid: '3',
      from_name: row.from_name,
      from_addr: row.from_addr,
      subject: row.subject,
      date_ms: String(Date.parse(row.date)),
      internal_ms: null,
      size: String(row.size),
      flags: '["\\\\Seen"]',
      keywords: '[]',
      has_attachments: 'f',
      modseq: '2',
    });
    expect(text).toEqual(listRowOf(h));
  });
});

describe('previewOf', () => {
  test('skips quoted text, the line introducing it and the signature; collapses whitespace', () => {
    expect(previewOf('On Mon, X wrote:\n> quoted\n\n  first   line\nsecond\n-- \nsig')).toBe(
      'first line second',
    );
  });

  test('nothing to show is null; a long body is cut with an ellipsis', () => {
    expect(previewOf('')).toBeNull();
    expect(previewOf('> only quoted\n')).toBeNull();
    const p = previewOf('word '.repeat(200));
    expect(p.length).toBe(PREVIEW_CHARS);
    expect(p.endsWith('…')).toBe(true);
  });
});
