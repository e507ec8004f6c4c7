'use strict';

const { CommandFramer } = require('../lib/protocol/framer');
const { parseCommand, ParseError } = require('../lib/protocol/parser');

const feedAll = (framer, text) => framer.feed(Buffer.from(text, 'latin1'));
const commandsOf = (events) =>
  events.filter((e) => e.type === 'command').map((e) => parseCommand(e.parts));

describe('framer', () => {
  test('splits pipelined commands and accepts LF-only line ends', () => {
    const f = new CommandFramer();
    const cmds = commandsOf(feedAll(f, 'a1 NOOP\r\na2 CAPABILITY\nA3 logout\r\n'));
    expect(cmds.map((c) => [c.tag, c.name])).toEqual([
      ['a1', 'NOOP'],
      ['a2', 'CAPABILITY'],
      ['A3', 'LOGOUT'],
    ]);
  });

  test('a command split at every byte boundary parses the same', () => {
    const text = 'x1 LOGIN {5}\r\nal ce "pa\\"ss"\r\n';
    const f = new CommandFramer();
    const events = [];
    for (const b of Buffer.from(text)) events.push(...f.feed(Buffer.from([b])));
    expect(events.filter((e) => e.type === 'continue')).toHaveLength(1);
    const [cmd] = commandsOf(events);
    expect(cmd.args.map((a) => a.type)).toEqual(['literal', 'string']);
    expect(cmd.args[0].value.toString()).toBe('al ce');
    expect(cmd.args[1].value).toBe('pa"ss');
  });

  test('LITERAL+ needs no continuation; literals keep bytes exactly (CR, LF, NUL, 8-bit)', () => {
    const body = Buffer.from([0x41, 0x0d, 0x0a, 0x00, 0xff, 0x7b, 0x33, 0x7d]);
    const f = new CommandFramer();
    const events = [
      ...f.feed(Buffer.from(`t APPEND INBOX (\\Seen) {${body.length}+}\r\n`)),
      ...f.feed(body),
      ...f.feed(Buffer.from('\r\n')),
    ];
    expect(events.some((e) => e.type === 'continue')).toBe(false);
    const [cmd] = commandsOf(events);
    expect(cmd.args[2].type).toBe('literal');
    expect(Buffer.compare(cmd.args[2].value, body)).toBe(0);
    expect(cmd.args[1]).toEqual({ type: 'list', value: [{ type: 'atom', value: '\\Seen' }] });
  });

  test('zero-length literal', () => {
    const f = new CommandFramer();
    const [cmd] = commandsOf(feedAll(f, 'a LOGIN {0}\r\n {3}\r\nabc\r\n'));
    expect(cmd.args[0].value.length).toBe(0);
    expect(cmd.args[1].value.toString()).toBe('abc');
  });

  test('an over-long line is refused once and the stream resynchronises', () => {
    const f = new CommandFramer({ maxLine: 100 });
    const events = [
      ...feedAll(f, 'big1 NOOP ' + 'x'.repeat(150)),
      ...feedAll(f, 'y'.repeat(500)),
      ...feedAll(f, '\r\nok1 NOOP\r\n'),
    ];
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ tag: 'big1', reason: 'line-too-long' });
    expect(commandsOf(events).map((c) => c.tag)).toEqual(['ok1']);
  });

  test('a synchronizing literal over the limit is refused without continuation', () => {
    const f = new CommandFramer({ maxLiteral: 10 });
    const events = feedAll(f, 'ap APPEND INBOX {11}\r\nnext NOOP\r\n');
    expect(events.map((e) => e.type)).toEqual(['error', 'command']);
    expect(events[0]).toMatchObject({ tag: 'ap', reason: 'literal-too-large' });
  });

  test('a non-synchronizing literal over the limit is fatal (RFC 7888 4)', () => {
    const f = new CommandFramer({ maxLiteral: 10 });
    const events = feedAll(f, 'ap APPEND INBOX {999999+}\r\n');
    expect(events.map((e) => e.type)).toEqual(['fatal']);
  });

  test('a non-synchronizing literal over the command limit is read and dropped', () => {
    const f = new CommandFramer({ maxLiteral: 100, maxCommand: 50 });
    const events = feedAll(f, `ap APPEND INBOX {60+}\r\n${'z'.repeat(60)}\r\nn2 NOOP\r\n`);
    expect(events.map((e) => e.type)).toEqual(['error', 'command']);
    expect(parseCommand(events[1].parts).tag).toBe('n2');
  });
});

describe('parser', () => {
  const parse = (line) => parseCommand([line]);

  test('nested lists, NIL, quoted escapes', () => {
    const c = parse('a SEARCH OR (FROM "a\\\\b" NOT SEEN) (TO x) NIL');
    expect(c.name).toBe('SEARCH');
    expect(c.args[0]).toEqual({ type: 'atom', value: 'OR' });
    expect(c.args[1].value[1]).toEqual({ type: 'string', value: 'a\\b' });
    expect(c.args[1].value[2].value).toBe('NOT');
    expect(c.args[3]).toEqual({ type: 'atom', value: 'NIL' });
  });

  test('FETCH section specs stay one atom, spaces and parentheses included', () => {
    const c = parse('f1 UID FETCH 1:* (UID BODY.PEEK[HEADER.FIELDS (FROM TO)]<0.100> FLAGS)');
    expect(c.args[2].value.map((t) => t.value)).toEqual([
      'UID',
      'BODY.PEEK[HEADER.FIELDS (FROM TO)]<0.100>',
      'FLAGS',
    ]);
  });

  test('quoted strings are UTF-8', () => {
    const c = parseCommand([
      Buffer.from('s SEARCH CHARSET UTF-8 SUBJECT "Grüße"').toString('latin1'),
    ]);
    expect(c.args[3].value).toBe('Grüße');
  });

  test.each([
    ['', 'Missing or invalid tag'],
    ['+abc NOOP', 'Missing or invalid tag'],
    ['tag', 'Missing command'],
    ['t1 LOGIN "unterminated', 'Unterminated quoted string'],
    ['t1 LOGIN "bad \\x escape"', 'Invalid escape in quoted string'],
    ['t1 FETCH 1 (FLAGS', 'Unterminated list'],
    ['t1 FETCH 1 FLAGS)', 'Unexpected )'],
    ['t1 FETCH 1 BODY[HEADER', 'Unterminated ['],
    ['t1 APPEND x {5}', 'Invalid literal'],
  ])('%j is a ParseError (%s)', (line, message) => {
    expect(() => parse(line)).toThrow(ParseError);
    expect(() => parse(line)).toThrow(message);
  });

  test('the tag of a bad command is kept for the tagged BAD', () => {
    try {
      parse('t9 FETCH 1 (FLAGS');
      throw new Error('no error');
    } catch (err) {
      expect(err.tag).toBe('t9');
    }
  });

  test('deep nesting is refused, not a stack overflow', () => {
    expect(() => parse('t SEARCH ' + '('.repeat(10000) + ')'.repeat(10000))).toThrow(
      'Too deeply nested',
    );
  });

  test('too many tokens are refused', () => {
    expect(() => parse('t SEARCH ' + 'A '.repeat(100001))).toThrow('Too many arguments');
  });
});
