#!/usr/bin/env node
'use strict';

/*
 * Rough timings of Dovecot on the same real mail stored as mbox and as Maildir: the first SELECT
 * (Dovecot builds its index), a second SELECT, FETCH 1:* (ENVELOPE), SEARCH TEXT of a rare word.
 *
 *   node scripts/dovecot/bench-select.js [--count 10000] [--corpus /tmp/corpus/enron/maildir]
 *        [--word WORD]
 *
 * The corpus is the Enron layout (<user>/inbox/.../<N>, one message per file; unpack with
 * ../shared/corpus/unpack.sh /tmp/corpus). Files are taken in sorted path order.
 */

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const dovecot = require('@mailgate/dovecot');

const { imapClient } = dovecot;

function args(argv) {
  const o = { count: 10000, corpus: '/tmp/corpus/enron/maildir', word: 'okapi' };
  for (let i = 0; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  o.count = Number(o.count);
  return o;
}

function listFiles(dir, out = [], limit = Infinity) {
  for (const e of fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (out.length >= limit) break;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) listFiles(p, out, limit);
    else if (e.isFile()) out.push(p);
  }
  return out;
}

function build(files, scratch) {
  const mbox = path.join(scratch, 'inbox.mbox');
  const md = path.join(scratch, 'Maildir');
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(md, sub), { recursive: true });
  const fd = fs.openSync(mbox, 'w');
  const t0 = Date.UTC(2001, 0, 1) / 1000;
  files.forEach((f, i) => {
    let raw = fs.readFileSync(f, 'latin1').replace(/\r\n/g, '\n');
    if (!raw.endsWith('\n')) raw += '\n';
    const when = new Date((t0 + i * 60) * 1000);
    const fromLine = `From MAILER-DAEMON ${when.toUTCString().replace(/,/g, '')}\n`;
    fs.writeSync(fd, fromLine + raw.replace(/^(>*From )/gm, '>$1') + '\n', null, 'latin1');
    const file = path.join(md, 'cur', `${t0 + i * 60}.M${i}P1.bench:2,S`);
    fs.writeFileSync(file, raw, 'latin1');
    fs.utimesSync(file, when, when);
  });
  fs.closeSync(fd);
  return { mbox, maildir: md };
}

async function time(fn) {
  const t = process.hrtime.bigint();
  const r = await fn();
  return [Number(process.hrtime.bigint() - t) / 1e6, r];
}

async function measure(format, mail, word) {
  const inst = await dovecot.start({ format, mail, link: format === 'maildir' });
  const out = { format };
  try {
    const c = await imapClient(inst);
    let box;
    [out.firstSelectMs, box] = await time(() => c.mailboxOpen('INBOX'));
    out.exists = box.exists;
    await c.mailboxClose();
    [out.secondSelectMs] = await time(() => c.mailboxOpen('INBOX'));
    [out.fetchEnvelopeMs] = await time(async () => {
      let n = 0;
      for await (const m of c.fetch('1:*', { envelope: true })) n += m ? 1 : 0;
      return n;
    });
    let hits;
    [out.searchTextMs, hits] = await time(() => c.search({ text: word }));
    out.searchHits = hits.length;
    [out.searchTextAgainMs] = await time(() => c.search({ text: word }));
    await c.logout();
  } finally {
    await inst.stop();
  }
  return out;
}

async function main() {
  const o = args(process.argv.slice(2));
  if (!dovecot.installed())
    throw new Error('dovecot is not installed (scripts/dovecot/install.sh)');
  const files = listFiles(o.corpus, [], o.count);
  if (files.length < o.count) throw new Error(`only ${files.length} files under ${o.corpus}`);
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'dovecot-bench-'));
  try {
    const src = build(files, scratch);
    const mb = (fs.statSync(src.mbox).size / 1e6).toFixed(1);
    console.log(`${files.length} messages, ${mb} MB as mbox; word ${JSON.stringify(o.word)}`);
    for (const format of ['mbox', 'maildir']) {
      const r = await measure(format, src[format], o.word);
      const ms = (k) => `${r[k].toFixed(0)} ms`;
      console.log(
        `${format.padEnd(8)} exists=${r.exists} first SELECT ${ms('firstSelectMs')}, ` +
          `second SELECT ${ms('secondSelectMs')}, FETCH 1:* ENVELOPE ${ms('fetchEnvelopeMs')}, ` +
          `SEARCH TEXT ${ms('searchTextMs')} (${r.searchHits} hits; again ${ms('searchTextAgainMs')})`,
      );
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err.message || err);
  process.exit(1);
});
