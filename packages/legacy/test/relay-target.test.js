'use strict';

/*
 * A proxied user's relay target from legacy.json (relayTarget): asked on every delivery, so the
 * file is parsed again only when it changed; a change made by `legacy add-user` (a new file
 * renamed over the old one) is seen at once.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { addLegacyUser, relayTarget, configPath } = require('../lib');

let home;
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-relay-target-'));
});
afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

test('no file, no entry, no relay: null', () => {
  expect(relayTarget(home, 'pat')).toBeNull();
  addLegacyUser(home, 'pat', { maildir: '/srv/mail/pat' });
  expect(relayTarget(home, 'pat')).toBeNull();
  expect(relayTarget(home, 'sam')).toBeNull();
});

test('an entry written after the first read is seen, and a replaced one too', () => {
  addLegacyUser(home, 'pat', { relay: 'lmtp://old.example:24' });
  expect(relayTarget(home, 'pat')).toBe('lmtp://old.example:24');
  addLegacyUser(home, 'sam', { relay: 'smtp://mx.old.example:25' });
  expect(relayTarget(home, 'sam')).toBe('smtp://mx.old.example:25');
  addLegacyUser(home, 'pat', { relay: 'lmtp://new.example:24' });
  expect(relayTarget(home, 'pat')).toBe('lmtp://new.example:24');
  // The other fields of the entry are kept beside it.
  addLegacyUser(home, 'pat', { maildir: '/srv/mail/pat' });
  expect(JSON.parse(fs.readFileSync(configPath(home), 'utf8')).users.pat).toEqual({
    relay: 'lmtp://new.example:24',
    maildir: '/srv/mail/pat',
  });
  expect(relayTarget(home, 'pat')).toBe('lmtp://new.example:24');
});
