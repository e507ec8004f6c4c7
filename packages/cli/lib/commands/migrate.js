'use strict';

const { errors } = require('@mailgate/core');
const importer = require('@mailgate/importer');

/*
 * `mailgate migrate U`: moves one account from its upstream IMAP server (`mailgate legacy
 * add-user U --imap-host …`) into the store while the user's IMAP clients keep working through
 * the migration proxy (route `proxy`, see packages/imap proxy.js):
 *   1. import: `import imap` with the account's settings — resumable, incremental (a re-run
 *      fetches only new mail and refreshes flags), keeping UIDVALIDITY and UIDs, and mirroring
 *      what the user deleted upstream since the last run;
 *   2. verify: per folder, every upstream message stored with its size, counts and bytes equal
 *      (if mail arrived meanwhile, one more import pass, then verify again);
 *   3. cutover: the route becomes `store`; every IMAP server closes the user's relayed
 *      sessions at its next route check (IMAP_IDLE_POLL_MS) and the clients reconnect to the
 *      store, with the UIDVALIDITY and UIDs they knew.
 * `--no-cutover` stops after 2 (a pre-copy while the user is still proxied). Nothing is
 * flipped unless every folder verifies.
 */

// Passes of import + verify before giving up (mail arriving during each pass).
const MAX_PASSES = 3;

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
Result (--json): {user, route, previousRoute, cutover, passes, import: {messages, imported,
duplicates, quarantined, bytes, seconds, warnings}, verify: {ok, mailboxes: [{folder, mailbox,
uidValidity, uidsKept, upstream: {messages, bytes}, local: {messages, bytes}, missing,
differing, ok}]}, seconds}.`,
    )
    .action((user, o) => migrate(ctx, user, o));
}

async function migrate(ctx, user, o) {
  const started = Date.now();
  const say = (line) => {
    if (!o.quiet) process.stderr.write(`migrate ${user}: ${line}\n`);
  };
  const ac = new AbortController();
  const onSig = () => {
    if (ac.signal.aborted) process.exit(130);
    process.stderr.write(
      '\nmailgate: interrupted — finishing the current batch; run the same command again to resume\n',
    );
    ac.abort();
  };
  process.on('SIGINT', onSig);
  process.on('SIGTERM', onSig);
  try {
    const result = await ctx.withService(async (service) => {
      const u = await service.users.get(user);
      const acct = service.upstreamAccount(user);
      const previousRoute = await service.users.route(user);
      const totals = {
        messages: 0,
        imported: 0,
        duplicates: 0,
        quarantined: 0,
        bytes: 0,
        seconds: 0,
        warnings: [],
      };
      let verify = null;
      let passes = 0;
      while (passes < MAX_PASSES) {
        passes++;
        say(`pass ${passes}: importing from ${acct.host}:${acct.port} (route ${previousRoute})`);
        const r = await importer.runImport({
          store: service.store,
          kind: 'imap',
          paths: [],
          user: u.name,
          imap: acct,
          mirrorExpunges: true,
          workers: ctx.config.importWorkers,
          batchSize: ctx.config.batchSize,
          progress: !o.quiet,
          signal: ac.signal,
          log: ctx.log,
        });
        for (const k of ['messages', 'imported', 'duplicates', 'quarantined', 'bytes', 'seconds'])
          totals[k] += r[k];
        totals.warnings.push(...r.warnings);
        if (r.interrupted) return { interrupted: true, previousRoute, totals, passes };
        say(`pass ${passes}: ${r.imported} imported; verifying`);
        verify = await importer.verifyImap({ store: service.store, userId: u.id, imap: acct });
        if (verify.ok) break;
      }
      totals.seconds = Number(totals.seconds.toFixed(3));
      let route = previousRoute;
      if (verify.ok && o.cutover !== false) {
        route = (await service.users.setRoute(user, 'store')).route;
        say(
          previousRoute === 'proxy'
            ? 'route is now store; relayed IMAP sessions close at the next route check'
            : 'route is store',
        );
      }
      return {
        user,
        route,
        previousRoute,
        cutover: verify.ok && o.cutover !== false,
        passes,
        import: totals,
        verify,
      };
    });
    if (result.interrupted) {
      ctx.out(o.json, { user, interrupted: true, import: result.totals }, () => {});
      ctx.setExit(130);
      return;
    }
    result.seconds = Number(((Date.now() - started) / 1000).toFixed(3));
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
  } finally {
    process.off('SIGINT', onSig);
    process.off('SIGTERM', onSig);
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
