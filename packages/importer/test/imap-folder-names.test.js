'use strict';

/*
 * Which mailbox an upstream IMAP folder becomes (imap-source.js mailboxForFolder): a
 * migration must keep the folder names a client knew through the proxy. A special use the
 * server declared (SPECIAL-USE / XLIST) maps to mailgate's canonical name; one imapflow only
 * guessed from the folder's name does not rename the folder. Found by the 137-account fleet
 * run: Dovecot without SPECIAL-USE served corman-s's `archives` (448 messages), which came out
 * as `Archive` while its child stayed `archives/old_messages`.
 */

const { mailboxForFolder } = require('../lib/imap-source');

test('a folder whose special use was only guessed from its name keeps its name', () => {
  expect(
    mailboxForFolder({
      path: 'archives',
      delimiter: '/',
      specialUse: '\\Archive',
      specialUseSource: 'name',
    }),
  ).toBe('archives');
  expect(
    mailboxForFolder({
      path: 'Sent Items',
      delimiter: '.',
      specialUse: '\\Sent',
      specialUseSource: 'name',
    }),
  ).toBe('Sent Items');
});

test('a special use the server declared maps to the canonical name', () => {
  expect(
    mailboxForFolder({
      path: 'Sent Items',
      delimiter: '.',
      specialUse: '\\Sent',
      specialUseSource: 'extension',
    }),
  ).toBe('Sent');
  expect(mailboxForFolder({ path: 'Archives', delimiter: '/', specialUse: '\\Archive' })).toBe(
    'Archive',
  );
});

test('INBOX in any case, and the delimiter made /', () => {
  expect(mailboxForFolder({ path: 'inbox', delimiter: '.' })).toBe('INBOX');
  expect(mailboxForFolder({ path: 'archives.old_messages', delimiter: '.' })).toBe(
    'archives/old_messages',
  );
});
