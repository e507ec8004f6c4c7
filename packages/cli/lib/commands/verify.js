'use strict';

const { Argument } = require('commander');
const { errors } = require('@mailgate/core');
const importer = require('@mailgate/importer');

/*
 * `mailgate verify`: every source message present and byte-identical; exit 0 only then.
 */

/**
 * Registers `verify`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('verify')
    .description(
      'check that every message of a source is stored byte-identical, or kept byte-exact in ' +
        'quarantine when it is not mail (exit 0 only then)',
    )
    .addArgument(new Argument('<kind>', 'source kind').choices(['mbox', 'maildir', 'mh']))
    .argument('<path>')
    .requiredOption('--user <user>', 'mailgate user name')
    .option('--mailbox <name>', 'mbox: mailbox the file was imported into')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (kind, p, o) => {
      const r = await ctx.withService((service) =>
        importer.verifySource({ store: service.store, kind, path: p, ...o }),
      );
      ctx.out(o.json, r, (x) => {
        process.stderr.write(
          `${x.ok ? 'OK' : 'FAILED'}: ${x.messages} source messages, ${x.present} present and identical, ` +
            `${x.quarantined} kept byte-exact in quarantine, ` +
            `${x.missing} missing, ${x.mismatched} differ, ${x.unreadable} unreadable\n`,
        );
        if (x.quarantined)
          process.stderr.write(
            `  ${x.quarantined} source entries are not mail the store could parse; ` +
              `they are checked in quarantine (mailgate quarantine --user ${o.user} lists them)\n`,
          );
        for (const pr of x.problems.slice(0, 20)) {
          process.stderr.write(`  ${pr.mailbox} ${pr.position}: ${pr.problem}\n`);
        }
      });
      if (!r.ok)
        ctx.setExit(
          1,
          new errors.VERIFY_FAILED(
            `${r.missing} missing, ${r.mismatched} differ, ${r.unreadable} unreadable`,
          ),
        );
    });
}

module.exports = { register };
