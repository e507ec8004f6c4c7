'use strict';
// usage: node deliver-cpu-2026-11-28-brotli.js [TREE]
// Node CPU and size of brotli (text mode) per quality on 1,000 corpus messages (the 22,001st-23,000th), alternating.
// TREE: the mailgate checkout whose bench library finds the corpus (default: the repo this script lives in).
const path = require('path');
const fs = require('fs');
const zlib = require('zlib');
const W = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..'));
const { listMessages, messageRoot } = require(path.join(W, 'packages/bench/lib/mailboxes'));
const { corpusDir } = require(path.join(W, 'packages/bench/lib/command-kit'));
const mail = listMessages(messageRoot(corpusDir()), 23000)
  .slice(22000)
  .map((f) => fs.readFileSync(f));
const raw = mail.reduce((a, m) => a + m.length, 0);
const out = {};
for (let r = 0; r < 3; r++)
  for (const q of [3, 4, 5]) {
    const opt = (m) => ({
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: q,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: m.length,
      },
    });
    let bytes = 0;
    const u0 = process.cpuUsage();
    for (const m of mail) bytes += Math.min(m.length, zlib.brotliCompressSync(m, opt(m)).length);
    const u = process.cpuUsage(u0);
    (out['q' + q] ??= { us: [], ratio: +(bytes / raw).toFixed(3) }).us.push(
      +((u.user + u.system) / mail.length).toFixed(1),
    );
  }
console.log(JSON.stringify({ messages: mail.length, rawBytes: raw, perMessage: out }));
