'use strict';

/*
 * mailgate's IMAP server in a process of its own, for the imap door's cold samples
 * (mailgate-imap-server.js, issue 35 item 1): a cold sample must meet a server that has
 * nothing in memory, so each one is a new process (and a PostgreSQL stopped and started).
 * The same pieces as `mailgate imap` (createMailService + the IMAP server), with the two
 * differences a benchmark needs and nothing else: the background purge is off (phase one of
 * expunge is the client's answer; the bench un-hides expunged rows between samples; on with
 * MAILGATE_BENCH_PURGE=1) and the
 * port is the kernel's choice, announced as one JSON line on stdout. Environment as for
 * `mailgate imap` (MAILGATE_HOME, DATABASE_URL, MAILGATE_USER_CONCURRENCY, LOG_LEVEL).
 * SIGTERM closes the server and the service (the last client stops an on-demand database).
 */

const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');

async function main() {
  // MAILGATE_BENCH_PURGE=1 (bench imap-losses): the purge runs as under `mailgate imap`, so an
  // expunge's phase two is timed where it really happens.
  const service = await createMailService({
    env: process.env,
    purge: process.env.MAILGATE_BENCH_PURGE === '1',
  });
  const server = createImapServer({ service });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  let closing = false;
  const shutdown = async () => {
    if (closing) return;
    closing = true;
    await server.close().catch(() => {});
    await service.close().catch(() => {});
    process.exit(0);
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdout.write(JSON.stringify({ port, pid: process.pid }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`imap-child: ${err.code || 'FAILED'}: ${err.message}\n`);
  process.exit(1);
});
