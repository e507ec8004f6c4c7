'use strict';

const path = require('node:path');
const crypto = require('node:crypto');
const { loadConfig } = require('@mailgate/core');
const { createMailService } = require('@mailgate/service');
const { createImapServer } = require('@mailgate/imap');
const { runImport } = require('@mailgate/importer');

/*
 * mailgate's own IMAP server on the pg store, as a server of the `imap` door (imap-door.js):
 * the database path behind a real IMAP server, timed by the same raw client as Dovecot (the
 * measurement the 2003 study could not make). The built mbox is imported once per size into a
 * new user of the bench's PostgreSQL (`<work>/pg-home`, or DATABASE_URL); `import` is that
 * import plus the server start. Restores after an expunge un-hide the messages (the purge is
 * off here, as for the pg adapter: phase one of expunge is the client's answer), so uids stay
 * the same. Cold = service (pool, list cache) and database connections closed and reopened.
 */

/**
 * @param {{work: string, size: string, config?: object}} ctx
 * @returns {{name: string, start: Function, stop: Function, restart: Function, close: Function}}
 */
function mailgateImapServer(ctx) {
  const base = ctx.config || loadConfig();
  const env = {
    ...process.env,
    MAILGATE_HOME: base.databaseUrl ? base.home : path.join(ctx.work, 'pg-home'),
    LOG_LEVEL: 'silent',
  };
  // The configured database, not whatever the environment names: without it a test's
  // DATABASE_URL (ctx.config) was ignored and the server used ~/.mailgate's embedded one.
  if (base.databaseUrl) env.DATABASE_URL = base.databaseUrl;
  let service = null;
  let server = null;
  let user = null;
  let password = null;
  let mailboxId = null;
  let uids = [];

  const openService = async () => {
    service = await createMailService({ env, purge: false });
  };
  const listen = async () => {
    // The limiter stays the server's default; one login per connection here.
    server = createImapServer({ service });
    const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
    return { host: '127.0.0.1', port, user: user.name, password };
  };

  return {
    name: 'mailgate-imap',
    async start(box) {
      if (!service) await openService();
      if (!user) {
        password = crypto.randomBytes(12).toString('base64url');
        const name = `bimap-${ctx.size}-${Date.now().toString(36)}`;
        user = await service.users.create(name, { password });
        await runImport({
          store: service.store,
          kind: 'mbox',
          paths: [box.mbox],
          user: name,
          mailbox: 'INBOX',
          workers: base.importWorkers,
          batchSize: base.batchSize,
          progress: false,
        });
        mailboxId = (await service.store.getMailbox(user.id, 'INBOX')).id;
        uids = (await service.store.scanHeaders(user.id, mailboxId)).map((r) => r.uid);
      } else {
        // Untimed restore: every message hidden by an expunge comes back with its uid.
        await service.store.restoreExpunged(user.id, mailboxId, uids);
      }
      return listen();
    },
    /** Untimed, after loading: the import's autovacuum done now, not beside timed requests. */
    async settle() {
      if (service && user) await service.store.vacuumUser(user.id);
    },
    async stop() {
      if (server) await server.close();
      server = null;
    },
    async restart() {
      if (server) await server.close();
      await service.close();
      await openService();
      return { endpoint: await listen() };
    },
    async close() {
      if (server) await server.close();
      server = null;
      if (service) await service.close();
      service = null;
    },
  };
}

module.exports = { mailgateImapServer };
