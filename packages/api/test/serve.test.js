'use strict';

const { createTestDatabase, runCli, spawnCli } = require('@mailgate/test-support/db');

let db;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db.drop());

test('mailgate token create, serve, and graceful shutdown on SIGTERM', async () => {
  expect(runCli(['user', 'add', 'sam'], { url: db.url }).code).toBe(0);
  const tok = runCli(['token', 'create', 'sam', '--json'], { url: db.url });
  expect(tok.code).toBe(0);
  expect(tok.json.token).toMatch(/^mg_/);
  const plain = runCli(['token', 'create', 'sam'], { url: db.url });
  expect(plain.stdout.trim()).toMatch(/^mg_[A-Za-z0-9_-]+$/);
  expect(runCli(['token', 'create', 'nobody'], { url: db.url }).code).toBe(1);

  const child = spawnCli(['serve'], {
    url: db.url,
    env: { PORT: '0', HOST: '127.0.0.1', IMAP_PORT: '0' },
  });
  let err = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
  });
  const h = { authorization: `Bearer ${tok.json.token}` };
  expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
  const r = await fetch(`${url}/api/v1/mailboxes`, { headers: h });
  expect(r.status).toBe(200);
  expect(r.headers.get('server-timing')).toMatch(/^pg;dur=/);
  expect(await r.json()).toEqual({ mailboxes: [] });
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  expect(await exited).toBe(0);
});
