'use strict';

const { parseMessage, MessageParseError, decodeHeaderValue, parseAddressList } = require('../lib');

/** Builds a message from lines joined with LF (or CRLF). */
function msg(lines, eol = '\n') {
  return Buffer.from(lines.join(eol), 'latin1');
}

function reason(fn) {
  try {
    fn();
  } catch (e) {
    if (e instanceof MessageParseError) return e.reason;
    throw e;
  }
  return null;
}

describe('headers', () => {
  test('plain Enron-style message', () => {
    const m = parseMessage(
      msg([
        'Message-ID: <18782981.1075855378110.JavaMail.evans@thyme>',
        'Date: Mon, 14 May 2001 16:39:00 -0700 (PDT)',
        'From: phillip.allen@enron.com',
        'To: tim.belden@enron.com, "Lavorato, John" <john.lavorato@enron.com>',
        'Subject: Re: forecast',
        'Mime-Version: 1.0',
        'Content-Type: text/plain; charset=us-ascii',
        'Content-Transfer-Encoding: 7bit',
        'X-From: Phillip K Allen',
        '',
        'Here is our forecast',
        '',
      ]),
    );
    expect(m.messageId).toBe('18782981.1075855378110.JavaMail.evans@thyme');
    expect(m.date.toISOString()).toBe('2001-05-14T23:39:00.000Z');
    expect(m.from).toEqual({ name: '', address: 'phillip.allen@enron.com' });
    expect(m.to).toEqual([
      { name: '', address: 'tim.belden@enron.com' },
      { name: 'Lavorato, John', address: 'john.lavorato@enron.com' },
    ]);
    // The SEARCH TO text, written as Dovecot writes it (address-list.js addressSearchText).
    expect(m.toText).toBe('<tim.belden@enron.com>, "Lavorato, John" <john.lavorato@enron.com>');
    expect(m.subject).toBe('Re: forecast');
    expect(m.bodyText).toBe('Here is our forecast\n');
    expect(m.contentType).toBe('text/plain');
    expect(m.hasAttachments).toBe(false);
    expect(m.warnings).toEqual([]);
    expect(m.headerText).toContain('X-From: Phillip K Allen\n');
    expect(m.headerText.split('\n')).toHaveLength(10);
  });

  test('RFC 2047 subjects: B and Q, several charsets, adjacent words', () => {
    const m = parseMessage(
      msg([
        'From: =?ISO-8859-1?Q?Andr=E9?= Pirard <PIRARD@vm1.ulg.ac.be>',
        'To: =?utf-8?B?SsO2cmc=?= <jorg@example.de>',
        'Subject: =?UTF-8?B?SGVsbG8g?= =?UTF-8?B?V29ybGQ=?= =?koi8-r?b?8NLJ18XU?=',
        ' =?iso-8859-2?q?_=BFó=B3w?= plain =?utf-8?q?=E2=82?= =?utf-8?q?=AC?=',
        '',
        'x',
      ]),
    );
    expect(m.subject).toBe('Hello WorldПривет żółw plain €');
    expect(m.from).toEqual({ name: 'André Pirard', address: 'PIRARD@vm1.ulg.ac.be' });
    expect(m.to[0].name).toBe('Jörg');
    expect(m.fromText).toBe('André Pirard <PIRARD@vm1.ulg.ac.be>');
    expect(m.headerText).toContain('Subject: Hello WorldПривет');
  });

  test('8-bit header bytes without RFC 2047: UTF-8 if valid, else windows-1252', () => {
    const utf8 = Buffer.concat([
      Buffer.from('From: '),
      Buffer.from('Jürgen Müller <jm@example.de>\nSubject: Grüße\n\nbody\n', 'utf8'),
    ]);
    const m1 = parseMessage(utf8);
    expect(m1.from.name).toBe('Jürgen Müller');
    expect(m1.subject).toBe('Grüße');
    // 0x93/0x94 are cp1252 curly quotes, 0xE9 é
    const cp = Buffer.from('Subject: \x93caf\xe9\x94\n\nbody\n', 'latin1');
    expect(parseMessage(cp).subject).toBe('“café”');
  });

  test('folded headers (LF and CRLF), tabs kept as whitespace', () => {
    const lines = [
      'Subject: a very',
      '\tlong subject',
      '  folded twice',
      'To: a@example.com,',
      ' b@example.com',
      '',
      'body',
    ];
    for (const eol of ['\n', '\r\n']) {
      const m = parseMessage(msg(lines, eol));
      expect(m.subject).toBe('a very\tlong subject  folded twice');
      expect(m.to.map((a) => a.address)).toEqual(['a@example.com', 'b@example.com']);
    }
  });

  test('address groups are flattened, group names kept in toText', () => {
    const m = parseMessage(
      msg([
        'From: Team: alice@example.com, "Bob B." <bob@example.com>;',
        'To: undisclosed-recipients:;',
        'Cc: postmaster, =?utf-8?q?Z=C3=BC?= <z@example.com> (comment)',
        '',
        '',
      ]),
    );
    expect(m.from).toEqual({ name: '', address: 'alice@example.com' });
    expect(m.fromText).toBe('Team: <alice@example.com>, "Bob B." <bob@example.com>;');
    expect(m.to).toEqual([]);
    expect(m.toText).toBe('undisclosed-recipients:;');
    expect(m.cc).toEqual([
      { name: '', address: 'postmaster' },
      { name: 'Zü', address: 'z@example.com' },
    ]);
  });

  test('message ids, in-reply-to, references', () => {
    const m = parseMessage(
      msg([
        'Message-Id:   <abc@x>  ',
        'In-Reply-To: Your message of Monday <prev@x>',
        'References: <r1@x>',
        ' <r2@x>\t<r3@x>',
        '',
        '',
      ]),
    );
    expect(m.messageId).toBe('abc@x');
    expect(m.inReplyTo).toBe('prev@x');
    expect(m.references).toEqual(['r1@x', 'r2@x', 'r3@x']);
  });

  test.each([
    ['Mon, 14 May 2001 16:39:00 -0700 (PDT)', '2001-05-14T23:39:00.000Z'],
    ['14 May 01 16:39 EST', '2001-05-14T21:39:00.000Z'],
    ['Thu, 20 Jun 96 08:35:17 +0200', '1996-06-20T06:35:17.000Z'],
    ['Mon May 14 16:39:00 2001', '2001-05-14T16:39:00.000Z'],
    ['Sat, 1 Jan 1960 00:00:00 GMT', '1960-01-01T00:00:00.000Z'],
    ['28 Jun 01 10:05:15 PM', '2001-06-28T22:05:15.000Z'],
    ['Mon, 20 May 02 21:54:28 Eastern Daylight Time', '2002-05-20T21:54:28.000Z'],
  ])('date %s', (value, iso) => {
    const m = parseMessage(msg([`Date: ${value}`, '', '']));
    expect(m.date.toISOString()).toBe(iso);
  });

  test.each(['garbage', '', '1', 'Tue, 31 Feb 2001 10:00:00 +0000', 'Mon, 14 May 2001 25:00:00'])(
    'bogus date %j → null',
    (value) => {
      const m = parseMessage(msg([`Date: ${value}`, 'Subject: x', '', '']));
      expect(m.date).toBeNull();
      expect(m.warnings).toContain('invalid-date');
    },
  );

  test('missing fields give null/empty values', () => {
    const m = parseMessage(msg(['X-Only: 1', '', 'text']));
    expect(m).toMatchObject({
      subject: null,
      date: null,
      messageId: null,
      inReplyTo: null,
      references: [],
      from: null,
      to: [],
      cc: [],
      bcc: [],
      replyTo: [],
      fromText: '',
      toText: '',
      ccText: '',
    });
  });

  test('missing header/body separator', () => {
    const all = parseMessage(msg(['Subject: only headers', 'From: a@example.com']));
    expect(all.subject).toBe('only headers');
    expect(all.bodyText).toBe('');
    // a line that is no header field ends the header (the rest stays searchable as body)
    const junk = parseMessage(msg(['Subject: s', 'this is body text', '', 'more']));
    expect(junk.subject).toBe('s');
    expect(junk.bodyText).toBe('this is body text\n\nmore');
    expect(junk.warnings).toContain('missing-header-separator');
  });

  test('helpers: decodeHeaderValue and parseAddressList', () => {
    expect(decodeHeaderValue('=?utf-8?q?a=00b?=')).toBe('ab');
    expect(decodeHeaderValue(Buffer.from('caf\xe9', 'latin1'))).toBe('café');
    expect(decodeHeaderValue('=?x-bogus?q?caf=E9?=')).toBe('café');
    expect(parseAddressList('"A, B" <a@b.c>, d@e.f')).toEqual([
      { name: 'A, B', address: 'a@b.c' },
      { name: '', address: 'd@e.f' },
    ]);
  });
});

describe('bodies', () => {
  test('quoted-printable body with charset', () => {
    const m = parseMessage(
      msg([
        'Content-Type: text/plain; charset=iso-8859-1',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'caf=E9 au lait, soft=',
        'break =3D equals',
      ]),
    );
    expect(m.bodyText).toBe('café au lait, softbreak = equals');
  });

  test('base64 body in UTF-8 and an unknown charset falling back to windows-1252', () => {
    const b64 = Buffer.from('Grüße aus Köln\n', 'utf8').toString('base64');
    const m = parseMessage(
      msg([
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: base64',
        '',
        b64,
      ]),
    );
    expect(m.bodyText).toBe('Grüße aus Köln\n');
    const bogus = parseMessage(
      msg(['Content-Type: text/plain; charset=x-no-such', '', 'd\xe9j\xe0 \x80']),
    );
    expect(bogus.bodyText).toBe('déjà €');
    expect(bogus.warnings).toContain('unknown-charset');
  });

  test('multipart/alternative prefers the plain text part', () => {
    const m = parseMessage(
      msg([
        'Content-Type: multipart/alternative; boundary="alt"',
        '',
        'preamble is ignored',
        '--alt',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'plain version',
        '--alt',
        'Content-Type: text/html; charset=utf-8',
        '',
        '<p>html <b>version</b></p>',
        '--alt--',
        'epilogue',
      ]),
    );
    expect(m.bodyText).toBe('plain version');
    expect(m.contentType).toBe('multipart/alternative');
    expect(m.hasAttachments).toBe(false);
  });

  test('HTML-only message: words appear, tags and script/style do not', () => {
    const m = parseMessage(
      msg([
        'Content-Type: text/html; charset=windows-1252',
        '',
        '<html><head><style>.x { color: red }</style><script>var secret = 1;</script></head>',
        '<body><p>Hello&nbsp;<b>bold</b> &amp; &#8364;5 &ldquo;quoted&rdquo;</p>',
        '<!-- hidden comment --><table><tr><td>cell1</td><td>cell2</td></tr></table></body></html>',
      ]),
    );
    expect(m.bodyText).toContain('Hello bold & €5 “quoted”');
    expect(m.bodyText).toContain('cell1 cell2');
    expect(m.bodyText).not.toMatch(/[<>]|secret|color|hidden/);
  });

  test('attachments are detected with IMAP part numbers', () => {
    const m = parseMessage(
      msg([
        'Content-Type: multipart/mixed; boundary=outer',
        '',
        '--outer',
        'Content-Type: multipart/alternative; boundary=inner',
        '',
        '--inner',
        'Content-Type: text/plain',
        '',
        'the body',
        '--inner',
        'Content-Type: text/html',
        '',
        '<p>the body</p>',
        '--inner--',
        '--outer',
        'Content-Type: application/pdf; name="report.pdf"',
        'Content-Transfer-Encoding: base64',
        'Content-Disposition: attachment; filename="report.pdf"',
        '',
        Buffer.from('%PDF-1.4 fake').toString('base64'),
        '--outer',
        'Content-Type: image/png',
        'Content-ID: <img1@x>',
        'Content-Transfer-Encoding: base64',
        '',
        'iVBORw0KGgo=',
        '--outer',
        "Content-Type: text/plain; name*=utf-8''%E2%82%AC.txt",
        'Content-Disposition: attachment',
        '',
        'attached text is not body text',
        '--outer--',
      ]),
    );
    expect(m.bodyText).toBe('the body');
    expect(m.hasAttachments).toBe(true);
    expect(m.attachments).toEqual([
      {
        part: '2',
        contentType: 'application/pdf',
        filename: 'report.pdf',
        size: 13,
        disposition: 'attachment',
        contentId: null,
      },
      {
        part: '3',
        contentType: 'image/png',
        filename: null,
        size: 8,
        disposition: null,
        contentId: 'img1@x',
      },
      {
        part: '4',
        contentType: 'text/plain',
        filename: '€.txt',
        size: 30,
        disposition: 'attachment',
        contentId: null,
      },
    ]);
  });

  test('nested message/rfc822 is included and numbered', () => {
    const m = parseMessage(
      msg([
        'Subject: Fwd: hello',
        'Content-Type: multipart/mixed; boundary=b1',
        '',
        '--b1',
        'Content-Type: text/plain',
        '',
        'see below',
        '--b1',
        'Content-Type: message/rfc822',
        '',
        'From: Inner Person <inner@example.com>',
        'Subject: =?utf-8?q?inner_subj=C3=A9ct?=',
        'Content-Type: multipart/mixed; boundary=b2',
        '',
        '--b2',
        'Content-Type: text/plain',
        '',
        'inner body',
        '--b2',
        'Content-Type: application/zip; name=x.zip',
        '',
        'PK',
        '--b2--',
        '--b1--',
      ]),
    );
    expect(m.subject).toBe('Fwd: hello');
    expect(m.bodyText).toContain('see below');
    expect(m.bodyText).toContain('Subject: inner subjéct');
    expect(m.bodyText).toContain('From: Inner Person <inner@example.com>');
    expect(m.bodyText).toContain('inner body');
    expect(m.attachments.map((a) => [a.part, a.filename])).toEqual([['2.2', 'x.zip']]);
  });

  test('single-part non-text message is attachment part 1', () => {
    const m = parseMessage(msg(['Content-Type: application/octet-stream', '', 'xx']));
    expect(m.attachments).toEqual([
      expect.objectContaining({ part: '1', contentType: 'application/octet-stream', size: 2 }),
    ]);
    expect(m.bodyText).toBe('');
  });

  test('uuencoded block inside text is an attachment, not body text', () => {
    const m = parseMessage(
      msg(['Subject: uu', '', 'see file', 'begin 644 hi.txt', '#:&D*', '`', 'end', 'bye']),
    );
    expect(m.bodyText).toBe('see file\n\nbye');
    expect(m.attachments).toEqual([
      expect.objectContaining({ part: '1.uu1', filename: 'hi.txt', size: 3 }),
    ]);
  });

  test('CRLF and LF give equal results', () => {
    const lines = [
      'From: A <a@example.com>',
      'Subject: =?utf-8?q?eol_test?=',
      'Content-Type: multipart/mixed; boundary=zz',
      '',
      '--zz',
      'Content-Type: text/plain',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      'line one=',
      ' continued',
      'line two',
      '--zz',
      'Content-Type: application/octet-stream; name=a.bin',
      'Content-Transfer-Encoding: base64',
      '',
      'AAECAwQF',
      '--zz--',
      '',
    ];
    const lf = parseMessage(msg(lines, '\n'));
    const crlf = parseMessage(msg(lines, '\r\n'));
    expect(crlf.size).toBeGreaterThan(lf.size);
    expect({ ...crlf, size: 0 }).toEqual({ ...lf, size: 0 });
    expect(lf.bodyText).toBe('line one continued\nline two');
    // mixed line endings too
    const mixed = parseMessage(Buffer.from('Subject: m\r\nTo: a@b.c\n\r\nx\r\ny\n'));
    expect(mixed.subject).toBe('m');
    expect(mixed.bodyText).toBe('x\ny\n');
  });

  test('NUL in the body is removed from all text', () => {
    const m = parseMessage(Buffer.from('Subject: n\n\nab\0cd\n'));
    expect(m.bodyText).toBe('abcd\n');
    const q = parseMessage(
      msg([
        'Subject: =?utf-8?q?x=00y?=',
        'Content-Transfer-Encoding: quoted-printable',
        '',
        'a=00b',
      ]),
    );
    expect(q.subject).toBe('xy');
    expect(q.bodyText).toBe('ab');
  });

  test('missing close delimiter: parts taken, warning added', () => {
    const m = parseMessage(
      msg([
        'Content-Type: multipart/mixed; boundary=t',
        '',
        '--t',
        'Content-Type: text/plain',
        '',
        'first',
        '--t',
        'Content-Type: text/plain',
        '',
        'truncated second part',
      ]),
    );
    expect(m.bodyText).toBe('first\n\ntruncated second part');
    expect(m.warnings).toContain('multipart-unterminated');
  });

  test('multipart without boundary or with a boundary never used → text', () => {
    const a = parseMessage(msg(['Content-Type: multipart/mixed', '', 'just text']));
    expect(a.bodyText).toBe('just text');
    expect(a.warnings).toContain('multipart-without-boundary');
    const b = parseMessage(msg(['Content-Type: multipart/mixed; boundary=q', '', 'just text']));
    expect(b.bodyText).toBe('just text');
    expect(b.warnings).toContain('multipart-boundary-not-found');
  });

  test('deep nesting is capped with a warning', () => {
    let s = 'Content-Type: multipart/mixed; boundary=b0\n\n';
    for (let i = 0; i < 200; i++) {
      s += `--b${i}\nContent-Type: multipart/mixed; boundary=b${i + 1}\n\n`;
    }
    s += '--b200\nContent-Type: text/plain\n\ndeep\n';
    const m = parseMessage(Buffer.from(s));
    expect(m.warnings).toContain('max-depth');
  });

  test('maxBodyText caps the text', () => {
    const m = parseMessage(Buffer.from('Subject: x\n\n' + 'word '.repeat(1000)), {
      maxBodyText: 100,
    });
    expect(m.bodyText).toHaveLength(100);
    expect(m.warnings).toContain('body-text-truncated');
  });

  test('50 MB message parses: the attachment is sized, not decoded into the text', () => {
    const line = Buffer.from('x'.repeat(57)).toString('base64') + '\r\n';
    const raw = Buffer.concat([
      Buffer.from(
        'Subject: big\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\n\r\nhello\r\n' +
          '--XX\r\nContent-Type: application/pdf; name=a.pdf\r\n' +
          'Content-Transfer-Encoding: base64\r\n\r\n',
      ),
      Buffer.from(line.repeat(Math.ceil(50e6 / line.length))),
      Buffer.from('--XX--\r\n'),
    ]);
    // How long it takes is a budget for a benchmark to report, not for a test (issue 30.5).
    const m = parseMessage(raw);
    expect(m.bodyText).toBe('hello');
    expect(m.attachments[0].size).toBe(57 * Math.ceil(50e6 / line.length));
  });
});

describe('rejected input (MessageParseError)', () => {
  test('empty', () => {
    expect(reason(() => parseMessage(Buffer.alloc(0)))).toBe('empty');
    expect(reason(() => parseMessage(Buffer.from('\r\n\n  \n')))).toBe('empty');
  });

  test('no header', () => {
    expect(reason(() => parseMessage(Buffer.from('Hello there,\nthis is a letter\n')))).toBe(
      'no-header',
    );
    expect(
      reason(() => parseMessage(Buffer.from('From a@b Mon Jan 1 00:00:00 2001\nX: y\n\n'))),
    ).toBe('no-header');
  });

  test('NUL in the header', () => {
    expect(reason(() => parseMessage(Buffer.from('Subject: a\0b\n\nbody\n')))).toBe(
      'nul-in-header',
    );
  });

  test('binary garbage', () => {
    const bytes = Buffer.alloc(4096);
    let x = 12345;
    for (let i = 0; i < bytes.length; i++) {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      bytes[i] = x >> 16;
    }
    expect(reason(() => parseMessage(bytes))).toBe('binary');
    const png = Buffer.concat([Buffer.from('X: y\n\n'), Buffer.alloc(200, 1)]);
    expect(reason(() => parseMessage(png))).toBe('binary');
  });

  test('too large', () => {
    expect(reason(() => parseMessage(Buffer.from('Subject: x\n\nbody'), { maxBytes: 5 }))).toBe(
      'too-large',
    );
  });

  test('error carries reason and message', () => {
    let err;
    try {
      parseMessage(Buffer.alloc(0));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(MessageParseError);
    expect(err).toBeInstanceOf(Error);
    expect(err.reason).toBe('empty');
    expect(err.message).toMatch(/empty/);
  });

  test('leading blank lines and (opt-in) mbox From line are tolerated', () => {
    const m = parseMessage(Buffer.from('\n\nSubject: s\n\nb'));
    expect(m.subject).toBe('s');
    expect(m.warnings).toContain('leading-blank-lines');
    const f = parseMessage(Buffer.from('From a@b Mon Jan 1 00:00:00 2001\nSubject: s\n\nb'), {
      allowMboxFromLine: true,
    });
    expect(f.subject).toBe('s');
    expect(f.warnings).toContain('mbox-from-line');
  });
});
