'use strict';

const { Command, CommanderError, Option } = require('commander');
const {
  loadConfig,
  openDatabase,
  createLogger,
  isCoded,
  EmbeddedPostgres,
  hashPassword,
} = require('@mailgate/core');
const { PgStore } = require('@mailgate/store');
const importer = require('@mailgate/importer');
const legacy = require('@mailgate/legacy');
const { demo } = require('./demo');
const { printTable } = require('./format');
const { serve, createToken, serveDemo } = require('./serve');
const { addEsCommands, cliSearchEs } = require('@mailgate/es/lib/cli');

/*
 * The CLI contract (brief "Contracts"): `--json` prints exactly one JSON object on stdout;
 * progress and logs go to stderr; exit 0 ok, 1 failure, 2 bad usage.
 */

class UsageError extends Error {}

/**
 * Runs the CLI.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code
 */
async function main(argv) {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`mailgate: ${err.message}\n`);
    return 2;
  }
  const log = createLogger({ logLevel: process.env.LOG_LEVEL || 'warn' });
  let exitCode = 0;
  const program = buildProgram(config, log, (c) => {
    exitCode = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      if (
        err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.code === 'commander.help'
      )
        return 0;
      return 2;
    }
    if (err instanceof UsageError || (err && err.code === 'USAGE')) {
      process.stderr.write(`mailgate: ${err.message}\n`);
      return 2;
    }
    if (isCoded(err)) {
      process.stderr.write(`mailgate: ${err.code}: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  return exitCode;
}

function buildProgram(config, log, setExit) {
  const program = new Command('mailgate')
    .description('Move legacy mail (mbox, Maildir, MH) into PostgreSQL and serve it fast.')
    .version(require('../package.json').version)
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      `
Environment: MAILGATE_HOME (default ~/.mailgate), DATABASE_URL (external PostgreSQL instead of
the embedded one), ELASTICSEARCH_URL (enables the search mirror), MAILGATE_ES_PREFIX,
MAILGATE_ADMIN_TOKEN, PORT, HOST, LOG_LEVEL, MAILGATE_IMPORT_WORKERS, MAILGATE_BATCH_SIZE
(README "Configuration").
Exit codes: 0 ok, 1 failure, 2 bad usage.`,
    );

  const withStore = async (fn, opts = {}) => {
    const db = await openDatabase(config, opts);
    try {
      return await fn(new PgStore(db.knex), db);
    } finally {
      await db.close();
    }
  };
  const out = (json, obj, human) => {
    if (json) process.stdout.write(JSON.stringify(obj) + '\n');
    else human(obj);
  };

  // ---- import ----
  const imp = program.command('import').description('import mail into the store');
  const importAction = (kind) => async (paths, o) => {
    if (!o.user) throw new UsageError(`import ${kind}: --user is required`);
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
      const report = await withStore((store) =>
        importer.runImport({
          store,
          kind,
          paths: Array.isArray(paths) ? paths : [paths],
          user: o.user,
          mailbox: o.mailbox,
          variant: o.variant,
          imap: o.imap,
          workers: config.importWorkers,
          batchSize: config.batchSize,
          progress: !o.quiet,
          signal: ac.signal,
          log,
        }),
      );
      out(o.json, report, (r) => {
        process.stderr.write(
          `${r.interrupted ? 'interrupted' : 'done'}: ${r.messages} messages, ${r.imported} imported, ` +
            `${r.duplicates} already present, ${r.quarantined} quarantined, ` +
            `${(r.bytes / 1048576).toFixed(1)} MB in ${r.seconds}s (${r.rate} msg/s)\n`,
        );
        for (const q of r.quarantine.slice(0, 20)) {
          process.stderr.write(
            `  quarantined ${q.source} ${q.position}: ${q.reason}: ${q.detail}\n`,
          );
        }
        if (r.quarantined > 20)
          process.stderr.write(`  … see: mailgate quarantine --user ${o.user}\n`);
      });
      if (report.interrupted) setExit(130);
    } finally {
      process.off('SIGINT', onSig);
      process.off('SIGTERM', onSig);
    }
  };
  const common = (cmd) =>
    cmd
      .requiredOption('--user <user>', 'mailgate user who owns the mail (created if missing)')
      .option('--json', 'print one JSON result object on stdout')
      .option('--quiet', 'no progress output');
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
  ).action(importAction('mbox'));
  common(
    imp
      .command('maildir <dir>')
      .description('import a Maildir or Maildir++ tree (subfolders become mailboxes)'),
  ).action(importAction('maildir'));
  common(
    imp
      .command('mh <dir>')
      .description(
        'import MH-style folders of numbered files, recursively (folder path = mailbox)',
      ),
  ).action(importAction('mh'));
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
      .option('--tls', 'implicit TLS (IMAPS)')
      .option('--no-tls', 'plain connection (STARTTLS not attempted)'),
  ).action((o) => {
    if (process.env[o.passwordEnv] == null)
      throw new UsageError(`import imap: environment variable ${o.passwordEnv} is not set`);
    const imap = { host: o.host, port: o.port, login: o.login, passwordEnv: o.passwordEnv };
    if (o.tls !== undefined) imap.tls = o.tls;
    return importAction('imap')([], { ...o, imap });
  });

  // ---- export ----
  const exp = program.command('export').description('export mail from the store');
  exp
    .command('mbox')
    .description('write one mailbox as an mbox file')
    .requiredOption('--user <user>')
    .requiredOption('--mailbox <name>')
    .requiredOption('--out <file>')
    .addOption(
      new Option('--variant <variant>', 'original reproduces an imported mbox byte for byte')
        .choices(['original', 'mboxrd', 'mboxo', 'mboxcl2'])
        .default('original'),
    )
    .option('--json')
    .action(async (o) => {
      const r = await withStore((store) => importer.exportMbox({ store, ...o }));
      out(o.json, r, (x) =>
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
      .requiredOption('--user <user>')
      .requiredOption('--out <dir>')
      .option('--json')
      .action(async (o) => {
        const fn = kind === 'mh' ? importer.exportMh : importer.exportMaildir;
        const r = await withStore((store) => fn({ store, ...o }));
        out(o.json, r, (x) =>
          process.stderr.write(
            `wrote ${x.messages} messages in ${x.mailboxes} mailboxes to ${x.out}\n`,
          ),
        );
      });
  }

  // ---- verify ----
  program
    .command('verify')
    .description('check that every message of a source is stored byte-identical (exit 0 only then)')
    .addArgument(
      new (require('commander').Argument)('<kind>', 'source kind').choices([
        'mbox',
        'maildir',
        'mh',
      ]),
    )
    .argument('<path>')
    .requiredOption('--user <user>')
    .option('--mailbox <name>', 'mbox: mailbox the file was imported into')
    .option('--json')
    .action(async (kind, p, o) => {
      const r = await withStore((store) => importer.verifySource({ store, kind, path: p, ...o }));
      out(o.json, r, (x) => {
        process.stderr.write(
          `${x.ok ? 'OK' : 'FAILED'}: ${x.messages} source messages, ${x.present} present and identical, ` +
            `${x.missing} missing, ${x.mismatched} differ, ${x.unreadable} unreadable\n`,
        );
        for (const pr of x.problems.slice(0, 20)) {
          process.stderr.write(`  ${pr.mailbox} ${pr.position}: ${pr.problem}\n`);
        }
      });
      if (!r.ok) setExit(1);
    });

  // ---- ls / search / quarantine ----
  program
    .command('ls')
    .description("list a user's mailboxes, or a mailbox's header rows")
    .requiredOption('--user <user>')
    .option('--mailbox <name>')
    .option('--limit <n>', 'header rows to show', (v) => positiveInt(v, '--limit'))
    .option('--json')
    .action(async (o) => {
      await withStore(async (store) => {
        const user = await store.getUser(o.user);
        if (!o.mailbox) {
          const boxes = await store.listMailboxes(user.id);
          out(o.json, { user: o.user, mailboxes: boxes }, (x) =>
            printTable(x.mailboxes, ['name', 'total', 'unseen', 'uidvalidity', 'uidnext']),
          );
          return;
        }
        const mb = await store.getMailbox(user.id, o.mailbox);
        const rows = await store.scanHeaders(user.id, mb.id, { limit: o.limit });
        out(o.json, { user: o.user, mailbox: o.mailbox, messages: rows }, (x) =>
          printTable(
            x.messages.map((r) => ({
              uid: r.uid,
              date: r.date ? r.date.slice(0, 16).replace('T', ' ') : '',
              from: r.from ? r.from.address || r.from.name : '',
              subject: r.subject || '',
              size: r.size,
              flags: r.flags.join(' '),
            })),
            ['uid', 'date', 'from', 'subject', 'size', 'flags'],
          ),
        );
      });
    });

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
    .requiredOption('--user <user>')
    .option('--mailbox <name>')
    .addOption(
      new Option('--backend <backend>')
        .choices(['pg', 'es', 'mbox', 'maildir', 'imap'])
        .default('pg'),
    )
    .option('--json')
    .action(async (terms, o) => {
      const query = terms.join(' ');
      if (legacy.LEGACY_BACKENDS.includes(o.backend)) {
        // The flat-file paths answer from the files / the upstream server, not from the store.
        const backend = legacy.openBackend(config.home, o.user, o.backend);
        try {
          const r = await backend.search(query, { mailbox: o.mailbox });
          const per = new Map();
          for (const h of r.hits) per.set(h.mailbox, [...(per.get(h.mailbox) || []), h.uid]);
          const result = {
            total: r.total,
            uids: r.hits.map((h) => h.uid),
            mailboxes: [...per].map(([mailbox, uids]) => ({ mailbox, uids })),
          };
          out(o.json, result, (x) => {
            process.stdout.write(`${x.total} matching messages\n`);
            for (const m of x.mailboxes)
              process.stdout.write(`  ${m.mailbox}: ${m.uids.join(' ')}\n`);
          });
        } finally {
          await legacy.closeBackends();
        }
        return;
      }
      await withStore(async (store) => {
        const user = await store.getUser(o.user);
        let mailboxId;
        if (o.mailbox) mailboxId = (await store.getMailbox(user.id, o.mailbox)).id;
        const r =
          o.backend === 'es'
            ? await cliSearchEs(config, store, user.id, query, { mailboxId })
            : await store.search(user.id, query, { mailboxId });
        const boxes = await store
          .knex('mailboxes')
          .where({ user_id: user.id })
          .select('id', 'name');
        const names = new Map(boxes.map((b) => [b.id, b.name]));
        const per = new Map();
        for (const h of r.hits) {
          const n = names.get(h.mailboxId);
          if (!per.has(n)) per.set(n, []);
          per.get(n).push(h.uid);
        }
        const result = {
          total: r.total,
          uids: r.hits.map((h) => h.uid),
          mailboxes: [...per].map(([mailbox, uids]) => ({ mailbox, uids })),
        };
        out(o.json, result, (x) => {
          process.stdout.write(`${x.total} matching messages\n`);
          for (const m of x.mailboxes)
            process.stdout.write(`  ${m.mailbox}: ${m.uids.join(' ')}\n`);
        });
      });
    });

  program
    .command('legacy')
    .description('legacy backends (direct mbox/maildir, upstream IMAP) for search and the API')
    .command('add-user <user>')
    .description("record where a user's legacy mail lives ($MAILGATE_HOME/legacy.json)")
    .option('--mbox-dir <dir>', 'directory of mbox files (inbox.mbox or INBOX is INBOX)')
    .option('--maildir <dir>', 'Maildir / Maildir++ root')
    .option('--imap-host <host>')
    .option('--imap-port <port>', 'upstream IMAP port', (v) => Number(v))
    .option('--imap-login <login>')
    .option('--imap-password-env <var>', 'environment variable holding the upstream password')
    .option('--imap-tls', 'implicit TLS to the upstream server')
    .option('--json')
    .action((user, o) => {
      const entry = { mboxDir: o.mboxDir, maildir: o.maildir };
      if (o.imapHost) {
        if (!o.imapLogin || !o.imapPasswordEnv)
          throw new UsageError(
            'legacy add-user: --imap-host needs --imap-login and --imap-password-env',
          );
        entry.imap = {
          host: o.imapHost,
          port: o.imapPort || (o.imapTls ? 993 : 143),
          login: o.imapLogin,
          passwordEnv: o.imapPasswordEnv,
          tls: Boolean(o.imapTls),
        };
      }
      if (!entry.mboxDir && !entry.maildir && !entry.imap)
        throw new UsageError('legacy add-user: give --mbox-dir, --maildir and/or --imap-host');
      // Only the variable's name is stored and printed, never the password.
      const saved = legacy.addLegacyUser(config.home, user, entry);
      out(o.json, { user, ...saved }, (x) =>
        process.stderr.write(`legacy storage of ${user}: ${JSON.stringify(x)}\n`),
      );
    });

  program
    .command('quarantine')
    .description('list messages that could not be imported, with the reason')
    .requiredOption('--user <user>')
    .option('--json')
    .action(async (o) => {
      await withStore(async (store) => {
        const user = await store.getUser(o.user);
        const rows = await store.listQuarantine(user.id);
        out(o.json, { total: rows.length, quarantine: rows }, (x) =>
          printTable(x.quarantine, ['id', 'source', 'position', 'reason', 'detail']),
        );
      });
    });

  // ---- users ----
  const usr = program.command('user').description('manage users');
  usr
    .command('add <name>')
    .description(
      'create a user (password read from the environment variable named by --password-env)',
    )
    .option('--password-env <VAR>')
    .option('--json')
    .action(async (name, o) => {
      let passwordHash = null;
      if (o.passwordEnv) {
        const pw = process.env[o.passwordEnv];
        if (!pw) throw new UsageError(`environment variable ${o.passwordEnv} is empty or unset`);
        passwordHash = await hashPassword(pw);
      }
      const user = await withStore((store) => store.createUser(name, { passwordHash }));
      out(o.json, { id: user.id, name: user.name }, (u) =>
        process.stderr.write(`created user ${u.name}\n`),
      );
    });

  // ---- db ----
  const db = program
    .command('db')
    .description('the embedded PostgreSQL (not used when DATABASE_URL is set)');
  const embedded = () => {
    if (config.databaseUrl)
      throw new UsageError('DATABASE_URL is set: mailgate does not manage that server');
    return new EmbeddedPostgres(config.home);
  };
  db.command('start')
    .description('start it and keep it running until `mailgate db stop`')
    .option('--json')
    .action(async (o) => {
      const e = embedded();
      const d = await openDatabase(config, { persistent: true });
      await d.close();
      out(o.json, e.status(), (s) =>
        process.stderr.write(`PostgreSQL running on 127.0.0.1:${s.port} (data: ${s.dataDir})\n`),
      );
    });
  db.command('stop')
    .option('--json')
    .action(async (o) => {
      const e = embedded();
      await e.stop();
      out(o.json, e.status(), () => process.stderr.write('PostgreSQL stopped\n'));
    });
  db.command('status')
    .option('--json')
    .action(async (o) => {
      const s = embedded().status();
      out(o.json, s, (x) =>
        process.stdout.write(
          x.running
            ? `running on 127.0.0.1:${x.port} (pid ${x.pid}, ${x.persistent ? 'started by db start' : 'on demand'}, ${x.clients.length} clients), data ${x.dataDir}\n`
            : `not running (data ${x.dataDir})\n`,
        ),
      );
    });

  // ---- demo ----
  program
    .command('demo')
    .description('import a real sample (SpamAssassin public corpus) and show how to look at it')
    .option('--user <user>', 'demo user', 'demo')
    .option('--no-serve', 'do not start the HTTP API afterwards (it only starts on a terminal)')
    .action(async (o) => {
      await withStore((store) => demo({ store, user: o.user, config, log }));
      await serveDemo({ config, log, user: o.user, noServe: !o.serve });
    });

  // ---- Elasticsearch mirror ----
  addEsCommands(program, { config, log, withStore, out, setExit });

  // ---- HTTP API ----
  program
    .command('serve')
    .description('run the webmail HTTP API on HOST:PORT (default 127.0.0.1:3000) until Ctrl-C')
    .action(async () => {
      await serve(config, log);
      // Keeps running: the server's SIGTERM/SIGINT handler shuts down and exits.
      await new Promise(() => {});
    });
  program
    .command('token')
    .description('API bearer tokens')
    .command('create <user>')
    .description('create a bearer token for a user (printed once; stored hashed)')
    .option('--ttl-days <n>', 'lifetime in days (default 30)', (v) => positiveInt(v, '--ttl-days'))
    .option('--json')
    .action(async (name, o) => {
      const t = await withStore((store) => createToken(store, name, { ttlDays: o.ttlDays }));
      out(o.json, t, (x) => process.stdout.write(`${x.token}\n`));
    });

  // ---- benchmark (issue 6; packages/bench) ----
  require('@mailgate/bench/lib/cli').addBenchCommand(program, { config, out });

  return program;
}

function positiveInt(v, name) {
  const n = Number(v);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`${name} must be a positive integer`);
  return n;
}

module.exports = { main };
