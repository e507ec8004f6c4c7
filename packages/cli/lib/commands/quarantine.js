'use strict';

const importer = require('@mailgate/importer');
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
    .requiredOption('--user <user>', 'mailgate user name')
    .option('--json', 'print one JSON result object on stdout')
    .action((o) =>
      ctx.withService(async (service) => {
        const rows = await importer.listQuarantine({ store: service.store, user: o.user });
        ctx.out(o.json, { total: rows.length, quarantine: rows }, (x) =>
          printTable(x.quarantine, ['id', 'source', 'position', 'reason', 'detail']),
        );
      }),
    );
}

module.exports = { register };
