'use strict';

const { errors } = require('@mailgate/core');
const { positiveInt } = require('../context');

/*
 * `mailgate es sync|reindex|verify`: the Elasticsearch mirror (packages/es/README.md).
 */

/**
 * Registers `es` and its subcommands.
 * @param {import('commander').Command} program
 * @param {import('../context').CliContext} ctx
 */
function register(program, ctx) {
  // The service owns the mirror (and closes it): ES_NOT_CONFIGURED without ELASTICSEARCH_URL;
  // with --user, USER_NOT_FOUND before any work when the user does not exist.
  const cmd = program
    .command('es')
    .description('the Elasticsearch mirror (needs ELASTICSEARCH_URL; see packages/es/README.md)');

  cmd
    .command('sync')
    .description('ship every queued change (outbox) to Elasticsearch, then exit')
    .option('--batch <n>', 'outbox rows per bulk batch (default 5000)', positiveInt('--batch'))
    .option(
      '--attempts <n>',
      'tries per batch before giving up (default 6)',
      positiveInt('--attempts'),
    )
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      // Test hook for the crash test: pause after each acknowledged bulk, before COMMIT.
      const pauseMs = Number(process.env.MAILGATE_ES_SYNC_PAUSE_MS) || 0;
      const r = await ctx.withService((service) =>
        service.syncMirror({
          batchRows: o.batch,
          maxAttempts: o.attempts,
          afterBulk: pauseMs
            ? async () => {
                process.stderr.write('es sync: bulk acknowledged\n');
                await new Promise((res) => setTimeout(res, pauseMs));
              }
            : undefined,
          onProgress: (s) => process.stderr.write(o.json ? '' : `\r${s.rows} changes shipped`),
        }),
      );
      ctx.out(o.json, r, (x) =>
        process.stderr.write(
          `\nsynced ${x.rows} changes (${x.indexed} indexed, ${x.deleted} deleted, ` +
            `${x.skipped} already there) in ${x.seconds}s (${x.rate}/s); ${x.pending} pending\n`,
        ),
      );
    });

  cmd
    .command('reindex')
    .description('rebuild indexes from PostgreSQL into new indexes and switch the aliases')
    .option('--user <user>', 'only this user')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const r = await ctx.withService((service) => service.reindexMirror({ user: o.user }));
      ctx.out(o.json, r, (x) => {
        for (const u of x.users) {
          process.stderr.write(
            `${u.user}: ${u.documents} documents → ${u.index} (${u.seconds}s)\n`,
          );
        }
      });
    });

  cmd
    .command('verify')
    .description('compare PostgreSQL and Elasticsearch per user and mailbox (exit 1 on drift)')
    .option('--user <user>', 'only this user')
    .option('--json', 'print one JSON result object on stdout')
    .action(async (o) => {
      const r = await ctx.withService((service) => service.verifyMirror({ user: o.user }));
      ctx.out(o.json, r, (x) => {
        for (const u of x.users) {
          if (u.mappingOutdated) {
            process.stdout.write(`DRIFT ${u.user}: index of an older mapping (es reindex)\n`);
          }
          for (const b of u.mailboxes) {
            process.stdout.write(
              `${b.ok ? 'ok   ' : 'DRIFT'} ${u.user} ${b.mailbox}: pg ${b.pg}, es ${b.es}` +
                (b.ok
                  ? ''
                  : `, missing ${b.missingCount}, extra ${b.extraCount}, stale ${b.staleCount}`) +
                '\n',
            );
          }
        }
        process.stdout.write(`${x.ok ? 'OK' : 'DRIFT'} (${x.pending} changes queued)\n`);
      });
      if (!r.ok)
        ctx.setExit(
          1,
          new errors.VERIFY_FAILED(
            'Elasticsearch differs from PostgreSQL (es reindex rebuilds it)',
          ),
        );
    });
}

module.exports = { register };
