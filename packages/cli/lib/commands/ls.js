'use strict';

const { Option } = require('commander');
const { errors } = require('@mailgate/core');
const { printTable, headerCells } = require('../format');
const { positiveInt } = require('../context');

/*
 * `mailgate ls`: a user's mailboxes, or one mailbox's header rows (the pg backend), newest
 * first by date unless --order says otherwise (issue 30.11: uid order is import order).
 */

// Reads only: never creates the embedded database (NO_DATABASE).
const READ_ONLY = { readOnly: true };

/**
 * Registers `ls`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('ls')
    .description("list a user's mailboxes, or a mailbox's header rows")
    .requiredOption('--user <user>', 'mailgate user name')
    .option('--mailbox <name>', "this mailbox's header rows instead of the mailbox list")
    .option('--limit <n>', 'header rows to show (with --mailbox)', positiveInt('--limit'))
    .addOption(
      new Option(
        '--order <order>',
        'header row order (with --mailbox): date (Date header, else received date) or uid, - first for descending',
      )
        .choices(['-date', 'date', '-uid', 'uid'])
        .default('-date'),
    )
    .option('--json', 'print one JSON result object on stdout')
    .action((o) => {
      // The mailbox list has no limit: a --limit without --mailbox was silently ignored.
      if (o.limit !== undefined && !o.mailbox) {
        throw new errors.USAGE('ls: --limit applies to header rows: add --mailbox <name>');
      }
      return ctx.withBackend(
        'pg',
        o.user,
        async (be) => {
          if (!o.mailbox) {
            const boxes = await be.listMailboxes();
            ctx.out(o.json, { user: o.user, mailboxes: boxes }, (x) =>
              printTable(x.mailboxes, ['name', 'total', 'unseen', 'uidvalidity', 'uidnext']),
            );
            return;
          }
          const { rows } = await be.scan(o.mailbox, { limit: o.limit, order: o.order });
          ctx.out(o.json, { user: o.user, mailbox: o.mailbox, messages: rows }, (x) =>
            printTable(x.messages.map(headerCells), [
              'uid',
              'date',
              'from',
              'subject',
              'size',
              'flags',
            ]),
          );
        },
        READ_ONLY,
      );
    });
}

module.exports = { register };
