'use strict';

const { Option } = require('commander');
const importer = require('@mailgate/importer');
const { checkOutput, outputFailure } = require('../files');

/*
 * `mailgate export mbox|maildir|mh`: the way back to files (round trips are byte-exact). --out
 * is checked before the store is opened, and a file-system error while writing is reported
 * as OUTPUT_NOT_WRITABLE naming --out (files.js).
 */

/**
 * Registers `export` and its subcommands.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const exp = program.command('export').description('export mail from the store');
  exp
    .command('mbox')
    .description('write one mailbox as an mbox file')
    .requiredOption('--user <user>', 'mailgate user name')
    .requiredOption('--mailbox <name>')
    .requiredOption('--out <file>')
    .addOption(
      new Option('--variant <variant>', 'original reproduces an imported mbox byte for byte')
        .choices(['original', 'mboxrd', 'mboxo', 'mboxcl2'])
        .default('original'),
    )
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      checkOutput(o.out, 'file');
      const r = await ctx
        .withService((service) => importer.exportMbox({ store: service.store, ...o }))
        .catch((err) => {
          throw outputFailure(err, o.out);
        });
      ctx.out(o.json, r, (x) =>
        process.stderr.write(`wrote ${x.messages} messages (${x.bytes} bytes) to ${x.out}\n`),
      );
    });
  for (const kind of ['maildir', 'mh']) {
    exp
      .command(kind)
      .description(
        kind === 'mh'
          ? 'write all mailboxes as MH folders'
          : 'write all mailboxes as a Maildir++ tree',
      )
      .requiredOption('--user <user>', 'mailgate user name')
      .requiredOption('--out <dir>')
      .option('--json', 'print one JSON result object on stdout')
      .action(async (o) => {
        const fn = kind === 'mh' ? importer.exportMh : importer.exportMaildir;
        checkOutput(o.out, 'directory');
        const r = await ctx
          .withService((service) => fn({ store: service.store, ...o }))
          .catch((err) => {
            throw outputFailure(err, o.out);
          });
        ctx.out(o.json, r, (x) =>
          process.stderr.write(
            `wrote ${x.messages} messages in ${x.mailboxes} mailboxes to ${x.out}\n`,
          ),
        );
      });
  }
}

module.exports = { register };
