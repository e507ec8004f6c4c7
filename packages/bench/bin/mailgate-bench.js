#!/usr/bin/env node
'use strict';

// The bench's commands (`npm run bench:<command>`); see packages/bench/README.md.
const { main } = require('../lib/cli');

main(process.argv.slice(2)).then((code) => {
  // A failure ends the process at once, as the scripts did (a server child may still hold it);
  // success lets pending clean-up (an embedded server's stop) finish first.
  if (code) process.exit(code);
});
