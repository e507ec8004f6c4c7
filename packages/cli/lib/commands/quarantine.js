'use strict';

const { errors } = require('@mailgate/core');
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
    .option('--raw <id>', "write one entry's exact bytes to stdout (to fix and import again)")
    .option('--json', 'print one JSON result object on stdout')
    .action((o) =>
      ctx.withService(
        async (service) => {
          if (o.raw !== undefined) {
            const id = Number(o.raw);
            if (!Number.isSafeInteger(id) || id < 1)
              throw new errors.USAGE(`--raw needs an entry id from the list, not "${o.raw}"`);
            const raw = await service.transfer.quarantineRaw(o.user, id);
            await new Promise((resolve, reject) =>
              process.stdout.write(raw, (err) => (err ? reject(err) : resolve())),
            );
            return;
          }
          const rows = await service.transfer.listQuarantine(o.user);
          ctx.out(o.json, { total: rows.length, quarantine: rows }, (x) =>
            printTable(x.quarantine, ['id', 'source', 'position', 'reason', 'detail']),
          );
        },
        { readOnly: true },
      ),
    );
}

module.exports = { register };
