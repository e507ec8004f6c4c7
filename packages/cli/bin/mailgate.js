#!/usr/bin/env node
'use strict';

const { main } = require('../lib/main');

main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`mailgate: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 1;
  },
);
