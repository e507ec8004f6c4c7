'use strict';

const { parse, toString, QueryError, LIMITS } = require('../lib');

const w = (value) => ({ type: 'word', value });
const and = (...children) => ({ type: 'and', children });
const or = (...children) => ({ type: 'or', children });
const not = (child) => ({ type: 'not', child });
const flag = (f) => ({ type: 'flag', flag: f });

function expectQueryError(q, re) {
  let err;
  try {
    parse(q);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(QueryError);
  expect(err.code).toBe('INVALID_QUERY');
  expect(err.statusCode).toBe(400);
  if (re) expect(err.message).toMatch(re);
  return err;
}

describe('parse: terms', () => {
  test.each([
    ['', { type: 'all' }],
    ['   \t\n ', { type: 'all' }],
    ['happy', w('happy')],
    ['"happy new year"', { type: 'phrase', value: 'happy new year' }],
    ['e-mail', w('e-mail')],
    ['foo.bar', w('foo.bar')],
    ['http://example.org/x', w('http://example.org/x')],
    ['Re:hello', w('Re:hello')],
    ['or', w('or')],
    ['from:alice', { type: 'substring', field: 'from', value: 'alice' }],
    ['FROM:alice', { type: 'substring', field: 'from', value: 'alice' }],
    ['to:bob@example.org', { type: 'substring', field: 'to', value: 'bob@example.org' }],
    ['cc:carol', { type: 'substring', field: 'cc', value: 'carol' }],
    [
      'subject:"quarterly report"',
      { type: 'substring', field: 'subject', value: 'quarterly report' },
    ],
    ['body:foo:bar', { type: 'substring', field: 'body', value: 'foo:bar' }],
    ['text:happy', { type: 'substring', field: 'text', value: 'happy' }],
    [
      'subject:"say \\"hi\\" \\\\ ok"',
      { type: 'substring', field: 'subject', value: 'say "hi" \\ ok' },
    ],
    ['has:attachment', { type: 'hasAttachment' }],
    ['is:read', flag('\\Seen')],
    ['is:seen', flag('\\Seen')],
    ['is:unread', not(flag('\\Seen'))],
    ['is:flagged', flag('\\Flagged')],
    ['is:unflagged', not(flag('\\Flagged'))],
    ['is:deleted', flag('\\Deleted')],
    ['is:answered', flag('\\Answered')],
    ['is:draft', flag('\\Draft')],
    ['is:UNREAD', not(flag('\\Seen'))],
    ['before:2024-01-02', { type: 'date', op: 'before', value: '2024-01-02' }],
    ['after:2024-02-29', { type: 'date', op: 'after', value: '2024-02-29' }],
    ['on:0001-01-01', { type: 'date', op: 'on', value: '0001-01-01' }],
    ['larger:10', { type: 'size', op: 'larger', value: 10 }],
    ['larger:10k', { type: 'size', op: 'larger', value: 10240 }],
    ['larger:10K', { type: 'size', op: 'larger', value: 10240 }],
    ['smaller:2M', { type: 'size', op: 'smaller', value: 2 * 1024 * 1024 }],
    ['smaller:0', { type: 'size', op: 'smaller', value: 0 }],
    ['in:Archive', { type: 'mailbox', value: 'Archive' }],
    ['in:inbox', { type: 'mailbox', value: 'INBOX' }],
    ['in:"Sent Items"', { type: 'mailbox', value: 'Sent Items' }],
  ])('%j', (q, ast) => {
    expect(parse(q)).toEqual(ast);
  });
});

describe('parse: structure', () => {
  test('juxtaposition is AND', () => {
    expect(parse('a b c')).toEqual(and(w('a'), w('b'), w('c')));
  });

  test('OR binds looser than AND', () => {
    expect(parse('a b OR c')).toEqual(or(and(w('a'), w('b')), w('c')));
    expect(parse('a OR b c')).toEqual(or(w('a'), and(w('b'), w('c'))));
  });

  test('chained OR is one n-ary node', () => {
    expect(parse('a OR b OR c')).toEqual(or(w('a'), w('b'), w('c')));
    expect(parse('(a OR b) OR c')).toEqual(or(w('a'), w('b'), w('c')));
  });

  test('parentheses group', () => {
    expect(parse('a (b OR c)')).toEqual(and(w('a'), or(w('b'), w('c'))));
    expect(parse('((a))')).toEqual(w('a'));
    expect(parse('(a b) c')).toEqual(and(w('a'), w('b'), w('c')));
  });

  test('negation of terms and groups', () => {
    expect(parse('-a')).toEqual(not(w('a')));
    expect(parse('a -b')).toEqual(and(w('a'), not(w('b'))));
    expect(parse('-(a OR b)')).toEqual(not(or(w('a'), w('b'))));
    expect(parse('-from:x')).toEqual(not({ type: 'substring', field: 'from', value: 'x' }));
    expect(parse('--a')).toEqual(not(not(w('a'))));
    expect(parse('-"a b"')).toEqual(not({ type: 'phrase', value: 'a b' }));
    expect(parse('-is:unread')).toEqual(not(not(flag('\\Seen'))));
  });

  test('negation binds tighter than OR', () => {
    expect(parse('-a OR b')).toEqual(or(not(w('a')), w('b')));
  });

  test('dash inside a word is not negation', () => {
    expect(parse('well-known')).toEqual(w('well-known'));
  });

  test('lowercase or is a word', () => {
    expect(parse('a or b')).toEqual(and(w('a'), w('or'), w('b')));
  });

  test('tokens touching parentheses and quotes', () => {
    expect(parse('(a)b')).toEqual(and(w('a'), w('b')));
    expect(parse('a"b c"')).toEqual(and(w('a'), { type: 'phrase', value: 'b c' }));
    expect(parse('(from:x)')).toEqual({ type: 'substring', field: 'from', value: 'x' });
  });

  test('mixed realistic query', () => {
    expect(parse('from:alice subject:"q3 report" -is:read (has:attachment OR larger:1M)')).toEqual(
      and(
        { type: 'substring', field: 'from', value: 'alice' },
        { type: 'substring', field: 'subject', value: 'q3 report' },
        not(flag('\\Seen')),
        or({ type: 'hasAttachment' }, { type: 'size', op: 'larger', value: 1048576 }),
      ),
    );
  });
});

describe('parse: errors', () => {
  test.each([
    ['from:', /empty value for 'from:' at position 0/],
    ['a subject:', /empty value for 'subject:' at position 2/],
    ['subject:""', /empty value/],
    ['in:" "', /empty value for 'in:'/],
    ['before:2024-13-40', /invalid date '2024-13-40'.*position 7/],
    ['on:2023-02-29', /invalid date/],
    ['after:2024-1-1', /invalid date/],
    ['after:0000-01-01', /invalid date/],
    ['on:yesterday', /invalid date/],
    ['larger:10x', /invalid size '10x'/],
    ['larger:-5', /invalid size/],
    ['smaller:1.5M', /invalid size/],
    ['larger:99999999999999999999', /invalid size/],
    ['is:foo', /unknown value 'foo' for 'is:'/],
    ['is:constructor', /unknown value/],
    ['has:pdf', /unknown value 'pdf' for 'has:'/],
    ['(a', /unbalanced '\(' at position 0/],
    ['a (b (c)', /unbalanced '\(' at position 2/],
    ['a)', /unbalanced '\)' at position 1/],
    [')', /position 0/],
    ['()', /empty group/],
    ['"abc', /unbalanced quote at position 0/],
    ['subject:"abc', /unbalanced quote at position 8/],
    ['""', /empty phrase/],
    ['"  "', /empty phrase/],
    ['a OR', /dangling 'OR' .*position 2/],
    ['OR a', /dangling 'OR' .*position 0/],
    ['a OR OR b', /dangling 'OR'/],
    ['(a OR) b', /dangling 'OR'/],
    ['-', /'-' must be followed by a term at position 0/],
    ['a - b', /'-' must be followed by a term at position 2/],
    ['-OR a', /'-' must be followed by a term/],
    ['(a -)', /'-' must be followed/],
    ['a\u0000b', /NUL character at position 1/],
  ])('%j', (q, re) => {
    expectQueryError(q, re);
  });

  test('non-string input', () => {
    expect(() => parse(undefined)).toThrow(QueryError);
    expect(() => parse(42)).toThrow(QueryError);
  });

  test('error carries the position', () => {
    const err = expectQueryError('abc def)');
    expect(err.position).toBe(7);
  });

  test('length limit', () => {
    const ok = 'a'.repeat(LIMITS.maxLength);
    expect(parse(ok)).toEqual(w(ok));
    expectQueryError('a'.repeat(LIMITS.maxLength + 1), /longer than 2000 characters/);
  });

  test('depth limit', () => {
    const nested = (n) => '('.repeat(n) + 'a' + ')'.repeat(n);
    expect(parse(nested(LIMITS.maxDepth))).toEqual(w('a'));
    expectQueryError(nested(LIMITS.maxDepth + 1), /nested deeper than 50 levels/);
    expectQueryError('-'.repeat(LIMITS.maxDepth + 1) + 'a', /nested deeper/);
    expectQueryError('(-'.repeat(30) + 'a' + ')'.repeat(30), /nested deeper/);
  });

  test('term limit', () => {
    const terms = (n) => Array.from({ length: n }, (_, i) => `t${i}`).join(' ');
    expect(parse(terms(LIMITS.maxTerms)).children).toHaveLength(LIMITS.maxTerms);
    expectQueryError(terms(LIMITS.maxTerms + 1), /more than 200 terms/);
  });
});

describe('parse: hostile input never throws anything but QueryError', () => {
  // Deterministic PRNG so a failure is reproducible from the printed query.
  function rng(seed) {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  const atoms = [
    '(',
    ')',
    '"',
    '\\',
    '-',
    ' ',
    ':',
    'OR',
    'or',
    'a',
    'é',
    '%',
    '_',
    "'",
    ';',
    '\u0000',
    'from:',
    'is:',
    'in:',
    'has:',
    'before:',
    'larger:',
    'subject:"',
    'text:',
    '10k',
    '2024-01-01',
    'read',
    'unread',
    'attachment',
    '\t',
    '\n',
    '\u{1F600}',
    '\uD800',
    'x:y',
    '--',
    '""',
  ];

  test('20,000 random queries', () => {
    const rand = rng(12345);
    for (let n = 0; n < 20000; n += 1) {
      const len = Math.floor(rand() * 25);
      let q = '';
      for (let i = 0; i < len; i += 1) q += atoms[Math.floor(rand() * atoms.length)];
      let ast;
      try {
        ast = parse(q);
      } catch (e) {
        if (!(e instanceof QueryError) || e.code !== 'INVALID_QUERY') {
          throw new Error(`${JSON.stringify(q)}: ${e.stack}`);
        }
        continue;
      }
      // Whatever parses must also round-trip (checked without expect() in the hot loop).
      const again = JSON.stringify(parse(toString(ast)));
      if (again !== JSON.stringify(ast)) throw new Error(`round trip of ${JSON.stringify(q)}`);
    }
  });

  test('pathological sizes stay QueryErrors', () => {
    for (const q of [
      '('.repeat(2000),
      ')'.repeat(2000),
      '-'.repeat(1999) + 'a',
      '"'.repeat(2000),
      'a OR '.repeat(400),
      'x '.repeat(1000),
      '(a OR '.repeat(333),
    ]) {
      expect(() => parse(q)).toThrow(QueryError);
    }
  });
});

describe('toString', () => {
  test.each([
    ['', ''],
    ['happy', 'happy'],
    ['  a   b  ', 'a b'],
    ['a b OR c', '(a b) OR c'],
    ['a (b OR c)', 'a (b OR c)'],
    ['-(a b)', '-(a b)'],
    ['is:seen', 'is:read'],
    ['-is:read', 'is:unread'],
    ['-is:flagged', 'is:unflagged'],
    ['-is:deleted', '-is:deleted'],
    ['From:alice', 'from:alice'],
    ['subject:"q3"', 'subject:q3'],
    ['subject:"q3 report"', 'subject:"q3 report"'],
    ['larger:2048', 'larger:2k'],
    ['larger:1025', 'larger:1025'],
    ['smaller:3072k', 'smaller:3M'],
    ['in:Inbox', 'in:INBOX'],
    ['in:"a (b)"', 'in:"a (b)"'],
    ['HAS:Attachment', 'has:attachment'],
    ['"say \\"hi\\""', '"say \\"hi\\""'],
  ])('%j prints as %j', (q, printed) => {
    expect(toString(parse(q))).toBe(printed);
  });

  test.each([
    'a b OR c d OR -e',
    'from:"a b" -(to:c OR cc:"d)") subject:"\\\\" body:x text:y',
    '-(-(a OR -b) c) is:unread is:unflagged --is:read',
    'before:2024-01-01 after:2023-12-31 on:2024-02-29 larger:0 smaller:5M',
    'in:"Sent Items" has:attachment "happy new year" e-mail http://x',
  ])('round trip %j', (q) => {
    const ast = parse(q);
    expect(parse(toString(ast))).toEqual(ast);
  });

  test('hand-built ASTs', () => {
    expect(toString({ type: 'flag', flag: '\\Seen', negate: true })).toBe('is:unread');
    expect(toString({ type: 'substring', field: 'from', value: 'a"b' })).toBe('from:"a\\"b"');
    expect(() => toString(w('two words'))).toThrow(QueryError);
    expect(() => toString(w('-x'))).toThrow(QueryError);
    expect(() => toString(w('OR'))).toThrow(QueryError);
    expect(() => toString(w('from:x'))).toThrow(QueryError);
    expect(() => toString(and({ type: 'all' }, w('a')))).toThrow(QueryError);
    expect(() => toString({ type: 'nope' })).toThrow(QueryError);
  });
});

// Issue 11: an unknown operator answered 0 hits silently.
describe('parse: unknown operators', () => {
  test.each(['foo:bar', 'form:alice', 'subjet:"report"', 'x in:INBOX nope:1'])(
    '%s is a coded error naming the operator',
    (q) => {
      const err = expectQueryError(q, /unknown operator '[a-z]+:'/);
      expect(err.message).toMatch(/known: .*from/);
    },
  );
  test.each([
    ['Re:hello', w('Re:hello')],
    ['http://example.org', w('http://example.org')],
    ['Re:', w('Re:')],
  ])('%s stays a word', (q, ast) => {
    expect(parse(q)).toEqual(ast);
  });
});
