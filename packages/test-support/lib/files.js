'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * The repository's files below `dir` whose names end with `suffix` (`.js`, `.test.js`), for
 * the tests that check every file of a kind; node_modules and dot folders are passed over.
 * @param {string} dir
 * @param {string} suffix
 * @returns {string[]}
 */
function filesBelow(dir, suffix, out = []) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) filesBelow(p, suffix, out);
    else if (e.name.endsWith(suffix)) out.push(p);
  }
  return out;
}

module.exports = { filesBelow };
