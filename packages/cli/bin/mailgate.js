#!/usr/bin/env node
'use strict';

// main() reports every failure itself (lib/failure.js); this catches only what happens before
// it can: a module that does not load (an install without `npm ci`), or a bug in main itself.
const fail = (err) => {
  process.stderr.write(`INTERNAL: ${err && err.message ? err.message : err}\n`);
  if ((process.env.LOG_LEVEL || '').toLowerCase() === 'debug' && err && err.stack)
    process.stderr.write(`${err.stack}\n`);
  process.exitCode = 1;
};

let main;
try {
  ({ main } = require('../lib/main'));
} catch (err) {
  fail(err);
}
if (main) {
  main(process.argv).then((code) => {
    process.exitCode = code;
  }, fail);
}
