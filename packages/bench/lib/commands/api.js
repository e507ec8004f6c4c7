'use strict';

/*
 * HTTP API load benchmark (npm run bench:api): the first 21,282 Enron messages (the 2003
 * study's "large" size; path order: user, folder, file number) imported as one MH folder
 * (hard links, no copy) into a scratch embedded PostgreSQL, `mailgate serve` on 127.0.0.1,
 * then autocannon against: a header page of 50, one message, a rare-word search, a `text:`
 * substring search; plus the time of a whole-mailbox NDJSON scan, full rows and the list view
 * (`view=list`). Bounded: each load run
 * lasts DURATION seconds on CONNECTIONS connections, loopback only. Writes
 * bench/results/api-<timestamp>.json with machine facts.
 *
 *   npm run bench:api [-- --messages N] [--duration S] [--connections C] [--keep]
 *   (node packages/bench/bin/mailgate-bench.js api …)
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const autocannon = require('autocannon');
const { EmbeddedPostgres } = require('@mailgate/service');
const { CLI, run, option, corpusDir, saveResult } = require('../command-kit');
const { machineFacts } = require('../machine');
const { listMessages } = require('../mailboxes');

/**
 * `bench api`: see the file comment.
 * @param {string[]} args --messages N, --duration S, --connections C, --keep
 */
async function main(args) {
  const N = Number(option(args, '--messages', 21282));
  const DURATION = Number(option(args, '--duration', 8));
  const CONNECTIONS = Number(option(args, '--connections', 10));
  const corpus = corpusDir();
  if (!corpus) throw new Error('../shared/corpus not found: the benchmark needs the Enron set');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'mailgate-bench-api-'));
  const box = path.join(scratch, 'mh', 'large');
  fs.mkdirSync(box, { recursive: true });
  const files = listMessages(path.join(corpus, 'enron', 'maildir'), N);
  files.forEach((f, i) => fs.linkSync(f, path.join(box, String(i + 1))));
  const env = { ...process.env, LOG_LEVEL: 'error', PORT: '0', HOST: '127.0.0.1' };
  let home = null;
  if (!process.env.DATABASE_URL) {
    home = path.join(scratch, 'home');
    env.MAILGATE_HOME = home;
    run(['db', 'start'], env);
  }
  const user = `bench-${Date.now()}`;
  let server = null;
  try {
    console.error(`importing ${files.length} Enron messages as one mailbox…`);
    const imp = JSON.parse(
      run(['import', 'mh', path.join(scratch, 'mh'), '--user', user, '--json', '--quiet'], env)
        .stdout.trim()
        .split('\n')
        .pop(),
    );
    console.error(`  ${imp.imported} imported in ${imp.seconds}s`);
    const token = JSON.parse(run(['token', 'create', user, '--json'], env).stdout).token;
    server = spawn(process.execPath, [CLI, 'serve', '--no-imap'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const url = await listening(server);
    const headers = { authorization: `Bearer ${token}` };
    const api = `${url}/api/v1`;
    const get = async (p, h = {}) => {
      const r = await fetch(api + p, { headers: { ...headers, ...h } });
      if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${await r.text()}`);
      return r;
    };
    const boxes = (await (await get('/mailboxes')).json()).mailboxes;
    const mailbox = boxes.find((b) => b.total >= 1000) || boxes[0];
    const mb = encodeURIComponent(mailbox.name);
    const uid = Math.ceil(mailbox.total / 2);
    // A rare word: the first candidate found in 1…100 messages.
    let rare = null;
    for (const w of ['kangaroo', 'saxophone', 'plutonium', 'volcano', 'lasagna', 'zebra']) {
      const n = (await (await get(`/search?q=${w}&limit=0`)).json()).total;
      if (n >= 1 && n <= 100) {
        rare = { word: w, matches: n };
        break;
      }
    }
    if (!rare) rare = { word: 'kangaroo', matches: 0 };
    const textMatches = (await (await get(`/search?q=text:${rare.word}&limit=0`)).json()).total;

    const targets = [
      { name: 'header_page_50', path: `/mailboxes/${mb}/messages?limit=50` },
      { name: 'header_page_50_by_date', path: `/mailboxes/${mb}/messages?limit=50&order=-date` },
      { name: 'one_message', path: `/mailboxes/${mb}/messages/${uid}` },
      { name: 'one_message_raw', path: `/mailboxes/${mb}/messages/${uid}/raw` },
      { name: 'word_rare', path: `/search?q=${rare.word}&limit=50`, matches: rare.matches },
      { name: 'text_rare', path: `/search?q=text:${rare.word}&limit=50`, matches: textMatches },
    ];
    const results = [];
    for (const t of targets) {
      await get(t.path); // warm
      const r = await autocannon({
        url: api + t.path,
        headers,
        connections: CONNECTIONS,
        duration: DURATION,
      });
      const row = {
        request: t.name,
        path: t.path,
        matches: t.matches,
        reqPerSec: r.requests.average,
        latencyMs: {
          p50: r.latency.p50,
          p90: r.latency.p90,
          p99: r.latency.p99,
          max: r.latency.max,
        },
        requests: r.requests.total,
        errors: r.errors,
        non2xx: r.non2xx,
        timeouts: r.timeouts,
      };
      // Latency of one request alone (no queueing behind other connections).
      row.singleMs = await singleLatency(api + t.path, headers);
      results.push(row);
      console.error(
        `${t.name.padEnd(24)} ${row.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${row.latencyMs.p50} ms  ` +
          `p99 ${row.latencyMs.p99} ms  alone p50 ${row.singleMs.p50} ms  errors ${row.errors + row.non2xx}`,
      );
    }
    // Whole-mailbox NDJSON scan, median of 5: the bytes, as a raw client reads them (decoding
    // 20 MB of UTF-8 into a string is the client's cost, so lines are counted after the clock).
    // The same for the list view (`view=list`: what a message list shows, issue 13 item 3).
    const scan = async (query) => {
      const scans = [];
      let lines = 0;
      let bytes = 0;
      for (let i = 0; i < 5; i++) {
        const t0 = performance.now();
        const body = Buffer.from(
          await (
            await get(`/mailboxes/${mb}/messages${query}`, { accept: 'application/x-ndjson' })
          ).arrayBuffer(),
        );
        scans.push(performance.now() - t0);
        lines = 0;
        for (let at = body.indexOf(10); at !== -1; at = body.indexOf(10, at + 1)) lines++;
        bytes = body.length;
      }
      const out = { messages: lines, bytes, ms: stats(scans) };
      console.error(
        `ndjson scan${query} of ${lines} messages (${(bytes / 1e6).toFixed(1)} MB): ` +
          `median ${out.ms.median.toFixed(1)} ms`,
      );
      return out;
    };
    const ndjson = await scan('');
    const ndjsonList = await scan('?view=list');

    const result = {
      benchmark: 'api',
      command: `npm run bench:api${args.length ? ' -- ' + args.join(' ') : ''}`,
      date: new Date().toISOString(),
      machine: machineFacts({ work: os.tmpdir() }),
      database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded PostgreSQL 17',
      mailbox: { name: mailbox.name, messages: mailbox.total, imported: imp.imported },
      load: { connections: CONNECTIONS, durationSeconds: DURATION },
      rareWord: rare,
      results,
      ndjsonScan: ndjson,
      ndjsonListScan: ndjsonList,
    };
    saveResult('api', result.date, result);
  } finally {
    if (server) {
      const done = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await done;
    }
    if (home) await new EmbeddedPostgres(home).stop();
    if (!args.includes('--keep')) fs.rmSync(scratch, { recursive: true, force: true });
  }
}

async function singleLatency(url, headers) {
  const times = [];
  for (let i = 0; i < 50; i++) {
    const t0 = performance.now();
    const r = await fetch(url, { headers });
    await r.arrayBuffer();
    times.push(performance.now() - t0);
  }
  const s = stats(times);
  return { p50: round(s.median), p99: round(s.p99) };
}

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return {
    median: s[Math.floor(s.length / 2)],
    min: s[0],
    max: s[s.length - 1],
    p99: s[Math.min(s.length - 1, Math.floor(s.length * 0.99))],
  };
}

const round = (x) => Math.round(x * 100) / 100;

function listening(child) {
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1]);
    });
    child.once('exit', (c) => reject(new Error(`serve exited ${c}: ${err}`)));
  });
}

module.exports = {
  description: 'HTTP API load (autocannon) on the large Enron mailbox',
  usage: '[--messages N] [--duration S] [--connections C] [--keep]',
  run: main,
};
