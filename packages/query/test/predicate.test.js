'use strict';

const { parse, compilePredicate, tokenize, QueryError } = require('../lib');

describe('tokenize', () => {
  test.each([
    ['Happy New Year!', ['happy', 'new', 'year']],
    ['unhappy', ['unhappy']],
    ['e-mail foo.bar a_b', ['e', 'mail', 'foo', 'bar', 'a', 'b']],
    ['alice@example.org', ['alice', 'example', 'org']],
    ["don't 42nd 3.14", ['don', 't', '42nd', '3', '14']],
    ['ÉCOLE Straße naïve', ['école', 'straße', 'naïve']],
    ['Привет, мир', ['привет', 'мир']],
    ['東京 タワー', ['東京', 'タワー']],
    ['हिन्दी', ['हिन्दी']],
    ['', []],
    ['  --- !!! ', []],
    [null, []],
    [undefined, []],
  ])('%j', (text, tokens) => {
    expect(tokenize(text)).toEqual(tokens);
  });
});

/*
 * A small mailbox with hand-computed expectations. Ids are letters; every expected list
 * below was worked out by reading these objects, not by running the code.
 */
const day = (iso) => new Date(iso);
const MESSAGES = [
  {
    id: 'A',
    fromText: 'Alice Smith <alice@example.org>',
    toText: 'bob@corp.test',
    ccText: 'Carol <carol@example.org>',
    subject: 'Happy New Year',
    headerText: 'From: Alice Smith <alice@example.org>\nSubject: Happy New Year\nX-Tag: 50%_off',
    bodyText: 'Wishing you a happy new year, Bob!',
    date: day('2024-01-01T00:00:00Z'),
    size: 2048,
    flags: ['\\Seen'],
    hasAttachments: false,
    mailbox: 'INBOX',
  },
  {
    id: 'B',
    fromText: 'bob@corp.test',
    toText: 'alice@example.org',
    ccText: '',
    subject: 'Re: quarterly report',
    headerText: 'From: bob@corp.test\nSubject: Re: quarterly report',
    bodyText: 'I am unhappy with the Q3 numbers. See attached report.pdf',
    date: day('2023-12-31T23:59:59Z'),
    size: 10240,
    flags: ['\\Seen', '\\Flagged', '\\Answered'],
    hasAttachments: true,
    mailbox: 'Work',
  },
  {
    // Missing fields everywhere: a freshly imported message with a broken header.
    id: 'C',
    fromText: null,
    subject: undefined,
    bodyText: 'year new happy',
    date: null,
    size: 100,
    flags: [],
    hasAttachments: null,
    mailbox: 'INBOX',
  },
  {
    id: 'D',
    fromText: 'Dave <dave@example.com>',
    toText: 'Alice <ALICE@EXAMPLE.ORG>',
    ccText: 'bob@corp.test',
    subject: 'Draft: e-mail policy',
    headerText: 'From: Dave\nSubject: Draft: e-mail policy',
    bodyText: 'Use 100% of the e-mail quota_limit wisely. Happy-go-lucky.',
    date: day('2024-01-02T12:00:00Z'),
    size: 1048577,
    flags: ['\\Draft', '\\Deleted'],
    hasAttachments: true,
    mailbox: 'Drafts',
  },
  {
    id: 'E',
    fromText: 'Ünïcode Ëxample <eve@example.net>',
    toText: 'team@corp.test',
    ccText: null,
    subject: 'ÉTÉ report',
    headerText: 'From: Ünïcode Ëxample <eve@example.net>\nSubject: ÉTÉ report',
    bodyText: '',
    date: new Date('invalid'),
    size: undefined,
    flags: undefined,
    hasAttachments: false,
    mailbox: 'Sent Items',
  },
];

function run(q) {
  const pred = compilePredicate(parse(q));
  return MESSAGES.filter((m) => pred(m)).map((m) => m.id);
}

describe('compilePredicate: every operator against the hand-written mailbox', () => {
  test.each([
    ['', ['A', 'B', 'C', 'D', 'E']],
    // word search: whole tokens, case-insensitive, over subject/from/to/cc/body
    ['happy', ['A', 'C', 'D']], // D: "Happy-go-lucky" tokenizes to happy/go/lucky; B is "unhappy"
    ['HAPPY', ['A', 'C', 'D']],
    ['unhappy', ['B']],
    ['report', ['B', 'E']], // B subject + body "report.pdf"; E subject
    ['example', ['A', 'B', 'D', 'E']], // tokens of the addresses; C has no from/to
    ['happy year', ['A', 'C']],
    ['e-mail', ['D']], // one word node, tokens e + mail, all must occur
    ['été', ['E']],
    ['!!!', []], // no tokens: matches nothing, as an empty tsquery does in PostgreSQL
    // phrases: consecutive tokens within one field
    ['"happy new year"', ['A']], // C has the words in another order
    ['"HAPPY, new year"', ['A']],
    ['"year new"', ['C']],
    ['"new happy"', ['C']],
    ['"new year"', ['A']],
    ['"year happy"', []],
    ['"happy go lucky"', ['D']],
    // substring search: case-insensitive substring of the field
    ['from:example', ['A', 'D', 'E']], // alice@example.org, dave@example.com, Ëxample/example.net
    ['from:EXAMPLE.ORG', ['A']],
    ['from:bob', ['B']],
    ['to:alice@example.org', ['B', 'D']], // D's To is upper case
    ['cc:bob', ['D']],
    ['cc:example', ['A']],
    ['subject:report', ['B', 'E']],
    ['subject:"quarterly report"', ['B']],
    ['subject:"re:"', ['B']],
    ['subject:été', ['E']], // Unicode case folding, wider than IMAP's i;ascii-casemap
    ['body:happy', ['A', 'B', 'C', 'D']], // unHAPPY contains happy
    ['body:100%', ['D']], // % is literal
    ['body:quota_limit', ['D']], // _ is literal
    ['body:"a_l"', ['D']],
    ['text:happy', ['A', 'B', 'C', 'D']], // header or body
    ['text:50%_off', ['A']], // header only
    ['text:Dave', ['D']],
    ['text:numbers', ['B']],
    // flags
    ['is:read', ['A', 'B']],
    ['is:seen', ['A', 'B']],
    ['is:unread', ['C', 'D', 'E']], // E has no flags array at all
    ['is:flagged', ['B']],
    ['is:unflagged', ['A', 'C', 'D', 'E']],
    ['is:answered', ['B']],
    ['is:deleted', ['D']],
    ['is:draft', ['D']],
    ['has:attachment', ['B', 'D']],
    ['-has:attachment', ['A', 'C', 'E']], // C: null counts as no
    // dates, all UTC; C (null) and E (invalid Date) have no date
    ['before:2024-01-01', ['B']],
    ['after:2024-01-01', ['A', 'D']],
    ['on:2024-01-01', ['A']],
    ['on:2023-12-31', ['B']],
    ['on:2024-01-02', ['D']],
    ['before:2024-01-02 after:2024-01-01', ['A']],
    ['-before:2024-01-01', ['A', 'C', 'D', 'E']],
    ['-after:2024-01-01', ['B', 'C', 'E']],
    ['-on:2024-01-01', ['B', 'C', 'D', 'E']],
    // sizes: strict comparisons, k = 1024, M = 1024²; E has no size
    ['larger:2k', ['B', 'D']],
    ['larger:2047', ['A', 'B', 'D']],
    ['smaller:2k', ['C']],
    ['larger:1M', ['D']],
    ['smaller:10k', ['A', 'C']],
    ['-larger:2k', ['A', 'C', 'E']],
    // mailboxes
    ['in:inbox', ['A', 'C']],
    ['in:INBOX', ['A', 'C']],
    ['in:work', []], // only INBOX is case-insensitive
    ['in:Work', ['B']],
    ['in:"Sent Items"', ['E']],
    // negation with missing fields
    ['-from:bob', ['A', 'C', 'D', 'E']], // C has no From
    ['-subject:report', ['A', 'C', 'D']], // C has no Subject
    ['-cc:example', ['B', 'C', 'D', 'E']], // E: cc null, C: cc absent
    ['-happy', ['B', 'E']],
    ['-"happy new year"', ['B', 'C', 'D', 'E']],
    ['--happy', ['A', 'C', 'D']],
    // precedence and grouping
    ['happy OR report', ['A', 'B', 'C', 'D', 'E']],
    ['in:INBOX happy OR is:flagged', ['A', 'B', 'C']], // (INBOX AND happy) OR flagged
    ['in:INBOX (happy OR is:flagged)', ['A', 'C']],
    ['is:flagged OR in:INBOX happy', ['A', 'B', 'C']],
    ['-(happy OR report)', []],
    ['-happy -report', []],
    ['-(in:INBOX is:read)', ['B', 'C', 'D', 'E']],
    ['from:example -is:read OR has:attachment', ['B', 'D', 'E']],
    ['from:example (-is:read OR has:attachment)', ['D', 'E']],
    ['(from:alice OR from:bob) (to:bob OR to:alice)', ['A', 'B']],
    ['is:unread is:unflagged -is:deleted', ['C', 'E']],
  ])('%j → %j', (q, expected) => {
    expect(run(q)).toEqual(expected);
  });
});

describe('compilePredicate: details', () => {
  test('"happy" as a word does not match "unhappy"; text:happy does', () => {
    const msg = { subject: 'unhappy', headerText: 'Subject: unhappy', bodyText: '' };
    expect(compilePredicate(parse('happy'))(msg)).toBe(false);
    expect(compilePredicate(parse('text:happy'))(msg)).toBe(true);
    expect(compilePredicate(parse('subject:happy'))(msg)).toBe(true);
  });

  test('precomputed words set is used for bare words', () => {
    const msg = { subject: 'nothing here', words: new Set(['precomputed']) };
    expect(compilePredicate(parse('precomputed'))(msg)).toBe(true);
    expect(compilePredicate(parse('nothing'))(msg)).toBe(false);
  });

  test('a phrase does not span two fields', () => {
    const msg = { subject: 'happy', bodyText: 'new year' };
    expect(compilePredicate(parse('happy year'))(msg)).toBe(true);
    expect(compilePredicate(parse('"happy new"'))(msg)).toBe(false);
  });

  test('date boundaries are UTC instants', () => {
    const on = compilePredicate(parse('on:2024-03-31'));
    expect(on({ date: new Date('2024-03-30T23:59:59.999Z') })).toBe(false);
    expect(on({ date: new Date('2024-03-31T00:00:00.000Z') })).toBe(true);
    expect(on({ date: new Date('2024-03-31T23:59:59.999Z') })).toBe(true);
    expect(on({ date: new Date('2024-04-01T00:00:00.000Z') })).toBe(false);
    // 2024-03-31 01:30 in Berlin (CET, +01:00) is still March 31 in UTC
    expect(on({ date: new Date('2024-03-31T01:30:00+01:00') })).toBe(true);
    const early = compilePredicate(parse('before:0100-01-01'));
    expect(early({ date: new Date('0099-12-31T00:00:00Z') })).toBe(true);
  });

  test('one compiled predicate, many messages, cached tokens do not leak between them', () => {
    const pred = compilePredicate(parse('happy from:a'));
    const m1 = { bodyText: 'happy', fromText: 'a' };
    const m2 = { bodyText: 'sad', fromText: 'a' };
    expect([pred(m1), pred(m2), pred(m1), pred(m2)]).toEqual([true, false, true, false]);
  });

  test('hand-built flag with negate: true', () => {
    const pred = compilePredicate({ type: 'flag', flag: '\\Deleted', negate: true });
    expect(pred({ flags: ['\\Deleted'] })).toBe(false);
    expect(pred({ flags: [] })).toBe(true);
  });

  test('malformed AST', () => {
    expect(() => compilePredicate({ type: 'substring', field: 'bcc', value: 'x' })).toThrow(
      QueryError,
    );
  });
});
