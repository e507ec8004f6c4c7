'use strict';

// Generated hostile messages for the torture suite (issue 15.3): each one aims at a path
// where parsing cost could grow faster than the input or a part of the input could be lost.
// Seeded, so a failure names a message that can be rebuilt exactly.

const iconvEncodings = require('iconv-lite/encodings');
const whatwgLabels = require('libmime/lib/charsets');

const { rng } = require('./rng');

const HEAD =
  'From: Torture <t@example.org>\r\nTo: victim@example.org\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n';

/** HEAD, these header lines, and a one-line body. */
const headed = (headers) => HEAD + headers + '\r\n\r\nbody\r\n';

function bytes(rand, n, pick) {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = pick(Math.floor(rand() * 256));
  return b;
}

function ew(rand, i) {
  const word = `w${i}-${Math.floor(rand() * 1e6)}-ü`;
  return rand() < 0.5
    ? `=?utf-8?B?${Buffer.from(word).toString('base64')}?=`
    : `=?iso-8859-1?Q?${word.replace('ü', '=FC')}?=`;
}

/** Every charset label of the WHATWG Encoding registry and every name iconv-lite knows. */
function charsetLabels() {
  const names = new Set([...Object.keys(whatwgLabels), ...Object.keys(iconvEncodings)]);
  names.add('iso-2022-jp');
  names.add('x-bogus-charset');
  return [...names].filter((n) => !n.startsWith('_')).sort();
}

/**
 * Messages that each use up to 40 charset labels: one text part per label and one encoded word
 * per label in the Subject, so every label goes through both decoders.
 */
function charsetMessages(rand) {
  const labels = charsetLabels();
  const out = [];
  for (let i = 0; i < labels.length; i += 40) {
    const group = labels.slice(i, i + 40);
    const subject = group.map((l) => `=?${l}?Q?caf=E9_=80=FF=A4=A2?=`).join('\r\n ');
    const parts = group.map(
      (l) =>
        `--cs\r\nContent-Type: text/plain; charset="${l}"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n` +
        `${l}: ` +
        bytes(rand, 64, (c) => (c < 32 ? c + 32 : c)).toString('latin1') +
        '\r\n',
    );
    out.push({
      name: `charsets-${i / 40 + 1}`,
      raw: Buffer.from(
        HEAD +
          `Subject: ${subject}\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n` +
          parts.join('') +
          '--cs--\r\n',
        'latin1',
      ),
    });
  }
  return out;
}

/**
 * The hostile set. Sizes follow the issue: thousands of folded lines, 100,000 encoded words,
 * nesting 10,000 deep, 100,000 parts, 1 MB header lines, floods of NUL and invalid UTF-8.
 *
 * @param {number} [seed]
 * @returns {{name: string, raw: Buffer}[]}
 */
function hostileMessages(seed = 15) {
  const rand = rng(seed);
  const list = [];
  const add = (name, raw) =>
    list.push({ name, raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'latin1') });

  // the 135 KB To: of ~3,000 folded encoded-word lines, glued and as a group per line
  const folded3k = Array.from({ length: 3000 }, (_, i) => ` ${ew(rand, i)}`);
  add(
    'to-3000-folded-encoded-words',
    HEAD.replace(/^To:.*\r\n/m, '') +
      'To:' +
      folded3k.join('\r\n') +
      '\r\nSubject: s\r\n\r\nbody\r\n',
  );
  add(
    'to-3000-groups',
    'From: a@example.org\r\nTo:' + folded3k.map((l) => l + ':').join('\r\n') + '\r\n\r\nbody\r\n',
  );
  add(
    'folded-header-lines-20000',
    headed(
      'Subject: start\r\n' +
        Array.from({ length: 20000 }, (_, i) => ` fold ${i}`).join('\r\n') +
        '\r\n' +
        Array.from({ length: 5000 }, (_, i) => `X-H${i}: v${i}`).join('\r\n'),
    ),
  );
  const words = (glue) => Array.from({ length: 100000 }, (_, i) => ew(rand, i)).join(glue);
  add('encoded-words-100000', headed('Subject: ' + words(' ')));
  add('encoded-words-100000-glued', headed('Subject: ' + words('')));
  add(
    'header-line-1mb',
    headed(`Subject: ${'x'.repeat(1 << 20)}\r\nX-Long: ${'ab, '.repeat(1 << 18)}`),
  );
  add(
    'to-line-1mb',
    'From: a@example.org\r\nTo: ' +
      Array.from({ length: 40000 }, (_, i) => `"N ${i}" <u${i}@example.org>`).join(', ') +
      '\r\n\r\nbody\r\n',
  );
  add(
    'date-content-type-floods',
    headed(`Subject: s\r\nDate: ${'('.repeat(1 << 20)}\r\nContent-Type: ${'a/'.repeat(1 << 19)} x`),
  );

  // MIME structure
  let nested = 'leaf\r\n';
  for (let d = 10000; d > 0; d--) {
    nested = `Content-Type: multipart/mixed; boundary="n${d}"\r\n\r\n--n${d}\r\n${nested}\r\n--n${d}--\r\n`;
  }
  add('nested-10000-deep', HEAD + 'Subject: nested\r\n' + nested);
  let prefix = 'leaf\r\n';
  for (let d = 300; d > 0; d--) {
    const b = 'b'.repeat(d); // each boundary is a prefix of the one nested inside it
    prefix = `Content-Type: multipart/mixed; boundary="${b}"\r\n\r\n--${b}\r\n${prefix}\r\n--${b}--\r\n`;
  }
  add('boundaries-prefix-of-each-other', HEAD + 'Subject: prefixes\r\n' + prefix);
  let msgs = 'Subject: innermost\r\n\r\ntext\r\n';
  for (let d = 0; d < 2000; d++) msgs = `Content-Type: message/rfc822\r\n\r\n${msgs}`;
  add('message-rfc822-2000-deep', HEAD + 'Subject: rfc822\r\n' + msgs);
  const parts = [];
  for (let i = 0; i < 100000; i++) parts.push(`--p\r\nContent-Type: text/plain\r\n\r\np${i}\r\n`);
  add(
    'parts-100000',
    HEAD +
      'Subject: parts\r\nContent-Type: multipart/mixed; boundary=p\r\n\r\n' +
      parts.join('') +
      '--p--\r\n',
  );
  add(
    'multipart-unclosed',
    HEAD +
      'Subject: unclosed\r\nContent-Type: multipart/mixed; boundary=u\r\n\r\n--u\r\nContent-Type: text/html\r\n\r\n<p>x' +
      '<a'.repeat(100000) +
      '\r\n--u\r\nContent-Type: text/plain\r\n\r\nno close\r\n',
  );
  add(
    'boundary-never-used',
    HEAD +
      'Subject: b\r\nContent-Type: multipart/alternative; boundary=zz\r\n\r\n' +
      '--z\r\n'.repeat(100000),
  );

  // bytes
  add(
    'nul-flood-body',
    Buffer.concat([Buffer.from(HEAD + 'Subject: nul\r\n\r\n'), Buffer.alloc(1 << 20, 0)]),
  );
  add(
    'nul-in-header',
    Buffer.concat([
      Buffer.from(HEAD + 'Subject: a'),
      Buffer.alloc(1000, 0),
      Buffer.from('\r\n\r\nbody\r\n'),
    ]),
  );
  add(
    'invalid-utf8-flood',
    Buffer.concat([
      Buffer.from(HEAD + 'Subject: '),
      bytes(rand, 1 << 16, (c) => (c < 0x80 ? c | 0x80 : c)),
      Buffer.from('\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n'),
      bytes(rand, 1 << 20, (c) => (c === 10 || c === 13 || c === 0 ? 0xc3 : c | 0x80)),
    ]),
  );
  add(
    'base64-garbage',
    Buffer.concat([
      Buffer.from(
        HEAD +
          'Subject: b64\r\nContent-Type: multipart/mixed; boundary=g\r\n\r\n--g\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: base64\r\n\r\n',
      ),
      bytes(rand, 1 << 20, (c) => (c === 10 ? 61 : c)),
      Buffer.from(
        '\r\n--g\r\nContent-Type: application/pdf; name=x.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n' +
          '=!@#$%^&*'.repeat(100000) +
          '\r\n--g--\r\n',
      ),
    ]),
  );
  add(
    'qp-garbage',
    HEAD +
      'Subject: qp\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n' +
      '=\r\n=X=Y==3D=E2=82'.repeat(100000) +
      '\r\n',
  );
  add(
    'uuencode-flood',
    HEAD +
      'Subject: uu\r\n\r\n' +
      'begin 644 a.bin\r\nM' +
      'x'.repeat(60) +
      '\r\n'.repeat(1) +
      'begin 644 b\r\n'.repeat(50000),
  );
  add(
    'from-lines-everywhere',
    HEAD +
      'Subject: from\r\n\r\n' +
      Array.from(
        { length: 20000 },
        (_, i) =>
          `From someone${i}@example.org Mon Jan  1 00:00:00 2024\r\n>From quoted\r\nline ${i}`,
      ).join('\r\n') +
      '\r\n',
  );
  add(
    'html-tag-floods',
    HEAD +
      'Subject: html\r\nContent-Type: text/html\r\n\r\n<p>hi</p>' +
      '<a'.repeat(400000) +
      '<script'.repeat(50000) +
      '<!--'.repeat(50000) +
      '<p style="'.repeat(50000),
  );
  for (const m of charsetMessages(rand)) list.push(m);
  return list;
}

module.exports = { hostileMessages, charsetLabels, rng };
