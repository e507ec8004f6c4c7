'use strict';

const fp = require('fastify-plugin');
const { PgStore } = require('@mailgate/store');
const { loadConfig, errors } = require('@mailgate/core');
const { openMirror, EsWorker } = require('@mailgate/es');
const legacy = require('@mailgate/legacy');
const { Purger } = require('@mailgate/service');

/*
 * The mail backends the routes reach: the PostgreSQL store, the background purger (phase two
 * of expunge), the Elasticsearch mirror and its outbox worker, and the legacy file/IMAP
 * backends. Owns their lifecycle (start on ready, stop on close). Routes never build a
 * backend themselves.
 */

/**
 * @param {import('fastify').FastifyInstance} app
 * @param {object} opts build() options: knex, elasticsearchUrl, esEnv, esWorker, purgeOnStart, home
 */
async function mailPlugin(app, opts) {
  const store = new PgStore(opts.knex);
  const purger = new Purger(store, app.log);
  app.decorate('store', store);
  app.decorate('purger', purger);

  // Elasticsearch mirror (ELASTICSEARCH_URL): backend=es searches, and the outbox worker.
  let mirror = null;
  let esWorker = null;
  if (opts.elasticsearchUrl) {
    // esEnv: another index prefix (MAILGATE_ES_PREFIX), e.g. the benchmark's scratch indexes.
    mirror = openMirror({ elasticsearchUrl: opts.elasticsearchUrl }, opts.knex, {
      log: app.log,
      ...(opts.esEnv ? { env: opts.esEnv } : {}),
    });
    if (opts.esWorker !== false) esWorker = new EsWorker({ ...mirror, log: app.log });
  }
  app.decorate('mirror', mirror);

  // backend=mbox|maildir|imap: the flat-file paths of @mailgate/legacy, found per user in
  // $MAILGATE_HOME/legacy.json (400 LEGACY_NOT_CONFIGURED when the user has none); null for
  // pg/es. Their mailboxes are named, not looked up in PostgreSQL.
  const legacyHome = opts.home || loadConfig().home;
  app.decorate('legacyOf', (req, b) =>
    legacy.LEGACY_BACKENDS.includes(b) ? legacy.openBackend(legacyHome, req.user.user, b) : null,
  );
  app.decorate('pgOnly', (b) => {
    if (b && b !== 'pg') throw new errors.BACKEND_UNAVAILABLE(b);
  });
  /** The caller's mailbox named in the path (MAILBOX_NOT_FOUND for anyone else's). */
  app.decorate('mailboxOf', (req, name = req.params.mailbox) =>
    app.timed(req, () => store.getMailbox(req.user.userId, name)),
  );

  // Rows hidden by an earlier run that stopped before purging them (crash, shutdown): listed
  // in the background at start; close waits for the listing, so no query outlives the app.
  let leftovers = Promise.resolve();
  app.addHook('onReady', async () => {
    if (opts.purgeOnStart !== false) {
      leftovers = store.pendingPurges().then(
        (list) => list.forEach((p) => purger.schedule(p.userId, p.mailboxId)),
        (err) => app.log.warn({ err: { message: err.message } }, 'could not list pending purges'),
      );
    }
    if (esWorker) esWorker.start();
  });
  app.addHook('onClose', async () => {
    if (esWorker) await esWorker.stop();
    if (mirror) await mirror.close();
    await leftovers;
    await purger.close();
    await legacy.closeBackends();
  });
}

module.exports = fp(mailPlugin, {
  name: 'mailgate-mail',
  fastify: '5.x',
  dependencies: ['mailgate-timing'],
});
