'use strict';

/*
 * Throughput of @mailgate/mime's parseMessage vs mailparser's simpleParser on the Enron corpus
 * (was packages/mime/bench.js). Files are read into memory first so only parsing is timed.
 *
 *   node packages/bench/bin/mailgate-bench.js mime-parse [maildirRoot] [limit]
 *   (default /tmp/corpus/enron/maildir, all messages; MAILPARSER_LIMIT=10000)
 */

const fs = require('node:fs');
const path = require('node:path');
const { simpleParser } = require('mailparser');
const { parseMessage } = require('@mailgate/mime');

function walk(dir, out) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

/**
 * `bench mime-parse`.
 * @param {string[]} args [maildirRoot] [limit]
 */
async function main(args) {
  const root = args[0] || '/tmp/corpus/enron/maildir';
  const limit = Number(args[1]) || Infinity;
  const files = walk(root, []).slice(0, limit);
  const msgs = files.map((f) => fs.readFileSync(f));
  const bytes = msgs.reduce((n, b) => n + b.length, 0);
  console.log(`${msgs.length} messages, ${(bytes / 1048576).toFixed(1)} MB`);

  for (let i = 0; i < Math.min(2000, msgs.length); i++) parseMessage(msgs[i]); // warm-up
  let failed = 0;
  let t0 = process.hrtime.bigint();
  for (const m of msgs) {
    try {
      parseMessage(m);
    } catch {
      failed++;
    }
  }
  let s = Number(process.hrtime.bigint() - t0) / 1e9;
  const ours = msgs.length / s;
  console.log(
    `parseMessage:  ${ours.toFixed(0)} msg/s, ${(bytes / 1048576 / s).toFixed(1)} MB/s ` +
      `(${s.toFixed(2)} s, ${failed} rejected)`,
  );

  const n = Math.min(msgs.length, Number(process.env.MAILPARSER_LIMIT) || 10000);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await simpleParser(msgs[i]);
  s = Number(process.hrtime.bigint() - t0) / 1e9;
  const theirs = n / s;
  console.log(`simpleParser:  ${theirs.toFixed(0)} msg/s (${n} messages, ${s.toFixed(2)} s)`);
  console.log(`ratio: ${(ours / theirs).toFixed(1)}x`);
}

module.exports = {
  description: "parseMessage vs mailparser's simpleParser throughput on a maildir tree",
  usage: '[maildirRoot] [limit] (MAILPARSER_LIMIT=N)',
  run: main,
};
