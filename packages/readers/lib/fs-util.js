'use strict';

const fsp = require('fs/promises');

/**
 * readdir that treats a missing directory as empty (Maildir's new/ or cur/ may legitimately be
 * absent, and folders can vanish while we walk them).
 * @param {string} dir
 * @returns {Promise<import('fs').Dirent[]>}
 */
async function listDir(dir) {
  try {
    return await fsp.readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return [];
    throw err;
  }
}

/**
 * @param {string} p
 * @returns {Promise<import('fs').Stats|null>} stat (following symlinks), null when missing
 */
async function statOrNull(p) {
  try {
    return await fsp.stat(p);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'ELOOP') return null;
    throw err;
  }
}

/**
 * @param {string} parent
 * @param {import('fs').Dirent} ent
 * @returns {Promise<boolean>} whether the entry is a directory (symlinks followed)
 */
async function isDirEntry(parent, ent) {
  if (ent.isDirectory()) return true;
  if (!ent.isSymbolicLink()) return false;
  const st = await statOrNull(require('path').join(parent, ent.name));
  return Boolean(st && st.isDirectory());
}

/** Plain code-unit string comparison (locale independent, so order is reproducible). */
function cmpStr(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Read one message file: stat + content, or a skip reason.
 * @param {string} p
 * @returns {Promise<{stat: import('fs').Stats, raw: Buffer}|{skip: string}>}
 */
async function readMessageFile(p) {
  let fh;
  try {
    fh = await fsp.open(p, 'r');
  } catch (err) {
    if (err.code === 'ENOENT') return { skip: 'vanished while reading (moved or expunged)' };
    if (err.code === 'EISDIR') return { skip: 'not a regular file' };
    throw err;
  }
  try {
    const stat = await fh.stat();
    if (!stat.isFile()) return { skip: 'not a regular file' };
    if (stat.size === 0) return { skip: 'empty file' };
    const raw = await fh.readFile();
    return { stat, raw };
  } finally {
    await fh.close();
  }
}

module.exports = { listDir, statOrNull, isDirEntry, cmpStr, readMessageFile };
