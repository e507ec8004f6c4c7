'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * Builds a small RFC 5322 message for tests.
 * @param {{from?: string, to?: string, cc?: string, subject?: string, date?: string, body?: string, headers?: string[], eol?: string}} o
 * @returns {Buffer}
 */
function msg(o = {}) {
  const eol = o.eol || '\n';
  const lines = [];
  if (o.from !== null) lines.push(`From: ${o.from || 'Alice Example <alice@example.org>'}`);
  if (o.to !== null) lines.push(`To: ${o.to || 'Bob <bob@example.net>'}`);
  if (o.cc) lines.push(`Cc: ${o.cc}`);
  if (o.subject !== null) lines.push(`Subject: ${o.subject || 'Hello'}`);
  if (o.date !== null) lines.push(`Date: ${o.date || 'Tue, 05 Mar 2002 10:00:00 +0000'}`);
  lines.push(...(o.headers || []));
  return Buffer.from(lines.join(eol) + eol + eol + (o.body ?? 'Hello there.' + eol));
}

/**
 * Concatenates messages into an mboxrd file (escaping `>*From ` lines, blank separator).
 * @param {Buffer[]} messages
 * @param {{sender?: string}} [o]
 * @returns {Buffer}
 */
function mboxOf(messages, o = {}) {
  const parts = [];
  messages.forEach((m, i) => {
    const day = String((i % 28) + 1).padStart(2, ' ');
    parts.push(
      Buffer.from(`From ${o.sender || 'alice@example.org'} Tue Mar ${day} 10:00:00 2002\n`),
    );
    parts.push(Buffer.from(m.toString('latin1').replace(/^(>*From )/gm, '>$1'), 'latin1'));
    if (m[m.length - 1] !== 0x0a) parts.push(Buffer.from('\n'));
    parts.push(Buffer.from('\n'));
  });
  return Buffer.concat(parts);
}

/**
 * Imports messages the way a test needs them before it looks at the store: written to `file`
 * as an mbox, imported in this process (no workers, no progress lines).
 * @param {import('@mailgate/store').PgStore} store
 * @param {string} file the mbox file to write
 * @param {{messages: Buffer[], user: string, mailbox?: string, batchSize?: number}} o
 *   messages, and the runImport options (user, mailbox, batchSize, …)
 */
function importMessages(store, file, { messages, ...opts }) {
  const { runImport } = require('@mailgate/importer');
  fs.writeFileSync(file, mboxOf(messages));
  return runImport({ store, kind: 'mbox', paths: [file], workers: 0, progress: false, ...opts });
}

/**
 * importMessages into the user's INBOX, then the user and that mailbox as the store has them:
 * the preamble of the store tests that look at one imported mailbox.
 * @param {import('@mailgate/store').PgStore} store
 * @param {string} file the mbox file to write
 * @param {Buffer[]} messages
 * @param {string} user
 * @returns {Promise<{user: object, inbox: object}>} the user row and the INBOX row
 */
async function importInbox(store, file, messages, user) {
  await importMessages(store, file, { messages, user, mailbox: 'INBOX' });
  const u = await store.getUser(user);
  return { user: u, inbox: await store.getMailbox(u.id, 'INBOX') };
}

/**
 * The same messages as one user's legacy mail, the folders `addLegacyUser` takes: `mboxDir`
 * (`<dir>/mbox/inbox.mbox`, mboxrd) and `maildir` (`<dir>/Maildir`, every message in cur/,
 * no flags).
 * @param {string} dir
 * @param {Buffer[]} messages
 * @returns {{mboxDir: string, maildir: string}}
 */
function legacyMailOf(dir, messages) {
  const { exportEntry } = require('@mailgate/readers');
  const mboxDir = path.join(dir, 'mbox');
  const maildir = path.join(dir, 'Maildir');
  fs.mkdirSync(mboxDir);
  fs.writeFileSync(
    path.join(mboxDir, 'inbox.mbox'),
    Buffer.concat(messages.map((m) => exportEntry(Buffer.from(m), 'mboxrd'))),
  );
  for (const d of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, d), { recursive: true });
  messages.forEach((m, i) =>
    fs.writeFileSync(path.join(maildir, 'cur', `${1000 + i}.x.host:2,`), m),
  );
  return { mboxDir, maildir };
}

module.exports = { msg, mboxOf, importMessages, importInbox, legacyMailOf };
