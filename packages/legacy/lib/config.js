'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { errors } = require('@mailgate/core');

/*
 * Where each user's legacy mail lives: `$MAILGATE_HOME/legacy.json`, written by
 * `mailgate legacy add-user` (mode 0600):
 *   { "users": { "alice": { "mboxDir": "/var/mail/alice", "maildir": "/home/alice/Maildir",
 *       "imap": { "host": "127.0.0.1", "port": 143, "login": "alice", "passwordEnv": "ALICE_PW",
 *                 "security": "starttls" },
 *       "relay": "lmtp://127.0.0.1:24" } } }
 * security: tls | starttls (the default, required) | plaintext (upstreamSecurity of
 * @mailgate/core; entries from before the setting hold `tls: true|false`, still honoured).
 * relay: the old server's delivery (LMTP or SMTP) for a user still routed to `proxy`: mail
 * delivered to mailgate for them is handed there until their cutover (@mailgate/service
 * delivery.js); without it such mail is deferred (451).
 * The file never holds an IMAP password, only the name of the environment variable that does:
 * secrets stay out of MAILGATE_HOME, and nothing here can log them.
 */

const FILE = 'legacy.json';

/** @param {string} home MAILGATE_HOME */
function configPath(home) {
  return path.join(home, FILE);
}

/**
 * @param {string} home
 * @returns {{users: Record<string, object>}}
 */
function loadLegacyConfig(home) {
  try {
    const c = JSON.parse(fs.readFileSync(configPath(home), 'utf8'));
    return { users: c.users || {} };
  } catch (err) {
    if (err.code === 'ENOENT') return { users: {} };
    throw new errors.CONFIG_INVALID(`${configPath(home)}: ${err.message}`);
  }
}

// The last file read by relayTarget, by path: a proxied user's every delivery asks for their
// entry, and a fleet's file holds one entry per account (tens of MB at 100,000 accounts).
const parsed = new Map();

/**
 * A user's `relay` (where their mail goes while they are on proxy), or null. The file is read
 * again only when its size or modification time changed since the last call.
 * @param {string} home
 * @param {string} user
 * @returns {string|null}
 */
function relayTarget(home, user) {
  const file = configPath(home);
  let st;
  try {
    st = fs.statSync(file);
  } catch (err) {
    if (err.code === 'ENOENT') return null;
    throw new errors.CONFIG_INVALID(`${file}: ${err.code}`);
  }
  const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
  let c = parsed.get(file);
  if (!c || c.stamp !== stamp) {
    c = { stamp, users: loadLegacyConfig(home).users };
    parsed.set(file, c);
  }
  const e = c.users[user];
  return (e && e.relay) || null;
}

/**
 * Adds or updates one user's entry (fields left undefined keep their old value).
 * @param {string} home
 * @param {string} user
 * @param {{mboxDir?: string, maildir?: string, imap?: object, relay?: string}} entry
 * @returns {object} the user's entry as stored
 */
function addLegacyUser(home, user, entry) {
  const c = loadLegacyConfig(home);
  const old = c.users[user] || {};
  const next = { ...old };
  if (entry.mboxDir) next.mboxDir = path.resolve(entry.mboxDir);
  if (entry.maildir) next.maildir = path.resolve(entry.maildir);
  if (entry.imap) next.imap = { ...(old.imap || {}), ...entry.imap };
  if (entry.relay) next.relay = entry.relay;
  c.users[user] = next;
  fs.mkdirSync(home, { recursive: true });
  const tmp = `${configPath(home)}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(c, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, configPath(home));
  return next;
}

/**
 * The user's entry, or LEGACY_NOT_CONFIGURED for the backend asked for.
 * @param {string} home
 * @param {string} user
 * @param {'mbox'|'maildir'|'imap'} kind
 */
function userEntry(home, user, kind) {
  const e = loadLegacyConfig(home).users[user] || {};
  const have = kind === 'mbox' ? e.mboxDir : kind === 'maildir' ? e.maildir : e.imap;
  if (!have) throw new errors.LEGACY_NOT_CONFIGURED(kind, user);
  return e;
}

module.exports = { loadLegacyConfig, addLegacyUser, userEntry, configPath, relayTarget };
