'use strict';

const { startTestService } = require('@mailgate/test-support/db');
const { createLmtpServer } = require('../lib');

/**
 * A test database, the mail service on it and an LMTP server on a free loopback port.
 * @param {{users?: string[], limits?: object, tls?: object, env?: object}} [o]
 */
async function startLmtp(o = {}) {
  const base = await startTestService('lmtp', o.env);
  const { db, service, home } = base;
  for (const name of o.users || []) await service.users.create(name, {});
  const server = createLmtpServer({
    service,
    limits: o.limits,
    tls: o.tls || null,
    hostname: 'mg.test',
  });
  const { port } = await server.listen({ port: 0, host: '127.0.0.1' });
  return {
    db,
    service,
    server,
    port,
    home,
    async close() {
      await server.close({ graceMs: 1000 });
      await base.close();
    },
  };
}

/** The stored bytes of every message of a user's mailbox, in uid order. */
async function stored(service, user, mailbox) {
  const be = await service.openBackend('pg', user);
  const out = [];
  try {
    for await (const m of be.scanRaw(mailbox)) out.push(m.raw.toString('latin1'));
  } catch (err) {
    if (err.code !== 'MAILBOX_NOT_FOUND') throw err;
  }
  return out;
}

module.exports = { startLmtp, stored };
