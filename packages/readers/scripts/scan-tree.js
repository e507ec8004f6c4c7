#!/usr/bin/env node
'use strict';

// Smoke/benchmark tool (not a test): count what a reader yields for a real tree or mbox file.
// Usage: node scan-tree.js mh|maildir|mbox <path>

const fs = require('fs');
const { readMh, readMaildir, MboxSplitter } = require('../lib');

async function main() {
  const [kind, target] = process.argv.slice(2);
  if (!kind || !target) {
    console.error('usage: scan-tree.js mh|maildir|mbox <path>');
    process.exit(2);
  }
  const t0 = process.hrtime.bigint();
  let count = 0;
  let bytes = 0;
  let skipped = 0;
  const mailboxes = new Set();
  const onSkip = () => skipped++;
  if (kind === 'mbox') {
    const splitter = fs.createReadStream(target).pipe(new MboxSplitter());
    for await (const entry of splitter) {
      if (entry.error) skipped++;
      else count++;
      bytes += entry.length;
    }
  } else {
    const reader = kind === 'mh' ? readMh(target, { onSkip }) : readMaildir(target, { onSkip });
    for await (const msg of reader) {
      count++;
      bytes += msg.size;
      mailboxes.add(msg.mailbox);
    }
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  console.log(
    JSON.stringify({ kind, count, bytes, skipped, mailboxes: mailboxes.size, ms: Math.round(ms) }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
