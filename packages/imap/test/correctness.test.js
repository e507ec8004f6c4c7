'use strict';

/*
 * Issue 28 items 4, 5, 9 and issue 30 item 13 on the wire, against an in-memory service:
 * sections of message/rfc822 parts, ENVELOPE of groups and repeated address fields, `[` `]`
 * in mailbox-name atoms, and CREATE with extra arguments. Expected bytes are what Dovecot 2.3
 * answered for the same messages (messages stored with CRLF here, so the bytes compare
 * exactly whatever the line-end handling).
 */

const { createImapServer } = require('../lib');
const { MemoryService } = require('./memory-service');
const { RawClient } = require('./raw-client');

const crlf = (lines) => lines.join('\r\n');

const GROUPS = crlf([
  'From: a@example.org',
  'To: b@example.org',
  'Cc: group:;, group2: (foo) ;',
  'Cc: second@example.org, "Second, Two" <two@example.net>',
  'Subject: groups',
  'Message-ID: <g1@x>',
  '',
  'body one',
  '',
]);

const COMMENTS = crlf([
  'From: <user-from (comment)@ (comment) domain.org>',
  'To: undisclosed-recipients:;',
  'Cc: Team: alice@example.org, "Bob B" <bob@example.org>;, carol@example.org (Carol C)',
  'Bcc: foo, <@r1,@r2:u@h>, (only comment) z@z, a@b (c1) (c2), <>',
  'Subject: comments',
  '',
  'x',
  '',
]);

const INNER = crlf([
  'From: fwd@example.org',
  'Subject: the fwd',
  'Content-Type: text/plain',
  '',
  'forwarded body',
  '',
]);
const OUTER_HEADER = crlf(['From: x@example.org', 'Subject: forwarded', 'MIME-Version: 1.0']);
const FORWARD = `${OUTER_HEADER}\r\nContent-Type: message/rfc822\r\n\r\n${INNER}`;

const NESTED = crlf([
  'From: y@example.org',
  'Subject: nested',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="b1"',
  '',
  '--b1',
  'Content-Type: text/plain',
  '',
  'first part',
  '--b1',
  'Content-Type: message/rfc822',
  '',
  'From: inner@example.org',
  'Subject: inner message',
  'Content-Type: multipart/alternative; boundary="b2"',
  '',
  '--b2',
  'Content-Type: text/plain',
  '',
  'inner plain',
  '--b2',
  'Content-Type: text/html',
  '',
  '<p>inner html</p>',
  '--b2--',
  '',
  '--b1--',
  '',
]);

// The inner multipart's close delimiter line is followed at once by the outer delimiter.
const TIGHT = NESTED.replace('--b2--\r\n\r\n--b1--', '--b2--\r\n--b1--');

let server;
let port;
let c;

beforeAll(async () => {
  const service = new MemoryService();
  await service.addUser('alice', 'secret one');
  const be = await service.openBackend('memory', 'alice');
  for (const m of [GROUPS, COMMENTS, FORWARD, NESTED, TIGHT]) {
    await be.append('INBOX', Buffer.from(m), {});
  }
  await be.createMailbox('a[b]');
  server = createImapServer({ service, limits: { idlePollMs: 50 } });
  ({ port } = await server.listen({ port: 0 }));
  c = await RawClient.connect(port);
  await c.cmd('l', 'LOGIN alice "secret one"');
  await c.cmd('s', 'EXAMINE INBOX');
});

afterAll(async () => {
  c.close();
  await server.close();
});

/** `NAME {n}\r\nbytes` of a FETCH answer, as text. */
function literalOf(text, name) {
  const at = text.indexOf(`${name} {`);
  if (at < 0) return `(${name} missing in ${text.slice(0, 300)})`;
  const m = /\{(\d+)\}\r\n/.exec(text.slice(at));
  const start = at + m.index + m[0].length;
  return text.slice(start, start + Number(m[1]));
}

describe('ENVELOPE addresses (RFC 3501 7.4.2, RFC 5322 3.4), as Dovecot', () => {
  test('groups have start and end markers, a comment in a group is no address, two Cc lines both count', async () => {
    const r = await c.cmd('e1', 'FETCH 1 ENVELOPE');
    expect(r).toContain(
      '((NIL NIL "group" NIL) (NIL NIL NIL NIL) (NIL NIL "group2" NIL) (NIL NIL NIL NIL)' +
        ' (NIL NIL "second" "example.org") ("Second, Two" NIL "two" "example.net"))',
    );
    expect(r).not.toContain('"foo"');
  });

  test('comments inside an addr-spec are dropped; a trailing comment names a bare address', async () => {
    const r = await c.cmd('e2', 'FETCH 2 ENVELOPE');
    expect(r).toContain('((NIL NIL "user-from" "domain.org"))');
    expect(r).toContain('((NIL NIL "undisclosed-recipients" NIL) (NIL NIL NIL NIL))');
    expect(r).toContain(
      '((NIL NIL "Team" NIL) (NIL NIL "alice" "example.org") ("Bob B" NIL "bob" "example.org")' +
        ' (NIL NIL NIL NIL) ("Carol C" NIL "carol" "example.org"))',
    );
    expect(r).toContain(
      '((NIL NIL "foo" "MISSING_DOMAIN") (NIL "@r1,@r2" "u" "h") (NIL NIL "z" "z")' +
        ' ("c2" NIL "a" "b") (NIL NIL "MISSING_MAILBOX" "MISSING_DOMAIN"))',
    );
  });
});

describe('sections of message/rfc822 parts (RFC 3501 6.4.5), as Dovecot', () => {
  test('a message whose body is message/rfc822: [1] is the encapsulated message', async () => {
    const r = await c.cmd(
      'f1',
      'FETCH 3 (BODY[1] BODY[1.HEADER] BODY[1.TEXT] BODY[1.MIME] BODY[1.1] BODY[1.1.MIME] BODY[1.1.HEADER] BODY[1.2])',
    );
    expect(literalOf(r, 'BODY[1]')).toBe(INNER);
    expect(literalOf(r, 'BODY[1.HEADER]')).toBe(INNER.slice(0, INNER.indexOf('\r\n\r\n') + 4));
    expect(literalOf(r, 'BODY[1.TEXT]')).toBe('forwarded body\r\n');
    // MIME of part 1 of a non-multipart message is the message's header.
    expect(literalOf(r, 'BODY[1.MIME]')).toBe(FORWARD.slice(0, FORWARD.indexOf('\r\n\r\n') + 4));
    expect(literalOf(r, 'BODY[1.1]')).toBe('forwarded body\r\n');
    expect(literalOf(r, 'BODY[1.1.MIME]')).toBe(INNER.slice(0, INNER.indexOf('\r\n\r\n') + 4));
    // No such part, or HEADER of a part that is no message: empty, as Dovecot.
    expect(r).toContain('BODY[1.1.HEADER] {0}\r\n');
    expect(r).toContain('BODY[1.2] {0}\r\n');
  });

  test('a message/rfc822 part of a multipart: its message, header, text and inner parts', async () => {
    const r = await c.cmd(
      'f2',
      'FETCH 4 (BODY[2] BODY[2.HEADER] BODY[2.MIME] BODY[2.1] BODY[2.2] BODY[2.1.MIME] BODY[1.1] BODY[1.TEXT] BODY[3] BODY[2.HEADER.FIELDS (SUBJECT)])',
    );
    const inner = NESTED.slice(NESTED.indexOf('From: inner'), NESTED.indexOf('\r\n--b1--'));
    expect(literalOf(r, 'BODY[2]')).toBe(inner);
    expect(literalOf(r, 'BODY[2.HEADER]')).toBe(inner.slice(0, inner.indexOf('\r\n\r\n') + 4));
    expect(literalOf(r, 'BODY[2.MIME]')).toBe('Content-Type: message/rfc822\r\n\r\n');
    expect(literalOf(r, 'BODY[2.1]')).toBe('inner plain');
    expect(literalOf(r, 'BODY[2.2]')).toBe('<p>inner html</p>');
    expect(literalOf(r, 'BODY[2.1.MIME]')).toBe('Content-Type: text/plain\r\n\r\n');
    // Part N.1 of a leaf part inside a multipart is the part itself (Dovecot).
    expect(literalOf(r, 'BODY[1.1]')).toBe('first part');
    expect(r).toContain('BODY[1.TEXT] {0}\r\n');
    expect(r).toContain('BODY[3] {0}\r\n');
    expect(literalOf(r, 'BODY[2.HEADER.FIELDS (SUBJECT)]')).toBe('Subject: inner message\r\n\r\n');
  });
});

test('a part ending with its own close delimiter line keeps that line end (Dovecot)', async () => {
  const r = await c.cmd('f3', 'FETCH 5 (BODY[2] BODY[2.TEXT] BODYSTRUCTURE)');
  const inner = TIGHT.slice(TIGHT.indexOf('From: inner'), TIGHT.indexOf('--b1--'));
  expect(inner.endsWith('--b2--\r\n')).toBe(true);
  expect(literalOf(r, 'BODY[2]')).toBe(inner);
  expect(literalOf(r, 'BODY[2.TEXT]')).toBe(inner.slice(inner.indexOf('\r\n\r\n') + 4));
  expect(r).toContain(`("message" "rfc822" NIL NIL NIL "7bit" ${inner.length} `);
});

describe('mailbox names and extra arguments', () => {
  test('[ and ] are atom characters in a mailbox name; an unknown or invalid name is NO', async () => {
    expect(await c.cmd('n1', 'STATUS a[b] (MESSAGES)')).toMatch(
      /^\* STATUS "?a\[b\]"? \(MESSAGES 0\)\r\nn1 OK/m,
    );
    expect(await c.cmd('n2', "SELECT !#$&'+,-.0123456789:;<=>?@^_`|[}")).toMatch(/^n2 NO /m);
    expect(await c.cmd('n3', 'SELECT x[y')).toMatch(/^n3 NO /m);
    // Sections still take spaces inside their brackets.
    expect(await c.cmd('n4', 'SELECT INBOX')).toMatch(/^n4 OK/m);
    expect(await c.cmd('n5', 'FETCH 1 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])')).toContain(
      'Subject: groups\r\n\r\n',
    );
  });

  test('CREATE with a second name answers BAD and creates nothing', async () => {
    expect(await c.cmd('c1', 'CREATE Foo Bar/Baz')).toMatch(/^c1 BAD /m);
    expect(await c.cmd('c2', 'LIST "" Foo')).not.toMatch(/^\* LIST/m);
    expect(await c.cmd('c3', 'CREATE Foo2 (USE (\\Sent))')).toMatch(/^c3 (OK|NO)/m);
  });
});
