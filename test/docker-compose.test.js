'use strict';

const fs = require('node:fs');
const net = require('node:net');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const YAML = require('yaml');
const { createTestDatabase, spawnCli } = require('@mailgate/test-support/db');

/*
 * docker-compose.yml and the Dockerfile (issue 30.14). No container engine runs in CI, so the
 * files are checked for what they promise (the image installs its own dependencies, the
 * mailgate service serves on loopback-published ports, Elasticsearch is an optional profile),
 * and the service's command is run as the image runs it (its ENTRYPOINT plus the compose
 * `command`, with the compose environment) against a test database: it must serve the API
 * and IMAP. `docker-compose config` validates the file (installed by .ci/run).
 */

const ROOT = path.join(__dirname, '..');
const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'));
const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
const mailgate = compose.services.mailgate;

test('the image installs its dependencies with npm ci and runs mailgate', () => {
  expect(mailgate.build).toBeDefined();
  // Nothing from the host's checkout: no bind mount that would need `npm ci` on the host.
  expect(mailgate.volumes || []).toEqual([]);
  expect(dockerfile).toMatch(/^FROM node:\S+/m);
  expect(dockerfile).toMatch(/^RUN npm ci\b/m);
  expect(dockerfile).toMatch(/^ENTRYPOINT \["node", "packages\/cli\/bin\/mailgate\.js"\]/m);
  const ignored = fs.readFileSync(path.join(ROOT, '.dockerignore'), 'utf8');
  expect(ignored).toMatch(/^\*\*\/node_modules$/m);
});

test('mailgate serves the API and IMAP on loopback; Elasticsearch is an optional profile', () => {
  expect(mailgate.command).toEqual(['serve']);
  const published = mailgate.ports.map(String);
  expect(published).toEqual(['127.0.0.1:3000:3000', '127.0.0.1:1143:1143']);
  for (const s of Object.values(compose.services)) {
    for (const p of s.ports || []) expect(String(p)).toMatch(/^127\.0\.0\.1:/);
  }
  expect(compose.services.elasticsearch.profiles).toEqual(['search']);
  // Citus (docs/scaling-out.md): a coordinator, two workers and the one-shot setup, all opt-in.
  for (const s of ['citus-coordinator', 'citus-worker-1', 'citus-worker-2', 'citus-setup']) {
    expect(compose.services[s].profiles).toEqual(['citus']);
    expect(compose.services[s].image).toMatch(/^citusdata\/citus:12\./);
  }
  expect(Object.keys(mailgate.depends_on)).toEqual(['postgres']);
  // Without the profile the mirror is off (an empty ELASTICSEARCH_URL), not pointed at a
  // server that is not there.
  expect(mailgate.environment.ELASTICSEARCH_URL).toBe('${ELASTICSEARCH_URL:-}');
});

test('docker-compose accepts the file (syntax and schema)', () => {
  const found = spawnSync('sh', ['-c', 'command -v docker-compose'], { encoding: 'utf8' });
  if (found.status !== 0) {
    // .ci/run installs it; a developer machine without it checks the rest only.
    if (process.env.CI) throw new Error('docker-compose missing: apt-get install docker-compose');
    return;
  }
  for (const profile of [[], ['--profile', 'search'], ['--profile', 'citus']]) {
    const r = spawnSync('docker-compose', [...profile, 'config', '-q'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, ELASTICSEARCH_URL: 'http://elasticsearch:9200' },
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  }
});

describe('the service command, run as the image runs it', () => {
  let db;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(() => db.drop());

  test('serves HTTP and IMAP until SIGTERM', async () => {
    const cmd = /^CMD \[(.*)\]$/m.exec(dockerfile);
    expect(cmd).not.toBeNull();
    const args = mailgate.command || JSON.parse(`[${cmd[1]}]`);
    // The compose environment, with this test's database and free ports on loopback (the
    // container listens on 0.0.0.0 behind the loopback-published ports).
    const env = { ...mailgate.environment, ELASTICSEARCH_URL: '', LOG_LEVEL: 'error' };
    Object.assign(env, { PORT: '0', IMAP_PORT: '0', HOST: '127.0.0.1', IMAP_HOST: '127.0.0.1' });
    env.DATABASE_URL = db.url;
    const child = spawnCli(args, { url: db.url, env });
    let err = '';
    const { http, imap } = await new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        err += d;
        const h = /API listening on (http:\/\/\S+)/.exec(err);
        const i = /IMAP listening on (?:imap:\/\/)?([\d.]+):(\d+)/.exec(err);
        if (h && i) resolve({ http: h[1], imap: { host: i[1], port: Number(i[2]) } });
      });
      child.once('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
    });
    try {
      expect((await fetch(`${http}/api/v1/health`)).status).toBe(200);
      const greeting = await new Promise((resolve, reject) => {
        const s = net.connect(imap.port, imap.host);
        s.once('data', (d) => {
          s.destroy();
          resolve(d.toString());
        });
        s.once('error', reject);
      });
      expect(greeting).toMatch(/^\* OK/);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
