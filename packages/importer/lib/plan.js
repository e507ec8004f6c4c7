'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { errors } = require('@mailgate/core');
const { mboxItems, maildirItems, mhItems, mailboxForMboxFile, imapPlans } = require('./sources');

/*
 * The import's source stage: what to read, as plans `{source, mailboxKey, items, totalBytes,
 * totalCount}`, one per mbox file, per directory tree or per IMAP folder. `source` and
 * `mailboxKey` name the import job (and so its checkpoint); `items` is the reader's split of
 * the source into entries (sources.js), read lazily.
 */

/**
 * @param {object} opts runImport options plus userId
 * @param {(path: string, reason: string) => void} [onSkip] files of a tree that are not mail
 * @returns {AsyncGenerator<{source: string, mailboxKey: string, items: AsyncIterable<object>, totalBytes?: number|null, totalCount?: number}>}
 */
async function* planSources(opts, onSkip = () => {}) {
  if (opts.kind === 'imap') {
    yield* imapPlans(opts);
    return;
  }
  if (opts.kind === 'mbox') {
    for (const file of opts.paths) {
      const abs = path.resolve(file);
      const st = statSource(file, 'file');
      if (!st.isFile()) throw new errors.SOURCE_NOT_FOUND(file, 'not a regular file');
      const mailbox = opts.mailbox || mailboxForMboxFile(abs);
      yield {
        source: abs,
        mailboxKey: mailbox,
        totalBytes: st.size,
        items: mboxItems(abs, { mailbox, variant: opts.variant }),
      };
    }
    return;
  }
  if (opts.paths.length !== 1)
    throw new errors.USAGE(`import ${opts.kind} takes exactly one directory`);
  const abs = path.resolve(opts.paths[0]);
  if (!statSource(opts.paths[0], 'directory').isDirectory())
    throw new errors.SOURCE_NOT_FOUND(opts.paths[0], 'not a directory');
  const items = opts.kind === 'maildir' ? maildirItems(abs, { onSkip }) : mhItems(abs, { onSkip });
  // A directory walk without reading files is cheap next to the import and gives the
  // progress bar a total (and so an ETA); non-message files make it a slight overestimate.
  yield { source: abs, mailboxKey: '', totalBytes: null, totalCount: countFiles(abs), items };
}

function statSource(p, what) {
  try {
    return fs.statSync(p);
  } catch (err) {
    throw new errors.SOURCE_NOT_FOUND(p, err.code === 'ENOENT' ? `no such ${what}` : err.message);
  }
}

function countFiles(dir) {
  let n = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    if (e.name.startsWith('.') && e.isFile()) continue;
    if (e.isDirectory()) n += e.name === 'tmp' ? 0 : countFiles(path.join(dir, e.name));
    else if (e.isFile() && !/^(dovecot|courier)/.test(e.name)) n++;
  }
  return n;
}

module.exports = { planSources };
