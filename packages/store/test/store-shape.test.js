'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { PgStore } = require('@mailgate/store');

/*
 * The store is plain modules per concern (functions taking the store first) and one class,
 * PgStore, whose methods hand this store to them (issue 31.1: no methods mixed into its
 * prototype). Two concerns once both defined `listUsers` and the later silently replaced the
 * earlier (`mailgate es verify` searched ES for user `undefined`): a name is now a class
 * member, defined once (eslint no-dupe-class-members), and each hand-off must reach a function
 * its module exports.
 */

const lib = path.join(__dirname, '..', 'lib');
const exported = new Set();
for (const f of fs.readdirSync(lib).filter((n) => n.endsWith('.js'))) {
  for (const [name, v] of Object.entries(require(path.join(lib, f))))
    if (typeof v === 'function') exported.add(name);
}
const methods = Object.getOwnPropertyNames(PgStore.prototype).filter((n) => n !== 'constructor');
const handOffs = methods
  .map((n) => [n, /return\s+\w+\.(\w+)\(this\b/.exec(PgStore.prototype[n].toString())])
  .filter(([, m]) => m);

test('the store loads with every concern under its own names', () => {
  for (const name of [
    'listUsers',
    'userSummaries',
    'deleteUser',
    'setFlags',
    'appendMessage',
    'addLoginFailure',
  ])
    expect(typeof PgStore.prototype[name]).toBe('function');
});

test('every method that hands off to a concern module reaches a function it exports', () => {
  expect(handOffs.length).toBeGreaterThan(50);
  expect(handOffs.filter(([, m]) => !exported.has(m[1])).map(([n]) => n)).toEqual([]);
  // A hand-off keeps the name: store.setFlags() is mail-ops setFlags().
  expect(handOffs.filter(([n, m]) => n !== m[1]).map(([n]) => n)).toEqual([]);
});

// PgStore keeps only its connection plumbing; the methods it once held itself live in the
// module of their concern and the class hands off to them (issue 31.1, the last step).
const MOVED = [
  'createUser',
  'getUser',
  'ensureUser',
  'ensureMailbox',
  'getMailbox',
  'listMailboxes',
  'scanList',
  'scanHeaders',
  'search',
  'checkQueryMailboxes',
  'streamSources',
  'lookupKeys',
  'startJob',
  'lockImportJob',
  'jobCheckpoint',
  'finishJob',
  'importBatch',
  'prepareBatch',
  'commitBatch',
  'mailboxNamesOf',
  'cleanGinPending',
  'rebuildGinIndexes',
  'ginIndexes',
  'userHasNoMail',
  'writeListSnapshot',
  'listQuarantine',
  'quarantineRaw',
  'quarantineEntries',
  'importSources',
  'analyzeUser',
  'vacuumUser',
];

test('users, mailboxes, scans, searches and import batches are concern modules, PgStore hands off to them', () => {
  const names = new Set(handOffs.map(([n]) => n));
  expect(MOVED.filter((n) => !names.has(n))).toEqual([]);
  // What is left in the class is the constructor's plumbing (the change feed) and hand-offs.
  const own = methods.filter((n) => !names.has(n));
  expect(own.sort()).toEqual(['closeMailboxChanges', 'mailboxChanges']);
});
