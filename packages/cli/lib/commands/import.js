'use strict';

const { Option } = require('commander');
const { errors } = require('@mailgate/core');
const { withInterrupt } = require('../interrupt');
const { boundImportHeap } = require('../heap');
const { checkSources } = require('../files');

/*
 * `mailgate import mbox|maildir|mh|imap`: one command per source kind, all through
 * the mail service's transfer.importMail. Ctrl-C finishes the current batch so that a re-run resumes.
 */

/**
 * Registers `import` and its subcommands.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const imp = program.command('import').description('import mail into the store');
  const run = (kind) => (paths, o) => runImportCommand(ctx, kind, paths, o);
  common(
    imp
      .command('mbox <files...>')
      .description('import mbox files (mboxo, mboxrd, mboxcl, mboxcl2 detected per message)')
      .option(
        '--mailbox <name>',
        'target mailbox (default: file name without extension; inbox → INBOX)',
      )
      .addOption(
        new Option('--variant <variant>', 'force an mbox variant instead of detecting it').choices([
          'auto',
          'mboxo',
          'mboxrd',
          'mboxcl',
          'mboxcl2',
        ]),
      ),
  ).action(run('mbox'));
  common(
    imp
      .command('maildir <dir>')
      .description('import a Maildir or Maildir++ tree (subfolders become mailboxes)'),
  ).action(run('maildir'));
  common(
    imp
      .command('mh <dir>')
      .description(
        'import MH-style folders of numbered files, recursively (folder path = mailbox)',
      ),
  ).action(run('mh'));
  common(
    imp
      .command('imap')
      .description(
        'import every folder of an IMAP account; a re-run imports only new mail and updates flags',
      )
      .requiredOption('--host <host>')
      .requiredOption('--port <port>', 'IMAP port', (v) => Number(v))
      .requiredOption('--login <login>')
      .requiredOption(
        '--password-env <var>',
        'environment variable holding the password (never on the command line)',
      )
      .option('--tls', 'implicit TLS (IMAPS); default: STARTTLS, required')
      .option('--no-tls', 'plaintext connection (explicit opt-in; STARTTLS not attempted)'),
  ).action((o) => {
    if (process.env[o.passwordEnv] == null)
      throw new errors.USAGE(`import imap: environment variable ${o.passwordEnv} is not set`);
    const imap = { host: o.host, port: o.port, login: o.login, passwordEnv: o.passwordEnv };
    // Neither flag: STARTTLS, required (upstreamSecurity in @mailgate/core).
    if (o.tls !== undefined) imap.security = o.tls ? 'tls' : 'plaintext';
    return runImportCommand(ctx, 'imap', [], { ...o, imap });
  });
}

function common(cmd) {
  return cmd
    .requiredOption('--user <user>', 'mailgate user who owns the mail (created if missing)')
    .option('--json', 'print one JSON result object on stdout')
    .option('--quiet', 'print nothing but errors (no progress, no report)')
    .addHelpText(
      'after',
      `
Re-running imports nothing twice; an interrupted import resumes where it stopped. Entries that
are not mail are quarantined (mailgate quarantine), files that are not mail are skipped and
named; a source without any mail ends with the warning NO_MAIL_FOUND (exit code 0).`,
    );
}

async function runImportCommand(ctx, kind, paths, o) {
  const { config, log } = ctx;
  if (!o.user) throw new errors.USAGE(`import ${kind}: --user is required`);
  const list = Array.isArray(paths) ? paths : [paths];
  // Before the store: a run that cannot start creates no user and prints no progress line.
  if (kind !== 'imap') checkSources(kind, list);
  // This process's job is the import: keep its heaps near their live data (heap.js).
  boundImportHeap();
  const report = await withInterrupt((signal) =>
    ctx.withService((service) =>
      service.transfer.importMail({
        kind,
        paths: list,
        user: o.user,
        mailbox: o.mailbox,
        variant: o.variant,
        imap: o.imap,
        workers: config.importWorkers,
        batchSize: config.batchSize,
        progress: !o.quiet,
        // A coded notice the moment it applies (another run of this import holds its lock),
        // not only in the final report: the user sees why nothing moves.
        onWarning: (w) => process.stderr.write(`${w.code}: ${w.message}\n`),
        signal,
        // On a terminal the progress line owns stderr and the report below names every
        // quarantined entry and warning: the per-entry warn lines (JSON) only cut into it.
        log: !o.json && process.stderr.isTTY ? log.child({}, { level: 'error' }) : log,
      }),
    ),
  );
  // --quiet: nothing but errors (a failure still leaves through failure.js).
  ctx.out(o.json, report, (r) => (o.quiet ? null : printReport(r, o.user)));
  if (report.interrupted) ctx.setExit(130);
}

function printReport(r, user) {
  process.stderr.write(
    `${r.interrupted ? 'interrupted' : 'done'}: ${r.messages} messages, ${r.imported} imported, ` +
      `${r.duplicates} already present` +
      (r.resumed ? ` (${r.resumed} stored by the run this one resumed, only re-checked)` : '') +
      `, ${r.quarantined} quarantined, ` +
      `${(r.bytes / 1048576).toFixed(1)} MB in ${r.seconds}s ` +
      `(${r.rate} msg/s${r.resumed ? ' on new messages' : ''})\n`,
  );
  for (const q of r.quarantine.slice(0, 20)) {
    process.stderr.write(`  quarantined ${q.source} ${q.position}: ${q.reason}: ${q.detail}\n`);
  }
  if (r.quarantined > 20) process.stderr.write(`  … see: mailgate quarantine --user ${user}\n`);
  for (const f of r.skippedFiles.slice(0, 20)) {
    process.stderr.write(`  skipped ${f.path}: ${f.reason}\n`);
  }
  if (r.skipped > 20) process.stderr.write(`  … and ${r.skipped - 20} more skipped files\n`);
  // Warnings are coded like errors but do not fail the import (the exit code stays 0).
  // IMPORT_WAITING was printed when it happened (onWarning).
  for (const w of r.warnings.filter((x) => x.code !== 'IMPORT_WAITING'))
    process.stderr.write(`${w.code}: ${w.message}\n`);
  if (r.userCreated) {
    process.stderr.write(
      `next: user ${user} has no password yet; to log in (API, IMAP, web page): ` +
        `mailgate user passwd ${user} --password-env VAR\n`,
    );
  }
}

module.exports = { register };
