'use strict';

const fsp = require('fs/promises');
const path = require('path');
const { listDir, isDirEntry, cmpStr, readMessageFile } = require('./fs-util');

// MH messages are named by number. The trailing-dot form ("1.") is how the CMU Enron release
// names them, so it is accepted too.
const MH_NAME_RE = /^(\d+)\.?$/;

/**
 * `.mh_sequences`: `name: 1-3 7 10-12` per line (nmh mh-sequence(5)); continuation lines start
 * with blanks.
 * @param {string} text
 * @returns {Map<string, Array<[number, number]>>} sequence name → inclusive ranges
 */
function parseMhSequences(text) {
  const seqs = new Map();
  let current = null;
  for (const line of text.split(/\r?\n/)) {
    let body;
    const m = /^([^\s:]+)\s*:(.*)$/.exec(line);
    if (m) {
      current = [];
      seqs.set(m[1], current);
      body = m[2];
    } else if (/^\s/.test(line) && current) body = line;
    else continue;
    for (const tok of body.trim().split(/\s+/)) {
      const r = /^(\d+)(?:-(\d+))?$/.exec(tok);
      if (r) current.push([Number(r[1]), Number(r[2] || r[1])]);
    }
  }
  return seqs;
}

function inSequence(seqs, name, n) {
  const ranges = seqs.get(name);
  return Boolean(ranges && ranges.some(([a, b]) => n >= a && n <= b));
}

/** Order of folders in a depth-first walk with children sorted by name (pre-order). */
function cmpMhMailbox(a, b) {
  const pa = a === '' ? [] : a.split('/');
  const pb = b === '' ? [] : b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const c = cmpStr(pa[i], pb[i]);
    if (c) return c;
  }
  return pa.length - pb.length;
}

function cmpMessage(a, b) {
  return a.number - b.number || cmpStr(a.name, b.name);
}

/**
 * Read MH-style folders (numbered message files) recursively, one file at a time. A folder's
 * messages come before its subfolders; subfolders are visited depth-first in name order; messages
 * by number. Flags: without `.mh_sequences` none; with it, messages not in `unseen` get \Seen and
 * messages in `flagged` get \Flagged.
 * @param {string} root
 * @param {object} [opts]
 * @param {(path: string, reason: string) => void} [opts.onSkip] non-message files, empty files
 * @param {{mailbox: string, name: string}} [opts.startAfter] resume key (position-based)
 * @returns {AsyncGenerator<{mailbox: string, path: string, name: string, raw: Buffer,
 *   internalDate: Date, size: number, flags: string[]}>}
 */
async function* readMh(root, opts = {}) {
  const onSkip = opts.onSkip || (() => {});
  const startAfter = opts.startAfter || null;
  // A missing root is a caller error, unlike folders vanishing mid-walk.
  if (!(await fsp.stat(root)).isDirectory()) throw new Error(`not a directory: ${root}`);
  yield* walkFolder(root, '', onSkip, startAfter);
}

async function* walkFolder(dir, mailbox, onSkip, startAfter) {
  const ents = (await listDir(dir)).sort((a, b) => cmpStr(a.name, b.name));
  const cmp = startAfter ? cmpMhMailbox(mailbox, startAfter.mailbox) : 1;
  const messages = [];
  const subfolders = [];
  let sequences = null;
  for (const ent of ents) {
    const p = path.join(dir, ent.name);
    if (await isDirEntry(dir, ent)) {
      if (ent.name.startsWith('.')) onSkip(p, 'hidden directory');
      else subfolders.push(ent.name);
      continue;
    }
    if (cmp < 0) continue;
    if (ent.name === '.mh_sequences') {
      sequences = parseMhSequences(await fsp.readFile(p, 'latin1'));
      continue;
    }
    const m = MH_NAME_RE.exec(ent.name);
    if (m) messages.push({ name: ent.name, number: Number(m[1]) });
    else onSkip(p, 'not a numbered MH message');
  }
  if (cmp >= 0) {
    messages.sort(cmpMessage);
    const resume =
      cmp === 0 ? { name: startAfter.name, number: Number(startAfter.name) || 0 } : null;
    if (resume) {
      const m = MH_NAME_RE.exec(resume.name);
      resume.number = m ? Number(m[1]) : -1;
    }
    for (const msg of messages) {
      if (resume && cmpMessage(msg, resume) <= 0) continue;
      const p = path.join(dir, msg.name);
      const r = await readMessageFile(p);
      if (r.skip) {
        onSkip(p, r.skip);
        continue;
      }
      const flags = [];
      if (sequences) {
        if (inSequence(sequences, 'flagged', msg.number)) flags.push('\\Flagged');
        if (!inSequence(sequences, 'unseen', msg.number)) flags.push('\\Seen');
      }
      yield {
        mailbox,
        path: p,
        name: msg.name,
        raw: r.raw,
        internalDate: new Date(r.stat.mtimeMs),
        size: r.stat.size,
        flags,
      };
    }
  }
  for (const name of subfolders) {
    const child = mailbox === '' ? name : `${mailbox}/${name}`;
    // Prune subtrees that lie entirely before the resume point.
    if (startAfter && cmpMhMailbox(child, startAfter.mailbox) < 0) {
      if (!startAfter.mailbox.startsWith(`${child}/`)) continue;
    }
    yield* walkFolder(path.join(dir, name), child, onSkip, startAfter);
  }
}

module.exports = { readMh, parseMhSequences };
