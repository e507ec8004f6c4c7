'use strict';

/*
 * Accounts from the CLI (issue 30.8, 29.7, 29.6): `user list`, `user delete NAME --yes` with
 * its mail, an import that finds no mail leaves no new empty user, `user passwd` revokes the
 * user's API tokens, `token revoke --user` revokes them all, and a mailbox name with a `..`
 * segment or a control character is refused at import with INVALID_MAILBOX_NAME.
 */

const fs = require('node:fs');
const path = require('node:path');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { msg, mboxOf } = require('@mailgate/test-support/mail');

const suite = useServiceSuite('cli-accounts');
const cli = (args, env) => suite.cli(args, env ? { env } : {});
const PW = { NEW_PW: 'a new password 1' };

let inbox;
beforeAll(() => {
  inbox = path.join(suite.tmp, 'inbox.mbox');
  fs.writeFileSync(inbox, mboxOf([msg({ subject: 'one' }), msg({ subject: 'two' })]));
  expect(cli(['import', 'mbox', inbox, '--user', 'alice', '--quiet']).code).toBe(0);
  expect(cli(['import', 'mbox', inbox, '--user', 'bob', '--quiet']).code).toBe(0);
});

const userNames = () => cli(['user', 'list', '--json']).json.users.map((u) => u.name);
const liveTokens = async (name) => {
  const u = await suite.service.store.getUser(name);
  const r = await suite.db.knex('api_tokens').where({ user_id: u.id }).whereNull('revoked_at');
  return r.length;
};

test('user list: names, password set or not, counts', () => {
  const r = cli(['user', 'list', '--json']);
  expect(r.code).toBe(0);
  expect(r.json.users.find((u) => u.name === 'alice')).toMatchObject({
    name: 'alice',
    hasPassword: false,
    route: 'store',
    mailboxes: 1,
    messages: 2,
  });
  const human = cli(['user', 'list']);
  expect(human.stdout).toMatch(/^alice\s+NO \(user passwd\)/m);
});

test('an import that finds no mail leaves no new empty user', () => {
  const empty = path.join(suite.tmp, 'empty-dir');
  fs.mkdirSync(empty);
  fs.writeFileSync(path.join(empty, 'notes.txt'), 'not mail\n');
  const r = cli(['import', 'mh', empty, '--user', 'ghost', '--json']);
  expect(r.code).toBe(0);
  expect(r.json.warnings.map((w) => w.code)).toContain('NO_MAIL_FOUND');
  expect(userNames()).not.toContain('ghost');
  // an existing user stays
  expect(cli(['import', 'mh', empty, '--user', 'bob', '--json']).code).toBe(0);
  expect(userNames()).toContain('bob');
});

test('user delete needs --yes, then removes the user and all their mail', async () => {
  const no = cli(['user', 'delete', 'bob']);
  expect(no.code).toBe(2);
  expect(no.stderr).toMatch(/^USAGE: .*--yes/m);
  expect(userNames()).toContain('bob');
  const knex = suite.db.knex;
  const bobId = (await suite.service.store.getUser('bob')).id;
  const partitions = async () =>
    (
      await knex('pg_class')
        .whereIn(
          'relname',
          ['messages', 'message_words', 'message_chunks', 'message_sources', 'quarantine'].map(
            (t) => `${t}_u${bobId}`,
          ),
        )
        .select('relname')
    ).length;
  expect(await partitions()).toBe(5);
  const r = cli(['user', 'delete', 'bob', '--yes', '--json']);
  expect(r.code).toBe(0);
  expect(r.json).toEqual({ name: 'bob', messages: 2, mailboxes: 1 });
  expect(userNames()).not.toContain('bob');
  expect(await partitions()).toBe(0);
  expect(await knex('mailboxes').where({ user_id: bobId })).toEqual([]);
  expect(await knex('import_jobs').where({ user_id: bobId })).toEqual([]);
  const again = cli(['user', 'delete', 'bob', '--yes', '--json']);
  expect({ code: again.code, error: again.json.error.code }).toEqual({
    code: 1,
    error: 'USER_NOT_FOUND',
  });
  // and the same name can be imported again from scratch
  expect(cli(['import', 'mbox', inbox, '--user', 'bob', '--json']).json.imported).toBe(2);
});

test('user passwd revokes the API tokens; token revoke --user revokes them all', async () => {
  for (let i = 0; i < 2; i++) expect(cli(['token', 'create', 'alice']).code).toBe(0);
  expect(await liveTokens('alice')).toBe(2);
  const r = cli(['user', 'passwd', 'alice', '--password-env', 'NEW_PW', '--json'], PW);
  expect(r.code).toBe(0);
  expect(r.json).toMatchObject({ name: 'alice', replaced: false, revokedTokens: 2 });
  expect(await liveTokens('alice')).toBe(0);
  for (let i = 0; i < 3; i++) expect(cli(['token', 'create', 'alice']).code).toBe(0);
  const rv = cli(['token', 'revoke', '--user', 'alice', '--json']);
  expect(rv.json).toEqual({ user: 'alice', revoked: 3 });
  expect(await liveTokens('alice')).toBe(0);
  const none = cli(['token', 'revoke', '--user', 'nobody', '--json']);
  expect(none.json.error.code).toBe('USER_NOT_FOUND');
});

test('a mailbox name with a ".." segment or a control character is refused at import', () => {
  for (const name of ['../escape', 'a/../../b', 'tab\there']) {
    const r = cli(['import', 'mbox', inbox, '--user', 'alice', '--mailbox', name, '--json']);
    expect({ name, code: r.code, error: r.json.error.code }).toEqual({
      name,
      code: 1,
      error: 'INVALID_MAILBOX_NAME',
    });
  }
  const names = cli(['ls', '--user', 'alice', '--json']).json.mailboxes.map((m) => m.name);
  expect(names).toEqual(['INBOX']);
});
