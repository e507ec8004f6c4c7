'use strict';

const { Option } = require('commander');
const { errors } = require('@mailgate/core');
const { KINDS } = require('@mailgate/service');
const { printTable, headerCells } = require('../format');
const { positiveInt } = require('../context');

/*
 * `mailgate search QUERY`: the query language on one backend (openBackend(kind, user));
 * output {total, uids, mailboxes:[{mailbox, uids}]}, uids in mailbox then uid order (the set,
 * the same from every backend); the rows shown on a terminal in --order, newest first by
 * default (issue 30.11).
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
    .option('--limit <n>', 'hits shown as rows on a terminal (default 20)', positiveInt('--limit'))
    .addOption(
      new Option(
        '--order <order>',
        'order of the rows shown: date (Date header, else received date), uid, from, subject or size, - first for descending',
      )
        .choices(['date', 'uid', 'from', 'subject', 'size'].flatMap((k) => [`-${k}`, k]))
        .default('-date'),
    )
    .option('--quiet', 'no warnings on stderr (errors only)')
    .option('--json', 'print one JSON result object on stdout')
    .action((terms, o) => {
      // --json lists every uid; --limit is how many rows a person sees.
      if (o.json && o.limit !== undefined) {
        throw new errors.USAGE(
          'search: --limit sets the rows shown without --json (--json lists every uid)',
        );
      }
      return ctx.withBackend(
        o.backend,
        o.user,
        async (be) => {
          // --json: the hits (total, uids per mailbox) without header rows (limit 0); for a
          // person, the first hits' rows (date, sender, subject), as ls shows a mailbox.
          const limit = o.json ? 0 : (o.limit ?? 20);
          // --json asks for no rows, so no order: the uids are the set, mailbox then uid.
          const r = await be.search(terms.join(' '), {
            mailbox: o.mailbox,
            limit,
            order: o.json ? undefined : o.order,
          });
          const result = {
            total: r.total,
            uids: r.mailboxes.flatMap((m) => m.uids),
            mailboxes: r.mailboxes,
          };
          ctx.out(o.json, result, (x) => {
            process.stdout.write(`${x.total} matching messages\n`);
            const rows = (r.rows || []).map((h) => ({ mailbox: h.mailbox, ...headerCells(h) }));
            if (rows.length) printTable(rows, ['mailbox', 'uid', 'date', 'from', 'subject']);
            if (x.total > rows.length) {
              process.stdout.write(
                `… ${x.total - rows.length} more (--limit N, or --json for every uid)\n`,
              );
            }
          });
        },
        { readOnly: o.backend === 'pg' || o.backend === 'es' },
      );
    });
}

module.exports = { register };
