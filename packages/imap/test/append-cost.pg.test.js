'use strict';

const { msg } = require('@mailgate/test-support/mail');
const { statementsDuring } = require('@mailgate/test-support/db');
const { startPgServer } = require('./helpers');
const { RawClient } = require('./raw-client');

/*
 * What an APPEND, COPY and MOVE cost before their write (issue 32): the target mailbox is
 * checked by its own row, or not at all (APPEND: the append's statement resolves it), never by
 * listing every mailbox with its message counts (which grew with every message the user has).
 * A missing target is still NO [TRYCREATE].
 */

let env;
beforeAll(async () => {
  env = await startPgServer({ users: { ann: 'ann pw 123' } });
  const be = await env.service.openBackend('pg', 'ann');
  await be.createMailbox('INBOX');
  await be.createMailbox('Other');
  for (let i = 0; i < 5; i++) await be.append('Other', msg({ subject: `old ${i}` }), {});
});
afterAll(() => env && env.close());

/** The SQL statements a step runs. */
const statements = (step) => statementsDuring(env.service.store.knex, step);

// The listing of every mailbox with its counts (store listMailboxes); the background purge
// of a MOVE's source may run meanwhile and counts its own rows, which is not the check.
const listings = (sql) => sql.filter((q) => /count\(m\.uid\)|LEFT JOIN messages/i.test(q));

test('APPEND reads nothing before its write (no listing with counts); a missing target is TRYCREATE', async () => {
  const c = await RawClient.connect(env.port);
  await c.cmd('a', 'LOGIN ann "ann pw 123"');
  const m = msg({ subject: 'appended', eol: '\r\n' });
  const { result, sql } = await statements(async () => {
    c.write(`b APPEND INBOX (\\Seen) {${m.length}+}\r\n`);
    c.write(m);
    c.write('\r\n');
    return c.waitFor(/^b (OK|NO|BAD)[^\r\n]*\r\n/m);
  });
  expect(result).toMatch(/^b OK \[APPENDUID \d+ 1\] APPEND completed/m);
  expect(listings(sql)).toEqual([]);
  // No mailbox is read before the write's transaction (the store resolves the name in it).
  const begin = sql.findIndex((q) => /^BEGIN/i.test(q));
  expect(begin).toBeGreaterThanOrEqual(0);
  expect(sql.slice(0, begin).filter((q) => /mailboxes/i.test(q))).toEqual([]);
  c.write(`c APPEND Nope {${m.length}+}\r\n`);
  c.write(m);
  c.write('\r\n');
  expect(await c.waitFor(/^c (OK|NO|BAD)[^\r\n]*\r\n/m)).toMatch(/^c NO \[TRYCREATE\]/m);
  c.close();
});

test('COPY and MOVE check the target by its row; a missing one is TRYCREATE', async () => {
  const c = await RawClient.connect(env.port);
  await c.cmd('a', 'LOGIN ann "ann pw 123"');
  await c.cmd('b', 'SELECT Other');
  const copy = await statements(() => c.cmd('c', 'UID COPY 1:2 INBOX'));
  expect(copy.result).toMatch(/^c OK \[COPYUID /m);
  expect(listings(copy.sql)).toEqual([]);
  const move = await statements(() => c.cmd('d', 'UID MOVE 3 INBOX'));
  expect(move.result).toMatch(/^d OK /m);
  expect(listings(move.sql)).toEqual([]);
  expect(await c.cmd('e', 'UID COPY 1 Nope')).toMatch(/^e NO \[TRYCREATE\]/m);
  expect(await c.cmd('f', 'UID MOVE 1 Nope')).toMatch(/^f NO \[TRYCREATE\]/m);
  c.close();
});
