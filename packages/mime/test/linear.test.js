'use strict';

const { parseMessage, htmlToText, parseAddressList } = require('../lib');

// Issue 15.2: cost linear in the input. Each case took seconds (quadratic paths in address
// parsing, tag stripping, date and media-type checks) before. Checked by how the cost grows,
// not by a time limit (issue 30.5: a budget fails on a busy machine): the same input at n and
// at 16n, in CPU time of this process (what other processes run does not count), the best of
// three. Linear work grows 16×, quadratic 256×; the bar, 64×, lies a factor of 4 from each.
// (It was n and 4n with a bar of 8×: a factor of 2 from linear, and CI once measured 8.7× for
// linear code — GC and JIT noise, not a quadratic path.)
const ew = (i) => `=?utf-8?B?${Buffer.from('Jöhn Dœ ' + i).toString('base64')}?=`;
const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i));

function cpuMs(fn) {
  let best = Infinity;
  let r;
  for (let i = 0; i < 3; i++) {
    const t0 = process.cpuUsage();
    r = fn();
    const d = process.cpuUsage(t0);
    best = Math.min(best, (d.user + d.system) / 1000);
  }
  return { r, ms: best };
}

/** How much the cost of fn(size) grows from n to 16n; check(result) holds for both. */
function growth(fn, n, check) {
  const small = cpuMs(() => fn(n));
  const big = cpuMs(() => fn(16 * n));
  check(small.r);
  check(big.r);
  // A floor of 1 ms: below it the ratio of two tiny costs says nothing.
  return big.ms / Math.max(small.ms, 1);
}

const msgWith = (header, body = 'body\n') =>
  Buffer.from(`From: a@example.org\r\n${header}\r\nSubject: s\r\n\r\n${body}`);

test.each([
  // folded encoded-word lines, no address (the 135 KB To: at n = 3,000)
  ['encoded words glued together', (n) => 'To: ' + lines(n, ew).join(''), 3000],
  [
    'a group per line (recursive re-parse)',
    (n) => 'To:' + lines(n, (i) => ` ${ew(i)}:`).join('\r\n'),
    3000,
  ],
  [
    'folded addresses',
    (n) => 'To:' + lines(n, (i) => ` ${ew(i)} <u${i}@ex.com>,`).join('\r\n'),
    3000,
  ],
  ['a Date of "(" × n', (n) => 'Date: ' + '('.repeat(n), 200000],
  [
    'a Content-Type of "a/" × n then a space',
    (n) => 'Content-Type: ' + 'a/'.repeat(n) + ' x',
    100000,
  ],
])('%s parses in linear time', (name, header, n) => {
  const ratio = growth(
    (size) => parseMessage(msgWith(header(size))),
    n / 4,
    (r) => expect(r.subject).toBe('s'),
  );
  expect(ratio).toBeLessThan(64);
});

test('the 3,000 folded addresses are all found', () => {
  const v = lines(3000, (i) => ` ${ew(i)} <u${i}@ex.com>,`).join('\r\n');
  const list = parseAddressList(v.replace(/\r\n/g, ''));
  expect(list).toHaveLength(3000);
  expect(list[2999]).toEqual({ name: 'Jöhn Dœ 2999', address: 'u2999@ex.com' });
});

test('html to text is linear on tag floods without ">"', () => {
  for (const [flood, n] of [
    ['<a', 800000],
    ['<script', 200000],
  ]) {
    const ratio = growth(
      (size) => htmlToText('<p>hi</p>' + flood.repeat(size)),
      n / 4,
      (r) => expect(r.startsWith('hi')).toBe(true),
    );
    expect(ratio).toBeLessThan(64);
  }
  expect(htmlToText('<p>a<br>b</p><script>x<y</script>c &amp; d<!-- e -->')).toBe('a\nb\nc & d');
});
