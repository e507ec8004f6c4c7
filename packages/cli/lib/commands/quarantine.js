'use strict';

const { printTable } = require('../format');

/*
 * `mailgate quarantine`: messages an import could not store, with the reason.
 */

/**
 * Registers `quarantine`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('quarantine')
    .description('list messages that could not be imported, with the reason')
    .requiredOption('--user <user>')
    .option('--json')
    .action(async (o) => {
      await ctx.withStore(async (store) => {
        const user = await store.getUser(o.user);
        const rows = await store.listQuarantine(user.id);
        ctx.out(o.json, { total: rows.length, quarantine: rows }, (x) =>
          printTable(x.quarantine, ['id', 'source', 'position', 'reason', 'detail']),
        );
      });
    });
}

module.exports = { register };
