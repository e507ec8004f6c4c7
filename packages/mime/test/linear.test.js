'use strict';

const { parseMessage, htmlToText, parseAddressList } = require('../lib');

// Issue 15.2: cost linear in the input. Each case took seconds (quadratic paths in address
// parsing, tag stripping, date and media-type checks) before; the bounds are generous.
const ew = (i) => `=?utf-8?B?${Buffer.from('Jöhn Dœ ' + i).toString('base64')}?=`;
const lines = (n, f) => Array.from({ length: n }, (_, i) => f(i));

function timed(fn) {
  const t0 = process.hrtime.bigint();
  const r = fn();
  return { r, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

const msgWith = (header, body = 'body\n') =>
  Buffer.from(`From: a@example.org\r\n${header}\r\nSubject: s\r\n\r\n${body}`);

test.each([
  // ~3,000 folded encoded-word lines, no address (the 135 KB To:)
  ['encoded words glued together', 'To: ' + lines(3000, ew).join('')],
  ['a group per line (recursive re-parse)', 'To:' + lines(3000, (i) => ` ${ew(i)}:`).join('\r\n')],
  ['3,000 folded addresses', 'To:' + lines(3000, (i) => ` ${ew(i)} <u${i}@ex.com>,`).join('\r\n')],
  ['a Date of "(" × 200,000', 'Date: ' + '('.repeat(200000)],
  ['a Content-Type of "a/" × 100,000 then a space', 'Content-Type: ' + 'a/'.repeat(100000) + ' x'],
])('%s parses in linear time', (name, header) => {
  const { r, ms } = timed(() => parseMessage(msgWith(header)));
  expect(r.subject).toBe('s');
  expect(ms).toBeLessThan(1500);
});

test('the 3,000 folded addresses are all found', () => {
  const v = lines(3000, (i) => ` ${ew(i)} <u${i}@ex.com>,`).join('\r\n');
  const list = parseAddressList(v.replace(/\r\n/g, ''));
  expect(list).toHaveLength(3000);
  expect(list[2999]).toEqual({ name: 'Jöhn Dœ 2999', address: 'u2999@ex.com' });
});

test('html to text is linear on tag floods without ">"', () => {
  for (const html of ['<p>hi</p>' + '<a'.repeat(800000), '<p>hi</p>' + '<script'.repeat(200000)]) {
    const { r, ms } = timed(() => htmlToText(html));
    expect(r.startsWith('hi')).toBe(true);
    expect(ms).toBeLessThan(1500);
  }
  expect(htmlToText('<p>a<br>b</p><script>x<y</script>c &amp; d<!-- e -->')).toBe('a\nb\nc & d');
});
