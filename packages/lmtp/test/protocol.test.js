'use strict';

const { LmtpFramer } = require('../lib/protocol/framer');
const { parseCommand, parsePath } = require('../lib/protocol/parser');
const { reply, outcomeReply } = require('../lib/protocol/replies');

/* The pure byte layer: framing of lines, DATA and BDAT, command syntax, reply text. */

/** Feeds bytes in the given pieces and collects items until the framer needs more. */
function drain(f) {
  const out = [];
  for (let it = f.next(); it; it = f.next()) out.push(it);
  return out;
}

describe('framer', () => {
  test('cuts command lines, CRLF or LF, across pushes', () => {
    const f = new LmtpFramer();
    f.push(Buffer.from('LHLO a\r\nMAIL FR'));
    expect(drain(f)).toEqual([{ type: 'line', text: 'LHLO a' }]);
    f.push(Buffer.from('OM:<>\nNOOP\r\n'));
    expect(drain(f)).toEqual([
      { type: 'line', text: 'MAIL FROM:<>' },
      { type: 'line', text: 'NOOP' },
    ]);
  });

  test('a line over maxLine is answered once and its rest dropped, without buffering it', () => {
    const f = new LmtpFramer({ maxLine: 16 });
    f.push(Buffer.from('X'.repeat(40)));
    expect(drain(f)).toEqual([{ type: 'toolong' }]);
    expect(f.buffered).toBe(0);
    f.push(Buffer.from('Y'.repeat(40)));
    expect(drain(f)).toEqual([]);
    f.push(Buffer.from('YY\r\nNOOP\r\n'));
    expect(drain(f)).toEqual([{ type: 'line', text: 'NOOP' }]);
  });

  test('DATA: dot-unstuffing, end only at CRLF.CRLF, bytes kept exactly, in any split', () => {
    const wire =
      'Subject: x\r\n\r\n..leading dot\r\n.\r\nnot the end\r\n\n.\r\nstill\r\n.\r\nNOOP\r\n';
    const want = 'Subject: x\r\n\r\n.leading dot\r\n';
    for (let step = 1; step <= wire.length; step++) {
      const f = new LmtpFramer();
      f.expectData();
      const items = [];
      for (let i = 0; i < wire.length; i += step) {
        f.push(Buffer.from(wire.slice(i, i + step)));
        items.push(...drain(f));
      }
      expect(f.takeMessage().raw.toString()).toBe(want);
      expect(items[0]).toEqual({ type: 'data' });
      // What follows the end marker is a command again (the rest of the wire here is text the
      // MTA would not send, but it shows the framer is back in line mode).
      expect(items.slice(1).map((x) => x.text)).toEqual([
        'not the end',
        '',
        '.',
        'still',
        '.',
        'NOOP',
      ]);
    }
  });

  test('DATA: a bare-LF dot line does not end the message (no smuggling)', () => {
    const f = new LmtpFramer();
    f.expectData();
    f.push(Buffer.from('a\n.\nb\r\n.\r\n'));
    expect(drain(f)).toEqual([{ type: 'data' }]);
    expect(f.takeMessage().raw.toString()).toBe('a\n\nb\r\n');
  });

  test('DATA over maxMessage: read to the end, kept nothing, size counted', () => {
    const f = new LmtpFramer({ maxMessage: 10 });
    f.expectData();
    f.push(Buffer.from('0123456789abcdef\r\nmore\r\n.\r\nNOOP\r\n'));
    expect(drain(f)).toEqual([{ type: 'data' }, { type: 'line', text: 'NOOP' }]);
    const m = f.takeMessage();
    expect(m.raw).toBeNull();
    expect(m.size).toBe(24);
  });

  test('BDAT chunks are taken byte-exact, dots and all', () => {
    const f = new LmtpFramer();
    f.expectChunk(5, true);
    f.push(Buffer.from('.\r\n.\r'));
    expect(drain(f)).toEqual([{ type: 'chunk' }]);
    f.expectChunk(3, false);
    f.push(Buffer.from('\nabNOOP\r\n'));
    expect(drain(f)).toEqual([{ type: 'chunk' }, { type: 'line', text: 'NOOP' }]);
    expect(f.takeMessage().raw.toString()).toBe('.\r\n.\r\nab');
  });
});

describe('parser', () => {
  test('verbs in any case', () => {
    expect(parseCommand('lhlo mx.example')).toEqual({ verb: 'LHLO', rest: 'mx.example' });
    expect(parseCommand('QUIT')).toEqual({ verb: 'QUIT', rest: '' });
  });

  test('paths and parameters', () => {
    expect(parsePath('FROM:<> SIZE=10 BODY=8BITMIME', 'FROM')).toEqual({
      address: '',
      params: new Map([
        ['SIZE', '10'],
        ['BODY', '8BITMIME'],
      ]),
    });
    expect(parsePath('to:<"a b>"@x>', 'TO').address).toBe('"a b>"@x');
    expect(parsePath('TO:<@relay:bob@x>', 'TO').address).toBe('bob@x');
    expect(() => parsePath('TO:bob@x', 'TO')).toThrow(SyntaxError);
    expect(() => parsePath('TO:<bob@x', 'TO')).toThrow(SyntaxError);
    expect(() => parsePath(`TO:<${'a'.repeat(600)}>`, 'TO')).toThrow('Address too long');
    expect(() => parsePath('TO:<a b@x>', 'TO')).toThrow('Invalid address');
  });
});

describe('replies', () => {
  test('multi-line and enhanced codes; no CR/LF injection', () => {
    expect(reply(250, null, ['h', 'PIPELINING'])).toBe('250-h\r\n250 PIPELINING\r\n');
    expect(reply(250, '2.0.0', 'a\r\nb')).toBe('250 2.0.0 a  b\r\n');
  });

  test('delivery outcomes', () => {
    expect(outcomeReply('stored', 'a@x')).toMatch(/^250 2\.0\.0 <a@x>/);
    expect(outcomeReply('nouser', 'a@x')).toMatch(/^550 5\.1\.1 /);
    expect(outcomeReply('migrating', 'a@x')).toMatch(/^451 4\.2\.1 /);
    expect(outcomeReply('tempfail', 'a@x')).toMatch(/^451 4\.3\.0 /);
    expect(outcomeReply('toobig', 'a@x')).toMatch(/^552 5\.3\.4 /);
    expect(outcomeReply('busy', 'a@x')).toMatch(/^451 4\.3\.2 <a@x> Too many relays/);
  });
});
