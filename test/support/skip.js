'use strict';

const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');

/**
 * The one line a test file prints when it (or a part of it) is skipped outside CI:
 * `skipping <file relative to the repo>[ › <part>]: <reason>`, so that a run shows what did not
 * run and why (test/skip-notices.test.js checks every skipping file calls this).
 * @param {string} file the test file (__filename)
 * @param {string} reason what is missing, and how to get it
 * @param {string} [part] the skipped part, when not the whole file
 */
function skipNotice(file, reason, part) {
  const name = path.relative(ROOT, file);
  console.log(`skipping ${name}${part ? ` › ${part}` : ''}: ${reason}`);
}

module.exports = { skipNotice };
