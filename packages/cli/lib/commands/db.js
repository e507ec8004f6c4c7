'use strict';

const { errors } = require('@mailgate/core');
const { openDatabase, EmbeddedPostgres } = require('@mailgate/service');

/*
 * `mailgate db start|stop|status`: the embedded PostgreSQL in MAILGATE_HOME; `db backfill-imap`:
 * the IMAP metadata of mail stored before it was derived at import (service transfer).
 */

/**
 * Registers `db`.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  const { config } = ctx;
  const db = program
    .command('db')
    .description('the embedded PostgreSQL (not used when DATABASE_URL is set)');
  const embedded = () => {
    if (config.databaseUrl)
      throw new errors.USAGE('DATABASE_URL is set: mailgate does not manage that server');
    return new EmbeddedPostgres(config.home);
  };
  db.command('start')
    .description('start it and keep it running until `mailgate db stop`')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const e = embedded();
      const d = await openDatabase(config, { persistent: true });
      await d.close();
      ctx.out(o.json, e.status(), (s) =>
        process.stderr.write(`PostgreSQL running on 127.0.0.1:${s.port} (data: ${s.dataDir})\n`),
      );
    });
  db.command('stop')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const e = embedded();
      await e.stop();
      ctx.out(o.json, e.status(), () => process.stderr.write('PostgreSQL stopped\n'));
    });
  db.command('backfill-imap')
    .description(
      'derive and keep the IMAP metadata (ENVELOPE, BODYSTRUCTURE, list-view lines) of mail ' +
        'stored before it was derived at import; resumable',
    )
    .option('--user <user>', 'one user (default: every user)')
    .option('--json', 'print one JSON result object on stdout')
    .action((o) =>
      ctx.withService(async (service) => {
        const r = await service.transfer.backfillImapMeta({ user: o.user });
        ctx.out(o.json, r, (x) =>
          process.stderr.write(
            `${x.kept} messages given IMAP metadata (${x.messages} without it, ${x.skipped} with NUL bytes, ${x.users} users)\n`,
          ),
        );
      }),
    );
  db.command('status')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const s = embedded().status();
      ctx.out(o.json, s, (x) =>
        process.stdout.write(
          x.running
            ? `running on 127.0.0.1:${x.port} (pid ${x.pid}, ${x.persistent ? 'started by db start' : 'on demand'}, ${x.clients.length} clients), data ${x.dataDir}\n`
            : `not running (data ${x.dataDir})\n`,
        ),
      );
    });
}

module.exports = { register };
