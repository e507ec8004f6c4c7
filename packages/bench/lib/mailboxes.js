'use strict';

const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { exportEntry } = require('@mailgate/readers');

/** The 2003 study's three mailbox sizes (messages). */
const SIZES = Object.freeze({ small: 1046, medium: 8734, large: 21282 });

// Bumped whenever the on-disk layout of a built mailbox changes, so stale caches rebuild.
const LAYOUT = 1;

/**
 * Orders directory entries as the brief asks (user, then folder, then file number compared as
 * a number): numeric names first, by value, then the other names by code unit. A total order,
 * so the walk is the same on every machine whatever readdir returns.
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
function compareNames(a, b) {
  const na = /^\d+\.?$/.test(a) ? parseInt(a, 10) : NaN;
  const nb = /^\d+\.?$/.test(b) ? parseInt(b, 10) : NaN;
  const an = !Number.isNaN(na);
  const bn = !Number.isNaN(nb);
  if (an && bn && na !== nb) return na - nb;
  if (an !== bn) return an ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The message root of a corpus directory: the unpacked shared corpus holds the Enron set in
 * enron/maildir; any other directory is taken as the root itself.
 * @param {string} dir
 * @returns {string}
 */
function messageRoot(dir) {
  const enron = path.join(dir, 'enron', 'maildir');
  return fs.existsSync(enron) ? enron : dir;
}

/**
 * The first `limit` message files under root in path order. Hidden files (Dovecot indexes,
 * .DS_Store …) are not messages and are skipped.
 * @param {string} root
 * @param {number} limit
 * @returns {string[]} absolute paths
 */
function listMessages(root, limit = Infinity) {
  const out = [];
  const walk = (dir) => {
    const entries = fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.'))
      .sort((x, y) => compareNames(x.name, y.name));
    for (const e of entries) {
      if (out.length >= limit) return;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(root);
  return out;
}

/**
 * Builds (or reuses) one benchmark mailbox as an mboxrd file and as a Maildir, under
 * `<work>/boxes/<name>`. The manifest is written last, so a run killed mid-build rebuilds
 * instead of trusting half a mailbox; a manifest for another corpus or count rebuilds too.
 *
 * Maildir names are stable (`<base+i>.M<i>P0.mailgate-bench:2,`) and mtimes fixed, so two
 * builds are byte- and name-identical. The mbox From_ lines come from each message's own
 * Return-Path/From and Date headers (readers' exportEntry), as a delivery agent would write.
 *
 * @param {{corpus: string, work: string, name: string, count: number, log?: (s: string) => void}} o
 * @returns {{name: string, count: number, dir: string, mbox: string, maildir: string, files: string[], bytes: number, built: boolean, digest: string}}
 */
function buildMailbox(o) {
  const root = messageRoot(path.resolve(o.corpus));
  const dir = path.join(path.resolve(o.work), 'boxes', o.name);
  const mbox = path.join(dir, 'inbox.mbox');
  const maildir = path.join(dir, 'Maildir');
  const manifestPath = path.join(dir, 'manifest.json');
  const files = listMessages(root, o.count);
  if (files.length < o.count) {
    throw new Error(
      `corpus ${root} holds ${files.length} messages, the ${o.name} mailbox needs ${o.count}`,
    );
  }
  const sourceDigest = crypto
    .createHash('sha256')
    .update(files.map((f) => path.relative(root, f)).join('\n'))
    .digest('hex');
  const result = { name: o.name, count: o.count, dir, mbox, maildir, files };
  try {
    const m = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
    if (
      m.layout === LAYOUT &&
      m.root === root &&
      m.count === o.count &&
      m.source === sourceDigest
    ) {
      return { ...result, bytes: m.bytes, built: false, digest: m.digest };
    }
  } catch {
    // no manifest or an unreadable one: build
  }
  if (o.log) o.log(`building the ${o.name} mailbox (${o.count} messages) in ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
  for (const sub of ['cur', 'new', 'tmp'])
    fs.mkdirSync(path.join(maildir, sub), { recursive: true });
  const fd = fs.openSync(mbox, 'w');
  const hash = crypto.createHash('sha256');
  let bytes = 0;
  // A fixed base time: delivery times (mtime = INTERNALDATE) do not depend on the build date.
  const base = Date.UTC(2002, 0, 1) / 1000;
  try {
    files.forEach((f, i) => {
      const raw = fs.readFileSync(f);
      bytes += raw.length;
      const entry = exportEntry(raw, 'mboxrd');
      fs.writeSync(fd, entry);
      hash.update(entry);
      const name = `${base + i}.M${i}P0.mailgate-bench:2,`;
      const file = path.join(maildir, 'cur', name);
      fs.writeFileSync(file, raw);
      const when = new Date((base + i) * 1000);
      fs.utimesSync(file, when, when);
      hash.update(name).update(raw);
    });
  } finally {
    fs.closeSync(fd);
  }
  const digest = hash.digest('hex');
  const manifest = { layout: LAYOUT, root, count: o.count, source: sourceDigest, bytes, digest };
  fs.writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
  return { ...result, bytes, built: true, digest };
}

module.exports = { SIZES, compareNames, listMessages, messageRoot, buildMailbox };
