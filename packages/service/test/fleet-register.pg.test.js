'use strict';

/*
 * Registering a fleet (issue 33 item 1) on a real PostgreSQL, without an upstream: `--all`
 * takes every user routed to proxy with an upstream account (legacy.json) and nobody else;
 * registering routes each account to proxy, writes its upstream for this machine's proxy
 * (never a password) and enqueues one pg-boss job each; re-registering leaves a cut-over
 * account alone and queues a failed one again.
 */

const fs = require('node:fs');
const path = require('node:path');
const { addLegacyUser, loadLegacyConfig } = require('@mailgate/legacy');
const { useServiceSuite } = require('@mailgate/test-support/db');
const { QUEUE } = require('../lib/fleet');

const ctx = useServiceSuite('fleet-register');

/** Jobs of the fleet's queue waiting to be taken (pg-boss's own table). */
async function waitingJobs() {
  const r = await ctx.db.knex.raw(
    "SELECT data->>'userId' AS user_id FROM pgboss.job WHERE name = ? AND state IN ('created', 'retry')",
    [QUEUE],
  );
  return r.rows.map((x) => Number(x.user_id)).sort((a, b) => a - b);
}

test('--all registers the proxied users with an upstream, and only them', async () => {
  const { service } = ctx;
  await service.users.create('pat', {});
  await service.users.create('sam', {});
  await service.users.create('kim', {});
  for (const u of ['pat', 'sam']) await service.users.setRoute(u, 'proxy');
  addLegacyUser(ctx.tmp, 'pat', {
    imap: {
      host: 'old.example',
      port: 993,
      login: 'pat@old',
      passwordEnv: 'PAT_PW',
      security: 'tls',
    },
  });
  addLegacyUser(ctx.tmp, 'kim', {
    imap: { host: 'old.example', port: 143, login: 'kim', passwordEnv: 'KIM_PW' },
  });
  // sam: proxied without an upstream account; kim: an upstream but routed to store.
  const r = await service.fleet.registerAll();
  expect(r).toMatchObject({ registered: 1, queued: 1, alreadyCutOver: 0 });
  const { accounts } = await service.store.migrationAccounts();
  expect(accounts).toEqual([
    expect.objectContaining({
      user: 'pat',
      host: 'old.example',
      port: 993,
      login: 'pat@old',
      passwordSource: 'env:PAT_PW',
      security: 'tls',
      state: 'queued',
      route: 'proxy',
    }),
  ]);
  expect(await waitingJobs()).toEqual([(await service.users.get('pat')).id]);
});

test('an accounts file: users made and routed to proxy, upstream for the proxy, no password anywhere', async () => {
  const { service } = ctx;
  const text =
    'user,host,port,login,password_env,password_file,security\n' +
    'ann,old.example,143,ann,,/run/pw/ann,starttls\n' +
    'bo,old.example,143,bo,BO_PW,,starttls\n';
  const r = await service.fleet.register(service.fleet.parseAccounts(text, 'a.csv'));
  expect(r).toMatchObject({ registered: 2, queued: 2 });
  expect(await service.users.route('ann')).toBe('proxy');
  const entry = loadLegacyConfig(ctx.tmp).users.ann.imap;
  expect(entry).toEqual({
    host: 'old.example',
    port: 143,
    login: 'ann',
    security: 'starttls',
    passwordFile: '/run/pw/ann',
  });
  // The proxy's upstream account reads the file; a missing one is a coded USAGE.
  const pw = path.join(ctx.tmp, 'ann.pw');
  fs.writeFileSync(pw, 'ann upstream secret\n', { mode: 0o600 });
  addLegacyUser(ctx.tmp, 'ann', { imap: { passwordFile: pw } });
  expect(service.upstreamAccount('ann').password).toBe('ann upstream secret');
  expect(() => service.upstreamAccount('bo')).toThrow(/BO_PW/);
  const dump = JSON.stringify((await ctx.db.knex.raw('SELECT * FROM migration_accounts')).rows);
  expect(dump).not.toMatch(/secret/);
});

test('re-registering keeps a cut-over account, queues a failed one again', async () => {
  const { service, db } = ctx;
  const ann = await service.users.get('ann');
  const bo = await service.users.get('bo');
  await db.store.updateMigrationAccount(ann.id, { state: 'cutover' });
  await service.users.setRoute('ann', 'store');
  await db.store.updateMigrationAccount(bo.id, {
    state: 'failed',
    attempts: 5,
    error_code: 'UPSTREAM_IMAP_FAILED',
    error_message: 'Gave up after 5 attempts: Upstream IMAP server old.example:143: ECONNREFUSED',
  });
  const before = (await waitingJobs()).length;
  const text =
    '{"user":"ann","host":"old.example","passwordFile":"/run/pw/ann"}\n' +
    '{"user":"bo","host":"old.example","passwordEnv":"BO_PW"}\n';
  const r = await service.fleet.register(service.fleet.parseAccounts(text, 'again.jsonl'));
  expect(r).toMatchObject({ registered: 2, queued: 1, alreadyCutOver: 1 });
  expect(await service.users.route('ann')).toBe('store');
  const rows = (await service.store.migrationAccounts()).accounts;
  expect(rows.find((a) => a.user === 'bo')).toMatchObject({
    state: 'queued',
    attempts: 0,
    error: null,
  });
  expect((await waitingJobs()).length).toBe(before + 1);
});
