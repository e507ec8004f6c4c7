'use strict';

const fs = require('node:fs');
const { errors } = require('@mailgate/core');
const { withInterrupt } = require('../interrupt');
const { boundImportHeap } = require('../heap');
const { positiveInt } = require('../context');

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
    .command('migrate [user]')
    .description(
      "import a user's upstream IMAP account, verify it, then switch the user's route from proxy to store",
    )
    .option('--no-cutover', 'import and verify only; leave the route as it is')
    .option(
      '--on-login',
      'route the user to proxy and migrate in the background at their next IMAP login through mailgate',
    )
    .option(
      '--accounts <file>',
      'whole server: register the accounts of FILE (CSV or JSON lines) and enqueue them',
    )
    .option(
      '--all',
      'whole server: register and enqueue every user routed to proxy with an upstream account',
    )
    .option('--worker', 'whole server: pull migration jobs until interrupted (or --until-done)')
    .option(
      '--concurrency <n>',
      'accounts this worker migrates at once (default 1)',
      positiveInt('--concurrency'),
    )
    .option('--until-done', 'with --worker: stop once every account is cut over or failed')
    .option(
      '--status',
      'whole server: accounts queued/running/verified/cut over/failed, rate and ETA',
    )
    .option(
      '--report',
      'whole server: every account with its counts, every failure with its reason',
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
    .addHelpText(
      'after',
      `
Whole server (docs/migrating-a-server.md): \`mailgate migrate --accounts FILE\` (CSV with a
header: user,host,port,login,password_env,password_file,security,folders,relay — or JSON lines
with the same fields in camelCase; never a password, only where a worker reads it; relay:
lmtp://host:port or smtp://host:port, where the user's mail goes until the cutover) or \`--all\`,
then any number of \`mailgate migrate --worker [--concurrency N]\` processes on any machines
(each needs the password variables or files), \`mailgate migrate --status [--json]\` while it
runs and \`mailgate migrate --report [--json]\` at the end. Limits: MAILGATE_MIGRATE_PER_HOST,
MAILGATE_MIGRATE_RATE, MAILGATE_MIGRATE_RETRIES, MAILGATE_MIGRATE_BACKOFF,
MAILGATE_MIGRATE_EXPIRE.`,
    )
    .action((user, o) => dispatch(ctx, user, o));
}

/** One account (`migrate U`) or one of the whole-server modes. */
async function dispatch(ctx, user, o) {
  const modes = ['accounts', 'all', 'worker', 'status', 'report'].filter((k) => o[k]);
  if (modes.length > 1) throw new errors.USAGE(`choose one of --${modes.join(', --')}`);
  if (modes.length && user) throw new errors.USAGE(`--${modes[0]} takes no user`);
  if (!modes.length && !user)
    throw new errors.USAGE('migrate needs a user, --accounts FILE or --all');
  if ((o.concurrency || o.untilDone) && !o.worker) {
    throw new errors.USAGE('--concurrency and --until-done go with --worker');
  }
  if (!modes.length) return migrate(ctx, user, o);
  return fleetCommands[modes[0]](ctx, o);
}

const fleetCommands = {
  async accounts(ctx, o) {
    let text;
    try {
      text = fs.readFileSync(o.accounts, 'utf8');
    } catch (err) {
      throw new errors.SOURCE_NOT_FOUND(o.accounts, err.code || 'unreadable');
    }
    const r = await ctx.withService(async (service) =>
      service.fleet.register(service.fleet.parseAccounts(text, o.accounts)),
    );
    ctx.out(o.json, r, printRegistered);
  },
  async all(ctx, o) {
    const r = await ctx.withService((service) => service.fleet.registerAll());
    ctx.out(o.json, r, printRegistered);
  },
  async worker(ctx, o) {
    boundImportHeap();
    const r = await withInterrupt((signal) =>
      ctx.withService((service) =>
        service.fleet.work({
          concurrency: o.concurrency || 1,
          untilDone: Boolean(o.untilDone),
          signal,
        }),
      ),
    );
    ctx.out(o.json, r, (x) =>
      process.stderr.write(`migrate worker ${x.worker}: ${x.runs} job(s) run\n`),
    );
  },
  async status(ctx, o) {
    const r = await ctx.withService((service) => service.fleet.status(), { readOnly: true });
    ctx.out(o.json, r, printStatus);
  },
  async report(ctx, o) {
    const r = await ctx.withService((service) => service.fleet.report(), { readOnly: true });
    ctx.out(o.json, r, printFleetReport);
    if (r.failures.length) {
      const names = r.failures.map((f) => f.user);
      ctx.setExit(
        1,
        new errors.MIGRATION_INCOMPLETE(
          names.length,
          names.slice(0, 10).join(', ') + (names.length > 10 ? ', …' : ''),
        ),
      );
    }
  },
};

function printRegistered(x) {
  process.stderr.write(
    `registered ${x.registered} account(s): ${x.queued} queued, ${x.alreadyCutOver} already cut over\n`,
  );
}

const mb = (b) => `${(b / 1048576).toFixed(1)} MB`;
const eta = (s) => (s == null ? '?' : s >= 3600 ? `${(s / 3600).toFixed(1)} h` : `${s} s`);

function printStatus(x) {
  const f = x.fleet;
  process.stdout.write(
    `accounts ${f.accounts}: ${f.queued} queued, ${f.running} running, ${f.verified} verified, ` +
      `${f.cutover} cut over, ${f.failed} failed\n` +
      `messages ${f.messages} (${mb(f.bytes)}), ${f.rate} msg/s, ETA ${eta(f.etaSeconds)}\n`,
  );
  for (const a of x.running) {
    process.stdout.write(
      `  ${a.user} (${a.upstream}, ${a.worker}): ${a.messages}/${a.upstreamMessages ?? '?'} ` +
        `messages, ${a.rate} msg/s, ETA ${eta(a.etaSeconds)}\n`,
    );
  }
}

function printFleetReport(x) {
  for (const a of x.accounts) {
    process.stdout.write(
      `${a.user}\t${a.state}\t${a.route}\t${a.messages}/${a.upstreamMessages ?? '?'} messages\t` +
        `${mb(a.bytes)}\t${a.error ? `${a.error.code}: ${a.error.message}` : ''}\n`,
    );
  }
  const f = x.fleet;
  process.stdout.write(
    `${f.accounts} accounts: ${f.cutover} cut over, ${f.failed} failed; ${f.messages} messages ` +
      `(${mb(f.bytes)}) in ${f.seconds} s, ${f.rate} msg/s\n`,
  );
  for (const e of x.failures) process.stdout.write(`FAILED ${e.user}: ${e.code}: ${e.message}\n`);
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
      service.transfer.migrateAccount({
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
