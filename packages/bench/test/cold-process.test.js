'use strict';

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { loadConfig } = require('@mailgate/core');
const { mailgateImapServer } = require('../lib/mailgate-imap-server');
const { buildMailbox } = require('../lib/mailboxes');
const { RawImapClient } = require('../lib/raw-imap');
const { syntheticCorpus } = require('./fixtures');

/*
 * Issue 35 item 1: a cold sample of mailgate's IMAP server meets a new server process and a
 * PostgreSQL that was stopped and started, as Dovecot's cold sample meets a new master.
 * Until then the bench restarted the service inside its own process, so module-level caches
 * (the IMAP metadata cache) survived every "cold" sample.
 */

/** pid of the process listening on 127.0.0.1:port (ss, as root or not: our own children). */
function listenerPid(port) {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  const m = /pid=(\d+)/.exec(out);
  return m ? Number(m[1]) : null;
}

const postmasterPid = (home) =>
  Number(fs.readFileSync(path.join(home, 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);

describe('mailgate-imap cold samples are new processes', () => {
  let corpus;
  let work;
  let server;
  beforeAll(() => {
    corpus = syntheticCorpus(40);
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'mgb-cold-'));
  });
  afterAll(async () => {
    if (server) await server.close();
    fs.rmSync(corpus.dir, { recursive: true, force: true });
    fs.rmSync(work, { recursive: true, force: true });
  });

  test('restart: a new IMAP process on a restarted embedded PostgreSQL, same mailbox', async () => {
    const box = buildMailbox({ corpus: corpus.dir, work, name: 'small', count: 40 });
    // The bench's own embedded PostgreSQL (<work>/pg-home), as in a run without DATABASE_URL.
    const config = loadConfig({ MAILGATE_HOME: path.join(work, 'home') });
    server = mailgateImapServer({ work, size: 'small', config });
    const ep = await server.start(box);
    const home = path.join(work, 'pg-home');
    const imapBefore = listenerPid(ep.port);
    const pgBefore = postmasterPid(home);
    expect(imapBefore).not.toBeNull();
    // Not the bench process: a server in the bench's own process keeps its memory.
    expect(imapBefore).not.toBe(process.pid);

    const r = await server.restart();
    expect(r.how).toMatch(/new mailgate IMAP process.*PostgreSQL stopped and started/);
    const imapAfter = listenerPid(r.endpoint.port);
    expect(imapAfter).not.toBeNull();
    expect(imapAfter).not.toBe(process.pid);
    expect(imapAfter).not.toBe(imapBefore);
    expect(postmasterPid(home)).not.toBe(pgBefore);

    // The new process serves the same mailbox.
    const c = new RawImapClient({ host: r.endpoint.host, port: r.endpoint.port });
    await c.connect();
    await c.login(r.endpoint.user, r.endpoint.password);
    const sel = await c.command('SELECT INBOX');
    expect(sel.exists()).toBe(40);
    await c.logout();
  }, 120000);
});
