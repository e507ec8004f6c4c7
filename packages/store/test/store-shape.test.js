'use strict';

const { PgStore } = require('@mailgate/store');
const { CONCERNS, compose } = require('../lib/pg-store');

/*
 * The store is plain modules per concern (functions taking the store first) composed onto one
 * class, PgStore, from one table (pg-store.js CONCERNS; issue 31.1). The class holds the
 * context (connection, caches, outbox flag, change feed) and nothing else; each operation is
 * its module's function, given the store first. Two concerns once both defined `listUsers` and
 * the later silently replaced the earlier (`mailgate es verify` searched ES for user
 * `undefined`): composing refuses a name defined twice, at load.
 */

const own = Object.getOwnPropertyNames(PgStore.prototype).filter(
  (n) => n !== 'constructor' && !PgStore.operations.has(n),
);

test('the class itself holds only its context plumbing; every other method is an operation', () => {
  expect(own.sort()).toEqual(['closeMailboxChanges', 'mailboxChanges']);
  expect(PgStore.operations.size).toBeGreaterThan(100);
});

test("each operation calls its concern module's function of the same name, the store first", async () => {
  const wrong = [];
  for (const [name, { concern, fn }] of PgStore.operations) {
    const [mod] = CONCERNS[concern];
    if (mod[name] !== fn) wrong.push(name);
  }
  expect(wrong).toEqual([]);
  // The store handed on, the arguments as given: a concern whose function echoes them.
  class Probe {}
  compose(Probe, { echo: [{ echo: (store, ...args) => [store, args] }, ['echo']] });
  const probe = new Probe();
  expect(probe.echo(1, 'two', { three: 3 })).toEqual([probe, [1, 'two', { three: 3 }]]);
  expect(Probe.prototype.echo.name).toBe('echo');
});

test('the operations the rest of the code calls are where they were, each in its concern', () => {
  const where = (n) => PgStore.operations.get(n)?.concern;
  expect(
    Object.fromEntries(
      [
        'getUser',
        'listMailboxes',
        'scanHeaders',
        'search',
        'setFlags',
        'appendMessage',
        'commitBatch',
        'listUsers',
        'addLoginFailure',
        'relationSizes',
      ].map((n) => [n, where(n)]),
    ),
  ).toEqual({
    getUser: 'users',
    listMailboxes: 'mailboxes',
    scanHeaders: 'scans',
    search: 'scans',
    setFlags: 'mail',
    appendMessage: 'appends',
    commitBatch: 'imports',
    listUsers: 'mirror',
    addLoginFailure: 'logins',
    relationSizes: 'disk',
  });
});

describe('composing refuses what once went wrong silently', () => {
  const ok = (store, x) => x;
  test('a name two concerns define', () => {
    class S {}
    expect(() =>
      compose(S, { a: [{ listUsers: ok }, ['listUsers']], b: [{ listUsers: ok }, ['listUsers']] }),
    ).toThrow('store operation listUsers: defined by a and b');
  });

  test('an operation the class already has by hand', () => {
    class S {
      listUsers() {
        return [];
      }
    }
    expect(() => compose(S, { mirror: [{ listUsers: ok }, ['listUsers']] })).toThrow(
      'store operation listUsers: defined by the class and mirror',
    );
  });

  test('an operation its module does not export', () => {
    class S {}
    expect(() => compose(S, { users: [{}, ['getUser']] })).toThrow(
      'store operation getUser: users does not export it',
    );
  });
});
