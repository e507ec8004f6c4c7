'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { errors } = require('@mailgate/core');

/*
 * What the file commands check before they touch the store: that an import's or verify's
 * source is there (SOURCE_NOT_FOUND, the import's own wording, @mailgate/importer plan.js) and
 * that an export can write where --out points (OUTPUT_NOT_WRITABLE). Checked first so that a
 * run that cannot start creates nothing (no user, no job) and prints no progress, and so that
 * a bad --out is a coded error instead of a write stream's unhandled error. Never writes.
 */

/**
 * SOURCE_NOT_FOUND unless each path is what the kind reads: a regular file per mbox, one
 * directory for maildir and mh.
 * @param {'mbox'|'maildir'|'mh'} kind
 * @param {string[]} paths
 */
function checkSources(kind, paths) {
  const what = kind === 'mbox' ? 'file' : 'directory';
  for (const p of paths) {
    let st;
    try {
      st = fs.statSync(p);
    } catch (err) {
      throw new errors.SOURCE_NOT_FOUND(p, err.code === 'ENOENT' ? `no such ${what}` : err.message);
    }
    if (kind === 'mbox' && !st.isFile()) throw new errors.SOURCE_NOT_FOUND(p, 'not a regular file');
    if (kind !== 'mbox' && !st.isDirectory())
      throw new errors.SOURCE_NOT_FOUND(p, 'not a directory');
  }
}

/**
 * OUTPUT_NOT_WRITABLE unless an export can write out: a file (mbox) goes into an existing,
 * writable folder and is not a folder itself; a tree (maildir, mh) is an existing writable
 * folder, or is created under the nearest existing folder above it, which must be writable.
 * @param {string} out the --out value, named as given in the message
 * @param {'file'|'directory'} what
 */
function checkOutput(out, what) {
  const abs = path.resolve(out);
  const fail = (reason) => {
    throw new errors.OUTPUT_NOT_WRITABLE(out, reason);
  };
  const existing = statOrNull(abs, fail);
  if (what === 'file') {
    if (existing && existing.isDirectory()) fail('it is a folder; name a file');
    const dir = path.dirname(abs);
    const parent = statOrNull(dir, fail);
    if (!parent) fail(`the folder ${dir} does not exist`);
    if (!parent.isDirectory()) fail(`${dir} is not a folder`);
    writable(dir, fail);
    return;
  }
  if (existing) {
    if (!existing.isDirectory()) fail('it exists and is not a folder');
    writable(abs, fail);
    return;
  }
  // mkdir -p creates the rest: what matters is the nearest part of the path that exists.
  let dir = path.dirname(abs);
  let st = statOrNull(dir, fail);
  while (!st && path.dirname(dir) !== dir) {
    dir = path.dirname(dir);
    st = statOrNull(dir, fail);
  }
  if (!st || !st.isDirectory()) fail(`${dir} is not a folder`);
  writable(dir, fail);
}

// The calls an export makes on files (a database error carries none of them).
const FS_SYSCALLS = new Set(['open', 'write', 'close', 'mkdir', 'rename', 'utime', 'stat']);

/**
 * The coded error for a file-system error met while an export writes (a disk that fills, a
 * folder removed meanwhile), or err itself when it is not one.
 * @param {any} err
 * @param {string} out
 * @returns {any}
 */
function outputFailure(err, out) {
  if (!err || !FS_SYSCALLS.has(err.syscall) || !err.path) return err;
  return new errors.OUTPUT_NOT_WRITABLE(out, `${describe(err.code)} (${err.path})`);
}

/** The stat of p, null when it does not exist (ENOTDIR: a file above it, which the caller names). */
function statOrNull(p, fail) {
  try {
    return fs.statSync(p);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
    return fail(`${describe(err.code)} (${p})`);
  }
}

function writable(dir, fail) {
  try {
    fs.accessSync(dir, fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    fail(`${describe(err.code)} (${dir})`);
  }
}

const REASONS = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  ENOENT: 'no such file or folder',
  ENOTDIR: 'a part of the path is not a folder',
  EISDIR: 'it is a folder',
  EEXIST: 'a file is in the way',
};

function describe(code) {
  return REASONS[code] || code;
}

module.exports = { checkSources, checkOutput, outputFailure };
