'use strict';

/*
 * npm run bench:legacy — issue 5's closing figures: per backend, the time of a header scan
 * and of a rare-word search on the same real mailbox of >= 20,000 Enron messages (brief
 * order), served by PostgreSQL (pg), read directly as mbox and as Maildir, and through
 * Dovecot on mbox and on Maildir (imap). The rare word is searched both as a substring
 * (`text:WORD`, answered by every backend) and as a word (`WORD`: pg's tsvector; the file
 * backends and imap answer it with the predicate / TEXT + predicate). Warm timings: one
 * discarded run, then the median of --runs (default 3). Every backend is the mail service's
 * (openBackend), as `mailgate search --backend` reaches it. Writes
 * bench/results/legacy-<ts>.json.
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
const { createMailService, addLegacyUser } = require('@mailgate/service');
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
  // The scratch home holds the embedded PostgreSQL (unless DATABASE_URL) and the run's
  // legacy.json, never the user's own.
  const env = { ...process.env, LOG_LEVEL: 'error', MAILGATE_HOME: path.join(scratch, 'home') };
  process.env.MAILGATE_HOME = env.MAILGATE_HOME;
  let embedded = false;
  if (!process.env.DATABASE_URL) {
    cli(['db', 'start'], env);
    embedded = true;
  }
  const instances = [];
  const results = [];
  let service = null;
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
    // Every backend through the mail service (issue 31.3), as `mailgate search --backend`
    // reaches it: pg is the imported user; the files and each Dovecot are legacy.json entries
    // of a user of their own (one upstream IMAP account per user).
    console.error('starting Dovecot on mbox and on Maildir…');
    const dm = await dovecot.start({ format: 'mbox', mail: src.mbox });
    instances.push(dm);
    const dd = await dovecot.start({ format: 'maildir', mail: src.maildir, link: true });
    instances.push(dd);
    const imapEntry = (i, variable) => {
      process.env[variable] = i.password; // the entry names the variable, never the password
      return { host: i.host, port: i.port, login: i.user, passwordEnv: variable, tls: false };
    };
    const home = env.MAILGATE_HOME;
    const legacyUsers = {
      mbox: { mboxDir: src.mboxDir },
      maildir: { maildir: src.maildir },
      'imap-mbox': { imap: imapEntry(dm, 'MAILGATE_BENCH_DOVECOT_MBOX_PASSWORD') },
      'imap-maildir': { imap: imapEntry(dd, 'MAILGATE_BENCH_DOVECOT_MAILDIR_PASSWORD') },
    };
    for (const [name, entry] of Object.entries(legacyUsers))
      addLegacyUser({ home }, `${user}-${name}`, entry);
    service = await createMailService({ env, purge: false });
    const kindOf = {
      mbox: 'mbox',
      maildir: 'maildir',
      'imap-mbox': 'imap',
      'imap-maildir': 'imap',
    };
    const backends = [['pg', await service.openBackend('pg', user)]];
    for (const name of Object.keys(legacyUsers))
      backends.push([name, await service.openBackend(kindOf[name], `${user}-${name}`)]);
    for (const [backend, b] of backends) {
      // Each source holds INBOX only, so a search names no mailbox: naming one makes a file
      // backend count its mailboxes first (LegacyBackend names(): a whole extra read), which
      // this benchmark never timed. No rows (limit 0): the matching set, as before.
      const ops = {
        headers: () => b.scan('INBOX', {}).then((r) => r.rows.length),
        text_rare: () => b.search(`text:${word}`, { limit: 0 }).then((r) => r.total),
        word_rare: () => b.search(word, { limit: 0 }).then((r) => r.total),
      };
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
    if (service) await service.close();
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
