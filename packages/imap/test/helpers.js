'use strict';

const { ImapFlow } = require('imapflow');
const { startTestService } = require('@mailgate/test-support/db');
const { createImapServer } = require('../lib');

/**
 * A test database, the mail service on it, and an IMAP server on a free loopback port.
 * @param {{users?: Record<string, string>, limits?: object, tls?: object}} [o] users: name → password
 */
async function startPgServer(o = {}) {
  const base = await startTestService('imap');
  const { db, service } = base;
  for (const [name, password] of Object.entries(o.users || {})) {
    await service.users.create(name, { password });
  }
  const server = createImapServer({
    service,
    limits: { idlePollMs: 100, ...(o.limits || {}) },
    tls: o.tls || null,
    limiter: o.limiter,
  });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  return {
    db,
    service,
    server,
    port,
    /** an imapflow client for user (not connected) */
    client: (user, pass, extra) => loopbackClient(port, user, pass, extra),
    async close() {
      await server.close();
      await base.close();
    },
  };
}

/** An imapflow client of a test server on loopback, plain text, not connected yet. */
function loopbackClient(port, user, pass, extra = {}) {
  return new ImapFlow({
    host: '127.0.0.1',
    port,
    secure: false,
    auth: { user, pass },
    logger: false,
    ...extra,
  });
}

module.exports = { startPgServer, loopbackClient };
