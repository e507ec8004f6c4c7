'use strict';

/*
 * Issue 29.8: a symbolic link inside a user's legacy mbox folder was never listed, but was
 * served when named directly (scan, fetch), so a link to another user's mbox or to any file
 * in mbox format exposed it. Links, and paths through linked folders, are no mailbox.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { MboxBackend } = require('../lib/mbox');
const { msg, legacyMailOf } = require('@mailgate/test-support/mail');

let root;
let mine;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-mbox-symlink-'));
  fs.mkdirSync(path.join(root, 'me'));
  fs.mkdirSync(path.join(root, 'other'));
  mine = legacyMailOf(path.join(root, 'me'), [msg({ subject: 'mine' })]).mboxDir;
  const theirs = legacyMailOf(path.join(root, 'other'), [msg({ subject: 'secret' })]).mboxDir;
  fs.mkdirSync(path.join(mine, 'sub'));
  fs.copyFileSync(path.join(mine, 'inbox.mbox'), path.join(mine, 'sub', 'real'));
  fs.symlinkSync(path.join(theirs, 'inbox.mbox'), path.join(mine, 'stolen'));
  fs.symlinkSync(theirs, path.join(mine, 'linkdir'));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

test('links are neither listed nor served when named directly; real folders still are', async () => {
  const be = new MboxBackend(mine);
  const names = (await be.listMailboxes()).map((b) => b.name);
  expect(names).toEqual(['INBOX', 'sub/real']);
  for (const name of ['stolen', 'linkdir/inbox.mbox']) {
    await expect(be.scanHeaders(name)).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
    await expect(be.getMessage(name, 1)).rejects.toMatchObject({ code: 'MAILBOX_NOT_FOUND' });
  }
  const rows = await be.scanHeaders('sub/real');
  expect(rows.map((r) => r.subject)).toEqual(['mine']);
});

test('an INBOX that is a link is no mailbox either', async () => {
  const dir = path.join(root, 'inbox-link');
  fs.mkdirSync(dir);
  fs.symlinkSync(path.join(root, 'other', 'mbox', 'inbox.mbox'), path.join(dir, 'inbox.mbox'));
  await expect(new MboxBackend(dir).scanHeaders('INBOX')).rejects.toMatchObject({
    code: 'MAILBOX_NOT_FOUND',
  });
});
