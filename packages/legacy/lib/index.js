'use strict';

/**
 * @mailgate/legacy — the flat-file side of mailgate behind the storage interface: direct
 * mbox and Maildir backends (the files themselves, as UW-IMAP and Courier served them) and a
 * legacy IMAP backend (an upstream server through imapflow). See README.md.
 */

const { MboxBackend } = require('./mbox');
const { MaildirBackend } = require('./maildir');
const { ImapBackend, connect, splitFetchedFlags } = require('./imap');
const { loadLegacyConfig, addLegacyUser, userEntry, configPath, relayTarget } = require('./config');
const { lockMailbox, readLock } = require('./lock');
const { pageRows } = require('./message');

const LEGACY_BACKENDS = Object.freeze(['mbox', 'maildir', 'imap']);

const imapCache = new Map();

/**
 * The backend of `kind` for a mailgate user, from $MAILGATE_HOME/legacy.json. IMAP backends
 * (and their connection pools) are kept per user and account until closeBackends().
 * @param {string} home MAILGATE_HOME
 * @param {string} user
 * @param {'mbox'|'maildir'|'imap'} kind
 * @param {{mboxLockWaitMs?: number}} [config] core config (the mbox lock wait)
 * @param {object} [logger] the process logger (the CLI's prints text for a person)
 * @returns {MboxBackend|MaildirBackend|ImapBackend}
 */
function openBackend(home, user, kind, config = {}, logger = undefined) {
  const e = userEntry(home, user, kind);
  if (kind === 'mbox') {
    return new MboxBackend(e.mboxDir, { lockWaitMs: config.mboxLockWaitMs, logger });
  }
  if (kind === 'maildir') return new MaildirBackend(e.maildir);
  const key = `${user}\0${JSON.stringify(e.imap)}`;
  if (!imapCache.has(key)) imapCache.set(key, new ImapBackend(e.imap));
  return imapCache.get(key);
}

/** Closes every pooled IMAP connection (server shutdown, CLI exit). */
async function closeBackends() {
  const all = [...imapCache.values()];
  imapCache.clear();
  await Promise.all(all.map((b) => b.close()));
}

module.exports = {
  LEGACY_BACKENDS,
  MboxBackend,
  MaildirBackend,
  ImapBackend,
  openBackend,
  closeBackends,
  connect,
  splitFetchedFlags,
  loadLegacyConfig,
  addLegacyUser,
  userEntry,
  configPath,
  relayTarget,
  lockMailbox,
  readLock,
  pageRows,
};
