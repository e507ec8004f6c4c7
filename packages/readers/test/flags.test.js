'use strict';

const { flagsFromHeaders, splitFlags, headerBlock } = require('../lib');

const h = (s) => Buffer.from(s, 'latin1');

describe('headerBlock', () => {
  test('stops before the first empty line (LF and CRLF)', () => {
    expect(headerBlock(h('A: 1\nB: 2\n\nStatus: R\n')).toString()).toBe('A: 1\nB: 2\n');
    expect(headerBlock(h('A: 1\r\n\r\nbody')).toString()).toBe('A: 1\r\n');
    expect(headerBlock(h('A: 1\nB: 2')).toString()).toBe('A: 1\nB: 2');
    expect(headerBlock(h('\nbody')).length).toBe(0);
  });
});

describe('flagsFromHeaders', () => {
  test('Status and X-Status', () => {
    expect(flagsFromHeaders(h('Status: RO\nX-Status: AFTD\n'))).toEqual({
      flags: ['\\Answered', '\\Deleted', '\\Draft', '\\Flagged', '\\Seen'],
      keywords: [],
    });
    expect(flagsFromHeaders(h('Status: O\n')).flags).toEqual([]);
  });
  test('X-Keywords, comma or space separated, deduplicated case-insensitively', () => {
    expect(flagsFromHeaders(h('X-Keywords: work, $Label1 home\n  Work\n')).keywords).toEqual([
      '$Label1',
      'home',
      'work',
    ]);
  });
  test('X-Mozilla-Status bits', () => {
    // 0x1000 is $Forwarded: a keyword in the data model (splitFlags), not a system flag.
    expect(flagsFromHeaders(h('X-Mozilla-Status: 1001\n'))).toEqual({
      flags: ['\\Seen'],
      keywords: ['$Forwarded'],
    });
    expect(flagsFromHeaders(h('X-Mozilla-Status: 000e\n')).flags).toEqual([
      '\\Answered',
      '\\Deleted',
      '\\Flagged',
    ]);
    expect(flagsFromHeaders(h('X-Mozilla-Status: zz\n')).flags).toEqual([]);
  });
  test('X-Gmail-Labels', () => {
    expect(
      flagsFromHeaders(h('X-Gmail-Labels: Inbox,Starred,Opened,"Work, misc",Important\n')),
    ).toEqual({ flags: ['\\Flagged', '\\Seen'], keywords: ['Important', 'Inbox', 'Work, misc'] });
    // Unread wins over any other read marker.
    expect(flagsFromHeaders(h('Status: RO\nX-Gmail-Labels: Unread,Opened\n')).flags).toEqual([]);
  });
  test('only the header block counts when given a header block', () => {
    const raw = h('Subject: x\n\nStatus: R\n');
    expect(flagsFromHeaders(headerBlock(raw)).flags).toEqual([]);
  });
  test('header names are case-insensitive and duplicates merge', () => {
    expect(flagsFromHeaders('status: R\nSTATUS: R\nx-status: F\n').flags).toEqual([
      '\\Flagged',
      '\\Seen',
    ]);
  });
});

describe('splitFlags: the one flag/keyword split', () => {
  test('system flags to flags (canonical case), everything else to keywords, \\Recent dropped', () => {
    expect(
      splitFlags(['\\seen', '$Forwarded', 'Work', '\\Recent', '\\Flagged', 'Work', '\\Bogus']),
    ).toEqual({ flags: ['\\Flagged', '\\Seen'], keywords: ['$Forwarded', 'Work'] });
    expect(splitFlags()).toEqual({ flags: [], keywords: [] });
  });
});
