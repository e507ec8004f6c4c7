'use strict';

const { Option } = require('commander');
const { KINDS } = require('@mailgate/service');

/*
 * `mailgate search QUERY`: the query language on one backend (openBackend(kind, user));
 * output {total, uids, mailboxes:[{mailbox, uids}]}, uids in mailbox then uid order.
 */

/**
 * Registers `search`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('search')
    .description(
      'search with the query language (see README "Query language"); empty query matches all',
    )
    .argument(
      '[query...]',
      'e.g. \'from:alice "quarterly report" -is:read\' (words may also be given unquoted)',
    )
    // "-is:read" is a query term, not an option.
    .allowUnknownOption()
    .requiredOption('--user <user>', 'mailgate user name')
    .option('--mailbox <name>', 'only this mailbox')
    .addOption(
      new Option(
        '--backend <backend>',
        'pg (default), es (the mirror), or the legacy files / upstream IMAP',
      )
        .choices(KINDS)
        .default('pg'),
    )
    .option('--json', 'print one JSON result object on stdout')
    .action((terms, o) =>
      ctx.withBackend(o.backend, o.user, async (be) => {
        // limit 0: the hits (total, uids per mailbox) without their header rows.
        const r = await be.search(terms.join(' '), { mailbox: o.mailbox, limit: 0 });
        const result = {
          total: r.total,
          uids: r.mailboxes.flatMap((m) => m.uids),
          mailboxes: r.mailboxes,
        };
        ctx.out(o.json, result, (x) => {
          process.stdout.write(`${x.total} matching messages\n`);
          for (const m of x.mailboxes)
            process.stdout.write(`  ${m.mailbox}: ${m.uids.join(' ')}\n`);
        });
      }),
    );
}

module.exports = { register };
