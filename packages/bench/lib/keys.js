'use strict';

const crypto = require('node:crypto');

/*
 * Result sets are compared across backends by message identity, never by uid: each backend
 * numbers messages its own way (and re-numbers after an expunge is restored). The identity is
 * the Message-ID plus a hash of the body, normalised for what a faithful store may change:
 * CRLF vs LF, `>From ` quoting at any depth (Dovecot's mbox driver serves an mboxrd file's
 * `>>From ` as stored, a Maildir serves the original `>From `), trailing blank lines (mbox
 * export adds one). Headers are left out of the hash because servers add or hide their own
 * (Status, X-UID, Content-Length).
 */

/**
 * Splits a raw message into its header block (text) and body (Buffer).
 * @param {Buffer} raw
 * @returns {{header: string, body: Buffer}}
 */
function splitMessage(raw) {
  let end = -1;
  let skip = 0;
  for (let i = 0; i < raw.length - 1; i++) {
    if (raw[i] !== 0x0a) continue;
    if (raw[i + 1] === 0x0a) {
      end = i + 1;
      skip = 1;
      break;
    }
    if (raw[i + 1] === 0x0d && raw[i + 2] === 0x0a) {
      end = i + 1;
      skip = 2;
      break;
    }
  }
  if (end < 0) return { header: raw.toString('latin1'), body: Buffer.alloc(0) };
  return { header: raw.subarray(0, end).toString('latin1'), body: raw.subarray(end + skip) };
}

/**
 * Unfolded header fields, names lowercased; the first occurrence of a name wins.
 * @param {string} header
 * @returns {Map<string, string>}
 */
function headerFields(header) {
  const out = new Map();
  const unfolded = header.replace(/\r?\n[ \t]+/g, ' ');
  for (const line of unfolded.split(/\r?\n/)) {
    const m = /^([!-9;-~]+):[ \t]*(.*)$/.exec(line);
    if (m && !out.has(m[1].toLowerCase())) out.set(m[1].toLowerCase(), m[2].trim());
  }
  return out;
}

/**
 * The comparison key of one message.
 * @param {Buffer} raw message bytes as a backend returns them
 * @returns {string} `<message-id>|<16 hex of the normalised body hash>`
 */
function messageKey(raw) {
  const { header, body } = splitMessage(raw);
  const id = (headerFields(header).get('message-id') || '').toLowerCase();
  const norm = body
    .toString('latin1')
    .replace(/\r\n/g, '\n')
    .replace(/^>+(From )/gm, '$1')
    .replace(/\s+$/, '');
  const h = crypto.createHash('sha256').update(norm, 'latin1').digest('hex').slice(0, 16);
  return `${id}|${h}`;
}

/**
 * uid ↔ key maps of one backend's mailbox. A mailbox may hold genuine duplicates (the same
 * message twice: 5 in the medium Enron box), so a key maps to all its uids and a list of
 * keys with a key twice resolves to two different uids.
 */
class KeyMap {
  constructor() {
    this.byUid = new Map();
    this.byKey = new Map();
  }

  clear() {
    this.byUid.clear();
    this.byKey.clear();
  }

  /** @param {number} uid @param {string} key */
  add(uid, key) {
    this.byUid.set(uid, key);
    if (!this.byKey.has(key)) this.byKey.set(key, []);
    this.byKey.get(key).push(uid);
  }

  /** @param {number[]} uids @returns {string[]} */
  keysOf(uids) {
    return uids.map((u) => this.byUid.get(Number(u)) || `?uid:${u}`);
  }

  /** @param {string[]} keys @returns {number[]} one distinct uid per listed key, when present */
  uidsOf(keys) {
    const used = new Map();
    const out = [];
    for (const k of keys) {
      const n = used.get(k) || 0;
      const list = this.byKey.get(k) || [];
      if (n < list.length) out.push(list[n]);
      used.set(k, n + 1);
    }
    return out;
  }
}

module.exports = { messageKey, splitMessage, headerFields, KeyMap };
