'use strict';

const { errors } = require('@mailgate/core');
const importer = require('@mailgate/importer');
const { withInterrupt } = require('../interrupt');
const { boundImportHeap } = require('../heap');

/*
 * `mailgate migrate U`: moves one account from its upstream IMAP server (`mailgate legacy
 * add-user U --imap-host …`) into the store while the user's IMAP clients keep working through
 * the migration proxy (route `proxy`, see packages/imap proxy.js): import, verify, cutover
 * (@mailgate/importer migrateAccount). `--no-cutover` stops after verifying (a pre-copy while
 * the user stays proxied); `--on-login` only arms the migration: the IMAP server starts it in
 * the background at the user's next proxied login (../imap.js).
 */

/**
 * Registers `migrate`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  program
    .command('migrate <user>')
    .description(
      "import a user's upstream IMAP account, verify it, then switch the user's route from proxy to store",
    )
    .option('--no-cutover', 'import and verify only; leave the route as it is')
    .option(
      '--on-login',
      'route the user to proxy and migrate in the background at their next IMAP login through mailgate',
    )
    .option('--json', 'print one JSON result object on stdout')
    .option('--quiet', 'no progress output')
    .addHelpText(
      'after',
      `
Before: \`mailgate user add U --password-env VAR\` (the password clients log in to mailgate
with), \`mailgate legacy add-user U --imap-host H --imap-port P --imap-login L
--imap-password-env VAR2\` (the upstream account) and \`mailgate user route U proxy\`: the
user's IMAP sessions are then relayed to the upstream server. The variable VAR2 must be set
for \`mailgate serve\`/\`mailgate imap\` (the proxy logs in upstream) and for this command.

Re-running is safe: an interrupted migration resumes, a repeated one fetches only what is new.
The route is switched only when every folder verifies (exit 1, VERIFY_FAILED, otherwise).
With --on-login nothing is imported now: the user is routed to proxy, and the IMAP server
(mailgate serve / mailgate imap, which needs VAR2 too) runs this migration in the background
at their next login; it logs the outcome, and arms itself again if it fails.
Result (--json): {user, route, previousRoute, cutover, passes, import: {messages, imported,
duplicates, quarantined, bytes, seconds, warnings}, verify: {ok, mailboxes: [{folder, mailbox,
uidValidity, uidsKept, upstream: {messages, bytes}, local: {messages, bytes}, missing,
differing, ok}]}, seconds}.`,
    )
    .action((user, o) => migrate(ctx, user, o));
}

async function migrate(ctx, user, o) {
  const started = Date.now();
  if (o.onLogin) {
    const r = await ctx.withService(async (service) => {
      service.upstreamAccount(user); // LEGACY_NOT_CONFIGURED now, not at the user's login
      const { previous } = await service.users.setRoute(user, 'proxy');
      await service.users.setMigrateOnLogin(user, true);
      return { user, route: 'proxy', previousRoute: previous, onLogin: true };
    });
    ctx.out(o.json, r, () =>
      process.stderr.write(
        `migrate ${user}: route proxy; the migration starts at the next IMAP login through mailgate\n`,
      ),
    );
    return;
  }
  // This process's job is the import: keep its heaps near their live data (heap.js).
  boundImportHeap();
  const result = await withInterrupt((signal) =>
    ctx.withService(async (service) =>
      importer.migrateAccount({
        store: service.store,
        user,
        imap: service.upstreamAccount(user),
        cutover: o.cutover !== false,
        workers: ctx.config.importWorkers,
        batchSize: ctx.config.batchSize,
        progress: !o.quiet,
        signal,
        say: (line) => {
          if (!o.quiet) process.stderr.write(`migrate ${user}: ${line}\n`);
        },
        log: ctx.log,
      }),
    ),
  );
  result.seconds = Number(((Date.now() - started) / 1000).toFixed(3));
  if (result.interrupted) {
    ctx.out(o.json, result, () => {});
    ctx.setExit(130);
    return;
  }
  delete result.interrupted;
  ctx.out(o.json, result, (x) => printReport(x));
  if (!result.verify.ok) {
    const bad = result.verify.mailboxes.filter((m) => !m.ok);
    ctx.setExit(
      1,
      new errors.VERIFY_FAILED(
        `${bad.map((m) => `${m.folder}: ${m.missing} missing, ${m.differing} differ`).join('; ')}` +
          ' (route not changed; quarantined messages count as missing: mailgate quarantine)',
      ),
    );
  }
}

function printReport(x) {
  for (const m of x.verify.mailboxes) {
    process.stderr.write(
      `  ${m.ok ? 'ok' : 'FAILED'} ${m.folder} → ${m.mailbox}: upstream ${m.upstream.messages} ` +
        `messages / ${m.upstream.bytes} bytes, store ${m.local.messages} / ${m.local.bytes}` +
        `${m.uidsKept ? ', UIDs kept' : ', UIDs not kept'}` +
        `${m.missing || m.differing ? `, ${m.missing} missing, ${m.differing} differ` : ''}\n`,
    );
  }
  for (const w of x.import.warnings) process.stderr.write(`${w.code}: ${w.message}\n`);
  process.stderr.write(
    `${x.cutover ? 'migrated' : x.verify.ok ? 'verified (no cutover)' : 'not migrated'}: ` +
      `${x.import.imported} imported in ${x.passes} pass(es), route ${x.route}, ${x.seconds}s\n`,
  );
}

module.exports = { register };
