'use strict';

/*
 * The texts IMAP SEARCH reads (issue 28 items 5 and 8), as Dovecot 2.3 reads the same
 * messages: FROM/TO/CC address text without comments, with groups and every line of a field
 * given twice; BODY over every text part (text attachments and all alternatives included,
 * decoded from base64/quoted-printable), without encapsulated messages' headers; TEXT also
 * over every part's header. Expected values checked against a real Dovecot
 * (packages/imap/test/imap-search-dovecot.test.js compares the two servers' answers).
 */

const { parseMessage } = require('../lib');
const { addressEntries, addressSearchText } = require('../lib/address-list');

const msg = (lines) => Buffer.from(lines.join('\r\n'));

describe('addressSearchText', () => {
  test('comments are neither addresses nor part of one', () => {
    expect(addressSearchText('<user-from (comment)@ (comment) domain.org>')).toBe(
      '<user-from@domain.org>',
    );
    expect(addressSearchText('group:;, group2: (foo) ;')).toBe('group:;, group2:;');
    expect(addressSearchText('a@b (c1) (c2)')).toBe('c2 <a@b>');
  });

  test('names quoted unless one atom or an encoded word; groups and bare words as Dovecot', () => {
    expect(addressSearchText('Team: alice@example.org, "Bob B" <bob@example.org>;, c@d')).toBe(
      'Team: <alice@example.org>, "Bob B" <bob@example.org>;, <c@d>',
    );
    expect(addressSearchText('John Q. Public <jqp@x>, Edge <e@x>')).toBe(
      '"John Q. Public" <jqp@x>, Edge <e@x>',
    );
    expect(
      addressSearchText('=?utf-8?q?M=C3=BCller_A?= <m@x>', (n) => n.replace(/=.*=/, 'Müller A')),
    ).toBe('Müller A <m@x>');
    expect(addressSearchText('foo, <>, "a b"@x.org')).toBe(
      '<foo@MISSING_DOMAIN>, <MISSING_MAILBOX@MISSING_DOMAIN>, <"a b"@x.org>',
    );
  });

  test('entries keep groups, routes and the values of a field given twice', () => {
    expect(addressEntries(['g: a@b;', '<@r1,@r2:u@h>'])).toEqual([
      { kind: 'group', name: 'g' },
      { kind: 'address', name: null, adl: null, mailbox: 'a', host: 'b', angle: false },
      { kind: 'end' },
      { kind: 'address', name: null, adl: '@r1,@r2', mailbox: 'u', host: 'h', angle: true },
    ]);
  });
});

describe('parseMessage search texts', () => {
  test('a second Cc line is searched; each line on its own', () => {
    const m = parseMessage(
      msg([
        'From: a@example.org',
        'Cc: group:;',
        'Cc: second@example.org',
        'Subject: s',
        '',
        'x',
        '',
      ]),
    );
    expect(m.ccText).toBe('group:;\n<second@example.org>');
  });

  test('BODY reads every text part decoded, TEXT every part header', () => {
    const m = parseMessage(
      msg([
        'From: a@example.org',
        'Subject: patch',
        'MIME-Version: 1.0',
        'Content-Type: multipart/mixed; boundary="b1"',
        '',
        'preamble quasar',
        '--b1',
        'Content-Type: multipart/alternative; boundary="alt"',
        '',
        '--alt',
        'Content-Type: text/plain',
        '',
        'plain pulsar',
        '--alt',
        'Content-Type: text/html',
        '',
        '<p>html nebula</p>',
        '--alt--',
        '--b1',
        'Content-Type: text/x-patch; name="fix.diff"',
        'Content-Disposition: attachment; filename="fix.diff"',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        '--- a/bcache.c',
        'R4000 =3D cachefl=',
        'ush',
        '--b1',
        'Content-Type: application/octet-stream',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('octet galaxy').toString('base64'),
        '--b1',
        'Content-Type: message/rfc822',
        '',
        'From: inner@example.org',
        'Subject: inner subject',
        '',
        'inner comet',
        '--b1--',
        '',
      ]),
    );
    const body = m.searchBodyText;
    for (const w of [
      'plain pulsar',
      'html nebula',
      'bcache.c',
      'R4000 = cacheflush',
      'inner comet',
    ])
      expect(body).toContain(w);
    // Not text (application/*), not a part (preamble), not a body (the inner message's header).
    for (const w of ['galaxy', 'quasar', 'inner subject']) expect(body).not.toContain(w);
    expect(m.partHeaderText).toContain('Content-Type: text/x-patch; name="fix.diff"');
    expect(m.partHeaderText).toContain('Subject: inner subject');
    // The text shown is unchanged: one alternative, no attachment.
    expect(m.bodyText).not.toContain('nebula');
    expect(m.bodyText).not.toContain('bcache');
  });
});
