'use strict';

/*
 * The command table: one module per command (imapflow's lib/commands is the model), each
 * exporting `{name, states, run(session, cmd)}` (`name` a list where one module serves the
 * variants of one command, told apart by `cmd.name`: SELECT/EXAMINE, CLOSE/UNSELECT,
 * SUBSCRIBE/UNSUBSCRIBE) and optionally `sync: false` (no untagged
 * updates after it), `expunges: false` (no EXPUNGE after it, RFC 3501 7.4.1) or `usesView:
 * true` (acts on the selected mailbox's messages: the session first checks that the mailbox
 * under that name is still the one selected, same UIDVALIDITY). The session
 * dispatches by name; nothing else lists commands.
 */

const fs = require('node:fs');
const path = require('node:path');

const commands = new Map();
for (const file of fs.readdirSync(__dirname).sort()) {
  if (file === 'index.js' || !file.endsWith('.js')) continue;
  const mod = require(path.join(__dirname, file));
  for (const name of [].concat(mod.name)) commands.set(name, mod);
}

module.exports = { commands };
