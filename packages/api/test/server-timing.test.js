'use strict';

/*
 * Server-Timing names the backend that answered (issue 14): the same requests with
 * backend=pg, mbox, maildir, es (a real Elasticsearch) and imap (a real Dovecot) each carry
 * `<kind>;dur=<ms>;desc="backend <kind>"`, the NDJSON scan included, and an error answered by
 * a backend that is not configured names the kind that was asked, never pg.
 */

const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { addLegacyUser } = require('@mailgate/legacy');
const dovecot = require('@mailgate/dovecot');
const { skipOutsideCI, dovecotMissing, inCI } = require('@mailgate/test-support/skip');
const { esUnavailableReason } = require('@mailgate/test-support/es');
const { msg, legacyMailOf } = require('@mailgate/test-support/mail');
const { setup, req } = require('./helpers');

const imapSkip = skipOutsideCI(__filename, dovecotMissing(), 'imap backend');

const messages = ['alpha okapi', 'beta', 'gamma okapi'].map((subject, i) =>
  msg({ subject, body: `body ${subject}\n`, date: `Tue, 0${i + 1} Mar 2002 10:00:00 +0000` }),
);

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-api-timing-'));
let t;
let alice;
let dove = null;
let esSkip = null;
const kinds = ['pg', 'mbox', 'maildir'];

beforeAll(async () => {
  const { mboxDir, maildir } = legacyMailOf(home, messages);
  addLegacyUser(home, 'alice', { mboxDir, maildir });
  if (!imapSkip) {
    const served = path.join(home, 'imap', 'Maildir');
    fs.cpSync(maildir, served, { recursive: true });
    dove = await dovecot.start({ format: 'maildir', mail: served });
    const env = `MG_TIMING_IMAP_PW_${crypto.randomBytes(3).toString('hex')}`;
    process.env[env] = dove.password;
    addLegacyUser(home, 'alice', {
      imap: { host: dove.host, port: dove.port, login: dove.user, passwordEnv: env, tls: false },
    });
    kinds.push('imap');
  }
  esSkip = skipOutsideCI(__filename, await esUnavailableReason(), 'es backend');
  const es = esSkip
    ? {}
    : {
        elasticsearchUrl: process.env.ELASTICSEARCH_URL,
        esEnv: { MAILGATE_ES_PREFIX: `mgt-timing-${crypto.randomBytes(4).toString('hex')}` },
        esWorker: false,
      };
  t = await setup({ home, ...es });
  alice = await t.user('alice');
  await t.mail('alice', 'INBOX', messages);
  if (!esSkip) {
    await t.app.mailService.syncMirror();
    kinds.push('es');
  }
}, 60000);

afterAll(async () => {
  if (t) {
    const mirror = t.app.mailService.mirror;
    if (mirror) {
      await mirror.client.indices
        .delete({ index: `${mirror.prefix}-*`, ignore_unavailable: true })
        .catch(() => {});
    }
    await t.close();
  }
  await require('@mailgate/legacy').closeBackends();
  if (dove) await dove.stop();
  fs.rmSync(home, { recursive: true, force: true });
});

const get = (url, headers) => req(t.app, alice, { url, headers });
const named = (kind) => new RegExp(`^${kind};dur=\\d+\\.\\d{2};desc="backend ${kind}"$`);

test('every data answer names the backend that answered', async () => {
  // In CI every kind is there (imap: Dovecot, es: Elasticsearch); elsewhere at least the files.
  expect(kinds.length).toBe(inCI ? 5 : kinds.length);
  expect(kinds.length).toBeGreaterThanOrEqual(3);
  for (const kind of kinds) {
    const q = kind === 'pg' ? '' : `backend=${kind}`;
    const urls = [
      `/api/v1/mailboxes?${q}`,
      `/api/v1/mailboxes/INBOX/messages?limit=2&${q}`,
      `/api/v1/search?q=subject:okapi&mailbox=INBOX&${q}`,
    ];
    if (kind !== 'es') urls.push(`/api/v1/mailboxes/INBOX/messages/1?${q}`);
    for (const url of urls) {
      const r = await get(url);
      expect([url, r.statusCode]).toEqual([url, 200]);
      expect([url, r.headers['server-timing']]).toEqual([url, expect.stringMatching(named(kind))]);
    }
    // The answers are the backends' own: the same two messages match everywhere.
    const s = (await get(`/api/v1/search?q=subject:okapi&mailbox=INBOX&${q}`)).json();
    expect([kind, s.total]).toEqual([kind, 2]);
  }
});

test('the NDJSON scan names its backend in the header sent before the rows', async () => {
  for (const kind of kinds.filter((k) => k !== 'es' && k !== 'imap')) {
    const r = await get(`/api/v1/mailboxes/INBOX/messages?backend=${kind}`, {
      accept: 'application/x-ndjson',
    });
    expect(r.statusCode).toBe(200);
    expect(r.headers['server-timing']).toMatch(named(kind));
    expect(r.body.trim().split('\n')).toHaveLength(3);
  }
});

test('an answer from a backend that is not set up names the kind asked, not pg', async () => {
  const bob = await t.user('bob');
  const r = await req(t.app, bob, { url: '/api/v1/mailboxes?backend=mbox' });
  expect(r.statusCode).toBe(400);
  expect(r.json().error.code).toBe('LEGACY_NOT_CONFIGURED');
  expect(r.headers['server-timing']).toMatch(named('mbox'));
});
