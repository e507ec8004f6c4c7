'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { buildMailbox, SIZES } = require('./mailboxes');
const { dovecotServer } = require('./dovecot-server');
const { mailgateImapServer } = require('./mailgate-imap-server');
const { dropCaches } = require('./runner');
const { summarize } = require('./harness');
const { HEADER_COMMANDS } = require('./imap-door');
const { RawImapClient } = require('./raw-imap');

/*
 * The cold table of the imap door measured again by an independent client (issue 35 item 5):
 * tools/raw_imap_time.py (Python, its own reader) instead of raw-imap.js, with the servers
 * the bench starts (a new process per sample, page cache dropped). Reuses the bench's built
 * mailbox and kept Dovecot fts index in --work; mailgate-imap imports the mailbox anew.
 * With --pair each sample of the Python client is followed by one of the bench's own client
 * (raw-imap.js), each after its own restart and cache drop: the two clients compared within
 * one run, so a difference is the clients', not the machine's load between two runs.
 *
 *   node packages/bench/lib/cold-check.js --work DIR --size large \
 *     [--backends dovecot-maildir,dovecot-maildir-fts,mailgate-imap] [--runs 3] \
 *     [--text depending,would] [--pair] [--out FILE.json]
 */

const PY = path.join(__dirname, '..', 'tools', 'raw_imap_time.py');

function args(argv) {
  const o = {
    size: 'large',
    runs: 3,
    backends: ['dovecot-maildir', 'dovecot-maildir-fts', 'mailgate-imap'],
    text: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[++i];
    if (k === '--work') o.work = v;
    else if (k === '--corpus') o.corpus = v;
    else if (k === '--size') o.size = v;
    else if (k === '--runs') o.runs = Number(v);
    else if (k === '--backends') o.backends = v.split(',');
    else if (k === '--text') o.text = v.split(',').filter(Boolean);
    else if (k === '--out') o.out = v;
    else if (k === '--pair') {
      o.pair = true;
      i--;
    } else throw new Error(`unknown option ${k}`);
  }
  if (!o.work) throw new Error('--work DIR (the bench run work dir) is required');
  return o;
}

function serverOf(name, ctx) {
  if (name === 'dovecot-maildir') return dovecotServer('maildir');
  if (name === 'dovecot-maildir-fts') return dovecotServer('maildir', { fts: true });
  if (name === 'dovecot-mbox') return dovecotServer('mbox');
  if (name === 'mailgate-imap') return mailgateImapServer(ctx);
  throw new Error(`cold-check: no IMAP server ${name}`);
}

/** One timed command through the Python client; `select` first (untimed) unless first open. */
function py(ep, command, select) {
  const out = execFileSync(
    'python3',
    [PY, ep.host, String(ep.port), ep.user, ep.password, ...(select ? ['--select'] : []), command],
    { encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  return JSON.parse(out)[0];
}

/** The same timed command through the bench's own client (raw-imap.js). */
async function bench(ep, command, select) {
  const raw = new RawImapClient({ host: ep.host, port: ep.port });
  try {
    await raw.connect();
    await raw.login(ep.user, ep.password);
    if (select) await raw.command('SELECT INBOX');
    const a = await raw.command(command);
    return { ms: a.ms, bytes: a.bytes, status: a.statusLine };
  } finally {
    await raw.logout();
  }
}

async function main() {
  const o = args(process.argv.slice(2));
  const corpus =
    o.corpus ||
    require(path.join(__dirname, '..', '..', 'test-support', 'lib', 'corpus.js')).corpusDir();
  const box = buildMailbox({ corpus, work: o.work, name: o.size, count: SIZES[o.size] });
  const requests = [
    { request: 'first_open', command: 'SELECT INBOX', select: false },
    { request: 'headers', command: HEADER_COMMANDS.headers, select: true },
    { request: 'headers_list', command: HEADER_COMMANDS.headers_list, select: true },
    ...o.text.map((w) => ({
      request: `text:${w}`,
      command: `UID SEARCH TEXT "${w}"`,
      select: true,
    })),
  ];
  const rows = [];
  for (const name of o.backends) {
    const server = serverOf(name, { work: o.work, size: o.size });
    process.stderr.write(`${name}: loading\n`);
    await server.start(box);
    try {
      if (server.prepare) await server.prepare();
      if (server.settle) await server.settle();
      // Untimed, once each: the state the bench's cold phase meets after its warm phase
      // (Dovecot's cache filled, mailgate's metadata kept). Without it Dovecot's cold list
      // view re-read every file (3.1 s instead of ~80 ms) and mailgate derived every ENVELOPE.
      const ep = (await server.restart()).endpoint;
      for (const r of requests) py(ep, r.command, r.select);
      for (const r of requests) {
        const samples = [];
        let how = null;
        let dropped = null;
        let status = null;
        const benchSamples = [];
        for (let i = 0; i < o.runs; i++) {
          const rs = await server.restart();
          how = rs.how;
          dropped = dropCaches();
          const a = py(rs.endpoint, r.command, r.select);
          status = a.status;
          samples.push(a.ms);
          if (o.pair) {
            const rb = await server.restart();
            dropCaches();
            benchSamples.push((await bench(rb.endpoint, r.command, r.select)).ms);
          }
        }
        const ms = summarize(samples);
        const row = {
          backend: name,
          request: r.request,
          ms,
          samples,
          how,
          pageCacheDropped: dropped,
          status,
        };
        if (o.pair) {
          row.bench = { ms: summarize(benchSamples), samples: benchSamples };
          row.ratio = ms.median / row.bench.ms.median;
        }
        rows.push(row);
        const fmt = (xs) => xs.map((x) => x.toFixed(1)).join(', ');
        process.stderr.write(
          `  cold ${r.request.padEnd(14)} ${ms.median.toFixed(1)} ms (${fmt(samples)})` +
            (o.pair
              ? ` | bench client ${row.bench.ms.median.toFixed(1)} ms (${fmt(benchSamples)}), ratio ${row.ratio.toFixed(2)}`
              : '') +
            '\n',
        );
      }
    } finally {
      await server.stop();
      if (server.close) await server.close();
    }
  }
  const result = {
    client: 'packages/bench/tools/raw_imap_time.py (python3, independent of raw-imap.js)',
    size: o.size,
    messages: box.count,
    runs: o.runs,
    paired: Boolean(o.pair),
    command: `node packages/bench/lib/cold-check.js ${process.argv.slice(2).join(' ')}`,
    at: new Date().toISOString(),
    rows,
  };
  const text = JSON.stringify(result, null, 2) + '\n';
  if (o.out) fs.writeFileSync(o.out, text);
  else process.stdout.write(text);
}

main().catch((err) => {
  process.stderr.write(`cold-check: ${err.stack || err.message}\n`);
  process.exit(1);
});
