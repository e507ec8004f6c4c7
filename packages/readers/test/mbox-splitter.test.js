'use strict';

const { split, rng, plain, rebuild, expectTiling } = require('./helpers');
const { MboxSplitter, escapeMessage, formatMboxEntry } = require('../lib');

const b = (s) => Buffer.from(s, 'latin1');
const FROM1 = 'From alice@example.com Sat Jan  3 01:05:34 1996\n';
const FROM2 = 'From bob@example.org Mon Feb 12 13:45:00 2001\n';
const FROM3 = 'From MAILER-DAEMON Tue Mar  4 07:08:09 2003 +0100\n';

const msg = (subject, body) => `Subject: ${subject}\n\n${body}`;

describe('MboxSplitter basics', () => {
  test('empty input produces no entries', async () => {
    expect(await split(Buffer.alloc(0))).toEqual([]);
  });

  test('splits a simple mboxo file and reports offsets, trailers and variants', async () => {
    const m1 = msg('one', 'hello\n');
    const m2 = msg('two', 'world\n');
    const file = b(FROM1 + m1 + '\n' + FROM2 + m2 + '\n');
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expectTiling(entries, file.length);
    expect(entries[0].fromLine.toString()).toBe(FROM1);
    expect(entries[0].raw.toString()).toBe(m1);
    expect(entries[0].trailer.toString()).toBe('\n');
    expect(entries[0].variant).toBe('mboxo');
    expect(entries[0].original).toBeNull();
    expect(entries[0].error).toBeNull();
    expect(entries[1].offset).toBe(FROM1.length + m1.length + 1);
    expect(entries[1].raw.toString()).toBe(m2);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('last message without trailing newline has empty trailer', async () => {
    const file = b(FROM1 + msg('a', 'x\n') + '\n' + FROM2 + msg('b', 'no newline at end'));
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[1].raw.toString()).toBe(msg('b', 'no newline at end'));
    expect(entries[1].trailer.length).toBe(0);
    expect(entries[1].original).toBeNull();
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('last message ending in a single newline keeps it in raw', async () => {
    const file = b(FROM1 + msg('a', 'x\n'));
    const [e] = await split(file);
    expect(e.raw.toString()).toBe(msg('a', 'x\n'));
    expect(e.trailer.length).toBe(0);
  });

  test('file that is only a From_ line without newline', async () => {
    const file = b(FROM1.trimEnd());
    const entries = await split(file);
    expect(entries).toHaveLength(1);
    expect(entries[0].fromLine.toString()).toBe(FROM1.trimEnd());
    expect(entries[0].raw.length).toBe(0);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('rejects unknown variants', () => {
    expect(() => new MboxSplitter({ variant: 'mboxx' })).toThrow(/unknown mbox variant/);
  });
});

describe('strict From_ recognition', () => {
  test('From line in body after a non-empty line does not split', async () => {
    const body =
      'Hello\nFrom here on 10:30 in 2001 we work.\nFrom bob@x.org Sat Jan  3 01:05:34 1996\n';
    const file = b(FROM1 + msg('a', body) + '\n' + FROM2 + msg('b', 'y\n'));
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[0].raw.toString()).toBe(msg('a', body));
    // mboxo would have quoted those lines, so exactness needs `original`.
    expect(entries[0].original.toString()).toBe(msg('a', body) + '\n');
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('anyLine: a valid From_ line splits after a non-empty line, its trailer empty', async () => {
    // What a writer appending after a cut-short line leaves: the line ended, no empty line.
    const file = b(
      FROM1 + msg('a', 'cut sho') + '\n' + FROM2 + msg('b', 'y\n\nFrom here on 10:30\n'),
    );
    for (const chunk of [(n) => n, () => 1]) {
      const entries = await split(file, { anyLine: true }, chunk);
      expect(entries.map((e) => e.raw.toString())).toEqual([
        msg('a', 'cut sho\n'),
        msg('b', 'y\n\nFrom here on 10:30\n'),
      ]);
      expect(entries[0].trailer.length).toBe(0);
      expect(rebuild(entries).equals(file)).toBe(true);
      // The same bytes without the option: one message.
      expect(await split(file, {}, chunk)).toHaveLength(1);
    }
  });

  test('From line after an empty line without asctime shape does not split', async () => {
    const body = 'Hi\n\nFrom here on 10:30 in 2001, we work.\n\nFrom the desk of Bob\n';
    const file = b(FROM1 + msg('a', body));
    const entries = await split(file);
    expect(entries).toHaveLength(1);
    expect(entries[0].raw.toString()).toBe(msg('a', body));
  });

  test('asctime variants after an empty line do split', async () => {
    const lines = [
      'From a@b Sat Jan  3 01:05:34 1996\n',
      'From a@b Sat Jan 3 01:05 1996\n',
      'From a@b Sat Jan  3 01:05:34 PST 1996\n',
      'From a@b Sat Jan  3 01:05:34 1996 -0800\n',
      'From a@b Sat Jan  3 01:05:34 1996 remote from uunet\n',
      'From a@b Sat Jan  3 01:05:34 MET DST 1996\n',
      'From  Sat Jan  3 01:05:34 1996\r\n',
    ];
    const file = b(lines.map((l) => l + 'Subject: s\n\nbody\n\n').join(''));
    const entries = await split(file);
    expect(entries.map((e) => e.fromLine.toString())).toEqual(lines);
  });

  test('data before the first From_ line becomes an error entry', async () => {
    const junk = 'garbage line\nmore junk\n\n';
    const file = b(junk + FROM1 + msg('a', 'x\n'));
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[0].error).toBe('data before first From_ line');
    expect(entries[0].fromLine.length).toBe(0);
    expect(entries[0].length).toBe(junk.length);
    expect(entries[0].original.toString()).toBe(junk);
    expect(entries[1].offset).toBe(junk.length);
    expect(entries[1].error).toBeNull();
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('a file with no From_ line at all is one error entry', async () => {
    const file = b('Subject: not an mbox\n\nFrom here on\n');
    const entries = await split(file);
    expect(entries).toHaveLength(1);
    expect(entries[0].error).toMatch(/before first From_/);
    expect(rebuild(entries).equals(file)).toBe(true);
  });
});

describe('escaping variants', () => {
  test('auto mode switches to mboxrd unescaping once >>From was seen', async () => {
    const m1 = msg('a', '>From quoted once\n');
    const m2 = msg('b', '>>From quoted twice\n>From once\n');
    const file = b(FROM1 + m1 + '\n' + FROM2 + m2 + '\n');
    const entries = await split(file);
    expect(entries[0].variant).toBe('mboxo');
    expect(entries[0].raw.toString()).toBe(msg('a', 'From quoted once\n'));
    expect(entries[1].variant).toBe('mboxrd');
    expect(entries[1].raw.toString()).toBe(msg('b', '>From quoted twice\nFrom once\n'));
    expect(entries.every((e) => e.original === null)).toBe(true);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('forced variants unescape as given', async () => {
    const body = '>From a\n>>From b\nFrom c\n';
    const file = b(FROM1 + msg('a', body));
    const rd = (await split(file, { variant: 'mboxrd' }))[0];
    expect(rd.variant).toBe('mboxrd');
    expect(rd.raw.toString()).toBe(msg('a', 'From a\n>From b\nFrom c\n'));
    const o = (await split(file, { variant: 'mboxo' }))[0];
    expect(o.raw.toString()).toBe(msg('a', 'From a\n>>From b\nFrom c\n'));
    const cl2 = (await split(file, { variant: 'mboxcl2' }))[0];
    expect(cl2.variant).toBe('mboxcl2');
    expect(cl2.raw.toString()).toBe(msg('a', body));
    for (const e of [rd, o, cl2]) expect(formatMboxEntry(e).equals(file)).toBe(true);
    // The unescaped "From c" would be re-quoted by mboxo/mboxrd, so they need `original`.
    expect(rd.original).not.toBeNull();
    expect(cl2.original).toBeNull();
  });

  test('mboxo lossy case: a stored >From whose original was ">From" still exports exactly', async () => {
    const file = b(FROM1 + msg('a', '>From x\n'));
    const [e] = await split(file);
    expect(e.original).toBeNull();
    expect(escapeMessage(e.raw, e.variant).toString()).toBe(msg('a', '>From x\n'));
  });
});

describe('Content-Length (mboxcl / mboxcl2)', () => {
  const clMessage = (body, len = Buffer.byteLength(body)) =>
    `Subject: cl\nContent-Length: ${len}\n\n${body}`;

  test('honours a correct Content-Length even with unescaped From_ lines in the body', async () => {
    const body = 'intro\n\nFrom evil@x.org Sat Jan  3 01:05:34 1996\nstill body\n';
    const file = b(FROM1 + clMessage(body) + '\n' + FROM2 + msg('next', 'z\n') + '\n');
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[0].variant).toBe('mboxcl2');
    expect(entries[0].raw.toString()).toBe(clMessage(body));
    expect(entries[0].trailer.toString()).toBe('\n');
    expect(entries[0].original).toBeNull();
    expect(entries[1].raw.toString()).toBe(msg('next', 'z\n'));
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('Content-Length body without final newline, separator directly after it', async () => {
    const body = 'no newline';
    const file = b(FROM1 + clMessage(body) + '\n' + FROM2 + clMessage('x'));
    const entries = await split(file);
    expect(entries.map((e) => e.raw.toString())).toEqual([clMessage(body), clMessage('x')]);
    expect(entries[0].trailer.toString()).toBe('\n');
    expect(entries[1].trailer.length).toBe(0);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('variant mboxcl when the Content-Length body has >From lines', async () => {
    const body = '>From quoted\n';
    const file = b(FROM1 + clMessage(body) + '\n');
    const [e] = await split(file);
    expect(e.variant).toBe('mboxcl');
    expect(e.raw.toString()).toBe(clMessage('From quoted\n', body.length));
    expect(formatMboxEntry(e).equals(file)).toBe(true);
  });

  test('wrong Content-Length falls back to From_ scanning', async () => {
    const body = 'line one\n\nFrom evil@x.org Sat Jan  3 01:05:34 1996\nline two\n';
    for (const len of [5, body.length + 3, body.length + 1000]) {
      const file = b(FROM1 + clMessage(body, len) + '\n' + FROM2 + msg('n', 'z\n'));
      const entries = await split(file);
      expect(entries).toHaveLength(3);
      expect(entries[0].variant).toBe('mboxo');
      expect(entries[1].fromLine.toString()).toBe('From evil@x.org Sat Jan  3 01:05:34 1996\n');
      expect(rebuild(entries).equals(file)).toBe(true);
    }
  });

  test('forced mboxo ignores Content-Length', async () => {
    const body = 'a\n\nFrom evil@x.org Sat Jan  3 01:05:34 1996\nb\n';
    const file = b(FROM1 + clMessage(body) + '\n');
    expect(await split(file, { variant: 'mboxo' })).toHaveLength(2);
    expect(await split(file, { variant: 'mboxcl2' })).toHaveLength(1);
  });

  test('truncated last message with Content-Length beyond EOF falls back', async () => {
    const file = b(FROM1 + clMessage('short body\n', 500));
    const entries = await split(file);
    expect(entries).toHaveLength(1);
    expect(entries[0].raw.toString()).toBe(clMessage('short body\n', 500));
    expect(entries[0].variant).toBe('mboxo');
    expect(rebuild(entries).equals(file)).toBe(true);
  });
});

describe('CRLF', () => {
  test('CRLF file splits on CRLF blank lines and keeps CRLF bytes', async () => {
    const m1 = 'Subject: a\r\n\r\nbody\r\n>From x\r\n';
    const m2 = 'Subject: b\r\n\r\nbody2\r\n';
    const f1 = FROM1.replace('\n', '\r\n');
    const f2 = FROM2.replace('\n', '\r\n');
    const file = b(f1 + m1 + '\r\n' + f2 + m2 + '\r\n');
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[0].fromLine.toString()).toBe(f1);
    expect(entries[0].raw.toString()).toBe('Subject: a\r\n\r\nbody\r\nFrom x\r\n');
    expect(entries[0].trailer.toString()).toBe('\r\n');
    expect(entries[1].trailer.toString()).toBe('\r\n');
    expect(entries.every((e) => e.original === null)).toBe(true);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('mixed LF and CRLF', async () => {
    const file = b(
      FROM1 + 'Subject: a\r\n\r\nx\r\n\n' + FROM2 + 'Subject: b\n\ny\n\r\n' + FROM3 + 'S: c\n',
    );
    const entries = await split(file);
    expect(entries.map((e) => e.trailer.toString())).toEqual(['\n', '\r\n', '']);
    expect(rebuild(entries).equals(file)).toBe(true);
  });

  test('CRLF mboxcl2 with Content-Length', async () => {
    const body = 'x\r\n\r\nFrom a@b Sat Jan  3 01:05:34 1996\r\n';
    const m = `Subject: a\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
    const file = b(FROM1 + m + '\r\n' + FROM2 + 'S: b\r\n');
    const entries = await split(file);
    expect(entries).toHaveLength(2);
    expect(entries[0].raw.toString()).toBe(m);
    expect(entries[0].trailer.toString()).toBe('\r\n');
  });
});

describe('maxMessageBytes', () => {
  test('oversized entry is reported with correct offset/length and the stream continues', async () => {
    const big = msg('big', 'x'.repeat(50) + '\n' + 'y'.repeat(5000) + '\n' + 'z\n'.repeat(100));
    const file = b(FROM1 + msg('a', '1\n') + '\n' + FROM2 + big + '\n' + FROM3 + msg('c', '3\n'));
    for (const chunk of [() => 7, () => 1 << 20]) {
      const entries = await split(file, { maxMessageBytes: 1000 }, chunk);
      expect(entries).toHaveLength(3);
      expectTiling(entries, file.length);
      expect(entries[0].error).toBeNull();
      expect(entries[1].error).toMatch(/maxMessageBytes/);
      expect(entries[1].fromLine.toString()).toBe(FROM2);
      expect(entries[1].raw.length).toBe(0);
      expect(entries[1].length).toBe(FROM2.length + big.length + 1);
      expect(entries[2].raw.toString()).toBe(msg('c', '3\n'));
    }
  });

  test('oversized Content-Length message is not trusted beyond the limit', async () => {
    const body = 'q'.repeat(3000) + '\n';
    const file = b(FROM1 + `Content-Length: ${body.length}\n\n${body}\n` + FROM2 + 'S: x\n');
    const entries = await split(file, { maxMessageBytes: 1000 }, () => 100);
    expect(entries).toHaveLength(2);
    expect(entries[0].error).toMatch(/maxMessageBytes/);
    expectTiling(entries, file.length);
  });
});

describe('chunk-boundary invariance', () => {
  const CL_BODY = 'x\n\nFrom a@b Sat Jan  3 01:05:34 1996\nyy\n';
  const pieces = [
    FROM1 + msg('a', 'plain\n') + '\n',
    FROM2 + msg('b', 'x\n\nFrom here on 10:30 in 2001\n>From q\n') + '\n',
    FROM3 + msg('c', '>>From rd\nFrom unquoted\n') + '\n',
    FROM1.replace('\n', '\r\n') + 'Subject: crlf\r\n\r\nbody\r\n\r\n',
    FROM2 + `Subject: cl\nContent-Length: ${CL_BODY.length}\n\n${CL_BODY}\n`,
    FROM3 + 'Subject: badcl\nContent-Length: 3\n\nbody\n\n',
    FROM1 + msg('last', 'no final newline'),
  ];
  const file = b('leading junk\n' + pieces.join(''));

  test('1-byte and random chunkings give identical output', async () => {
    const whole = await split(file);
    expect(whole.length).toBeGreaterThanOrEqual(8);
    expectTiling(whole, file.length);
    expect(rebuild(whole).equals(file)).toBe(true);
    expect(plain(await split(file, {}, () => 1))).toEqual(plain(whole));
    const r = rng(42);
    for (let i = 0; i < 30; i++) {
      const max = [2, 5, 17, 64, 300][i % 5];
      expect(plain(await split(file, {}, () => 1 + Math.floor(r() * max)))).toEqual(plain(whole));
    }
  });

  test('the Content-Length message was honoured in that file', async () => {
    const whole = await split(file);
    const cl = whole.find((e) => e.raw.toString().startsWith('Subject: cl\n'));
    expect(cl.variant).toBe('mboxcl2');
    expect(cl.raw.toString()).toContain('From a@b Sat Jan');
  });

  test('works through stream.pipeline with a readable source', async () => {
    const { Readable } = require('stream');
    const out = [];
    const src = Readable.from([file.subarray(0, 10), file.subarray(10)], { objectMode: false });
    for await (const e of src.pipe(new MboxSplitter())) out.push(e);
    expect(plain(out)).toEqual(plain(await split(file)));
  });
});
