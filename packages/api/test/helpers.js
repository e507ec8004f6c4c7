'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { hashPassword } = require('@mailgate/core');
const importer = require('@mailgate/importer');
const { createTestDatabase } = require('@mailgate/test-support/db');
const { mboxOf } = require('@mailgate/test-support/mail');
const { build } = require('../lib/app');

const ADMIN = 'admin-secret-token-for-tests';

/**
 * A test database plus an app on it, with helpers to add users and mail.
 * @param {object} [appOpts] extra build() options
 */
async function setup(appOpts = {}) {
  const db = await createTestDatabase();
  const app = await build({ knex: db.knex, adminToken: ADMIN, docs: true, ...appOpts });
  await app.ready();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-api-'));
  const log = { info() {}, warn() {}, debug() {}, error() {}, child: () => log };
  /** creates a user with a password and returns a bearer token */
  async function user(name, password = 'correct horse battery') {
    await db.store.createUser(name, { passwordHash: await hashPassword(password) });
    const u = await db.store.getUser(name);
    return (await db.store.createToken(u.id)).token;
  }
  return {
    db,
    app,
    user,
    /** creates users (default password) and returns their bearer tokens, in order */
    async users(...names) {
      const tokens = [];
      for (const name of names) tokens.push(await user(name));
      return tokens;
    },
    /** imports raw messages into a mailbox (in this process, no workers) */
    async mail(user, mailbox, messages) {
      const file = path.join(tmp, `${user}-${mailbox.replace(/\W/g, '_')}-${Date.now()}.mbox`);
      fs.writeFileSync(file, mboxOf(messages));
      return importer.runImport({
        store: db.store,
        kind: 'mbox',
        paths: [file],
        user,
        mailbox,
        workers: 0,
        log,
      });
    },
    async close() {
      await app.close();
      await db.drop();
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
}

/**
 * Per-file fixture: setup(appOpts) in beforeAll (the returned object then has its fields:
 * app, db, user(), users(), mail()), closed after the file. Hooks the file registers later
 * run after these.
 * @param {object} [appOpts]
 */
function useApi(appOpts) {
  const t = {};
  beforeAll(async () => {
    Object.assign(t, await setup(appOpts));
  });
  afterAll(() => t.close());
  return t;
}

/** inject with a bearer token */
function req(app, token, opts) {
  const headers = { ...(opts.headers || {}) };
  if (token) headers.authorization = `Bearer ${token}`;
  return app.inject({ ...opts, headers });
}

module.exports = { setup, useApi, req, ADMIN };
