'use strict';

// LIST/LSUB pattern matching (lib/listing.js): the same answers as RFC 3501 6.3.8's `*` and
// `%`, in time linear in the name, for the patterns that made a backtracking RegExp hang.
const { patternMatcher, MAX_PATTERN } = require('../lib/listing');

/** Reference semantics by dynamic programming over (pattern, name) positions. */
function reference(pattern, name) {
  const p = [...pattern];
  const n = [...name];
  let row = new Array(n.length + 1).fill(false);
  row[0] = true;
  for (let i = 0; i < p.length; i++) {
    const next = new Array(n.length + 1).fill(false);
    for (let j = 0; j <= n.length; j++) {
      if (p[i] === '*' || p[i] === '%') {
        // the wildcard matches nothing, or one more character (`%` never the delimiter)
        next[j] = row[j] || (j > 0 && next[j - 1] && (p[i] === '*' || n[j - 1] !== '/'));
      } else {
        next[j] = j > 0 && row[j - 1] && n[j - 1] === p[i];
      }
    }
    row = next;
  }
  return row[n.length];
}

function seeded(seed) {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x / 2 ** 32;
  };
}

test('agrees with the reference semantics on random patterns and names', () => {
  const rnd = seeded(29);
  const pick = (alphabet, len) =>
    Array.from({ length: len }, () => alphabet[Math.floor(rnd() * alphabet.length)]).join('');
  for (let i = 0; i < 4000; i++) {
    const pattern = pick('ab/*%', 1 + Math.floor(rnd() * 8));
    const name = pick('ab/', Math.floor(rnd() * 10));
    expect([pattern, name, patternMatcher('', pattern).test(name)]).toEqual([
      pattern,
      name,
      reference(pattern, name),
    ]);
  }
});

test('RFC 3501 examples, INBOX in any case, reference prefix, more than 32 pattern states', () => {
  const m = (ref, pat, name) => patternMatcher(ref, pat).test(name);
  expect(m('', '*', 'a/b/c')).toBe(true);
  expect(m('', '%', 'a/b')).toBe(false);
  expect(m('', 'a/%', 'a/b')).toBe(true);
  expect(m('', 'a/%', 'a/b/c')).toBe(false);
  expect(m('', 'inbox', 'INBOX')).toBe(true);
  expect(m('', 'InBox/%', 'INBOX/x')).toBe(true);
  expect(m('Archive/', '%', 'Archive/2020')).toBe(true);
  const long = 'x'.repeat(70);
  expect(m('', `${long}*`, `${long}/tail`)).toBe(true);
  expect(m('', `%${long}`, `a${long}`)).toBe(true);
  expect(m('', `%${long}`, `a/${long}`)).toBe(false);
  expect(m('', '&AOk-t&AOk-', 'été')).toBe(true); // modified UTF-7 (RFC 3501 5.1.3)
});

test('pathological patterns are answered at once and correctly (issue 29 item 1)', () => {
  const name = 'a'.repeat(400);
  const other = 'b'.repeat(399) + '/';
  const cases = [
    ['%*'.repeat(300) + 'a', name, true],
    ['%*'.repeat(300) + 'c', name, false],
    ['*****a', name, true],
    ['*****a', other, false],
    ['*a'.repeat(200), name, true],
    ['*a'.repeat(201) + 'b', name, false],
    ['%a'.repeat(250) + '%b', 'a'.repeat(400) + 'b', true],
    ['%a'.repeat(250) + '%b', 'a'.repeat(400) + '/b', false],
  ];
  for (const [pattern, n, want] of cases) {
    expect(patternMatcher('', pattern).test(n)).toBe(want);
  }
});

test('a pattern longer than the bound is refused with BAD before any matching', () => {
  expect(() => patternMatcher('', '%*'.repeat(MAX_PATTERN))).toThrow(
    expect.objectContaining({ status: 'BAD' }),
  );
  expect(() => patternMatcher('x'.repeat(MAX_PATTERN), '*')).toThrow(
    expect.objectContaining({ status: 'BAD' }),
  );
});
