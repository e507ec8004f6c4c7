'use strict';

const { parseForDisplay, getAttachment, sanitizeHtml } = require('../lib');

const RAW = Buffer.from(
  [
    'From: =?utf-8?q?J=C3=B6rg?= <jorg@example.de>',
    'To: a@example.com, b@example.com',
    'Cc: c@example.com',
    'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=',
    'Date: Tue, 1 Jan 2002 10:00:00 +0100',
    'Message-ID: <m1@example.de>',
    'Content-Type: multipart/mixed; boundary=zz',
    '',
    '--zz',
    'Content-Type: multipart/alternative; boundary=yy',
    '',
    '--yy',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Hello text',
    '--yy',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p onclick="evil()">Hello <a href="javascript:alert(1)">x</a><script>bad()</script>' +
      '<img src="cid:logo@x"><a href="https://ok.example/">ok</a></p>',
    '--yy--',
    '--zz',
    'Content-Type: image/png; name=logo.png',
    'Content-ID: <logo@x>',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('PNGDATA').toString('base64'),
    '--zz',
    'Content-Type: message/rfc822',
    '',
    'Subject: inner',
    'Content-Type: text/plain',
    '',
    'inner body',
    '--zz--',
    '',
  ].join('\r\n'),
);

test('parseForDisplay', async () => {
  const d = await parseForDisplay(RAW);
  expect(d.subject).toBe('Grüße');
  expect(d.from).toEqual({ name: 'Jörg', address: 'jorg@example.de' });
  expect(d.to.map((a) => a.address)).toEqual(['a@example.com', 'b@example.com']);
  expect(d.cc).toEqual([{ name: '', address: 'c@example.com' }]);
  expect(d.date.toISOString()).toBe('2002-01-01T09:00:00.000Z');
  expect(d.messageId).toBe('m1@example.de');
  expect(d.headers[0]).toEqual({ key: 'From', value: 'Jörg <jorg@example.de>' });
  expect(d.text).toContain('Hello text');
  expect(d.html).toContain('Hello');
  expect(d.html).toContain('href="https://ok.example/"');
  expect(d.html).toContain('src="cid:logo@x"');
  expect(d.html).not.toMatch(/onclick|javascript|script|bad\(\)/i);
  expect(d.attachments).toEqual([
    { part: '2', contentType: 'image/png', filename: 'logo.png', size: 7, contentId: 'logo@x' },
  ]);
});

test('getAttachment by part number', () => {
  expect(getAttachment(RAW, '2')).toEqual({
    contentType: 'image/png',
    filename: 'logo.png',
    content: Buffer.from('PNGDATA'),
  });
  expect(getAttachment(RAW, '1.1').content.toString()).toBe('Hello text');
  const msg = getAttachment(RAW, '3');
  expect(msg.contentType).toBe('message/rfc822');
  expect(msg.content.toString()).toMatch(/^Subject: inner/);
  expect(getAttachment(RAW, '3.1').content.toString()).toBe('inner body');
  expect(getAttachment(RAW, '9')).toBeNull();
  expect(getAttachment(RAW, 'nonsense')).toBeNull();
  const single = Buffer.from('Subject: s\n\nhello');
  expect(getAttachment(single, '1').content.toString()).toBe('hello');
  expect(getAttachment(single, '2')).toBeNull();
});

test('sanitizeHtml', () => {
  const out = sanitizeHtml(
    '<div style="color:red" onmouseover="x()"><IMG SRC="jav&#x09;ascript:alert(1)">' +
      '<a href=" JaVaScRiPt:alert(1)">a</a><a href="data:text/html,x">d</a>' +
      '<iframe src="https://evil"></iframe><style>body{}</style>' +
      '<scr<script>ipt>alert(1)</script>' +
      '<form action="x"><input></form><b title="&quot;><script>">t</b>' +
      '<img src="data:image/png;base64,AAAA" alt="ok"></div>',
  );
  expect(out).not.toMatch(/<script|javascript|onmouseover|iframe|<style|<form|<input|data:text/i);
  expect(out).toContain('<div style="color:red">');
  expect(out).toContain('src="data:image/png;base64,AAAA"');
  expect(out).toContain('title="&quot;&gt;&lt;script&gt;"');
  expect(sanitizeHtml('a < b & c')).toBe('a &lt; b & c');
});
