'use strict';

/*
 * npm run bench:legacy — issue 5's closing figures: per backend, the time of a header scan
 * and of a rare-word search on the same real mailbox of >= 20,000 Enron messages (brief
 * order), served by PostgreSQL (pg), read directly as mbox and as Maildir, and through
 * Dovecot on mbox and on Maildir (imap). The rare word is searched both as a substring
 * (`text:WORD`, answered by every backend) and as a word (`WORD`: pg's tsvector; the file
 * backends and imap answer it with the predicate / TEXT + predicate). Warm timings: one
 * discarded run, then the median of --runs (default 3). Writes bench/results/legacy-<ts>.json.
 *
 *   npm run bench:legacy -- [--count 20000] [--word zimbabwe] [--runs 3]
 * Needs root and dovecot-imapd (scripts/dovecot), the shared corpus, and PostgreSQL
 * (DATABASE_URL, else an embedded one in a scratch MAILGATE_HOME).
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const dovecot = require('@mailgate/dovecot');
const { CLI, run: cli, option, testSupport, corpusDir, saveResult } = require('../command-kit');

async function time(fn, runs) {
  let result = await fn(); // warm-up, discarded
  const ms = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    result = await fn();
    ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  ms.sort((a, b) => a - b);
  const r2 = (x) => Number(x.toFixed(1));
  return {
    ms: { median: r2(ms[Math.floor(ms.length / 2)]), min: r2(ms[0]), max: r2(ms.at(-1)) },
    result,
  };
}

/**
 * `bench legacy`: see the file comment.
 * @param {string[]} args --count N, --word W, --runs N
 */
async function main(args) {
  const count = Number(option(args, '--count', 20000));
  const word = option(args, '--word', 'zimbabwe');
  const runs = Number(option(args, '--runs', 3));
  const { buildLegacyMail } = testSupport('legacy-corpus');
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found');
  if (!dovecot.installed())
    throw new Error('dovecot is not installed (bash scripts/dovecot/install.sh)');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mg-bl-'));
  const env = { ...process.env, LOG_LEVEL: 'error' };
  let embedded = false;
  if (!process.env.DATABASE_URL) {
    env.MAILGATE_HOME = path.join(scratch, 'home');
    process.env.MAILGATE_HOME = env.MAILGATE_HOME;
    cli(['db', 'start'], env);
    embedded = true;
  }
  const instances = [];
  const results = [];
  let db = null;
  const closers = [];
  try {
    console.error(`building ${count} messages as mbox and Maildir…`);
    const src = buildLegacyMail(
      path.join(corpus, 'enron', 'maildir'),
      count,
      path.join(scratch, 'src'),
    );
    const bytes = fs.statSync(src.mbox).size;
    console.error(`importing into PostgreSQL…`);
    const user = `bench-legacy-${Date.now()}`;
    const imp = JSON.parse(
      cli(['import', 'mbox', src.mbox, '--user', user, '--json', '--quiet'], env)
        .stdout.trim()
        .split('\n')
        .pop(),
    );
    const { loadConfig } = require('@mailgate/core');
    const { openDatabase } = require('@mailgate/service');
    const { PgStore } = require('@mailgate/store');
    const { MboxBackend, MaildirBackend, ImapBackend } = require('@mailgate/legacy');
    db = await openDatabase(loadConfig());
    const store = new PgStore(db.knex);
    const u = await store.getUser(user);
    const mb = await store.getMailbox(u.id, 'INBOX');
    console.error('starting Dovecot on mbox and on Maildir…');
    const dm = await dovecot.start({ format: 'mbox', mail: src.mbox });
    instances.push(dm);
    const dd = await dovecot.start({ format: 'maildir', mail: src.maildir, link: true });
    instances.push(dd);
    const imap = (i) => {
      const b = new ImapBackend({
        host: i.host,
        port: i.port,
        login: i.user,
        password: i.password,
        tls: false,
      });
      closers.push(() => b.close());
      return b;
    };
    const backends = [
      [
        'pg',
        {
          headers: () => store.scanHeaders(u.id, mb.id).then((r) => r.length),
          text_rare: () =>
            store.search(u.id, `text:${word}`, { mailboxId: mb.id }).then((r) => r.total),
          word_rare: () => store.search(u.id, word, { mailboxId: mb.id }).then((r) => r.total),
        },
      ],
      ...[
        ['mbox', new MboxBackend(src.mboxDir)],
        ['maildir', new MaildirBackend(src.maildir)],
        ['imap-mbox', imap(dm)],
        ['imap-maildir', imap(dd)],
      ].map(([name, b]) => [
        name,
        {
          headers: () => b.scanHeaders('INBOX').then((r) => r.length),
          text_rare: () => b.search(`text:${word}`, { mailbox: 'INBOX' }).then((r) => r.total),
          word_rare: () => b.search(word, { mailbox: 'INBOX' }).then((r) => r.total),
        },
      ]),
    ];
    for (const [backend, ops] of backends) {
      for (const [request, fn] of Object.entries(ops)) {
        const t = await time(fn, runs);
        results.push({
          backend,
          request,
          messages: count,
          phase: 'warm',
          ms: t.ms,
          matches: t.result,
        });
        console.error(
          `${backend.padEnd(13)} ${request.padEnd(10)} median ${String(t.ms.median).padStart(9)} ms  (${t.result})`,
        );
      }
    }
    const first = {};
    for (const r of results) {
      if (r.request === 'headers') continue;
      if (!(r.request in first)) first[r.request] = r.matches;
      r.agrees = r.matches === first[r.request];
    }
    const cpus = os.cpus();
    const out = {
      benchmark: 'legacy',
      command: 'npm run bench:legacy',
      date: new Date().toISOString(),
      machine: {
        cpu: cpus[0] && cpus[0].model,
        cores: cpus.length,
        memGB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
        os: `${os.type()} ${os.release()}`,
        node: process.version,
      },
      mailbox: { messages: count, mboxBytes: bytes, imported: imp.imported, word },
      runs,
      results,
    };
    saveResult('legacy', out.date, out);
  } finally {
    for (const c of closers) await c().catch(() => {});
    if (db) await db.close();
    for (const i of instances) await i.stop().catch(() => {});
    if (embedded) spawnSync(process.execPath, [CLI, 'db', 'stop'], { env });
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

module.exports = {
  description: 'header scan and rare-word search: pg, mbox, maildir and Dovecot on each',
  usage: '[--count 20000] [--word zimbabwe] [--runs 3]',
  run: main,
};
