'use strict';

// The command table: the session looks a verb up here (one module per command).
const COMMANDS = {};
for (const name of [
  'lhlo',
  'mail',
  'rcpt',
  'data',
  'bdat',
  'rset',
  'noop',
  'quit',
  'vrfy',
  'starttls',
]) {
  const c = require(`./${name}`);
  COMMANDS[c.name] = c;
}

module.exports = { COMMANDS };
