'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/**
 * A small synthetic corpus in the Enron layout (<user>/inbox[/sub]/<N>), with known word,
 * sender and date frequencies: message i (0-based, in path order) of `count` has
 *   "zebra" when i % 100 === 0 (1%), "apple" when i % 4 === 0 (25%),
 *   From rare@example.org when i % 100 === 1 (1%), Date on 2001-05-0(1 + i % 4) otherwise.
 * @param {number} count
 * @returns {{dir: string, order: string[]}} dir and the relative paths in expected order
 */
function syntheticCorpus(count) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-corpus-'));
  const order = [];
  // Two users; the first has an inbox with a subfolder, file numbers that sort differently
  // as strings (2 < 10 only as numbers).
  const users = ['alpha', 'beta'];
  let i = 0;
  for (const user of users) {
    const slots = user === 'alpha' ? Math.ceil(count / 2) : count - Math.ceil(count / 2);
    const inbox = path.join(dir, user, 'inbox');
    const sub = path.join(inbox, 'zsub');
    fs.mkdirSync(sub, { recursive: true });
    const inInbox = Math.ceil(slots / 2);
    for (let k = 0; k < slots; k++) {
      const rel =
        k < inInbox
          ? path.join(user, 'inbox', String(k + 1))
          : path.join(user, 'inbox', 'zsub', String(k - inInbox + 1));
      fs.writeFileSync(path.join(dir, rel), message(i));
      order.push(rel);
      i++;
    }
  }
  return { dir, order };
}

function message(i) {
  const from = i % 100 === 1 ? 'rare@example.org' : `user${i % 7}@example.org`;
  const day = i % 100 === 2 ? '2001-06-15' : `2001-05-0${1 + (i % 4)}`;
  const words = ['hello there'];
  if (i % 100 === 0) words.push('a zebra');
  if (i % 4 === 0) words.push('an apple');
  if (i % 13 === 0) words.push('From the start, a line mboxrd must quote');
  return Buffer.from(
    `From: Sender ${i} <${from}>\nTo: x@example.org\nSubject: message ${i}\n` +
      `Date: ${new Date(day + 'T12:00:00Z').toUTCString()}\nMessage-ID: <m${i}@example.org>\n\n${words.join('\n')}\nnumber ${i}\n`,
  );
}

module.exports = { syntheticCorpus, message };
