'use strict';

const { Option } = require('commander');
const { checkExportTarget } = require('@mailgate/service');
const { checkOutput, outputFailure } = require('../files');

/*
 * `mailgate export mbox|maildir|mh`: the way back to files (round trips are byte-exact). --out
 * is checked before the store is opened: it must be writable (OUTPUT_NOT_WRITABLE, files.js)
 * and new or an empty folder unless --force (OUTPUT_EXISTS, @mailgate/importer export.js, which
 * also refuses an imported source and any path outside --out). A file-system error while
 * writing is reported as OUTPUT_NOT_WRITABLE naming --out. Quarantined entries not written are
 * reported with the command that gets them.
 */

const FORCE =
  'write over an existing file, or into a non-empty folder (never over an imported source)';
// An export reads the store: it never creates the embedded database (NO_DATABASE).
const READ_ONLY = { readOnly: true };
const INCLUDE = "also write quarantined entries' raw bytes (a complete round trip)";

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
    .option('--force', FORCE)
    .option('--include-quarantined', INCLUDE)
    .option('--quiet', 'print nothing but errors')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      checkOutput(o.out, 'file');
      checkExportTarget(o.out, 'file', o);
      const r = await ctx
        .withService((service) => service.transfer.exportMail('mbox', o), READ_ONLY)
        .catch((err) => {
          throw outputFailure(err, o.out);
        });
      report(ctx, o, r, `wrote ${r.messages} messages (${r.bytes} bytes) to ${r.out}`);
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
      .option('--force', FORCE)
      .option('--include-quarantined', INCLUDE)
      .option('--quiet', 'print nothing but errors')
      .option('--json', 'print one JSON result object on stdout')
      .action(async (o) => {
        checkOutput(o.out, 'directory');
        checkExportTarget(o.out, 'directory', o);
        const r = await ctx
          .withService((service) => service.transfer.exportMail(kind, o), READ_ONLY)
          .catch((err) => {
            throw outputFailure(err, o.out);
          });
        report(ctx, o, r, `wrote ${r.messages} messages in ${r.mailboxes} mailboxes to ${r.out}`);
      });
  }
}

/** The result: one JSON object, or the human lines on stderr (none with --quiet). */
function report(ctx, o, r, line) {
  ctx.out(o.json, r, () => {
    if (o.quiet) return;
    const q = r.quarantined;
    let text = `${line}\n`;
    if (q.count && q.included) text += `included ${q.count} quarantined entries as they were\n`;
    else if (q.count) {
      const more = q.count > q.ids.length ? ', …' : '';
      text +=
        `not written: ${q.count} quarantined entries (ids ${q.ids.join(', ')}${more}); ` +
        `get one with: mailgate quarantine --user ${o.user} --raw ID, ` +
        `or export again with --include-quarantined\n`;
    }
    process.stderr.write(text);
  });
}

module.exports = { register };
