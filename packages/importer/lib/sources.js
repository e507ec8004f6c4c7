'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { pipeline } = require('node:stream');
const {
  MboxSplitter,
  readMaildir,
  readMh,
  flagsFromHeaders,
  headerBlock,
  fromLineDate,
} = require('@mailgate/readers');

/*
 * Source adapters: each turns a reader's output into import items of one shape:
 *   { index, mailbox, raw, position, internalDate, flags, keywords, sourceName,
 *     source: {message_sources extra columns}, error }
 * `index` counts entries of the source in its deterministic order; the checkpoint is the
 * next index, so a resumed run skips (hashes but does not parse or write) what is stored.
 */

/**
 * Default mailbox name for an mbox file: file name without extension; "inbox" → INBOX.
 * @param {string} file
 */
function mailboxForMboxFile(file) {
  const base = path.basename(file).replace(/\.(mbox|mbx|mbs)$/i, '');
  return base.toLowerCase() === 'inbox' ? 'INBOX' : base;
}

/**
 * @param {string} file
 * @param {{mailbox: string, variant?: string}} opts
 */
async function* mboxItems(file, opts) {
  const splitter = new MboxSplitter({ variant: opts.variant || 'auto' });
  const input = fs.createReadStream(file, { highWaterMark: 1 << 20 });
  let failure = null;
  pipeline(input, splitter, (err) => {
    failure = err || null;
  });
  for await (const e of splitter) {
    const flags =
      e.raw && e.raw.length ? flagsFromHeaders(headerBlock(e.raw)) : { flags: [], keywords: [] };
    yield {
      index: e.index,
      mailbox: opts.mailbox,
      raw: e.raw,
      position: `byte ${e.offset}`,
      offset: e.offset + e.length,
      internalDate: fromLineDate(e.fromLine),
      flags: flags.flags,
      keywords: flags.keywords,
      sourceName: null,
      source: {
        mbox_from_line: e.fromLine,
        mbox_variant: e.variant,
        mbox_trailer: e.trailer,
        mbox_original: e.original,
      },
      error: e.error || null,
    };
  }
  if (failure) throw failure;
}

/**
 * @param {string} root
 * @param {{onSkip?: Function}} opts
 */
async function* maildirItems(root, opts = {}) {
  let index = 0;
  for await (const m of readMaildir(root, { onSkip: opts.onSkip })) {
    yield {
      index: index++,
      mailbox: m.mailbox,
      raw: m.raw,
      position: path.relative(root, m.path),
      internalDate: m.internalDate,
      flags: m.flags,
      keywords: m.keywords,
      sourceName: m.baseName,
      // dovecot-uidlist numbering, kept by the store where it can (Dovecot clients keep caches).
      uid: m.uid,
      uidValidity: m.uidValidity,
      uidNext: m.uidNext,
      source: {
        source_meta: JSON.stringify({
          dir: m.dir,
          fileName: m.fileName,
          uid: m.uid,
          uidValidity: m.uidValidity,
        }),
      },
      error: null,
    };
  }
}

/**
 * MH folders: each folder's path relative to the root is the mailbox; files in the root
 * itself go to INBOX.
 * @param {string} root
 * @param {{onSkip?: Function}} opts
 */
async function* mhItems(root, opts = {}) {
  let index = 0;
  for await (const m of readMh(root, { onSkip: opts.onSkip })) {
    yield {
      index: index++,
      mailbox: m.mailbox === '' ? 'INBOX' : m.mailbox,
      raw: m.raw,
      position: path.relative(root, m.path),
      internalDate: m.internalDate,
      flags: m.flags || [],
      keywords: [],
      sourceName: m.name,
      // mhFolder: the folder as named in the tree; the mailbox may differ (`inbox` is INBOX),
      // and export mh puts the file back where it was.
      source: {
        source_meta: JSON.stringify({ mh: true, root: m.mailbox === '', mhFolder: m.mailbox }),
      },
      error: null,
    };
  }
}

module.exports = { mboxItems, maildirItems, mhItems, mailboxForMboxFile };

// The IMAP source (`import imap`) lives in its own file, loaded only for IMAP imports (it
// connects through @mailgate/legacy's imapflow client).
Object.defineProperty(module.exports, 'imapPlans', {
  enumerable: true,
  get: () => require('./imap-source').imapPlans,
});
