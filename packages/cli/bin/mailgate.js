#!/usr/bin/env node
'use strict';

const { main } = require('../lib/main');

// main() reports every failure itself (lib/failure.js); this is only a last resort.
main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`INTERNAL: ${err && err.message ? err.message : err}\n`);
    process.exitCode = 1;
  },
);
