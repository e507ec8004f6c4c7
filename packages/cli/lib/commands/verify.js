'use strict';

const path = require('node:path');
const { Argument } = require('commander');
const { errors } = require('@mailgate/core');
const { checkSources } = require('../files');

/*
 * `mailgate verify`: every source message present and byte-identical; exit 0 only then. A
 * source that is not there is SOURCE_NOT_FOUND, as for import; an mbox checked against a
 * mailbox that does not exist is MAILBOX_NOT_FOUND (not every message "missing").
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
      checkSources(kind, [p]);
      const r = await ctx.withService(
        async (service) => {
          const res = await service.transfer.verifySource({ kind, path: p, ...o });
          // An mbox file is one mailbox (--mailbox, else the name import gives the file): when
          // it does not exist, say so rather than list every message as missing. Asked after
          // the pass: a file whose entries were all quarantined has no mailbox and verifies.
          if (!res.ok && kind === 'mbox') {
            const mailbox = o.mailbox || service.transfer.mailboxForMboxFile(path.resolve(p));
            const be = await service.openBackend('pg', o.user);
            try {
              await be.status(mailbox, { counts: false });
            } finally {
              await be.close();
            }
          }
          return res;
        },
        { readOnly: true },
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
