'use strict';
const path = require('path');
const fs = require('fs');
const zlib = require('zlib');
// usage: node deliver-s8-2026-11-28-brotli.js [TREE]: brotli (text mode) CPU and bytes per message by quality and window on every 20th of
// the first 40,000 corpus messages (2,000), three alternating passes; TREE: the checkout whose bench library finds the corpus.
const W = path.resolve(process.argv[2] || path.join(__dirname, '..', '..', '..'));
const { listMessages, messageRoot } = require(path.join(W, 'packages/bench/lib/mailboxes'));
const { corpusDir } = require(path.join(W, 'packages/bench/lib/command-kit'));
const all = listMessages(messageRoot(corpusDir()), 40000);
const mail = all.filter((_, i) => i % 20 === 0).map((f) => fs.readFileSync(f));
const raw = mail.reduce((a, m) => a + m.length, 0);
const C = zlib.constants;
const settings = [];
for (const q of [1, 2, 3, 4, 5]) for (const w of [0, 16, 18]) settings.push({ q, w });
const out = {};
for (let r = 0; r < 3; r++)
  for (const s of settings) {
    const opt = (m) => {
      const p = {
        [C.BROTLI_PARAM_QUALITY]: s.q,
        [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT,
        [C.BROTLI_PARAM_SIZE_HINT]: m.length,
      };
      if (s.w) p[C.BROTLI_PARAM_LGWIN] = s.w;
      return { params: p };
    };
    let bytes = 0;
    const u0 = process.cpuUsage();
    for (const m of mail) bytes += Math.min(m.length, zlib.brotliCompressSync(m, opt(m)).length);
    const u = process.cpuUsage(u0);
    const k = `q${s.q}w${s.w || 'd'}`;
    (out[k] ??= { us: [], ratio: +(bytes / raw).toFixed(4), bytesPerMsg: Math.round(bytes / mail.length) }).us.push(
      +((u.user + u.system) / mail.length).toFixed(1),
    );
  }
console.log(JSON.stringify({ messages: mail.length, rawBytes: raw, rawPerMsg: Math.round(raw / mail.length), perMessage: out }, null, 1));
