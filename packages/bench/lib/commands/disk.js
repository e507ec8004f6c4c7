'use strict';

/*
 * Disk benchmark (npm run bench:disk, issue 30.6): the Enron set (../shared/corpus) imported
 * with `mailgate import mh` into a fresh embedded database, then the bytes on disk of every
 * relation of the user (heap, TOAST, each index), the shared tables, pg_wal, and the same mail
 * as a Dovecot Maildir with the index Dovecot builds on a client's first sync (SELECT, then
 * FETCH 1:* of what a mail client asks for), all per message and against the raw mail. Writes
 * bench/results/disk-<label>-<date>.json and .md with machine facts.
 *
 *   npm run bench:disk [-- --only full|quarter] [--keep] [--no-dovecot]
 *
 * Runs once; on a shared machine the import time is only indicative, the bytes are not.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { createMailService } = require('@mailgate/service');
const { ROOT, run, option, corpusDir } = require('../command-kit');
const { machineFacts } = require('../machine');
const { listMessages } = require('../mailboxes');
const { RawImapClient } = require('../raw-imap');

const MB = 1e6; // decimal megabytes, as the issue and the README count the raw mail

/**
 * `bench disk`: see the file comment.
 * @param {string[]} args --only full|quarter, --keep, --no-dovecot
 */
async function main(args) {
  const only = option(args, '--only', 'full');
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const enron = path.join(corpus, 'enron', 'maildir');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-disk-'));
  const files = listMessages(enron);
  const picked = only === 'quarter' ? files.slice(0, Math.ceil(files.length / 4)) : files;
  // The Enron layout (user/inbox/N) is an MH tree already; a quarter is copied by path order.
  const source = only === 'quarter' ? copyTree(enron, picked, path.join(scratch, 'mh')) : enron;
  const rawBytes = picked.reduce((n, f) => n + fs.statSync(f).size, 0);
  const home = path.join(scratch, 'home');
  const env = { ...process.env, LOG_LEVEL: 'error', MAILGATE_HOME: home };
  delete env.DATABASE_URL;
  run(['db', 'start'], env);
  let result;
  try {
    const t0 = Date.now();
    const r = run(['import', 'mh', source, '--user', 'enron', '--json', '--quiet'], env);
    const report = JSON.parse(r.stdout.trim().split('\n').pop());
    const importSeconds = (Date.now() - t0) / 1000;
    // The sizes are a store operation asked of the service (issue 31.3), on the database the
    // import just filled (the scratch home's embedded server, still running).
    const service = await createMailService({ env, purge: false });
    let sizes;
    try {
      sizes = relationSizes(await service.diskUsage());
    } finally {
      await service.close();
    }
    const walBytes = duBytes(path.join(home, 'pgdata', 'pg_wal'));
    const dovecot = args.includes('--no-dovecot') ? null : await dovecotSize(picked, scratch);
    result = report2(
      only,
      picked.length,
      rawBytes,
      report,
      importSeconds,
      sizes,
      walBytes,
      dovecot,
    );
    result.machine = {
      ...machineFacts({ work: scratch }),
      note: 'shared machine: 2 cores used by eight engineers at once; the bytes do not depend on it, the import time does',
    };
  } finally {
    try {
      run(['db', 'stop'], env);
    } catch {
      /* already stopped */
    }
    if (!args.includes('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
  }
  const stamp = new Date().toISOString().slice(0, 10);
  const base = path.join(ROOT, 'bench', 'results', `disk-${only}-${stamp}`);
  fs.writeFileSync(`${base}.json`, JSON.stringify(result, null, 2) + '\n');
  fs.writeFileSync(`${base}.md`, markdown(result));
  process.stdout.write(markdown(result));
  process.stderr.write(`wrote ${path.relative(ROOT, base)}.json and .md\n`);
}

function copyTree(root, picked, dest) {
  for (const f of picked) {
    const to = path.join(dest, path.relative(root, f));
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(f, to);
  }
  return dest;
}

/**
 * The service's disk usage (store disk-ops.js: heap with its maps, TOAST, each index of every
 * table after a CHECKPOINT) grouped by the table each belongs to: one user here, so a per-user
 * partition stands for its parent (messages_u1 → messages).
 */
function relationSizes(usage) {
  const tables = usage.tables.map((t) => ({
    table: t.table.replace(/_u\d+$/, ''),
    heap: t.heap,
    toast: t.toast,
    indexes: t.indexes.map((i) => ({ name: i.name.replace(/_u\d+_/, '_'), bytes: i.bytes })),
  }));
  return { tables, databaseBytes: usage.databaseBytes };
}

/** Disk usage of a folder in bytes (allocated blocks, as `du` says). */
function duBytes(dir) {
  return Number(
    execFileSync('du', ['-sb', '--apparent-size', dir], { encoding: 'utf8' }).split('\t')[0],
  );
}

/**
 * The same messages as one Dovecot Maildir INBOX, and the index Dovecot writes when a mail
 * client first syncs it (SELECT; FETCH 1:* FLAGS INTERNALDATE RFC822.SIZE ENVELOPE
 * BODYSTRUCTURE). Dovecot without an FTS plugin keeps no text index: its searches read the files.
 * @returns {Promise<object|null>} null when Dovecot is not installed or we are not root
 */
async function dovecotSize(picked, scratch) {
  const dovecot = require('@mailgate/dovecot');
  if (!dovecot.installed() || process.getuid() !== 0) return null;
  const maildir = path.join(scratch, 'Maildir');
  for (const sub of ['cur', 'new', 'tmp'])
    fs.mkdirSync(path.join(maildir, sub), { recursive: true });
  const base = Date.UTC(2002, 0, 1) / 1000;
  picked.forEach((f, i) => {
    fs.linkSync(f, path.join(maildir, 'cur', `${base + i}.M${i}P0.mailgate-bench:2,`));
  });
  const inst = await dovecot.start({ format: 'maildir', mail: maildir, link: true });
  try {
    const c = new RawImapClient({ port: inst.port });
    await c.connect();
    await c.login(inst.user, inst.password);
    await c.command('SELECT INBOX');
    await c.command('FETCH 1:* (FLAGS INTERNALDATE RFC822.SIZE ENVELOPE BODYSTRUCTURE)');
    await c.logout();
    const md = path.join(inst.home, 'Maildir');
    let mail = 0;
    let index = 0;
    for (const f of fs.readdirSync(md)) {
      const p = path.join(md, f);
      if (f.startsWith('dovecot')) index += fs.statSync(p).size;
    }
    for (const f of fs.readdirSync(path.join(md, 'cur')))
      mail += fs.statSync(path.join(md, 'cur', f)).size;
    return { maildirBytes: mail, indexBytes: index, version: dovecotVersion() };
  } finally {
    await inst.stop();
  }
}

function dovecotVersion() {
  try {
    return execFileSync('dovecot', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function report2(label, messages, rawBytes, report, importSeconds, sizes, walBytes, dovecot) {
  const rows = [];
  for (const t of sizes.tables) {
    const idx = t.indexes.reduce((n, i) => n + i.bytes, 0);
    const total = t.heap + t.toast + idx;
    if (total < 65536) continue;
    rows.push({ table: t.table, heap: t.heap, toast: t.toast, indexes: t.indexes, total });
  }
  rows.sort((a, b) => b.total - a.total);
  const total = sizes.tables.reduce(
    (n, t) => n + t.heap + t.toast + t.indexes.reduce((m, i) => m + i.bytes, 0),
    0,
  );
  return {
    machine: null,
    label,
    messages,
    rawBytes,
    imported: report.imported,
    quarantined: report.quarantined,
    importSeconds,
    // where the import's time went (README "import --json"): ginRebuildMs is the one-pass
    // rebuild of the GIN indexes at the end of a first import
    stages: report.stages,
    totalBytes: total,
    ratio: Number((total / rawBytes).toFixed(2)),
    bytesPerMessage: Math.round(total / messages),
    databaseBytes: sizes.databaseBytes,
    walBytes,
    tables: rows.map((r) => ({ ...r, perMessage: Math.round(r.total / messages) })),
    dovecot: dovecot && {
      ...dovecot,
      ratio: Number(((dovecot.maildirBytes + dovecot.indexBytes) / rawBytes).toFixed(2)),
      indexPerMessage: Math.round(dovecot.indexBytes / messages),
    },
  };
}

function markdown(r) {
  const mb = (b) => (b / MB).toFixed(1);
  const lines = [
    `# Disk: Enron ${r.label} (${r.messages} messages, ${mb(r.rawBytes)} MB raw)`,
    '',
    `${r.machine.cpu || ''}; ${r.machine.note}. Import ${r.importSeconds.toFixed(1)} s` +
      (r.stages && r.stages.ginRebuildMs
        ? `, of which ${(r.stages.ginRebuildMs / 1000).toFixed(1)} s rebuilding the GIN indexes at its end.`
        : '.'),
    '',
    '| table | heap MB | TOAST MB | indexes MB | total MB | bytes/message |',
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const t of r.tables) {
    const idx = t.indexes.reduce((n, i) => n + i.bytes, 0);
    lines.push(
      `| ${t.table} | ${mb(t.heap)} | ${mb(t.toast)} | ${mb(idx)} | ${mb(t.total)} | ${t.perMessage} |`,
    );
  }
  lines.push(
    `| **all tables** | | | | **${mb(r.totalBytes)}** | **${r.bytesPerMessage}** (${r.ratio}× the raw mail) |`,
    '',
    'Indexes over 1 MB:',
    '',
  );
  for (const t of r.tables)
    for (const i of t.indexes)
      if (i.bytes > MB)
        lines.push(
          `- ${i.name}: ${mb(i.bytes)} MB (${Math.round(i.bytes / r.messages)} B/message)`,
        );
  lines.push(
    '',
    `pg_wal after the import: ${mb(r.walBytes)} MB (not counted above); database size (catalogs too): ${mb(r.databaseBytes)} MB.`,
  );
  if (r.dovecot) {
    lines.push(
      '',
      `Dovecot ${r.dovecot.version} (Maildir, no FTS plugin, index after a first client sync): ` +
        `mail ${mb(r.dovecot.maildirBytes)} MB + index ${mb(r.dovecot.indexBytes)} MB ` +
        `(${r.dovecot.indexPerMessage} B/message) = ${r.dovecot.ratio}× the raw mail.`,
    );
  }
  return lines.join('\n') + '\n';
}

module.exports = {
  description: 'bytes on disk per table and index against the raw mail, Dovecot Maildir beside',
  usage: '[--only full|quarter] [--keep] [--no-dovecot]',
  run: main,
};
