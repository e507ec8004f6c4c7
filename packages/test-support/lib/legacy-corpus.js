'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { exportEntry } = require('@mailgate/readers');

/**
 * Files of the Enron corpus in the brief's order (user, folder, file number as a number).
 * @param {string} root .../enron/maildir
 * @param {number} n
 * @returns {string[]}
 */
function corpusFiles(root, n, opts = {}) {
  const out = [];
  const cmp = (a, b) => {
    const na = /^\d+\.?$/.test(a) ? parseInt(a, 10) : NaN;
    const nb = /^\d+\.?$/.test(b) ? parseInt(b, 10) : NaN;
    if (!Number.isNaN(na) && !Number.isNaN(nb)) return na - nb;
    return a < b ? -1 : a > b ? 1 : 0;
  };
  const walk = (dir) => {
    for (const name of fs.readdirSync(dir).sort(cmp)) {
      if (out.length >= n) return;
      const p = path.join(dir, name);
      const st = fs.statSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && st.size > 0 && (!opts.accept || opts.accept(fs.readFileSync(p))))
        out.push(p);
    }
  };
  walk(root);
  return out;
}

/**
 * Builds the same messages as an mbox file (mboxrd) and as a Maildir (cur/, no flags).
 * @param {string} root corpus maildir root
 * @param {number} n messages
 * @param {string} out directory to create `mail/inbox.mbox` and `Maildir/` in
 * @param {{strictHeaders?: boolean}} [opts] strictHeaders: leave out messages whose header
 *   is not RFC 5322 clean (see strictHeader) — parsers legitimately disagree on those
 * @returns {{mboxDir: string, mbox: string, maildir: string, count: number}}
 */
function buildLegacyMail(root, n, out, opts = {}) {
  const mboxDir = path.join(out, 'mail');
  const maildir = path.join(out, 'Maildir');
  fs.mkdirSync(mboxDir, { recursive: true });
  for (const d of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, d), { recursive: true });
  const mbox = path.join(mboxDir, 'inbox.mbox');
  const fd = fs.openSync(mbox, 'w');
  const files = corpusFiles(root, n, opts.strictHeaders ? { accept: strictHeader } : {});
  const t0 = 1000000000;
  files.forEach((f, i) => {
    let raw = fs.readFileSync(f);
    // mbox cannot represent a missing final newline (readers README): give every copy one.
    if (raw[raw.length - 1] !== 10) raw = Buffer.concat([raw, Buffer.from('\n')]);
    fs.writeSync(fd, exportEntry(raw, 'mboxrd'));
    const name = `${t0 + i}.M${i}P1.corpus:2,`;
    const p = path.join(maildir, 'cur', name);
    fs.writeFileSync(p, raw);
    fs.utimesSync(p, t0 + i, t0 + i);
  });
  fs.closeSync(fd);
  return { mboxDir, mbox, maildir, count: files.length };
}

/**
 * True when the header block is RFC 5322 clean in the two ways the Enron corpus is not: the
 * message starts with an empty line (no header at all, strictly: mailgate's parser skips the
 * line, Dovecot does not), or a header line holds only white space (obsolete folding that
 * Dovecot reads as the end of the header).
 * @param {Buffer} raw
 */
function strictHeader(raw) {
  const s = raw.toString('latin1');
  if (/^\r?\n/.test(s)) return false;
  const end = s.search(/\r?\n\r?\n/);
  const head = end < 0 ? s : s.slice(0, end);
  return !/\n[ \t]+\r?(\n|$)/.test(head);
}

/**
 * Identity of a message across backends: Message-ID + sha256 of the body with CRLF made LF
 * (IMAP servers send CRLF, and Dovecot's mbox driver adds and hides Status/X-UID headers, so
 * whole-message bytes differ by path while the body does not).
 * @param {Buffer} raw
 * @param {string|null} messageId
 */
function messageKey(raw, messageId) {
  // Line ends, From_ quoting and trailing newlines depend on the path (IMAP sends CRLF; an
  // mbox driver may read mboxrd quoting as mboxo and pads the last line): compare without them.
  const s = raw.toString('latin1').replace(/\r\n/g, '\n');
  const i = s.indexOf('\n\n');
  const body = (i < 0 ? '' : s.slice(i + 2)).replace(/^>+From /gm, 'From ').replace(/\n+$/, '');
  return `${messageId}|${crypto.createHash('sha256').update(body, 'latin1').digest('hex').slice(0, 16)}`;
}

/**
 * Fresh copies of a built tree, one per path under test (expunges change the files).
 * @param {string} src the tree (buildLegacyMail's `out`)
 * @param {string} dir where the copies go
 * @returns {(name: string) => string} name → the copy's path
 */
function copier(src, dir) {
  return (name) => {
    const to = path.join(dir, name);
    fs.cpSync(src, to, { recursive: true, preserveTimestamps: true });
    return to;
  };
}

module.exports = { corpusFiles, buildLegacyMail, messageKey, strictHeader, copier };
