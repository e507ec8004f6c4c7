'use strict';

const { msg } = require('@mailgate/test-support/mail');

/*
 * A small hand-built mailbox for the search semantics and route tests. uids follow the
 * order below (1…5 in INBOX, 1 in Archive). Expected search results are written by hand
 * in search.test.js from these texts.
 */

const pdf = Buffer.alloc(1500, 'P').toString('base64').replace(/.{76}/g, '$&\n');

const inbox = [
  // 1
  msg({
    from: 'Alice Example <a@example.org>',
    to: 'Bob <bob@example.net>',
    subject: 'Happy birthday',
    date: 'Tue, 05 Mar 2002 10:00:00 +0000',
    body: 'Wishing you a happy day.\n',
  }),
  // 2: attachment; "unhappy" is a substring match for happy, not a word match
  msg({
    from: 'Carol <carol@corp.test>',
    to: 'a@example.org',
    cc: 'Dave <dave@corp.test>',
    subject: 'Quarterly report',
    date: 'Wed, 10 Apr 2002 09:00:00 +0000',
    headers: ['MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b1"'],
    body:
      '--b1\nContent-Type: text/plain\n\nThe unhappy numbers are attached.\n' +
      '--b1\nContent-Type: application/pdf; name="report.pdf"\n' +
      'Content-Disposition: attachment; filename="report.pdf"\n' +
      `Content-Transfer-Encoding: base64\n\n${pdf}\n--b1--\n`,
  }),
  // 3: HTML only; "zebrafish" appears only inside the HTML
  msg({
    from: 'Eve <eve@spam.test>',
    to: 'a@example.org',
    subject: 'Free offer',
    date: 'Wed, 10 Apr 2002 23:00:00 +0000',
    headers: ['MIME-Version: 1.0', 'Content-Type: text/html; charset=utf-8'],
    body: '<html><body><p>Get <b>zebrafish</b> now for free</p><script>alert(1)</script></body></html>\n',
  }),
  // 4: SQL and LIKE metacharacters in the text
  msg({
    from: 'bob@example.net',
    to: 'carol@corp.test',
    subject: 'Re: Quarterly report',
    date: 'Wed, 01 May 2002 08:00:00 +0000',
    body: "Numbers look fine. 100% sure_thing, says O'Reilly.\n",
  }),
  // 5: larger than 10k, 8-bit subject
  msg({
    from: 'Zoe <zoe@uni.test>',
    to: 'a@example.org',
    subject: '=?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln?=',
    date: 'Wed, 01 Jan 2003 12:00:00 +0000',
    body: 'lorem ipsum dolor sit amet\n'.repeat(500),
  }),
];

const archive = [
  msg({
    from: 'Alice Example <a@example.org>',
    to: 'Bob <bob@example.net>',
    subject: 'Old happy times',
    date: 'Mon, 01 Jan 2001 00:00:00 +0000',
    body: 'Remember?\n',
  }),
];

module.exports = { inbox, archive };
