'use strict';

/*
 * The CLI's one error path (issue 11): `CODE: message` on stderr, stack traces only with
 * LOG_LEVEL=debug, with --json exactly one {"error":{code,message}} object on stdout, exit 2
 * for bad usage and bad queries, 1 for failures; a port in use is a coded error naming it.
 */

const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { useCliSuite } = require('@mailgate/test-support/db');
const { mboxOf, msg } = require('@mailgate/test-support/mail');
const { STACK, onlyError } = require('./error-output');

const suite = useCliSuite('cli-errors');

beforeAll(() => {
  const file = path.join(suite.tmp, 'inbox.mbox');
  fs.writeFileSync(file, mboxOf([msg({ subject: 'hello' })]));
  expect(suite.cli(['import', 'mbox', file, '--user', 'ann', '--quiet']).code).toBe(0);
});

test('bad usage: USAGE on stderr, exit 2, one error object with --json', () => {
  const r = suite.cli(['ls', '--json']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^USAGE: required option '--user <user>' not specified$/m);
  expect(onlyError(r)).toEqual({
    code: 'USAGE',
    message: "required option '--user <user>' not specified",
  });
  const unknown = suite.cli(['frobnicate']);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toMatch(/^USAGE: unknown command 'frobnicate'$/m);
  const badValue = suite.cli(['ls', '--user', 'ann', '--limit', '0', '--json']);
  expect(badValue.code).toBe(2);
  expect(onlyError(badValue).code).toBe('USAGE');
});

test('bad query: INVALID_QUERY, exit 2', () => {
  const r = suite.cli(['search', 'from:', '--user', 'ann', '--json']);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^INVALID_QUERY: /m);
  expect(onlyError(r).code).toBe('INVALID_QUERY');
});

test('failures: CODE: message, exit 1, no stack trace unless LOG_LEVEL=debug', () => {
  const r = suite.cli(['ls', '--user', 'nobody', '--json']);
  expect(r.code).toBe(1);
  expect(r.stderr).toMatch(/^USER_NOT_FOUND: No such user: nobody$/m);
  expect(r.stderr).not.toMatch(STACK);
  expect(onlyError(r)).toEqual({ code: 'USER_NOT_FOUND', message: 'No such user: nobody' });
  const human = suite.cli(['ls', '--user', 'ann', '--mailbox', 'Nope']);
  expect(human.code).toBe(1);
  expect(human.stdout).toBe('');
  expect(human.stderr).toMatch(/^MAILBOX_NOT_FOUND: No such mailbox: Nope$/m);
  const debug = suite.cli(['ls', '--user', 'nobody'], { env: { LOG_LEVEL: 'debug' } });
  expect(debug.code).toBe(1);
  expect(debug.stderr).toMatch(/^USER_NOT_FOUND: /m);
  expect(debug.stderr).toMatch(STACK);
});

test('serve on a port in use: PORT_IN_USE naming the port, no stack trace', async () => {
  const blocker = net.createServer();
  await new Promise((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address();
  try {
    const r = suite.cli(['serve'], { env: { PORT: String(port), HOST: '127.0.0.1' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^PORT_IN_USE: Port ${port} on 127.0.0.1 `, 'm'));
    expect(r.stderr).not.toMatch(STACK);
    expect(r.stdout).toBe('');
  } finally {
    await new Promise((resolve) => blocker.close(resolve));
  }
});
